"""Plots read at a glance: three labelled ticks on every axis, legends off the data, TE on its own range, one style."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QColor, QFontMetrics, QPalette

from som_studio.qt.chart_style import LIGHT, PAIR_GAP_PX, log_ticks, theme_of, tick_labels
from som_studio.qt.widgets.quality_plot import QualityPlot
from som_studio.qt.widgets.timing_plot import TimingPlot, live_x_end
from som_studio.session.events import ChunkTimed, QualityMeasured
from tests.grids import EXHAUSTIVE

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


@pytest.mark.parametrize(
    ("lo", "hi"),
    [(2.1e-3, 2.6e-3), (50e-6, 5e-3), (0.1, 1.2), (1e-6, 10.0), (4.9e-3, 5.0e-3), (3e-3, 9e-3)],
)
@pytest.mark.parametrize("size", [90, 300])
def test_a_log_axis_has_three_ticks_over_any_range(lo, hi, size):
    ticks = log_ticks(math.log10(lo), math.log10(hi), size)
    assert len(ticks) >= 3
    assert all(math.log10(lo) - 1e-9 <= t <= math.log10(hi) + 1e-9 for t in ticks)
    assert len(ticks) <= max(4, size / 30)  # and not so many that their labels pile up
    px = [(t - math.log10(lo)) / (math.log10(hi) - math.log10(lo)) * size for t in ticks]
    assert all(b - a >= 18 for a, b in zip(px, px[1:])), px  # a label's height apart: none drawn over another


@pytest.mark.parametrize(("lo", "hi", "size"), [(0.8e-3, 3.5e-3, 80), (1e-4, 3.5e-3, 80), (0.9e-3, 3.2e-3, 60)])
def test_a_short_log_axis_keeps_its_labels_apart(lo, hi, size):
    # The timing dock in a small window: 1, 1.5, 2 and 3 ms were offered on 80 px, 1.5 and 2 ms 16 px apart.
    lo, hi = math.log10(lo), math.log10(hi)
    ticks = log_ticks(lo, hi, size)
    px = sorted((t - lo) / (hi - lo) * size for t in ticks)
    assert len(ticks) >= 2 and all(b - a >= 18 for a, b in zip(px, px[1:])), px
    assert math.log10(1e-3) in ticks  # the decade kept before the values between


def _shown(qtbot) -> TimingPlot:
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 260)
    plot.show()
    qtbot.waitExposed(plot)
    return plot


def _timing(qtbot, per_iteration: float, n: int = 60) -> TimingPlot:
    plot = _shown(qtbot)
    plot.begin("batch", 1000)
    rng = np.random.default_rng(0)
    plot.add_chunks([ChunkTimed(4 * i, 4, 4 * per_iteration * (1 + 0.1 * rng.random()), 0.0) for i in range(n)])
    plot.flush()
    return plot


@pytest.mark.parametrize("per_iteration", [2.2e-3, 45e-6, 0.8])
@pytest.mark.parametrize("log", [False, True])
def test_every_axis_of_the_timing_plot_shows_three_labelled_ticks(qtbot, per_iteration, log):
    plot = _timing(qtbot, per_iteration)
    plot.log_scale.setChecked(log)
    plot.plot.getPlotItem().vb.autoRange()
    qtbot.wait(20)
    for side in ("left", "bottom"):
        labels = tick_labels(plot.plot.getAxis(side))
        assert len(labels) >= 3, (side, labels)
    assert all(("s" in t) for t in tick_labels(plot.plot.getAxis("left")))  # durations with their unit


def test_a_live_runs_iteration_axis_moves_in_steps_ahead_of_its_chunks_and_fits_them_when_it_ends(qtbot):
    assert [live_x_end(e, 300) for e in (1, 3, 5, 6, 101, 201, 300)] == [2, 5, 5, 10, 200, 300, 300]
    assert live_x_end(201, None) == 500  # a run shown whole has no total: plain steps
    plot = _shown(qtbot)
    plot.begin("batch", 1000, total=300)
    ends = []
    for first in range(0, 300, 3):
        plot.add_chunks([ChunkTimed(first, 3, 0.03, 0.0)])
        plot._draw()  # what the redraw timer does, at most five times a second
        lo, hi = plot.plot.getPlotItem().vb.viewRange()[0]
        assert lo <= 0 and hi >= first + 3  # every chunk drawn is in view
        ends.append(hi)
    # The axis changed seven times in a hundred redraws (a change draws it again whole, with its grid).
    assert len(set(ends)) == 7
    plot.finish(0.01, 0.01)
    vb = plot.plot.getPlotItem().vb
    lo, hi = vb.viewRange()[0]
    assert vb.autoRangeEnabled()[0] and lo < 3 and 300 < hi and hi - lo < 1.2 * (300 - 3)  # its chunks, fitted


@pytest.mark.parametrize("chunks", [[(0, 1)], [(0, 1), (1, 2)], [(k, 1) for k in range(10)]])
def test_an_iteration_axis_names_only_whole_iterations(qtbot, chunks):
    # A run's first chunk or two: its axis spans an iteration or two, and ticks at 0.25 or 0.5 named none.
    plot = _shown(qtbot)
    if len(chunks) == 10:  # ten epochs in a narrow dock were ticked 2.5, 5, 7.5
        plot.resize(200, 260)
    plot.begin("batch", 1000, total=10 if len(chunks) == 10 else 300)
    plot.add_chunks([ChunkTimed(first, count, 0.01 * count, 0.0) for first, count in chunks])
    plot._draw()
    qtbot.wait(20)
    labels = tick_labels(plot.plot.getAxis("bottom"))
    assert labels and all(t.isdigit() for t in labels), labels


def test_legends_sit_above_the_data_not_on_it(qtbot):
    plot = _timing(qtbot, 2e-3)
    item = plot.plot.getPlotItem()
    legend_box = plot.legend.sceneBoundingRect()
    assert legend_box.height() > 0
    assert not legend_box.intersects(item.vb.sceneBoundingRect())
    # Smoothing is optional: the rolling median hides and shows with its box.
    plot.smoothing.setChecked(False)
    assert not plot.median.isVisible()
    plot.smoothing.setChecked(True)
    assert plot.median.isVisible()


def _quality(qtbot, width: int, height: int, points: list[QualityMeasured]) -> QualityPlot:
    plot = QualityPlot()
    qtbot.addWidget(plot)
    plot.resize(width, height)
    plot.show()
    qtbot.waitExposed(plot)
    plot.begin()
    for point in points:
        plot.add(point)
    plot.flush()
    qtbot.wait(20)
    return plot


def test_te_is_on_a_range_that_shows_its_values_and_every_quality_axis_has_three_ticks(qtbot):
    points = [QualityMeasured(i * 5000, 0.3 * np.exp(-i / 5) + 0.02, 0.04 * np.exp(-i / 3) + 0.02) for i in range(11)]
    plot = _quality(qtbot, 600, 260, points)
    lo, hi = plot.te_view.viewRange()[1]
    # TE from 0.02 to 0.06 fills most of its axis instead of the bottom tenth of 0-1.
    assert hi < 0.1 and (0.06 - 0.02) / (hi - lo) > 0.5
    for side in ("left", "right", "bottom"):
        labels = tick_labels(plot.plot.getAxis(side))
        assert len(labels) >= 3, (side, labels)
    assert not plot.legend.sceneBoundingRect().intersects(plot.plot.getPlotItem().vb.sceneBoundingRect())


@pytest.mark.parametrize("width", [200, 420])
@pytest.mark.parametrize("iteration", [0, 5000])
def test_a_lone_first_measurement_stands_over_a_labelled_iteration_axis(qtbot, width, iteration):
    # The initial map's point arrives alone: its axis from 0 to 1 had no whole iteration to label.
    plot = _quality(qtbot, width, 260, [QualityMeasured(iteration, 0.017, 1.0)])
    labels = tick_labels(plot.plot.getAxis("bottom"))
    assert labels and all(t.replace(",", "").isdigit() for t in labels), labels
    lo, hi = plot.plot.getAxis("bottom").range
    assert lo < iteration < hi


@pytest.mark.parametrize(
    "width, first, every, n",
    [(230, 0, 100, 7), (200, 1899, 100, 3)],
    ids=["from-0", "four-digits-later-in-a-run"],
)
def test_a_narrow_quality_plots_iteration_labels_never_overlap(qtbot, width, first, every, n):
    # The Quality dock beside the map: two y axes leave its iteration axis under 100 px.
    points = [QualityMeasured(first + every * i, 0.13 - 0.015 * i, 0.002 + 0.001 * (i % 3)) for i in range(n)]
    _labels_apart(_quality(qtbot, width, 330, points).plot.getAxis("bottom"))


# Every 6 px of narrow widths in the exhaustive run (-m exhaustive), every 18 px by default.
@pytest.mark.parametrize(
    "width", [w if (w - 150) % 18 == 0 else pytest.param(w, marks=EXHAUSTIVE) for w in range(150, 260, 6)]
)
def test_a_narrow_timing_plots_iteration_labels_stand_apart(qtbot, width):
    # The Timings dock of a window 1,000 px wide, 50,000 steps: "20,00040,000" was drawn, the labels touching.
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.resize(width, 330)
    plot.show()
    qtbot.waitExposed(plot)
    plot.begin("online", 1)
    plot.add_chunks([ChunkTimed(500 * i, 500, 500 * 3e-5, 0.0) for i in range(100)])
    plot.flush()
    qtbot.wait(20)
    _labels_apart(plot.plot.getAxis("bottom"))


def _labels_apart(axis) -> None:
    """Every label of a horizontal ``axis`` drawn clear of the next by at least :data:`PAIR_GAP_PX`."""
    assert tick_labels(axis)
    # Where each label is drawn: centred on its tick, the axis's range over its width.
    lo, hi = axis.range
    ((_, values),) = axis.tickValues(lo, hi, axis.width())
    metrics = QFontMetrics(axis.style.get("tickFont") or axis.font())
    spans = []
    for v, text in zip(values, axis.tickStrings(values, 1.0, 0.0), strict=True):
        at, half = (v - lo) / (hi - lo) * axis.width(), metrics.horizontalAdvance(text) / 2
        spans.append((at - half, at + half))
    assert all(a[1] + PAIR_GAP_PX <= b[0] for a, b in zip(spans, spans[1:])), spans


def test_live_plots_follow_the_palette(qtbot):
    plot = TimingPlot()
    qtbot.addWidget(plot)
    dark = QColor(30, 32, 40)
    pal = plot.palette()
    pal.setColor(QPalette.ColorRole.Base, dark)
    pal.setColor(QPalette.ColorRole.Text, QColor(230, 230, 230))
    plot.setPalette(pal)
    assert plot.plot.backgroundBrush().color() == dark
    assert theme_of(plot).dark and not LIGHT.dark
    assert "#000000" not in theme_of(plot).colours  # no black curve on a dark canvas


def test_a_legend_of_long_names_takes_fewer_to_a_line(qtbot):
    """Four long names to a line set the chart's least width past the Compare page's: its right edge was cut."""
    import pyqtgraph as pg

    from som_studio.qt import report_charts

    def legend_for(names: list[str]) -> pg.LegendItem:
        win = pg.GraphicsLayoutWidget()
        qtbot.addWidget(win)
        plot = win.addPlot(row=0, col=0)
        for name in names:
            plot.plot([0, 1], [0, 1], name=name)
        return report_charts._legend(win, plot, 1)

    assert (
        legend_for(["numpy-batch", "jax-fused-batch", "jax-vmap-batch", "numpy-online", "jax-scan-online"]).columnCount
        == 4
    )
    assert legend_for(["nan_som.py:NanSom", "jax-fused-batch", "sweep sigma_end=0.5, seed=0"]).columnCount == 2
