"""The live map view draws the newest frame it is given, and only while it can be seen."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from som_studio import picture
from som_studio.qt.widgets.map_view import MapView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")


def _frame(iteration: int) -> picture.MapFrame:
    weights = np.random.default_rng(iteration).random((6, 8, 3))
    return picture.make_frame(iteration, weights, picture.ViewChoice(), *picture.colour_range(weights))


def test_frames_that_arrive_while_the_map_is_hidden_are_not_drawn_and_the_newest_is_drawn_when_shown(qtbot):
    view = MapView()
    qtbot.addWidget(view)
    view.show()
    view.begin(3, "test")
    view.show_frame(_frame(1))
    assert view.frames_drawn == 1
    view.hide()  # another page in front
    for it in range(2, 12):
        view.show_frame(_frame(it))
    assert view.frames_drawn == 1
    view.show()
    assert view.frames_drawn == 2 and view.last_frame.iteration == 11
    assert view.caption.text() == "iteration 11"
