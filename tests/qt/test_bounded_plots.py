"""The live plots keep a bounded history that still shows the whole run."""

from __future__ import annotations

import pytest

from som_studio.qt.widgets import quality_plot, timing_plot
from som_studio.session.events import ChunkTimed, QualityMeasured


def test_timing_plot_draws_a_long_run_in_bounded_points(qtbot, monkeypatch):
    monkeypatch.setattr(timing_plot, "HISTORY_POINTS", 200)  # a small budget: the same code, faster
    plot = timing_plot.TimingPlot()
    qtbot.addWidget(plot)
    plot.begin("online", 1)
    n = 3 * timing_plot.HISTORY_POINTS
    spike_at = 50
    plot.add_chunks([ChunkTimed(i * 100, 100, (0.5 if i == spike_at else 0.01) * 100, 0.0) for i in range(n)])
    plot.flush()
    x, y = plot.points.getData()
    assert len(x) <= timing_plot.HISTORY_POINTS
    assert x[0] == 100 and x[-1] == n * 100  # the first and the last chunk
    assert y.max() == 0.5  # the early slow chunk is still drawn
    assert plot.median_s() == 0.01  # the rolling median looks at the newest chunks only
    assert len(plot.median.getData()[0]) <= timing_plot.HISTORY_POINTS


def test_quality_plot_draws_a_long_run_in_bounded_points(qtbot, monkeypatch):
    monkeypatch.setattr(quality_plot, "HISTORY_POINTS", 100)
    plot = quality_plot.QualityPlot()
    qtbot.addWidget(plot)
    plot.begin()
    n = 2 * quality_plot.HISTORY_POINTS + 7
    for i in range(n):
        plot.add(QualityMeasured(i * 10, 1.0 / (i + 1), 0.5))
    plot.flush()
    x, qe = plot.qe_curve.getData()
    assert len(x) <= quality_plot.HISTORY_POINTS
    assert x[0] == 0 and x[-1] == (n - 1) * 10
    assert qe.max() == 1.0
    assert len(plot.te_curve.getData()[0]) <= quality_plot.HISTORY_POINTS


@pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")  # the offscreen platform's, on show
def test_quality_plot_draws_a_burst_once_when_its_pacer_allows_and_nothing_while_hidden(qtbot):
    from som_studio.app_model.pacing import DrawPacer

    def plot_of(shown: bool) -> quality_plot.QualityPlot:
        plot = quality_plot.QualityPlot()
        qtbot.addWidget(plot)
        if shown:
            plot.show()
            qtbot.waitExposed(plot)
        plot.begin()
        plot.redraw.pacer = DrawPacer(
            0.5, 0.002, 0.004
        )  # redraws a few milliseconds apart: the test does not wait long
        return plot

    def drawn(plot: quality_plot.QualityPlot) -> int:
        x = plot.qe_curve.getData()[0]
        return 0 if x is None else len(x)

    shown, hidden = plot_of(True), plot_of(False)
    for plot in (shown, hidden):
        for i in range(10):  # a short run's measurements, in a burst
            plot.add(QualityMeasured(i * 10, 1.0 / (i + 1), 0.1))
    assert drawn(shown) == 0  # kept, not drawn: one redraw waits for the pacer
    qtbot.waitUntil(lambda: drawn(shown) == 10, timeout=10_000)
    assert "iteration 90:" in shown.caption.text()
    qtbot.waitUntil(lambda: hidden.redraw.stale, timeout=10_000)  # its redraw came and found nobody watching
    assert drawn(hidden) == 0
    hidden.show()
    assert drawn(hidden) == 10 and "iteration 90:" in hidden.caption.text()


def test_a_run_that_ended_unmeasured_says_so_not_that_a_measurement_is_coming(qtbot):
    """A big run stopped before its first quality pass kept 'waiting for the first measurement…', also when shown
    again after a restart."""
    plot = quality_plot.QualityPlot()
    qtbot.addWidget(plot)
    plot.begin()
    assert "waiting for the first measurement" in plot.caption.text()
    plot.ended()
    assert plot.caption.text() == "no quality measured: the run ended before its first measurement"
    plot.begin()
    plot.add(QualityMeasured(20, 0.5, 0.1))
    plot.ended()
    assert "iteration 20:" in plot.caption.text()
