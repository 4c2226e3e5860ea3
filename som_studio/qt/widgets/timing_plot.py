"""Timings: seconds per iteration against iteration, compile apart, rolling median, throughput.

One :class:`pyqtgraph.PlotDataItem` per curve, fed from bounded buffers
(:class:`~som_studio.session.decimate.MinMaxSeries`: a run of any length keeps
at most :data:`HISTORY_POINTS` points, so a redraw never grows with the run;
peak downsampling to the plot's pixels and clip-to-view keep each paint short).
Redrawn at most as often as keeps its redraws within :data:`REDRAW_SHARE` of a core (their cost
measured, :class:`~som_studio.app_model.pacing.DrawPacer`: every :data:`REDRAW_MS` at the most, every
:data:`MAX_REDRAW_MS` at the least), and not at all while hidden (a closed or tabbed-away dock): it
catches up when shown. While a run trains, the iteration axis ends on a
1-2-5 step ahead of the data (:func:`live_x_end`), not on the newest point: an axis whose range
changes is drawn again whole, with its grid over the plot, which cost more than the curves at
every redraw. The compile and warm-up time is not a point on the curve: it is shown in the
caption, apart from steady state.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from som_studio.app_model.pacing import DrawPacer
from som_studio.qt.chart_style import ReadableAxis, legend_above, restyle_legend, style_plot, style_widget, theme_of
from som_studio.qt.widgets.canvas import PacedRedraw, PlotCanvas
from som_studio.qt.widgets.parts_label import PartsLabel
from som_studio.session.decimate import MinMaxSeries
from som_studio.session.events import ChunkTimed
from som_studio.session.timing import nothing_compiled

ROLLING = 15  # chunks in the rolling median
REDRAW_MS = 200  # the most redraws: a timing curve gains nothing from more than 5 a second
MAX_REDRAW_MS = 1000  # the fewest: the curve still moves once a second, whatever a redraw costs
#: The share of one core the live curve's redraws may take (the data set and the plot painted, in the process's
#: CPU time): on a machine whose cores all train, the app's CPU time is the training's.
REDRAW_SHARE = 0.005
HISTORY_POINTS = 4000  # the most points a curve keeps, whatever the run's length


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def short_seconds(s: float) -> str:
    """A tick label: three significant digits and the unit that suits them (``"50 µs"``, ``"1.5 ms"``)."""
    if s <= 0:
        return "0"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


class SecondsAxis(ReadableAxis):
    """A time axis labelled "50 µs", "2 ms", in linear and log mode, with at least three labelled ticks.

    pyqtgraph's own log axis labels every minor tick ("2·10¹", "3·10¹", ...) or, on
    a range under a decade (as per-iteration times usually are), one tick; here
    the ticks are 1-2-5 steps where they fit and round values on shorter ranges
    (:func:`~som_studio.qt.chart_style.log_ticks`).
    """

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, short_seconds, **kwargs)


def live_x_end(end: float, total: int | None) -> float:
    """Where the iteration axis ends while a run of ``total`` iterations has reached ``end``.

    The first 1-2-5 step (2, 5, 10, 20, ...) at or past ``end``, and never past ``total``:
    the axis changes a few times per decade of the run instead of with every redraw, and the
    curve fills at least two fifths of the plot's width. At least 2: an axis from 0 to 1 has no
    whole iteration between its ends to label.
    """
    step = next(m * 10**e for e in range(19) for m in (1, 2, 5) if m * 10**e >= max(end, 2))
    return float(min(step, total)) if total else float(step)


def reset_range(plot: pg.PlotWidget) -> None:
    """Start a new run's plot from a small range that auto-range then grows with the data.

    A run must not inherit the previous run's range: auto-downsampling picks
    its factor from the view's width over the data's spacing, so a handful of
    epochs drawn in the range of 20,000 steps would be thinned to one point,
    whose zero-width bounds keep the old width around it (an axis from -20,000 to
    20,000). A fixed whole-run range is no better: a long run stopped early is
    thinned to nothing.
    """
    plot.setXRange(0, 1, padding=0)
    plot.enableAutoRange()


class TimingPlot(QWidget):
    """Time per iteration of the current run.

    Threads: GUI thread only. ``log_scale_changed(bool)`` follows the checkbox.
    """

    log_scale_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Bounded: old chunks fold into min/max buckets, the whole run stays visible.
        self._points = MinMaxSeries(HISTORY_POINTS)
        self._medians = MinMaxSeries(HISTORY_POINTS)
        self._recent: deque[float] = deque(maxlen=ROLLING)
        self._per_iteration_samples = 1
        self._compile_s: float | None = None
        self._compiles: int | None = None
        # The finished run's recorded (median, mean) per iteration: the caption ends on them.
        self._final: tuple[float | None, float | None] | None = None
        self._total: int | None = None  # the live run's iterations: its axis ends in steps (live_x_end)
        self._x_end: float | None = None  # where the live run's iteration axis ends now

        self.caption = PartsLabel(self.tr("No run yet"))  # wraps: a long summary must not widen the dock
        self._waiting = self.tr("compiling and warming up…")
        # Its figures change with every redraw: opaque, so that the dock and the window beneath it are not
        # painted again each time.
        self.caption.setAutoFillBackground(True)
        self.log_scale = QCheckBox(self.tr("log scale"))
        # The rolling median smooths the chunks' noise; off, the raw chunks alone.
        self.smoothing = QCheckBox(self.tr("rolling median"))
        self.smoothing.setChecked(True)
        top = QHBoxLayout()  # the check boxes on a line of their own: the summary below has the dock's width
        top.addStretch(1)
        top.addWidget(self.smoothing)
        top.addWidget(self.log_scale)

        self.plot = PlotCanvas(axisItems={"left": SecondsAxis("left"), "bottom": ReadableAxis("bottom", whole=True)})
        self.redraw = PacedRedraw(
            self, self.plot, self._draw, DrawPacer(REDRAW_SHARE, REDRAW_MS / 1000, MAX_REDRAW_MS / 1000)
        )
        self.plot.setClipToView(True)
        self._floor_at_zero(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.points = self.plot.plot(name=self.tr("per chunk"))
        self.median = self.plot.plot(name=self.tr("rolling median ({n})").format(n=ROLLING))
        self.legend = legend_above(self.plot.getPlotItem(), theme_of(self), columns=1, rows=2)
        self.legend.addItem(self.points, self.points.name())
        self.legend.addItem(self.median, self.median.name())
        self._apply_theme()

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.caption)
        lay.addWidget(self.plot, 1)
        self.log_scale.toggled.connect(self._on_log_scale)
        self.smoothing.toggled.connect(self.median.setVisible)

    def _apply_theme(self) -> None:
        """The plot in the palette's colours (light or dark), as the app's other charts."""
        theme = theme_of(self)
        style_widget(self.plot, theme)
        style_plot(self.plot.getPlotItem(), theme, self.tr("iteration"), self.tr("time per iteration"))
        self.points.setPen(pg.mkPen(theme.colour(5), width=1))
        self.points.setSymbolSize(7)
        self.points.setSymbolPen(pg.mkPen(theme.colour(5), width=1))
        self.points.setSymbolBrush(pg.mkBrush(theme.colour(5)))
        self.median.setPen(pg.mkPen(theme.colour(1), width=2))
        restyle_legend(self.legend, theme)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_theme()
        super().changeEvent(event)

    def _on_log_scale(self, on: bool) -> None:
        self.plot.setLogMode(y=on)
        self._floor_at_zero(not on)
        self.log_scale_changed.emit(on)

    def _floor_at_zero(self, linear: bool) -> None:
        # No time below zero on a linear axis (auto-range puts a lone point mid-range, ticks below it
        # negative); a log axis's view is in decades, where any floor would be wrong.
        self.plot.getViewBox().setLimits(yMin=0.0 if linear else -1e307)  # pyqtgraph's own "no floor"

    def begin(self, kind: str, samples: int, total: int | None = None, compiles: bool = True) -> None:
        """A new run: clear the curves; ``samples`` per iteration for throughput (batch: all).

        ``total``: the iterations of a run that is training now (its iteration axis then grows in
        steps, :func:`live_x_end`); ``None``: a run shown whole (the axis fits its chunks). ``compiles``: it
        compiles programs before it trains (NumPy does not).
        """
        self._waiting = self.tr("compiling and warming up…") if compiles else self.tr("warming up…")
        self._points.clear()
        self._medians.clear()
        self._recent.clear()
        self.redraw.stop()
        self._compile_s = None
        self._compiles = None
        self._final = None
        self._total, self._x_end = total, None
        self._per_iteration_samples = samples if kind == "batch" else 1
        self.points.setData([], [])
        self.points.setSymbol(None)
        self.median.setData([], [])
        reset_range(self.plot)
        self.caption.set_parts([self._waiting])

    def set_compile(self, seconds: float, compiles: int | None = None) -> None:
        """The compile and warm-up time (``compiles=0``: nothing was compiled, e.g. NumPy)."""
        self._compile_s = seconds
        self._compiles = compiles
        self._update_caption()

    def add_chunks(self, chunks: Sequence[ChunkTimed]) -> None:
        for c in chunks:
            self._points.append(c.end, c.iteration_s)
            self._recent.append(c.iteration_s)
            # Incremental: each point's median over the chunks before it, computed once (statistics' median of
            # 15 numbers: a few microseconds, where NumPy's is tens, at every chunk of a fast run).
            self._medians.append(c.end, statistics.median(self._recent))
        # Redraw when the pacer allows: the curves' data and the plot's paint cost the training's cores.
        self.redraw.ask()

    def flush(self) -> None:
        """Draw what has arrived now (the end of a run: its iteration axis fits its chunks again), shown or not."""
        self._fit_x()
        self.redraw.flush()

    def _fit_x(self) -> None:
        if self._total is not None:
            self._total = self._x_end = None
            self.plot.enableAutoRange(x=True)

    def finish(self, median_s: float | None, mean_s: float | None) -> None:
        """The run ended: draw everything and show the figures its record holds, not the rolling ones."""
        self._final = (median_s, mean_s)
        self.flush()
        self._update_caption()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.redraw.shown()

    def _draw(self) -> bool:
        if not len(self._points):
            return False
        x, y = self._points.arrays()
        # A lone chunk (the first of a run, or a run of one) is a dot: a line through one point draws nothing.
        lone = len(x) == 1
        if lone != (self.points.opts["symbol"] is not None):
            self.points.setSymbol("o" if lone else None)
            if lone and not self.log_scale.isChecked():  # auto-range gives a point of no height a unit's span
                self.plot.setYRange(0, 2 * y[0])
            elif not lone:
                self.plot.enableAutoRange(y=True)
        self.points.setData(x, y)
        self.median.setData(*self._medians.arrays())
        if self._total is not None:
            end = live_x_end(float(x[-1]), self._total)
            if end != self._x_end:
                self._x_end = end
                self.plot.setXRange(0, end)
        self._update_caption()
        return True

    def median_s(self) -> float | None:
        if self._final is not None:
            return self._final[0]
        return statistics.median(self._recent) if self._recent else None

    def _update_caption(self) -> None:
        bits = []
        if self._compile_s is not None and not nothing_compiled(self._compile_s, self._compiles):
            what = self.tr("warm-up {time}") if self._compiles == 0 else self.tr("compile + warm-up {time}")
            bits.append(what.format(time=format_seconds(self._compile_s)))
        med = self.median_s()
        if med:
            bits.append(self.tr("median {time}/iteration").format(time=format_seconds(med)))
            bits.append(self.tr("{rate} samples/s").format(rate=f"{self._per_iteration_samples / med:,.0f}"))
        if self._final is not None and self._final[1]:
            bits.append(self.tr("mean {time}/iteration").format(time=format_seconds(self._final[1])))
        self.caption.set_parts(bits or [self._waiting])


def _preview() -> None:  # python -m som_studio.qt.widgets.timing_plot
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    plot = TimingPlot()
    plot.begin("batch", 1000)
    plot.set_compile(0.8)
    rng = np.random.default_rng(0)
    state = {"it": 0}

    def tick() -> None:
        n = 4
        plot.add_chunks([ChunkTimed(state["it"], n, n * 0.01 * (1 + 0.2 * rng.standard_normal() ** 2), 0.0)])
        state["it"] += n

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(40)
    plot.resize(700, 400)
    plot.show()
    app.exec()


if __name__ == "__main__":
    _preview()
