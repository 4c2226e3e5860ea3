"""The map view's hover read-out, unit-details panel and legend, and drawing a large map off the GUI thread."""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF, Qt

from som_studio import picture
from som_studio.app_model.examples import iris_config
from som_studio.core.som.problem import load_problem_table
from som_studio.picture.raster import unit_centre
from som_studio.qt.widgets.map_view import MapView

# The offscreen platform plugin says this about top-level widgets; it is not a problem of ours.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


@pytest.fixture
def view(qtbot):
    v = MapView()
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    yield v
    v.inspector.jobs.wait()


def _iris_map():
    """An iris-like 8x12 hex map: codebook from the data itself, so units have examples and labels."""
    cfg = iris_config()
    table = load_problem_table(cfg)
    rng = np.random.default_rng(0)
    weights = table.values[rng.choice(len(table.values), 96, replace=False)].reshape(8, 12, 4)
    views = picture.MapViews.from_config(cfg, table.feature_names).measured(weights, table.values, table.labels)
    views = picture.MapViews(**{**views.__dict__, "offset": table.scaling.offset, "scale": table.scaling.scale})
    return cfg, table, weights, views


def _click_unit(qtbot, view: MapView, row: int, col: int) -> None:
    """A real left click on unit (row, col)'s centre in the view."""
    f = view.last_frame
    x, y = unit_centre(row, col, f.topology, f.scale)
    scene = view.image.mapToScene(QPointF(x, y))
    pos = view.plot.mapFromScene(scene)
    qtbot.mouseClick(view.plot.viewport(), Qt.MouseButton.LeftButton, pos=pos)


def test_clicking_a_hexagon_shows_that_units_details(qtbot, view):
    cfg, table, weights, views = _iris_map()
    view.begin(4, "iris", views, cfg)
    view.set_choice(picture.LABELS, 0)
    view.keep_final(weights)
    view.redraw()
    qtbot.waitUntil(
        lambda: view.last_frame is not None and view.last_frame.view.mode == picture.LABELS, timeout=WAIT_MS
    )
    view.resize(1500, 1000)  # hexagons drawn as shapes over the picture from this size on
    qtbot.wait(100)
    with qtbot.waitSignal(view.inspector.details_shown, timeout=WAIT_MS) as sig:
        _click_unit(qtbot, view, 5, 7)  # an odd row: its hexagon sits half a unit to the right
    assert "Finding its examples" in view.inspector.panel.text()  # asked for by the click, found off the GUI thread
    with qtbot.waitSignal(view.inspector.details_shown, timeout=WAIT_MS) as sig:
        pass  # the details again, with the examples' rows
    d = sig.args[0]
    assert view.inspector.index is not None
    assert (d.row, d.col) == (5, 7)
    assert view.inspector.panel.isVisible()
    # A ring marks the clicked unit on the map, centred on its hexagon.
    ring = view.inspector.marker
    f = view.last_frame
    assert ring.isVisible() and ring.rect().center().toTuple() == pytest.approx(unit_centre(5, 7, f.topology, f.scale))
    # Drawn, not hidden under the hexagons' shapes: the ring's right, inside the next hexagon (clear of its
    # outline), is dark on screen.
    assert view.cells.drawn["filled"] > 0
    right = view.plot.mapFromScene(ring.mapToScene(QPointF(ring.rect().right(), ring.rect().center().y())))
    shot = view.plot.grab().toImage()
    assert min(shot.pixelColor(right.x() + dx, right.y()).lightness() for dx in (-1, 0, 1)) < 60
    text = view.inspector.panel.text()
    # Codebook by feature name, in centimetres (the map was trained z-scored).
    for k, name in enumerate(table.feature_names):
        expected = table.scaling.invert(weights[5, 7])[k]
        assert name in text and f"{expected:.4g}" in text
    assert d.hits == int(views.hits[5, 7]) and f"Hits: {d.hits}" in text
    assert d.label == views.labels[5, 7]
    first = np.flatnonzero(view.inspector.index.bmus == 5 * 12 + 7)
    assert d.example_rows == tuple(int(r) for r in first[:20])


