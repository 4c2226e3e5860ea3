"""The live plots keep a bounded history that still shows the whole run."""

from __future__ import annotations

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
    x, qe = plot.qe_curve.getData()
    assert len(x) <= quality_plot.HISTORY_POINTS
    assert x[0] == 0 and x[-1] == (n - 1) * 10
    assert qe.max() == 1.0
    assert len(plot.te_curve.getData()[0]) <= quality_plot.HISTORY_POINTS
