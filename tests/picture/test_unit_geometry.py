"""A pixel back to its unit by the lattice's geometry, a unit's colour level read back, and the palettes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from som_studio import picture
from som_studio.picture import colours
from som_studio.picture.raster import unit_at, unit_centre


@pytest.mark.parametrize("topology", ["hex", "rect"])
@pytest.mark.parametrize("scale", [1, 2, 5, 12])
def test_geometry_agrees_with_the_raster_on_every_pixel(topology, scale):
    """The click mapping (no raster built) picks the hexagon the picture paints under every pixel."""
    h, w = 7, 6
    r = picture.raster(h, w, topology, scale)
    rows, cols = r.shape
    for py in range(-2, rows + 2):
        for px in range(-2, cols + 2):
            inside = 0 <= py < rows and 0 <= px < cols and r.index[py, px] >= 0
            expected = divmod(int(r.index[py, px]), w) if inside else None
            assert unit_at(px + 0.3, py + 0.7, h, w, topology, scale) == expected, (px, py)


def test_unit_centres_match_the_raster():
    for topology in ("hex", "rect"):
        r = picture.raster(5, 4, topology, 9)
        for row in range(5):
            for col in range(4):
                assert unit_centre(row, col, topology, 9) == pytest.approx(r.unit_centre(row, col))


def test_hex_odd_rows_sit_half_a_unit_to_the_right():
    # x = c + 0.5 * (r mod 2): the left edge of row 1 is half a cell further right than row 0's.
    s = 10
    x0, y0 = unit_centre(0, 0, "hex", s)
    x1, y1 = unit_centre(1, 0, "hex", s)
    assert x1 - x0 == pytest.approx(0.5 * s) and y1 - y0 == pytest.approx(np.sqrt(3) / 2 * s)
    assert unit_at(x0 + 0.1 * s, y0, 2, 3, "hex", s) == (0, 0)
    assert unit_at(x0 - 0.2 * s, y1, 2, 3, "hex", s) is None  # left of row 1's first hexagon


@pytest.mark.parametrize("mode", [picture.UMATRIX, picture.COMPONENT, picture.PLANES])
def test_a_units_level_is_read_back_from_a_hex_picture(mode):
    rng = np.random.default_rng(1)
    w = rng.random((6, 5, 2))
    lo, hi = np.zeros(2), np.ones(2)
    views = picture.MapViews(topology="hex")
    frame = picture.make_frame(0, w, picture.ViewChoice(mode, 1), lo, hi, views)
    tile = 1 if mode == picture.PLANES else None
    for row, col in ((0, 0), (5, 4), (2, 3)):
        level = frame.level_at(row, col, tile)
        if mode == picture.UMATRIX:
            um = picture.views.u_matrix(w, "hex", False)
            expected = um[row, col] / um.max() * 255
        else:  # planes are coloured over the map's own range of their feature
            plane = w[..., 1]
            expected = (plane[row, col] - plane.min()) / (plane.max() - plane.min()) * 255
        assert level == pytest.approx(expected, abs=1.5)


def test_categorical_views_have_no_level_and_clusters_never_use_the_label_colours():
    w = np.random.default_rng(2).random((4, 4, 2))
    lo, hi = picture.colour_range(w)
    clusters = np.arange(16).reshape(4, 4) % 5
    views = picture.MapViews(topology="hex", clusters=clusters, labels=np.full((4, 4), "a"))
    f = picture.make_frame(0, w, picture.ViewChoice(picture.CLUSTERS), lo, hi, views)
    assert f.level_at(1, 1) is None
    cluster_colours = {c for _, c in f.legend.entries}
    assert cluster_colours.isdisjoint(colours.CATEGORICAL)
    lab = picture.make_frame(0, w, picture.ViewChoice(picture.LABELS), lo, hi, views)
    assert {c for _, c in lab.legend.entries} <= set(colours.CATEGORICAL)
    assert set(colours.CLUSTER_COLOURS).isdisjoint(colours.CATEGORICAL)


def test_started_carries_feature_names_and_scaling():
    """A live run names its planes and shows its colour bars in the file's units."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.events import Started
    from som_studio.session.session import Session

    iris = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"
    cfg = RunConfig(
        impl="numpy-batch",
        width=4,
        height=4,
        data=DataSpec(path=str(iris)),
        epochs=1,
        labels="species",
        scaling="zscore",
    )
    started = next(ev for ev in Session(cfg, quality_points=0).run() if isinstance(ev, Started))
    assert started.feature_names == ("sepal_length", "sepal_width", "petal_length", "petal_width")
    views = picture.MapViews.from_started(started)
    assert views.feature_name(2) == "petal_length"
    # z-scored: 0 in the trained space is the feature's mean in centimetres.
    assert views.original(2, 0.0) == pytest.approx(3.758, abs=1e-3)
    assert views.original(2, 1.0) - views.original(2, 0.0) == pytest.approx(1.765, abs=1e-3)


def test_a_started_run_offers_the_views_its_worker_measures_live():
    """Hits (and labels, with a label column) are measured on each live frame of a small map, not of a big one."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.events import Started

    def started(width: int, height: int, samples: int, labels: str | None) -> picture.MapViews:
        cfg = RunConfig(impl="numpy-batch", width=width, height=height, data=DataSpec(samples=samples), labels=labels)
        ev = Started(cfg, "batch", 10, samples, 4, {}, "1x1", 0)
        return picture.MapViews.from_started(ev)

    small = started(12, 8, 150, "species")
    assert small.live == ("hits", "labels") and small.has("hits") and small.has("labels")
    assert picture.available(picture.LABELS, 4, small) and small.hits is None  # offered, measured by the worker
    assert started(12, 8, 150, None).live == ("hits",)
    big = started(512, 512, 100_000, "species")  # far over the live budget
    assert big.live == () and not picture.available(picture.HITS, 4, big)
