"""Timings: seconds per iteration against iteration, compile apart, rolling median, throughput.

One :class:`pyqtgraph.PlotDataItem` per curve, fed from growing buffers
(``setData`` on the whole buffer is cheap at chunk rate; peak downsampling and
clip-to-view keep long runs fast). The compile and warm-up time is not a point
on the curve: it is shown in the caption, apart from steady state.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from som_studio.session.decimate import MinMaxSeries
from som_studio.session.events import ChunkTimed

ROLLING = 15  # chunks in the rolling median
REDRAW_MS = 100
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


class SecondsAxis(pg.AxisItem):
    """A time axis labelled "50 µs", "2 ms", in linear and log mode.

    pyqtgraph's own log axis labels every minor tick ("2·10¹", "3·10¹", ...):
    on a range under a decade, as per-iteration times usually are, the labels
    pile on top of each other. Here log mode puts ticks at 1-2-5 steps (denser
    on short ranges), at most about one per 30 pixels.
    """

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list[tuple[float | None, list[float]]]:
        if not self.logMode:
            return super().tickValues(minVal, maxVal, size)
        lo, hi = sorted((minVal, maxVal))
        room = max(2, int(size / 30))
        mantissas = (
            (1,),
            (1, 3),
            (1, 2, 5),
            (1, 1.5, 2, 3, 5, 7),
            tuple(range(1, 10)),
            tuple(m / 10 for m in range(10, 100, 2)),
            tuple(m / 10 for m in range(10, 100)),
        )
        fits: list[list[float]] = []
        for steps in mantissas:  # coarse to fine: the first with three ticks that fit, else the finest that fits
            vals = [
                v
                for e in range(int(np.floor(lo)) - 1, int(np.ceil(hi)) + 1)
                for m in steps
                if lo <= (v := float(np.log10(m) + e)) <= hi
            ]
            if len(vals) > room:
                break
            fits.append(vals)
            if len(vals) >= 3:
                break
        if not fits:  # many decades: every k-th decade
            vals = [float(e) for e in range(int(np.ceil(lo)), int(np.floor(hi)) + 1)]
            fits.append(vals[:: max(1, int(np.ceil(len(vals) / room)))])
        vals = fits[-1]
        return [(None, vals)]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if self.logMode:
            return [short_seconds(10.0**v) for v in values]
        return [short_seconds(v * scale) for v in values]


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

        self.caption = QLabel(self.tr("No run yet"))
        self.caption.setWordWrap(True)  # the summary wraps: a long one must not widen the dock
        self.log_scale = QCheckBox(self.tr("log scale"))
        top = QHBoxLayout()  # the check box on a line of its own: the summary below has the dock's width
        top.addStretch(1)
        top.addWidget(self.log_scale)

        self.plot = pg.PlotWidget(axisItems={"left": SecondsAxis("left")})
        self.plot.setLabel("bottom", self.tr("iteration"))
        self.plot.setLabel("left", self.tr("time per iteration"))
        self.plot.getAxis("left").enableAutoSIPrefix(False)  # the tick labels carry their units
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.addLegend(offset=(-10, 10), brush=(0, 0, 0, 160))
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.points = self.plot.plot(pen=pg.mkPen((120, 160, 220), width=1), name=self.tr("per chunk"))
        rolling = self.tr("rolling median ({n})").format(n=ROLLING)
        self.median = self.plot.plot(pen=pg.mkPen((230, 126, 34), width=2), name=rolling)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.caption)
        lay.addWidget(self.plot, 1)
        self.log_scale.toggled.connect(self._on_log_scale)
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.timeout.connect(self._draw)

    def _on_log_scale(self, on: bool) -> None:
        self.plot.setLogMode(y=on)
        self.log_scale_changed.emit(on)

    def begin(self, kind: str, samples: int) -> None:
        """A new run: clear the curves; ``samples`` per iteration for throughput (batch: all)."""
        self._points.clear()
        self._medians.clear()
        self._recent.clear()
        self._redraw.stop()
        self._compile_s = None
        self._compiles = None
        self._final = None
        self._per_iteration_samples = samples if kind == "batch" else 1
        self.points.setData([], [])
        self.median.setData([], [])
        reset_range(self.plot)
        self.caption.setText(self.tr("compiling and warming up…"))

    def set_compile(self, seconds: float, compiles: int | None = None) -> None:
        """The compile and warm-up time (``compiles=0``: nothing was compiled, e.g. NumPy)."""
        self._compile_s = seconds
        self._compiles = compiles
        self._update_caption()

    def add_chunks(self, chunks: Sequence[ChunkTimed]) -> None:
        for c in chunks:
            self._points.append(c.end, c.iteration_s)
            self._recent.append(c.iteration_s)
            # Incremental: each point's median over the chunks before it, computed once.
            self._medians.append(c.end, float(np.median(self._recent)))
        # Redraw at most every REDRAW_MS: each redraw repaints the axes, which
        # costs more than the curves; a timing curve gains nothing from 30 Hz.
        if not self._redraw.isActive():
            self._redraw.start(REDRAW_MS)

    def flush(self) -> None:
        """Draw what has arrived now (the end of a run)."""
        self._redraw.stop()
        self._draw()

    def finish(self, median_s: float | None, mean_s: float | None) -> None:
        """The run ended: draw everything and show the figures its record holds, not the rolling ones."""
        self._final = (median_s, mean_s)
        self.flush()
        self._update_caption()

    def _draw(self) -> None:
        if not len(self._points):
            return
        self.points.setData(*self._points.arrays())
        self.median.setData(*self._medians.arrays())
        self._update_caption()

    def median_s(self) -> float | None:
        if self._final is not None:
            return self._final[0]
        return float(np.median(self._recent)) if self._recent else None

    def _update_caption(self) -> None:
        bits = []
        if self._compile_s is not None:
            what = self.tr("warm-up {time}") if self._compiles == 0 else self.tr("compile + warm-up {time}")
            bits.append(what.format(time=format_seconds(self._compile_s)))
        med = self.median_s()
        if med:
            bits.append(self.tr("median {time}/iteration").format(time=format_seconds(med)))
            bits.append(f"{self._per_iteration_samples / med:,.0f} samples/s")
        if self._final is not None and self._final[1]:
            bits.append(self.tr("mean {time}/iteration").format(time=format_seconds(self._final[1])))
        # Wrapped between its parts, never inside one ("3.40 / s", "warm- / up", "ms/ / iteration").
        keep: dict[str, str | int | None] = {" ": "\u00a0", "-": "\u2011", "/": "/\u2060"}  # no break there
        text = "   ·   ".join(b.translate(str.maketrans(keep)) for b in bits)
        self.caption.setText(text if bits else self.tr("compiling and warming up…"))


def _preview() -> None:  # python -m som_studio.qt.widgets.timing_plot
    from PySide6.QtCore import QTimer
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