def test_a_runs_examples_are_searched_once_and_only_when_a_units_details_ask(qtbot, view, monkeypatch):
    """The search of every example's unit reads the run's data again and runs on the host's cores: at a run's end
    it would slow the next run, so it waits for a click, and a map is searched once however many clicks."""
    from som_studio.app_model import units

    cfg, _table, weights, views = _iris_map()
    searched = []
    real = units.UnitIndex.for_config.__func__
    monkeypatch.setattr(units.UnitIndex, "for_config", classmethod(lambda c, w, k: searched.append(1) or real(c, w, k)))
    view.begin(4, "iris", views, cfg)
    view.set_choice(picture.HITS, 0)
    view.keep_final(weights)
    view.redraw()
    qtbot.waitUntil(lambda: view.inspector.umatrix is not None, timeout=WAIT_MS)  # the U-matrix, for the hover
    qtbot.wait(50)
    assert searched == [] and view.inspector.index is None
    view.inspector.select(2, 3)
    qtbot.waitUntil(lambda: view.inspector.index is not None, timeout=WAIT_MS)
    view.inspector.select(4, 5)
    view.inspector.select(2, 3)
    view.inspector.jobs.wait()
    assert searched == [1]
    # Another map is another search.
    view.keep_final(weights + 0.01)
    assert view.inspector.index is None
    view.inspector.select(2, 3)
    qtbot.waitUntil(lambda: view.inspector.index is not None, timeout=WAIT_MS)
    assert searched == [1, 1]


def test_hover_reads_the_unit_and_the_value_under_the_cursor(qtbot, view):
    cfg, _table, weights, views = _iris_map()
    view.begin(4, "iris", views, cfg)
    view.set_choice(picture.HITS, 0)
    view.keep_final(weights)
    view.redraw()
    qtbot.waitUntil(lambda: view.last_frame is not None and view.last_frame.view.mode == picture.HITS, timeout=WAIT_MS)
    f = view.last_frame
    scene = view.image.mapToScene(QPointF(*unit_centre(2, 3, f.topology, f.scale)))
    view.inspector._on_moved(scene)  # what the scene's sigMouseMoved delivers
    n = int(views.hits[2, 3])
    assert view.inspector.readout.text() == f"unit (2, 3): {n} hit{'' if n == 1 else 's'}"
    # The legend beside it is the hit map's colour bar, up to the most hits.
    assert view.inspector.legend.text() == f"examples per unit: 0 – {int(views.hits.max())}"
    assert view.inspector.legend.isVisible()


def test_a_view_without_a_legend_leaves_no_empty_column_beside_the_map(qtbot, view):
    rgb = np.random.default_rng(1).random((6, 8, 3))
    lo, hi = picture.colour_range(rgb)
    for mode, shown in ((picture.RGB, False), (picture.UMATRIX, True), (picture.RGB, False)):
        view.inspector.legend.set_frame(picture.make_frame(0, rgb, picture.ViewChoice(mode), lo, hi))
        assert view.inspector.legend.isVisible() is shown, mode
    # A named table's three features in RGB: the legend says which feature each channel shows.
    named = picture.MapViews(feature_names=("a", "b", "c"))
    view.inspector.legend.set_frame(picture.make_frame(0, rgb, picture.ViewChoice(picture.RGB), lo, hi, named))
    assert view.inspector.legend.isVisible()
    assert view.inspector.legend.text() == "colour channels\nred: a\ngreen: b\nblue: c"


