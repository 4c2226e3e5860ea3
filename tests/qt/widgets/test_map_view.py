"""The live map view draws the newest frame it is given, and only while it can be seen."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from som_studio import picture
from som_studio.qt.widgets.map_view import DRAW_SHARE, HIDDEN_INTERVAL_S, MAX_DRAW_INTERVAL_S, MapView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _frame(iteration: int) -> picture.MapFrame:
    weights = np.random.default_rng(iteration).random((6, 8, 3))
    return picture.make_frame(iteration, weights, picture.ViewChoice(), *picture.colour_range(weights))


def _showing(qtbot) -> MapView:
    """A map view on screen that has drawn its first frame."""
    view = MapView()
    qtbot.addWidget(view)
    view.show()
    view.begin(3, "test")
    view.show_frame(_frame(1))
    return view


def test_frames_that_arrive_while_the_map_is_hidden_are_not_drawn_and_the_newest_is_drawn_when_shown(qtbot):
    view = _showing(qtbot)
    assert view.frames_drawn == 1
    view.hide()  # another page in front
    for it in range(2, 12):
        view.show_frame(_frame(it))
    assert view.frames_drawn == 1
    view.show()
    assert view.frames_drawn == 2 and view.last_frame.iteration == 11
    assert view.iteration.text() == "iteration 11" and view.caption.text() == "test"  # the title stays


def test_a_frame_that_costs_more_than_its_share_waits_and_the_newest_is_drawn_when_its_time_comes(qtbot):
    view = _showing(qtbot)
    for _ in range(7):  # as if each frame took 1.5 ms of the process's CPU: one every 0.15 s at most
        view.pacer.book(0.0015)
    assert view.draw_interval_s() == pytest.approx(0.0015 / DRAW_SHARE)
    for it in range(2, 6):  # they come faster than that: none drawn at once, none queued
        view.show_frame(_frame(it))
    assert view.frames_drawn == 1 and view.iteration.text() == "iteration 1"
    qtbot.waitUntil(lambda: view.frames_drawn == 2, timeout=10_000)
    assert view.iteration.text() == "iteration 5"  # the newest, drawn once
    qtbot.wait(300)
    assert view.frames_drawn == 2
    for _ in range(7):  # however slow a frame: the map still moves
        view.pacer.book(1.0)
    assert view.draw_interval_s() == MAX_DRAW_INTERVAL_S


def test_the_map_asks_for_no_more_frames_than_it_draws_and_few_while_hidden(qtbot):
    view = _showing(qtbot)
    asked: list[float] = []
    view.frame_interval_changed.connect(asked.append)
    view.hide()  # another page in front: one frame a second is plenty, the newest is drawn when shown
    assert asked == [HIDDEN_INTERVAL_S]
    view.show()
    assert asked[-1] == pytest.approx(view.draw_interval_s()) and asked[-1] < HIDDEN_INTERVAL_S
    for _ in range(7):
        view.pacer.book(0.0015)  # the frames got dearer: 1.5 ms each, so one every 0.15 s
    view.show_frame(_frame(2))  # drawn when its time comes; a paint books its cost and asks again
    qtbot.waitUntil(lambda: view.iteration.text() == "iteration 2", timeout=3000)
    qtbot.waitUntil(lambda: asked[-1] == pytest.approx(0.0015 / DRAW_SHARE), timeout=3000)
    n = len(asked)
    view.show_frame(_frame(3))
    qtbot.waitUntil(lambda: view.iteration.text() == "iteration 3", timeout=3000)
    qtbot.wait(50)
    assert len(asked) == n  # the same interval is not asked again


def test_the_list_of_views_says_what_is_drawn_and_the_view_picked_comes_back_when_it_can(qtbot):
    view = MapView()
    qtbot.addWidget(view)
    told = []
    view.view_changed.connect(lambda mode, component: told.append(mode))
    labelled = picture.MapViews(live=("hits", "labels"))
    view.begin(4, "iris", labelled)  # labels measured with every frame: offered while it trains
    view.set_choice(picture.LABELS, 0)
    assert view.choice().mode == picture.LABELS and told[-1] == picture.LABELS
    # The next run's labels are too dear to measure live: not offered, so neither drawn nor listed.
    view.begin(4, "a larger run", picture.MapViews())
    assert view.choice().mode == picture.UMATRIX and told[-1] == picture.UMATRIX  # the worker told as well
    # Its record brings the labels: the view picked comes back.
    view.set_views(picture.MapViews(labels=np.full((6, 8), "a"), hits=np.ones((6, 8), np.int64)))
    assert view.choice().mode == picture.LABELS and told[-1] == picture.LABELS


def test_cluster_borders_are_offered_once_the_map_has_clusters_and_say_so_before(qtbot):
    view = MapView()
    qtbot.addWidget(view)
    view.begin(4, "iris", picture.MapViews())
    assert not view.borders.isEnabled() and "with Clusters set in the Run panel" in view.borders.toolTip()
    view.set_views(picture.MapViews(clusters=np.arange(48).reshape(6, 8) % 3))
    assert view.borders.isEnabled() and view.borders.toolTip().startswith("Draw the borders")
