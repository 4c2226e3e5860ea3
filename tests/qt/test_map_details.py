"""A live run's map in the window: planes named by feature, its model's views right after it, unit details."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from som_studio import picture
from som_studio.app_model.examples import iris_config

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def _items(window) -> list[str]:
    mode = window.map_view.mode
    return [mode.itemText(i) for i in range(mode.count())]


def test_a_live_iris_run_offers_hits_labels_and_details_without_reopening(qtbot, window):
    named_live: list[list[str]] = []
    window.controller.run_started.connect(lambda _ev: named_live.append(_items(window)))
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.run_config(iris_config(epochs=10)) == ""
    # While it ran, its planes were named after the data's columns (the Started event carries them).
    assert named_live and "petal_length" in named_live[0] and "Feature 2" not in named_live[0]
    # Right after it (the record's model came through the worker's pipe): hits and labels are offered.
    items = _items(window)
    assert "Hit map" in items and "Labels" in items
    view = window.map_view
    view.set_choice(picture.LABELS, 0)
    qtbot.waitUntil(lambda: view.last_frame.view.mode == picture.LABELS, timeout=WAIT_MS)
    legend = view.inspector.legend.text()
    assert "setosa" in legend and "virginica" in legend
    purity = float(legend.rsplit("label purity ", 1)[1].split(";")[0])  # then what the grey units are
    assert purity >= 0.9
    assert f"label purity {purity:.3f}" in window.status_label.text()  # the run's own line says it too
    assert view.last_frame.topology == "hex"
    # A unit's details: its examples' rows come from the run's own data, found off the GUI thread when a unit's
    # details first ask for them (not at the run's end, where the search would take the next run's cores).
    assert view.inspector.index is None
    hits = view.inspector.views.hits
    row, col = divmod(int(hits.argmax()), hits.shape[1])
    view.inspector.select(row, col)
    assert "Finding its examples" in view.inspector.panel.text()
    qtbot.waitUntil(lambda: view.inspector.index is not None, timeout=WAIT_MS)
    d = view.inspector.select(row, col)
    assert d.hits == int(hits[row, col]) == d.example_count and len(d.example_rows) == min(20, d.hits)
    assert [name for name, _ in d.codebook] == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert view.inspector.panel.isVisible() and f"Hits: {d.hits}" in view.inspector.panel.text()


def test_a_live_run_with_labels_offers_hits_and_labels_and_hover_reads_them(qtbot, window):
    """The worker measures hits and labels on each live frame of a small map: the views are offered while it runs."""
    from PySide6.QtCore import QPointF

    from som_studio.picture.raster import unit_centre

    with qtbot.waitSignal(window.controller.run_started, timeout=WAIT_MS):
        assert window.run_config(iris_config(epochs=200_000)) == ""  # far longer than the test
    assert {"Hit map", "Labels"} <= set(_items(window))
    view = window.map_view
    view.set_choice(picture.LABELS, 0)
    # A frame that comes sooner than the view's pace is kept undrawn until its time: wait for one drawn.
    labelled = lambda: view.last_frame is not None and view.last_frame.view.mode == picture.LABELS
    qtbot.waitUntil(lambda: labelled() and not view._undrawn, timeout=WAIT_MS)
    assert window.controller.busy  # still live
    assert "setosa" in view.inspector.legend.text()
    frame = view.last_frame
    read = []
    for row, col in ((0, 0), (3, 5), (7, 11)):
        x, y = unit_centre(row, col, frame.topology, frame.scale)
        view.inspector._on_moved(view.inspector._image.mapToScene(QPointF(x, y)))
        read.append(view.inspector.readout.text())
    # Each unit's label (and its purity), or that it has no examples: never the bare unit.
    assert all(": label " in t or t.endswith(": no examples") for t in read), read
    assert any(": label " in t for t in read), read
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.controller.stop()