def test_labels_legend_shows_purity_and_clusters_have_their_own_colours(qtbot, view):
    cfg, _table, weights, views = _iris_map()
    clusters = (np.arange(96).reshape(8, 12) // 32).astype(np.int32)
    views = picture.MapViews(**{**views.__dict__, "clusters": clusters})
    view.begin(4, "iris", views, cfg)
    view.set_choice(picture.LABELS, 0)
    view.keep_final(weights)
    view.redraw()
    qtbot.waitUntil(
        lambda: view.last_frame is not None and view.last_frame.view.mode == picture.LABELS, timeout=WAIT_MS
    )
    legend = view.inspector.legend.text()
    assert "setosa" in legend and f"label purity {views.purity:.3f}" in legend
    label_colours = {c for _, c in view.last_frame.legend.entries}
    view.set_choice(picture.CLUSTERS, 0)
    qtbot.waitUntil(lambda: view.last_frame.view.mode == picture.CLUSTERS, timeout=WAIT_MS)
    assert "cluster 0" in view.inspector.legend.text()
    assert label_colours.isdisjoint({c for _, c in view.last_frame.legend.entries})


def test_a_1024_map_is_drawn_off_the_gui_thread(qtbot, view, monkeypatch):
    """Changing the view of a finished 1024x1024 map returns at once; the picture comes from the jobs' thread."""
    weights = np.random.default_rng(0).random((1024, 1024, 3)).astype(np.float32)
    hits = np.random.default_rng(1).integers(0, 5, (1024, 1024))
    view.begin(3, "big", picture.MapViews(topology="rect", hits=hits))
    view.keep_final(weights)
    drawn_on: list[str] = []
    real = picture.make_frame

    def spy(*a, **kw):
        drawn_on.append(threading.current_thread().name)
        return real(*a, **kw)

    monkeypatch.setattr(picture, "make_frame", spy)
    before = view.frames_drawn
    view.set_choice(picture.PLANES, 0)
    assert view.frames_drawn == before and view.caption.text() == "drawing…"
    qtbot.waitUntil(lambda: view.frames_drawn > before, timeout=WAIT_MS)
    view.set_choice(picture.HITS, 0)
    qtbot.waitUntil(lambda: view.last_frame.view.mode == picture.HITS, timeout=WAIT_MS)
    assert drawn_on and all(name == "som-map-render" for name in drawn_on)
    assert view.last_frame.grid == (1024, 1024)


def test_a_huge_picture_is_shown_thinned_and_still_read_in_its_own_pixels(qtbot, view):
    """A 1024x1024 hex map's planes grid (millions of pixels) is set thinned; clicks still find their hexagon."""
    weights = np.random.default_rng(0).random((1024, 1024, 3))
    views = picture.MapViews(topology="hex")
    frame = picture.make_frame(1, weights, picture.ViewChoice(picture.PLANES), *picture.colour_range(weights), views)
    view.begin(3, "big", views)
    view.show_frame(frame, force=True)
    shown = view.image.image
    assert shown.shape[0] * shown.shape[1] <= 2_000_000 < frame.image.shape[0] * frame.image.shape[1]
    tile = frame.tiles[2]
    for row, col in ((0, 0), (700, 301), (1023, 1023)):
        x, y = unit_centre(row, col, frame.topology, frame.scale)
        hit = view.inspector.unit_at_scene(view.image.mapToScene(QPointF(tile.x + x, tile.y + y)))
        assert hit == ((row, col), 2)


def test_jobs_answer_only_the_newest_of_a_kind_and_kinds_do_not_wait_for_each_other(qtbot, view):
    jobs = view.inspector.jobs
    release = threading.Event()
    answers: list = []
    jobs.submit("index", lambda: release.wait(WAIT_MS / 1000) and "index", answers.append)
    for k in range(3):
        jobs.submit("render", lambda k=k: f"render {k}", answers.append)
    # The drawing is answered while the index still works: each kind has its own thread.
    qtbot.waitUntil(lambda: "render 2" in answers, timeout=WAIT_MS)
    assert "index" not in answers
    release.set()
    qtbot.waitUntil(lambda: "index" in answers, timeout=WAIT_MS)
    # Only the newest drawing is answered (older ones were replaced or dropped), each once.
    assert [a for a in answers if a.startswith("render")] == ["render 2"]
    jobs.wait()
    assert not jobs.busy()


def test_a_job_that_ends_after_its_view_was_deleted_ends_quietly(qtbot, monkeypatch):
    """A page rebuilt while its map was still being drawn: the job's thread has nobody to answer and says nothing."""
    from shiboken6 import delete

    from som_studio.qt.widgets.map_inspect import MapJobs

    failures: list = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    jobs, release = MapJobs(), threading.Event()
    jobs.submit("render", lambda: release.wait(WAIT_MS / 1000) and "render", lambda _r: None)
    (thread,) = jobs._threads.values()
    delete(jobs)
    release.set()
    thread.join(WAIT_MS / 1000)
    assert not thread.is_alive() and failures == []
