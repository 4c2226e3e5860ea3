"""The timing plot: each run framed afresh, seconds on a log axis whose labels do not pile up."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from som_studio.qt.widgets.timing_plot import MAX_REDRAW_MS, SecondsAxis, TimingPlot, short_seconds
from som_studio.session.events import ChunkTimed

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _chunks(first_end: int, step: int, n: int, seconds: float) -> list[ChunkTimed]:
    return [ChunkTimed(first_end + i * step - step, step, seconds * step, 0.0) for i in range(n)]


def _shown(qtbot, width: int = 600) -> TimingPlot:
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 300)
    plot.show()
    return plot


def test_timing_plot_frames_each_run_afresh(qtbot):
    plot = _shown(qtbot)
    # 20,000 online steps, then a batch run of 6 epochs (a compare queue's order).
    plot.begin("online", 1)
    plot.add_chunks(_chunks(100, 100, 200, 5e-5))
    plot.flush()
    qtbot.wait(50)
    assert plot.plot.viewRange()[0][1] >= 19_000
    plot.begin("batch", 1000)
    for k in range(1, 4):
        plot.add_chunks(_chunks(k, 1, 1, 0.07))
        plot.flush()
        qtbot.wait(20)
    lo, hi = plot.plot.viewRange()[0]
    assert -1 <= lo and hi <= 10, (lo, hi)  # not the previous run's thousands of steps
    assert len(plot.points.getData()[0]) == 3  # every epoch drawn


def test_timing_axis_labels_are_seconds_and_do_not_pile_up():
    assert [short_seconds(s) for s in (0.07, 5e-5, 1.5, 2.5e-3)] == ["70 ms", "50 µs", "1.5 s", "2.5 ms"]
    axis = SecondsAxis("left")
    axis.setLogMode(False, True)
    # 50 ms to 75 ms: less than a fifth of a decade, on 120 pixels.
    ((_, values),) = axis.tickValues(np.log10(0.05), np.log10(0.075), 120)
    assert 2 <= len(values) <= 4
    labels = axis.tickStrings(values, 1.0, 0.0)
    assert all(label.endswith(" ms") for label in labels)
    # Six decades on 120 pixels: a few decade ticks, not 54 minor ones.
    ((_, values),) = axis.tickValues(-7.0, -1.0, 120)
    assert 2 <= len(values) <= 4 and all(float(v).is_integer() for v in values)


def test_a_hidden_plot_is_not_drawn_until_it_is_shown(qtbot):
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.show()
    plot.begin("online", 1)
    plot.hide()  # its dock closed, or another tab in front
    plot.add_chunks(_chunks(100, 100, 20, 5e-5))
    qtbot.wait(250)  # past the redraw interval: the timer fired on a hidden plot
    assert len(plot.points.getData()[0] or ()) == 0
    plot.show()
    qtbot.waitUntil(lambda: len(plot.points.getData()[0]) == 20, timeout=5000)


def test_the_live_curve_is_redrawn_as_often_as_its_cost_allows(qtbot):
    plot = _shown(qtbot)
    plot.begin("batch", 1000, total=1000)
    plot.add_chunks(_chunks(4, 4, 3, 0.01))
    qtbot.waitUntil(lambda: plot.points.getData()[0] is not None and len(plot.points.getData()[0]) == 3, timeout=5000)
    qtbot.waitUntil(lambda: plot.redraw.pacer.cost_s is not None, timeout=5000)  # the redraw and its paint, measured
    for _ in range(7):
        plot.redraw.pacer.book(1.0)  # as if each redraw cost a second: the curve still moves, once a second
    assert plot.redraw.pacer.interval_s() == MAX_REDRAW_MS / 1000
    plot.add_chunks(_chunks(16, 4, 2, 0.01))
    qtbot.wait(300)
    assert len(plot.points.getData()[0]) == 3  # not yet: its time has not come
    qtbot.waitUntil(lambda: len(plot.points.getData()[0]) == 5, timeout=5000)


def test_a_lone_chunk_is_drawn_as_a_dot_then_the_curve_as_a_line(qtbot):
    plot = _shown(qtbot)
    plot.begin("batch", 1000)
    plot.add_chunks(_chunks(1, 1, 1, 0.07))  # a run of one epoch, or the first chunk of a longer one
    plot.flush()
    assert len(plot.points.getData()[0]) == 1
    assert plot.points.opts["symbol"] is not None  # a line through one point would draw nothing
    plot.add_chunks(_chunks(2, 1, 1, 0.07))
    plot.flush()
    assert len(plot.points.getData()[0]) == 2 and plot.points.opts["symbol"] is None
    plot.begin("batch", 1000)  # the next run's first chunk: a dot again, its time on the axis's upper half
    plot.add_chunks(_chunks(1, 1, 1, 0.07))
    plot.flush()
    assert plot.points.opts["symbol"] is not None

    def on_axis() -> bool:  # pyqtgraph sets a range at its next update: on a loaded machine, later
        lo, hi = plot.plot.viewRange()[1]
        return lo >= 0 and lo < 0.07 < hi

    qtbot.waitUntil(on_axis)


def test_the_summary_is_one_line_between_dots_where_it_fits_and_a_part_a_line_where_not(qtbot):
    plot = _shown(qtbot, 900)
    qtbot.waitExposed(plot)
    plot.begin("batch", 1000)
    plot.set_compile(0.8)
    plot.add_chunks(_chunks(1, 1, 20, 2.6e-3))
    plot.finish(2.6e-3, 2.7e-3)
    parts = plot.caption.parts()
    qtbot.waitUntil(lambda: "\n" not in plot.caption.text())  # laid out at its width (a loaded machine: later)
    assert len(parts) == 4 and plot.caption.text().count("·") == 3
    plot.resize(260, 300)  # a narrow dock: the parts stacked, none split, no dot left at a line's end
    qtbot.waitUntil(lambda: "\n" in plot.caption.text())
    assert plot.caption.text().split("\n") == list(parts) and "·" not in plot.caption.text()
    plot.resize(900, 300)
    qtbot.waitUntil(lambda: "\n" not in plot.caption.text())


def test_a_run_that_compiles_nothing_is_not_said_to_be_compiling(qtbot):
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.begin("batch", 100, 10)
    assert plot.caption.text().replace("\xa0", " ") == "compiling and warming up…"
    plot.begin("batch", 100, 10, compiles=False)  # a NumPy run
    assert plot.caption.text().replace("\xa0", " ") == "warming up…"


LET_GO = """
import gc
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication
app = QApplication([])
from som_studio.qt.widgets.map_view import MapView
from som_studio.qt.widgets.timing_plot import TimingPlot
paint = pg.GraphicsView.paintEvent
def paint_collecting(self, ev):
    gc.collect()  # what any allocation of a paint's Python code may run
    paint(self, ev)
pg.GraphicsView.paintEvent = paint_collecting
def show_and_let_go(kind):
    w = kind(); w.resize(500, 300); w.show()
    app.processEvents()
for kind in (TimingPlot, MapView):
    show_and_let_go(kind)
    for _ in range(3):
        app.processEvents()
print("painted")
"""


def test_a_shown_plot_its_maker_let_go_of_is_not_deleted_in_its_own_paint(tmp_path):
    """Held only through pyqtgraph's reference cycles, a shown window was freed by the cycle collector in the
    middle of its paint, and the process crashed. A process of its own: a crash is an exit status here."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, "-c", LET_GO], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and out.stdout.split() == ["painted"], out.stderr[-2000:]
