"""Timings: seconds per iteration against iteration, compile apart, rolling median, throughput.

One :class:`pyqtgraph.PlotDataItem` per curve, fed from growing buffers
(``setData`` on the whole buffer is cheap at chunk rate; peak downsampling and
clip-to-view keep long runs fast). The compile and warm-up time is not a point
on the curve: it is shown in the caption, apart from steady state.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from som_studio.session.events import ChunkTimed

ROLLING = 15  # chunks in the rolling median
REDRAW_MS = 100


def format_seconds(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def set_run_range(plot: pg.PlotWidget, iterations: int | None) -> None:
    """Frame a new run: x from 0 to its iteration count, y automatic.

    A run must not inherit the previous run's x range: after 20,000 online
    steps, a batch run's handful of epochs, clipped to view and downsampled
    against the old range, came out on an axis from -20,000 to 20,000.
    """
    plot.enableAutoRange(axis="y")
    if iterations:
        plot.setXRange(0, iterations, padding=0.02)  # also turns x auto-range off
    else:
        plot.enableAutoRange(axis="x")


class TimingPlot(QWidget):
    """Time per iteration of the current run.

    Threads: GUI thread only. ``log_scale_changed(bool)`` follows the checkbox.
    """

    log_scale_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._x: list[float] = []
        self._y: list[float] = []
        self._m: list[float] = []
        self._per_iteration_samples = 1
        self._compile_s: float | None = None

        self.caption = QLabel("No run yet")
        self.log_scale = QCheckBox("log scale")
        top = QHBoxLayout()
        top.addWidget(self.caption, 1)
        top.addWidget(self.log_scale)

        self.plot = pg.PlotWidget()
        self.plot.setLabel("bottom", "iteration")
        self.plot.setLabel("left", "time per iteration", units="s")
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot.addLegend(offset=(-10, 10))
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.points = self.plot.plot(pen=pg.mkPen((120, 160, 220), width=1), name="per chunk")
        self.median = self.plot.plot(pen=pg.mkPen((230, 126, 34), width=2), name=f"rolling median ({ROLLING})")

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.plot, 1)
        self.log_scale.toggled.connect(self._on_log_scale)
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.timeout.connect(self._draw)

    def _on_log_scale(self, on: bool) -> None:
        self.plot.setLogMode(y=on)
        self.log_scale_changed.emit(on)

    def begin(self, kind: str, samples: int, iterations: int | None = None) -> None:
        """A new run: clear the curves; ``samples`` per iteration for throughput (batch: all).

        With ``iterations`` the x axis spans the whole run from the start (the
        curve grows across it, which shows progress too).
        """
        self._x.clear()
        self._y.clear()
        self._m.clear()
        self._redraw.stop()
        self._compile_s = None
        self._per_iteration_samples = samples if kind == "batch" else 1
        self.points.setData([], [])
        self.median.setData([], [])
        set_run_range(self.plot, iterations)
        self.caption.setText("compiling and warming up…")

    def set_compile(self, seconds: float) -> None:
        self._compile_s = seconds
        self._update_caption()

    def add_chunks(self, chunks: Sequence[ChunkTimed]) -> None:
        for c in chunks:
            self._x.append(float(c.end))
            self._y.append(c.iteration_s)
            # Incremental: each point's median over the chunks before it, computed once.
            self._m.append(float(np.median(self._y[-ROLLING:])))
        # Redraw at most every REDRAW_MS: each redraw repaints the axes, which
        # costs more than the curves; a timing curve gains nothing from 30 Hz.
        if not self._redraw.isActive():
            self._redraw.start(REDRAW_MS)

    def flush(self) -> None:
        """Draw what has arrived now (the end of a run)."""
        self._redraw.stop()
        self._draw()

    def _draw(self) -> None:
        if not self._x:
            return
        x = np.asarray(self._x)
        self.points.setData(x, np.asarray(self._y))
        self.median.setData(x, np.asarray(self._m))
        self._update_caption()

    def median_s(self) -> float | None:
        return float(np.median(self._y[-ROLLING:])) if self._y else None

    def _update_caption(self) -> None:
        bits = []
        if self._compile_s is not None:
            bits.append(f"compile + warm-up {format_seconds(self._compile_s)}")
        med = self.median_s()
        if med:
            bits.append(f"median {format_seconds(med)}/iteration")
            bits.append(f"{self._per_iteration_samples / med:,.0f} samples/s")
        self.caption.setText("   ·   ".join(bits) if bits else "compiling and warming up…")


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
