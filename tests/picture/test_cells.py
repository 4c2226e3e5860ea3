"""Cells as shapes: each edge once, borders only between groups, the map's own edge, the planes grid's room for text."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio import picture
from som_studio.picture.raster import HEX_CORNERS, unit_centre


@pytest.mark.parametrize(("topology", "per_cell"), [("hex", 6), ("rect", 4)])
def test_outlines_draw_every_edge_once(topology, per_cell):
    h, w = 5, 7
    edges = picture.cell_edges(h, w, topology, 10)
    # Every cell's edges, less one of each pair two neighbours share.
    shared = {"hex": w * (h - 1) * 2 - (h - 1) + (w - 1) * h, "rect": (w - 1) * h + w * (h - 1)}[topology]
    assert len(edges) == h * w * per_cell - shared
    ends = {tuple(np.round(e, 6)) for e in edges}
    assert len(ends) == len(edges)  # no segment twice
    # The hexagons' corners sit where the picture's geometry puts the cells: around unit_centre.
    if topology == "hex":
        cx, cy = unit_centre(2, 3, "hex", 10)
        corners, units = picture.cell_polygons(h, w, "hex", 10, (2, 3, 3, 4))
        assert units.tolist() == [2 * w + 3]
        np.testing.assert_allclose(corners[0], HEX_CORNERS * 10 + (cx, cy))


def test_borders_lie_only_between_groups():
    groups = np.zeros((6, 8), dtype=int)
    groups[:, 4:] = 1  # two halves, split between columns 3 and 4
    for topology in ("rect", "hex"):
        borders = picture.cell_edges(6, 8, topology, 1, groups=groups)
        assert len(borders) > 0
        # Every border segment lies between the two halves' centres: x between column 3's and column 4's.
        xs = borders[:, [0, 2]]
        assert xs.min() >= 3.0 and xs.max() <= 5.0
    assert len(picture.cell_edges(6, 8, "hex", 1, groups=np.zeros((6, 8)))) == 0


def test_the_maps_outline_encloses_every_cell_and_nothing_else():
    h, w, s = 4, 5, 12
    poly = picture.outline(h, w, "hex", s)
    r = picture.raster(h, w, "hex", s)
    ys, xs = np.mgrid[0 : r.shape[0], 0 : r.shape[1]] + 0.5
    inside = np.zeros(r.shape, dtype=bool)
    for (x0, y0), (x1, y1) in zip(poly, np.roll(poly, -1, axis=0)):  # even-odd rule, one ray per pixel
        crosses = ((y0 > ys) != (y1 > ys)) & (xs < x0 + (ys - y0) * (x1 - x0) / (y1 - y0 + 1e-300))
        inside ^= crosses
    # Pixels of a cell are inside the map's edge, pixels of the background outside (a pixel's width of tolerance).
    disagree = inside != (r.index >= 0)
    assert disagree.mean() < 0.03


def test_the_planes_grid_has_a_title_row_and_a_bar_for_every_plane_and_cuts_none():
    d = 60
    w = np.random.default_rng(0).random((6, 9, d)) * np.arange(1, d + 1)
    views = picture.MapViews(topology="hex", feature_names=tuple(f"feature {k}" for k in range(d)))
    f = picture.make_frame(0, w, picture.ViewChoice(picture.PLANES), *picture.colour_range(w), views)
    assert [t.title for t in f.tiles] == [f"feature {k}" for k in range(d)]
    rows, cols = f.image.shape[:2]
    for k, t in enumerate(f.tiles):
        assert t.caption > 0 and t.bar_height > 0 and t.bar is not None
        for x, y, bw, bh in (t.title_box(), t.ends_box(), (t.x, t.y, t.width, t.height)):
            assert 0 <= x and x + bw <= cols and 0 <= y and y + bh <= rows  # inside the picture: nothing cut
        # Coloured over the map's own range of the feature: the plane uses both ends of the colour map.
        assert t.bar.lo == pytest.approx(w[..., k].min()) and t.bar.hi == pytest.approx(w[..., k].max())
        levels = {f.level_at(r, c, k) for r in range(6) for c in range(9)}
        assert min(levels) <= 1 and max(levels) >= 254
    # Side by side, one bar's high end and the next bar's low end are written a caption's height apart at least.
    for a, b in zip(f.tiles, f.tiles[1:]):
        if a.y == b.y:
            assert b.x - (a.x + a.width) >= a.caption
    # The bar drawn under a plane runs from the colour map's low end to its high end.
    t = f.tiles[0]
    np.testing.assert_array_equal(f.image[t.bar_y, t.x], picture.VIRIDIS[0])
    np.testing.assert_array_equal(f.image[t.bar_y, t.x + t.width - 1], picture.VIRIDIS[255])


@pytest.mark.parametrize(
    ("lo", "hi", "ends"),
    [
        (407.0, 1410.7, ("407", "1,410")),
        (0.6328, 3.5, ("0.633", "3.5")),
        (-2345.6, 12.04, ("-2,350", "12")),
        (1.2e-5, 3.4e7, ("1.2e-05", "3.4e+07")),
    ],
)
def test_a_bars_ends_read_as_numbers_in_the_thousands(lo, hi, ends):
    assert picture.ColourBar(lo, hi, "x").ends() == ends
