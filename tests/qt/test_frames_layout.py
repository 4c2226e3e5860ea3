"""Qt-free parts of the app: frames rendered in the worker, and the sharding layout arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio import picture as frames
from som_studio.app_model.sharding_layout import describe, layout_description
from som_studio.config import DataSpec, RunConfig


def test_rgb_frame_is_uint8_row_major():
    w = np.zeros((4, 6, 3))
    w[0, 5] = (1.0, 0.5, 0.0)
    lo, hi = np.zeros(3), np.ones(3)
    f = frames.make_frame(7, w, frames.ViewChoice(), lo, hi)
    assert f.iteration == 7 and f.view.mode == frames.RGB
    assert f.image.shape == (4, 6, 3) and f.image.dtype == np.uint8
    assert tuple(f.image[0, 5]) == (255, 128, 0) and tuple(f.image[1, 1]) == (0, 0, 0)


def test_views_fit_the_feature_count():
    w = np.random.default_rng(0).random((5, 8, 6))
    lo, hi = frames.feature_range(w)
    f = frames.make_frame(0, w, frames.ViewChoice(frames.RGB), lo, hi)
    assert f.view.mode == frames.UMATRIX and f.image.shape == (5, 8)  # RGB needs 3 features
    assert f.image.max() == 255
    plane = frames.make_frame(0, w, frames.ViewChoice(frames.COMPONENT, 4), lo, hi)
    assert plane.image.shape == (5, 8)
    assert plane.image.min() == 0 and plane.image.max() == 255  # scaled to the feature's range
    np.testing.assert_array_equal(
        np.argsort(plane.image.ravel(), kind="stable"),
        np.argsort(np.round((w[..., 4] - lo[4]) / (hi[4] - lo[4]) * 255).ravel(), kind="stable"),
    )
    assert frames.ViewChoice(frames.COMPONENT, 9).fit(6).component == 0


@pytest.mark.parametrize("layout", ["1x1", "2x1", "1x2", "2x2", "4x2", "2x4", "1x8"])
def test_layout_matches_jax_devices_indices_map(layout):
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    d, m = (int(v) for v in layout.split("x"))
    mesh = Mesh(np.array(jax.devices()[: d * m]).reshape(d, m), ("data", "map"))
    H, W, F, N = 16, 10, 3, 24
    desc = layout_description(layout, H, W, F, N)
    for name, shape, spec in (("map", (H, W, F), P("map")), ("data", (N, F), P("data"))):
        want = NamedSharding(mesh, spec).devices_indices_map(shape)
        got = {s["device"]: s["index"] for s in desc["arrays"][name]["shards"]}
        assert set(got) == {dev.id for dev in want}
        for dev, slices in want.items():
            expect = [[sl.start or 0, shape[i] if sl.stop is None else sl.stop] for i, sl in enumerate(slices)]
            assert got[dev.id] == expect, (name, dev.id)
        sizes = desc["arrays"][name]["bytes_per_device"]
        assert all(v == np.prod([b - a for a, b in got[k]]) * 4 for k, v in sizes.items())


def test_uneven_layout_covers_every_row_once_per_replica():
    desc = layout_description("3x4", 9, 5, 3, 10)
    rows: dict[int, list[int]] = {}
    for s in desc["arrays"]["map"]["shards"]:
        rows.setdefault(s["replica"], []).extend(range(*s["index"][0]))
    assert all(sorted(r) == list(range(9)) for r in rows.values()) and len(rows) == 3
    ex: dict[int, list[int]] = {}
    for s in desc["arrays"]["data"]["shards"]:
        ex.setdefault(s["replica"], []).extend(range(*s["index"][0]))
    assert all(sorted(r) == list(range(10)) for r in ex.values()) and len(ex) == 4


def test_unsharded_implementation_is_drawn_on_one_device():
    cfg = RunConfig(impl="numpy-batch", width=12, height=9, data=DataSpec(samples=40), layout="2x2")
    desc = describe(cfg, 3, 40, shards=False)
    assert desc["layout"] == "1x1" and [d["id"] for d in desc["devices"]] == [0]
    assert describe(cfg, 3, 40, shards=True)["layout"] == "2x2"
