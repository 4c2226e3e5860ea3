"""The map drawn as a map: hexagons as shapes with outlines, no background corners, planes titled, cluster borders."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor, QImage, QPalette

from som_studio import picture
from som_studio.picture.raster import unit_centre
from som_studio.qt.widgets.map_view import MapView

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion
DARK = QColor(30, 32, 40)


@pytest.fixture
def view(qtbot):
    v = MapView()
    pal = v.palette()
    pal.setColor(QPalette.ColorRole.Base, DARK)  # a dark canvas: the picture's white background would show
    v.setPalette(pal)
    qtbot.addWidget(v)
    v.resize(900, 600)
    v.show()
    qtbot.waitExposed(v)
    yield v
    v.inspector.jobs.wait()


def _show(view, weights, views, mode=picture.RGB):
    view.begin(weights.shape[-1], "test", views)
    view.set_views(views)
    view.set_choice(mode, 0)
    frame = picture.make_frame(1, weights, view.choice(), *picture.colour_range(weights), views)
    view.show_frame(frame, force=True)
    return frame


def _grab(view) -> QImage:
    return view.plot.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)


def _on_screen(view, x: float, y: float) -> tuple[int, int]:
    """The grabbed canvas's pixel showing the frame's pixel (``x``, ``y``)."""
    p = view.plot.mapFromScene(view.view_box.mapViewToScene(QPointF(x, y)))
    return p.x(), p.y()


def _rgb(img: QImage, x: int, y: int) -> tuple[int, int, int]:
    c = img.pixelColor(x, y)
    return c.red(), c.green(), c.blue()


def test_a_zoomed_hex_map_is_hexagons_with_outlines_and_no_white_corners(view, qtbot):
    weights = np.zeros((6, 8, 3))
    weights[..., 0] = 1.0  # one colour everywhere: only the outlines tell the units apart
    weights[0, 0] = (0.0, 0.0, 1.0)
    views = picture.MapViews(topology="hex")
    frame = _show(view, weights, views)
    view.view_box.autoRange(padding=0)
    qtbot.wait(50)
    img = _grab(view)
    drawn = view.cells.drawn
    # Zoomed past the picture's pixels: the hexagons are polygons, every edge a line.
    assert drawn["filled"] == 48 and drawn["outlines"] == len(picture.cell_edges(6, 8, "hex", frame.scale))
    # Across one row of red units the outlines show as darker lines between them.
    y = _on_screen(view, *unit_centre(2, 0, "hex", frame.scale))[1]
    row = [_rgb(img, x, y) for x in range(img.width())]
    reds = [c for c in row if c[0] > 200 and c[1] < 60]
    dark = [c for c in row if c[0] < 200 and c[0] > 60 and c[1] < 60]
    assert len(reds) > 100 and len(dark) >= 6  # a line at each of the row's units' sides
    # The picture's corner outside the first hexagon shows the canvas's colour, not the picture's white.
    assert _rgb(img, *_on_screen(view, 1.0, 1.0)) == (DARK.red(), DARK.green(), DARK.blue())
    assert (255, 255, 255) not in {_rgb(img, x, y) for x in range(0, img.width(), 3) for y in range(0, img.height(), 3)}


def test_a_big_hex_map_shown_whole_draws_no_cell_by_cell(view, qtbot):
    weights = np.random.default_rng(0).random((300, 400, 3))
    _show(view, weights, picture.MapViews(topology="hex"))
    view.view_box.autoRange(padding=0)
    qtbot.wait(50)
    _grab(view)
    # Its cells are about a pixel wide here: no outlines, no polygons, the picture alone.
    assert view.cells.drawn == {"outlines": 0, "filled": 0, "titles": 0}


def test_all_feature_planes_are_titled_with_their_bars_and_cluster_borders_show_over_them(view, qtbot):
    d = 13
    rng = np.random.default_rng(1)
    weights = rng.random((7, 10, d))
    names = tuple(f"column {k}" for k in range(d))
    clusters = np.zeros((7, 10), dtype=int)
    clusters[:, 5:] = 1
    views = picture.MapViews(topology="hex", feature_names=names, clusters=clusters)
    frame = _show(view, weights, views, picture.PLANES)
    assert [t.title for t in frame.tiles] == list(names)
    view.view_box.autoRange(padding=0)
    qtbot.wait(50)
    _grab(view)
    assert view.cells.drawn["titles"] == d
    # The bars are in the picture, under their planes: the side legend does not repeat them.
    assert not view.inspector.legend.isVisible()
    # Clusters at hand: their borders are drawn over the view from the start.
    assert view.borders.isEnabled() and view.borders.isChecked()
    qtbot.waitUntil(lambda: view.cells._borders is not None, timeout=WAIT_MS)
    # Off: no borders; on again: back; a run without clusters: the choice is not offered.
    view.borders.setChecked(False)
    assert view.cells._borders is None
    view.borders.setChecked(True)
    qtbot.waitUntil(lambda: view.cells._borders is not None, timeout=WAIT_MS)
    view.begin(d, "next", picture.MapViews(topology="hex"))
    assert not view.borders.isEnabled()


def test_a_wide_runs_planes_grid_draws_the_first_planes_and_says_how_many_of_how_many(view, qtbot):
    # A thousand features drew a thousand planes a few pixels each, their titles unreadable.
    d = picture.PLANES_SHOWN + 36
    weights = np.random.default_rng(2).random((6, 8, d))
    names = tuple(f"gene {k}" for k in range(d))
    frame = _show(view, weights, picture.MapViews(feature_names=names), picture.PLANES)
    assert [t.title for t in frame.tiles] == list(names[: picture.PLANES_SHOWN])
    assert view.planes_note.isVisible()
    assert f"The first {picture.PLANES_SHOWN} of {d} feature planes" in view.planes_note.text()
    # Fewer features than the cap: every plane, and no such words.
    _show(view, weights[..., :5], picture.MapViews(feature_names=names[:5]), picture.PLANES)
    assert not view.planes_note.isVisible()
