"""Topology in the NumPy reference: hex geometry, toroid wrap, TE and U-matrix neighbours, missing values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.som import metrics
from som_studio.core.som import topology as topo
from som_studio.core.som.init import default_grid, initial_map
from som_studio.core.som.problem import make_problem


def test_hex_positions_follow_the_contract():
    x, y = topo.unit_xy(3, 4, "hex")
    assert x[0, 0] == 0 and x[1, 0] == 0.5 and x[2, 3] == 3
    assert y[1, 2] == pytest.approx(3**0.5 / 2)


@pytest.mark.parametrize(
    ("topology", "toroid", "interior", "corner"),
    [
        ("rect", False, 4, 2),
        ("rect", True, 4, 4),
        ("hex", False, 6, 2),
        ("hex", True, 6, 6),
    ],
)
def test_u_matrix_neighbour_counts(topology, toroid, interior, corner):
    pairs = topo.neighbour_pairs(6, 8, topology, toroid)
    count = np.bincount(pairs.ravel(), minlength=48).reshape(6, 8)
    assert count[3, 4] == interior and count[0, 0] == corner
    # every pair is adjacent at plane distance 1
    d = topo.grid_distance(6, 8, pairs[:, 0], pairs[:, 1], topology, toroid)
    np.testing.assert_allclose(d, 1.0)


def test_hex_adjacency_for_te_has_six_units_and_toroid_wraps():
    units = np.arange(48)
    centre = np.full(48, 3 * 8 + 4)
    assert topo.adjacent(6, 8, centre, units, "hex").sum() == 7  # itself and 6
    assert topo.adjacent(6, 8, centre, units, "rect").sum() == 9  # itself and 8
    assert topo.adjacent(6, 8, np.array([0]), np.array([7]), "rect", toroid=True)[0]
    assert not topo.adjacent(6, 8, np.array([0]), np.array([7]), "rect")[0]


def test_toroid_neighbourhood_wraps_and_is_symmetric():
    h = topo.neighbourhood(6, 8, 0, 0, 2.0, 2.0, "hex", True)
    assert h[0, 0] == 1.0
    assert h[0, 7] == pytest.approx(h[0, 1])  # one unit left and right of (0, 0)
    assert h[5, 0] == pytest.approx(h[1, 0])  # one row up and down


def test_u_matrix_follows_topology():
    w = np.zeros((4, 6, 1))
    w[:, 0, 0] = 1.0  # the first column differs from the rest
    planar, wrapped = metrics.u_matrix(w), metrics.u_matrix(w, toroid=True)
    assert planar[0, 5] == 0 and wrapped[0, 5] > 0  # the last column touches the first only on a toroid
    np.testing.assert_array_equal(metrics.u_matrix(w, "rect", False), planar)


def _cfg(impl, **kw):
    base = dict(impl=impl, width=8, height=6, data=DataSpec(samples=60), seed=3, precision="float64")
    base.update(kw)
    return RunConfig(**base)


@pytest.mark.parametrize("impl", ["numpy-online", "numpy-batch"])
@pytest.mark.parametrize(("topology", "toroid"), [("hex", False), ("rect", True), ("hex", True)])
def test_numpy_trains_every_topology(impl, topology, toroid):
    kind = registry.get(impl).kind
    counts = {"steps": 600} if kind == "online" else {"epochs": 8}
    cfg = _cfg(impl, topology=topology, toroid=toroid, sigma_end=(0.5, 0.5), **counts).validate(kind)
    p = make_problem(cfg, kind)
    t = registry.get(impl).create(p)
    qe0, te0 = metrics.quality(p.init_map, p.data, topology, toroid)
    t.run(0, cfg.iterations)
    qe1, te1 = metrics.quality(t.get_map(), p.data, topology, toroid)
    # trained: closer to the data and ordered on the lattice
    assert qe1 < qe0 and te1 < 0.5 * te0


def test_missing_features_do_not_move_and_do_not_choose_the_bmu():
    cfg = _cfg("numpy-online", steps=1)
    p = make_problem(cfg, "online")
    first = p.schedule().block(0).order[0]
    x = p.data[first].copy()
    x[1] = np.nan
    data = p.data.copy()
    data[first] = x
    p2 = make_problem(cfg, "online", data)
    t = registry.get("numpy-online").create(p2)
    t.run(0, 1)
    w = t.get_map()
    np.testing.assert_array_equal(w[:, :, 1], p2.init_map[:, :, 1])
    assert not np.array_equal(w[:, :, 0], p2.init_map[:, :, 0])


def test_batch_with_missing_values_averages_known_values_per_feature():
    cfg = _cfg("numpy-batch", width=1, height=1, epochs=1)
    data = np.array([[0.0, 1.0], [2.0, np.nan], [4.0, 3.0]])
    t = registry.get("numpy-batch").create(make_problem(cfg, "batch", data))
    t.run(0, 1)
    np.testing.assert_allclose(t.get_map()[0, 0], [2.0, 2.0])


def test_an_implementation_without_the_capabilities_refuses_hex_toroid_and_missing_values_clearly():
    # Every built-in implementation trains every lattice and missing values; the
    # refusal stays for one that does not declare them (the protocol's defaults).
    impl = dataclasses.replace(registry.get("jax-vmap-batch"), topologies=("rect",), toroid=False, missing_values=False)
    assert "hex" in impl.refusal("hex")
    assert "toroid" in impl.refusal("rect", True)
    assert "missing values" in impl.refusal(missing=True)
    assert impl.refusal() is None
    assert registry.get("numpy-batch").refusal("hex", True, True) is None


def test_pca_init_spans_the_first_component_and_sample_init_uses_rows():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(200, 3)) * [5.0, 1.0, 0.1]
    w = initial_map("pca", data, 4, 10, rng)
    along = w[0, -1] - w[0, 0]  # the long side follows the first component (feature 0)
    assert abs(along[0]) > 5 * abs(along[1])
    s = initial_map("sample", data, 3, 3, np.random.default_rng(1))
    assert all(any(np.array_equal(u, r) for r in data) for u in s.reshape(9, 3))


def test_pca_of_a_table_is_numpys_covariance_of_it_filled_taken_block_by_block():
    from som_studio.core.som import init

    rng = np.random.default_rng(5)
    # float32 far from the origin, over several blocks of rows, with missing values.
    data = (rng.normal(size=(20_000, 6)) * [3.0, 2.0, 1.0, 0.5, 0.2, 0.1] + 1000).astype(np.float32)
    data[rng.random(data.shape) < 0.03] = np.nan
    mean, var, vecs = init.principal_components(data)
    x = data.astype(np.float64)
    m = np.nanmean(x, axis=0)
    var_np, vecs_np = init.covariance_components(np.cov(np.where(np.isnan(x), m, x), rowvar=False))
    np.testing.assert_allclose(mean, m, rtol=1e-13)
    np.testing.assert_allclose(var, var_np, rtol=1e-9)
    np.testing.assert_allclose(vecs, vecs_np, atol=1e-9)
    # sample: each unit a row, its missing values the feature's mean
    s = initial_map("sample", data, 4, 4, np.random.default_rng(2)).reshape(16, 6)
    rows = np.random.default_rng(2).integers(0, len(data), size=16)
    np.testing.assert_allclose(s, np.where(np.isnan(x[rows]), m, x[rows]), rtol=1e-13)
    assert np.isnan(x[rows]).any()


def test_wide_tables_take_the_subspace_iteration_with_the_exact_components(monkeypatch):
    from som_studio.core.som import init

    rng = np.random.default_rng(3)
    latent = rng.normal(size=(300, 4)) * [6.0, 4.0, 1.0, 1.0]
    data = latent @ rng.normal(size=(4, 400)) + 0.2 * rng.normal(size=(300, 400))
    data[rng.random(data.shape) < 0.05] = np.nan  # missing values: filled with their feature's mean, alike
    assert data.shape[1] > init.EXACT_PCA_FEATURES
    mean, var, vecs = init.principal_components(data)
    low = data.astype(np.float32)  # a float32 table: the components of its numbers in float64
    for got, want in zip(init.principal_components(low), init.principal_components(low.astype(np.float64))):
        np.testing.assert_array_equal(got, want)
    monkeypatch.setattr(init, "PCA_BLOCK_BYTES", 8 * 400 * 7)  # blocks of 7 rows, the last one shorter
    mean_b, var_b, vecs_b = init.principal_components(data)
    monkeypatch.setattr(init, "EXACT_PCA_FEATURES", 10_000)
    mean_x, var_x, vecs_x = init.principal_components(data)
    for m, v, d in ((mean, var, vecs), (mean_b, var_b, vecs_b)):
        np.testing.assert_allclose(m, mean_x)
        np.testing.assert_allclose(v, var_x, rtol=1e-8)
        np.testing.assert_allclose(d, vecs_x, atol=1e-7)  # the same sign rule, so the same map


def test_default_grid_is_about_five_sqrt_n_with_the_pca_side_ratio():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(400, 2)) * [4.0, 1.0]
    width, height = default_grid(data)
    assert abs(width * height - 100) <= 10 and width > height
    _, h6 = default_grid(data, "hex", toroid=True)
    assert h6 % 2 == 0


@pytest.mark.parametrize(("topology", "toroid"), [("rect", False), ("rect", True), ("hex", False), ("hex", True)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_separable_neighbourhood_equals_the_plane_distance_formula(topology, toroid, dtype):
    for by, bx in [(0, 0), (3, 5), (5, 7), (2, 1)]:
        dx, dy = topo.offsets(6, 8, by, bx, topology, toroid)
        sx, sy = dtype(2.5), dtype(1.5)
        direct = np.exp(-(dx.astype(dtype) ** 2) / sx**2) * np.exp(-(dy.astype(dtype) ** 2) / sy**2)
        got = topo.neighbourhood(6, 8, by, bx, 2.5, 1.5, topology, toroid, dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, direct)
