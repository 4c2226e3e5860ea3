"""Hex maps drawn as hexagons, the views beyond the map (hits, labels, clusters, planes) and their legends."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from som_studio import picture
from som_studio.core.som import clusters as clmod
from som_studio.core.som import metrics
from som_studio.core.som.topology import HEX_ROW, unit_xy


def test_hex_raster_puts_each_pixel_in_the_hexagon_of_its_nearest_unit():
    h, w, s = 5, 7, 10
    r = picture.raster(h, w, "hex", s)
    x, y = unit_xy(h, w, "hex")
    # Every unit's centre pixel is that unit's, and every unit owns about a hexagon's area (sqrt(3)/2 per unit).
    for row in range(h):
        for col in range(w):
            cx, cy = r.unit_centre(row, col)
            assert r.unit_at(cx, cy) == (row, col)
    counts = np.bincount(r.index[r.index >= 0], minlength=h * w)
    area = HEX_ROW * s * s
    assert np.all(np.abs(counts - area) < 0.12 * area)
    # A pixel inside a cell is nearer its own unit's centre than any other's (the hexagons are the Voronoi cells).
    iy, ix = np.nonzero(r.index >= 0)
    px = r.origin[0] + (ix + 0.5) / s
    py = r.origin[1] + (iy + 0.5) / s
    d2 = (px[:, None] - x.ravel()[None, :]) ** 2 + (py[:, None] - y.ravel()[None, :]) ** 2
    own = d2[np.arange(len(px)), r.index[iy, ix]]
    assert np.all(own <= d2.min(axis=1) + 1e-9)
    # Corners outside the lattice are background.
    assert r.index[0, 0] == -1 and r.unit_at(-1, 3) is None


def test_rect_raster_is_square_cells():
    r = picture.raster(3, 4, "rect", 5)
    assert r.shape == (15, 20)
    assert r.unit_at(0, 0) == (0, 0) and r.unit_at(19.5, 14.5) == (2, 3) and r.unit_at(5.0, 4.9) == (0, 1)


@pytest.mark.parametrize("mode", [picture.RGB, picture.UMATRIX, picture.COMPONENT, picture.PLANES])
def test_every_view_of_a_hex_map_is_drawn_in_hexagons(mode):
    w = np.random.default_rng(0).random((6, 8, 3))
    lo, hi = picture.colour_range(w)
    views = picture.MapViews(topology="hex")
    f = picture.make_frame(3, w, picture.ViewChoice(mode), lo, hi, views)
    assert f.topology == "hex" and f.scale >= 2 and f.image.ndim == 3 and f.image.dtype == np.uint8
    assert tuple(f.image[0, 0]) == picture.colours.BACKGROUND  # the corner outside the hexagons
    if mode == picture.RGB:  # a unit's pixels carry its colour
        cx, cy = picture.raster(6, 8, "hex", f.scale).unit_centre(3, 5)
        np.testing.assert_array_equal(f.image[int(cy), int(cx)], metrics.to_rgb(w, lo, hi)[3, 5])
    # Frames cross the worker's pipe, and a pixel maps back to its unit (the hover read-out).
    back = pickle.loads(pickle.dumps(f))
    if mode != picture.PLANES:
        assert back.unit_at(*picture.raster(6, 8, "hex", f.scale).unit_centre(2, 2)) == (2, 2)


def test_the_umatrix_follows_the_lattice():
    w = np.random.default_rng(1).random((6, 8, 4))
    lo, hi = picture.colour_range(w)
    hexa = picture.MapViews(topology="hex", toroid=True)
    d = picture.draw(w, picture.ViewChoice(picture.UMATRIX), lo, hi, hexa, scale=1)
    um = metrics.u_matrix(w, "hex", True)
    assert isinstance(d.legend, picture.ColourBar) and d.legend.hi == pytest.approx(um.max())
    # At one pixel per unit on a rect lattice the U-matrix stays levels the viewer colours.
    plain = picture.draw(w, picture.ViewChoice(picture.UMATRIX), lo, hi)
    assert plain.image.shape == (6, 8)


def _iris_like():
    rng = np.random.default_rng(4)
    data = np.concatenate([rng.normal(c, 0.1, (30, 2)) for c in ((0, 0), (1, 0), (0, 1))])
    labels = np.repeat(np.array(["a", "b", "c"]), 30)
    weights = rng.random((5, 6, 2))
    return weights, data, labels


def test_hits_and_labels_are_measured_as_the_core_measures_them():
    weights, data, labels = _iris_like()
    views = picture.MapViews(topology="hex").measured(weights, data, labels, iteration=5)
    first, _ = metrics.nearest_units(weights, data)
    np.testing.assert_array_equal(views.hits.ravel(), metrics.hits(first, 30))
    np.testing.assert_array_equal(views.labels.ravel(), metrics.unit_labels(first, labels, 30))
    assert views.purity == pytest.approx(metrics.label_purity(weights, data, labels))
    assert views.iteration == 5 and views.topology == "hex"


def test_hit_label_and_cluster_views_with_their_legends():
    weights, data, labels = _iris_like()
    lo, hi = picture.colour_range(weights)
    views = picture.MapViews().measured(weights, data, labels)
    views = picture.MapViews(
        hits=views.hits,
        labels=views.labels,
        unit_purity=views.unit_purity,
        purity=views.purity,
        clusters=clmod.kmeans(weights, 3),
    )
    hits = picture.make_frame(0, weights, picture.ViewChoice(picture.HITS), lo, hi, views)
    assert isinstance(hits.legend, picture.ColourBar) and hits.legend.integer
    assert hits.legend.hi == views.hits.max()
    empty = np.argwhere(views.hits == 0)
    if len(empty):
        r, c = empty[0]
        assert tuple(hits.image[r, c]) == picture.colours.EMPTY
    lab = picture.make_frame(0, weights, picture.ViewChoice(picture.LABELS), lo, hi, views)
    assert isinstance(lab.legend, picture.Swatches)
    assert [n for n, _ in lab.legend.entries] == sorted({str(x) for x in views.labels.ravel() if x})
    assert f"{views.purity:.3f}" in lab.legend.note
    # Units no example landed on are pale grey, which no swatch explains: the note does.
    assert ("pale grey: no examples" in lab.legend.note) == bool((views.hits == 0).any())
    # A unit whose examples all carry its label has its label's own colour.
    pure = np.argwhere((views.unit_purity == 1.0) & (views.labels == "a"))
    r, c = pure[0]
    assert tuple(lab.image[r, c]) == dict(lab.legend.entries)["a"]
    cl = picture.make_frame(0, weights, picture.ViewChoice(picture.CLUSTERS), lo, hi, views)
    assert cl.scale >= 3 and len(cl.legend.entries) == 3  # room for borders between clusters
    assert (cl.image == np.array(picture.colours.BORDER, np.uint8)).all(axis=-1).any()


def test_views_without_their_inputs_fall_back_and_the_listing_says_what_is_there():
    w = np.random.default_rng(2).random((4, 5, 4))
    lo, hi = picture.colour_range(w)
    f = picture.make_frame(0, w, picture.ViewChoice(picture.HITS), lo, hi, picture.MapViews())
    assert f.view.mode == picture.UMATRIX
    named = picture.MapViews(feature_names=("a", "b", "c", "d"), hits=np.ones((4, 5), dtype=np.int64))
    listed = picture.choices(4, named)
    modes = [c.mode for c, _ in listed]
    assert picture.RGB not in modes and picture.HITS in modes and picture.LABELS not in modes
    assert [t for c, t in listed if c.mode == picture.COMPONENT] == ["a", "b", "c", "d"]
    assert {k.mode for k in picture.VIEWS} == set(picture.MODES)
    assert all(c.key == f"{c.mode}:{c.component}" for c, _ in listed)


def test_the_planes_grid_names_each_plane_and_maps_pixels_back_to_units():
    w = np.random.default_rng(3).random((4, 6, 5))
    lo, hi = picture.colour_range(w)
    names = ("x", "y", "z", "u", "v")
    views = picture.MapViews(feature_names=names, offset=np.full(5, 10.0), scale=np.full(5, 2.0))
    f = picture.make_frame(0, w, picture.ViewChoice(picture.PLANES), lo, hi, views)
    assert [t.title for t in f.tiles] == list(names)
    t = f.tiles[3]
    assert t.bar is not None and t.bar.lo == pytest.approx(10 + 2 * lo[3])  # in the data's original units
    assert f.unit_at(t.x + 0.5, t.y + 0.5) == (0, 0)
    np.testing.assert_array_equal(
        f.image[t.y, t.x], picture.VIRIDIS[round((w[0, 0, 3] - lo[3]) / (hi[3] - lo[3]) * 255)]
    )
    shared = picture.make_frame(0, w, picture.ViewChoice(picture.PLANES_SHARED), lo, hi, views)
    assert isinstance(shared.legend, picture.ColourBar) and all(t.bar is None for t in shared.tiles)


@pytest.mark.parametrize("grid", [(7, 12), (3, 4), (34, 60)])
def test_a_small_rect_maps_planes_are_drawn_large_enough_to_name(grid):
    # At one pixel a unit a 12x7 rect map's planes were 12 pixels wide, their titles and bar values written
    # in proportion by the viewer, then magnified: huge titles, the bar's two ends over each other.
    w = np.random.default_rng(0).random((*grid, 4))
    lo, hi = picture.colour_range(w)
    widths = {}
    for topology in ("rect", "hex"):
        views = picture.MapViews(topology=topology)
        f = picture.make_frame(0, w, picture.ViewChoice(picture.PLANES), lo, hi, views)
        widths[topology] = f.tiles[0].width
        assert f.tiles[0].caption <= f.tiles[0].width / 8  # a title row in proportion to its plane
        t = f.tiles[1]
        assert f.unit_at(t.x + t.width / 2, t.y + t.height / 2) is not None  # the plane's pixels map to units
    assert widths["rect"] >= 90  # at one pixel a unit: 12, 4 and 60


def test_ward_clusters_are_numbered_by_first_unit():
    rng = np.random.default_rng(5)
    cb = np.concatenate([rng.normal(0, 0.05, (3, 6, 2)), rng.normal(3, 0.05, (3, 6, 2))])
    out = clmod.ward(cb, 2)
    assert out.shape == (6, 6) and out[0, 0] == 0
    assert (out[:3] == 0).all() and (out[3:] == 1).all()
    with pytest.raises(ValueError, match="k <= 36"):
        clmod.ward(cb, 40)


def test_viridis_ends():
    # matplotlib's viridis at its ends, within the polynomial's rounding
    assert np.abs(picture.VIRIDIS[0].astype(int) - (68, 1, 84)).max() <= 4
    assert np.abs(picture.VIRIDIS[-1].astype(int) - (253, 231, 37)).max() <= 4
    mid = picture.VIRIDIS[128].astype(int)
    assert math.dist(mid, (33, 145, 140)) < 6


def test_the_worker_measures_hits_and_labels_live_when_cheap():
    from pathlib import Path

    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.events import Snapshot, Started
    from som_studio.session.session import Session
    from som_studio.worker.process import _live_views

    iris = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"
    cfg = RunConfig(
        impl="numpy-batch", width=6, height=4, data=DataSpec(path=str(iris)), epochs=4, topology="hex", labels="species"
    )
    session = Session(cfg, snapshot_interval_s=0.0, quality_points=0)
    views, frames = None, []
    for ev in session.run():
        if isinstance(ev, Started):
            views = picture.MapViews.from_started(ev)
        elif isinstance(ev, Snapshot):
            live = _live_views(session, views, picture.ViewChoice(picture.LABELS), ev)
            frames.append(
                picture.make_frame(
                    ev.iteration, ev.map, picture.ViewChoice(picture.LABELS), *picture.colour_range(ev.map), live
                )
            )
            # Another view needs no measuring: the views go through as they are.
            assert _live_views(session, views, picture.ViewChoice(picture.UMATRIX), ev) is views
    assert frames and all(f.view.mode == picture.LABELS and f.topology == "hex" for f in frames)
    assert {n for n, _ in frames[-1].legend.entries} == {"setosa", "versicolor", "virginica"}
    assert "label purity" in frames[-1].legend.note
