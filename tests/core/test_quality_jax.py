"""Quality on the device (``core/plans/quality_jax.py``) against the NumPy reference (``core/som/metrics.py``).

Float64 maps: both sides choose the same two units for every example (the
reference ranks ``|w|^2 - 2 x.w`` in float64, the device the direct form; on
these random maps the gaps between units are far above 1e-12), so indices are
compared exactly and QE to 1e-12. Ties: the device takes the first unit in
row-major order; the reference's ``argpartition`` may take either, so on tied
maps QE (the same distance either way) and TE (the pair of tied units is the
same pair) are compared, not the order.
"""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.core.plans import fused_plan
from som_studio.core.som import metrics
from tests.grids import representative

qj = pytest.importorskip("som_studio.core.plans.quality_jax")

MAPS = [(1, 1, 3, 5), (1, 2, 3, 7), (9, 12, 3, 120), (5, 7, 1, 40), (6, 5, 16, 33), (40, 30, 3, 250), (23, 61, 2, 97)]


def _map(h, w, d, n, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed + h * 100 + w)
    return rng.random((h, w, d)).astype(dtype), rng.random((n, d)).astype(dtype)


def _plans(n, m, d):
    # The chosen plan, then every form with one block of every unit, and small blocks with several chunks.
    out = [qj.plan("cpu", n, m, d)]
    for form in fused_plan.FORMS:
        out += [fused_plan.KernelPlan(form, 7, max(16, -(-m // 16) * 16)), fused_plan.KernelPlan(form, 5, 16)]
    return out


@pytest.mark.parametrize(
    "h,w,d,n,plan",
    representative(
        [
            pytest.param(*m, i, id=f"{'-'.join(map(str, m))}-plan{i}")
            for m in MAPS
            for i in range(len(_plans(m[3], m[0] * m[1], m[2])))
        ]
    ),
)
def test_best_two_matches_reference_float64(h, w, d, n, plan):
    wts, x = _map(h, w, d, n)
    f_ref, s_ref, d2_ref = metrics.best_two(wts, x)
    p = _plans(n, h * w, d)[plan]
    first, second, d2 = qj.best_two(wts, x, p)
    np.testing.assert_array_equal(first, f_ref, err_msg=str(p))
    if h * w >= 2:
        np.testing.assert_array_equal(second, s_ref, err_msg=str(p))
    np.testing.assert_allclose(d2, d2_ref, rtol=1e-12, atol=1e-15)


# Budgets: one chunk, and as many chunks as there are examples.
@pytest.mark.parametrize(
    "h,w,d,n,budget",
    representative([pytest.param(*m, b, id=f"{'-'.join(map(str, m))}-{b}") for m in MAPS for b in (None, 64)]),
)
def test_quality_matches_reference(h, w, d, n, budget):
    wts, x = _map(h, w, d, n)
    qe_ref, te_ref = metrics.quality(wts, x)
    qe, te = qj.quality(wts, x, budget=budget)
    assert qe == pytest.approx(qe_ref, rel=1e-12)
    assert te == te_ref


def test_float32_maps_agree_with_the_float64_reference():
    wts, x = _map(40, 30, 3, 500, dtype=np.float32)
    qe_ref, te_ref = metrics.quality(wts, x)
    qe, te = qj.quality(wts, x)
    assert qe == pytest.approx(qe_ref, rel=1e-6)
    # A near-tie (1e-7 relative) may rank differently in float32: at most a few examples.
    assert abs(te - te_ref) <= 3 / 500


@pytest.mark.parametrize("form,block", representative([(f, b) for f in fused_plan.FORMS for b in (16, 32, 512)]))
def test_ties_take_the_first_unit_and_match_reference_quality(form, block):
    wts, x = _map(20, 25, 3, 60)
    flat = wts.reshape(-1, 3)
    flat[400] = flat[3]  # a tie across blocks: unit 3 must win
    flat[17] = flat[16]  # a tie inside one block, neighbours
    flat[499] = flat[0]  # the last unit (a partial block) ties the first
    x[:4] = flat[3]
    x[4:8] = flat[16]
    x[8:10] = flat[0]
    first, second, d2 = qj.best_two(wts, x, fused_plan.KernelPlan(form, 7, block))
    assert first[:4].tolist() == [3] * 4 and second[:4].tolist() == [400] * 4
    assert first[4:8].tolist() == [16] * 4 and second[4:8].tolist() == [17] * 4
    assert first[8:10].tolist() == [0] * 2 and second[8:10].tolist() == [499] * 2
    assert np.all(d2[:10] == 0)
    # The reference may order a tied pair either way: QE and TE do not depend on it.
    qe_ref, te_ref = metrics.quality(wts, x)
    qe, te = qj.quality(wts, x)
    assert qe == pytest.approx(qe_ref, rel=1e-12, abs=1e-15)
    assert te == te_ref


def test_device_quality_measures_many_maps_with_one_compile():
    from som_studio.core import jax_runtime

    wts, x = _map(9, 12, 3, 120)
    q = qj.DeviceQuality(x, 9, 12, np.float64, budget=300 * 8)
    try:
        assert q.plan.chunk < 120  # several chunks, padded
        c0 = jax_runtime.compile_count()
        for k in range(3):
            w = wts * (1 + 0.1 * k)
            assert q(w) == pytest.approx(metrics.quality(w, x), rel=1e-12)
        assert jax_runtime.compile_count() - c0 <= 1
        assert q.compile_s > 0
    finally:
        q.close()


@pytest.mark.parametrize("h,w,d", [(1, 1, 3), (1, 6, 2), (9, 12, 3), (7, 4, 16)])
def test_u_matrix_matches_reference(h, w, d):
    wts, _ = _map(h, w, d, 1)
    np.testing.assert_allclose(qj.u_matrix(wts), metrics.u_matrix(wts), rtol=1e-12, atol=1e-15)


def test_the_quality_search_is_the_training_search_within_its_budget():
    m = 1024 * 1024
    for backend, d, n, units in [("gpu", 3, 100_000, m), ("gpu", 50, 100_000, m), ("cpu", 3, 1000, 32_400)]:
        p = qj.plan(backend, n, units, d)
        train = fused_plan.choose(backend, units, d, n, 4)
        assert (p.form, p.block) == (train.form, train.block)
    # Wide rows on big maps: a tile holds a few examples there, so the search alone takes training's own plan,
    # in chunks that divide the examples where a chunk of at least three quarters of training's does.
    for d in (300, 784, 1024, 2048):
        for units in (100 * 100, 240 * 135, 200 * 200):
            p, train = qj.plan("cpu", 10_000, units, d), fused_plan.choose("cpu", units, d, 10_000, 4)
            assert (p.form, p.block) == (train.form, train.block)
            assert 3 * train.chunk // 4 <= p.chunk <= train.chunk, (d, units)
            assert 10_000 % p.chunk == 0 or p.chunk == train.chunk, (d, units)
    assert qj.dividing(1_000_000, 2370) == 2000 and qj.dividing(999_983, 2370) == 2370  # a prime: none divides
    # Many examples on a small map: training fuses the sums into its tiles; the quality pass, a search
    # alone, takes the cost model's cheapest search of the same family.
    p = qj.plan("cpu", 1_000_000, 100, 30)
    best = fused_plan.rank("cpu", 100, 30, 1_000_000, 4, sums=False)[0][0]
    assert p.form == best.form and p.form in ("matmul", "tiled")
    p = qj.plan("cpu", 100_000, 40 * 30, 300)
    assert p.chunk * fused_plan.per_example_elements("matmul", 1200, 300, p.block) * 4 <= fused_plan.CHUNK_BUDGET["cpu"]
    # Equal chunks: padding under one example per chunk.
    p = qj.plan("gpu", 1001, 32_400, 3)
    chunks = -(-1001 // p.chunk)
    assert chunks * p.chunk - 1001 < chunks


def test_the_final_measure_gives_each_examples_best_unit():
    wts, x = _map(9, 12, 20, 150)
    q = qj.DeviceQuality(x, 9, 12, np.float64)
    try:
        qe, te, first = q.measure(wts, bmus=True)
        assert (qe, te) == pytest.approx(metrics.quality(wts, x), rel=1e-12)
        np.testing.assert_array_equal(first, metrics.nearest_units(wts, x)[0])
        assert q.measure(wts)[2] is None
    finally:
        q.close()


# -- hex and toroid maps, missing values ----------------------------------------------------------

LATTICES = [("rect", False), ("rect", True), ("hex", False), ("hex", True)]


def _holes(x, seed=4):
    rng = np.random.default_rng(seed)
    holes = rng.random(x.shape) < 0.25
    holes[:, 0] &= ~holes[:, 1:].all(axis=1)  # every row keeps a known feature
    x = x.copy()
    x[holes] = np.nan
    return x


@pytest.mark.parametrize(
    "h,w,d,n,lattice",
    representative(
        [
            pytest.param(*m, lt, id=f"{'-'.join(map(str, m))}-{lt[0]}-{'toroid' if lt[1] else 'planar'}")
            for m in [(1, 2, 3, 7), (8, 12, 3, 120), (6, 5, 16, 33), (40, 30, 3, 250), (2, 9, 2, 40)]
            for lt in LATTICES
        ]
    ),
)
def test_te_follows_the_lattice(h, w, d, n, lattice):
    wts, x = _map(h, w, d, n)
    qe_ref, te_ref = metrics.quality(wts, x, *lattice)
    for budget in (None, 64):
        qe, te = qj.quality(wts, x, budget=budget, topology=lattice[0], toroid=lattice[1])
        assert qe == pytest.approx(qe_ref, rel=1e-12)
        assert te == te_ref


@pytest.mark.parametrize(
    "h,w,d,n,plan",
    representative(
        [
            pytest.param(*m, i, id=f"{'-'.join(map(str, m))}-plan{i}")
            for m in [(8, 12, 3, 120), (6, 5, 16, 33), (40, 30, 4, 250)]
            for i in range(len(_plans(m[3], m[0] * m[1], m[2])))
        ]
    ),
)
def test_missing_values_leave_out_unknown_features(h, w, d, n, plan):
    wts, x = _map(h, w, d, n)
    x = _holes(x)
    f_ref, s_ref, d2_ref = metrics.best_two(wts, x)
    p = _plans(n, h * w, d)[plan]
    first, second, d2 = qj.best_two(wts, x, p)
    np.testing.assert_array_equal(first, f_ref, err_msg=str(p))
    np.testing.assert_array_equal(second, s_ref, err_msg=str(p))
    np.testing.assert_allclose(d2, d2_ref, rtol=1e-12, atol=1e-15)
    qe_ref, te_ref = metrics.quality(wts, x, "hex", True)
    qe, te = qj.quality(wts, x, budget=64, topology="hex", toroid=True)
    assert qe == pytest.approx(qe_ref, rel=1e-12)
    assert te == te_ref


@pytest.mark.parametrize(
    "h,w,d,lattice",
    representative(
        [
            pytest.param(*m, lt, id=f"{'-'.join(map(str, m))}-{lt[0]}-{'toroid' if lt[1] else 'planar'}")
            for m in [(1, 1, 3), (1, 6, 2), (2, 2, 3), (9, 12, 3), (8, 4, 16)]
            for lt in LATTICES[1:]
        ]
    ),
)
def test_u_matrix_follows_the_lattice(h, w, d, lattice):
    wts, _ = _map(h, w, d, 1)
    np.testing.assert_allclose(
        qj.u_matrix(wts, topology=lattice[0], toroid=lattice[1]),
        metrics.u_matrix(wts, *lattice),
        rtol=1e-12,
        atol=1e-15,
    )


@pytest.mark.cpu_backend
def test_an_example_ranked_again_near_a_tie_is_measured_at_its_new_unit():
    """Units 0.01 apart, a thousand from the map's centre: the product's scores are all rounding there, so
    the screened search ranks those examples again by the direct form, and each distance is to the unit
    it so finds (the reference's), not to the product's."""
    rng = np.random.default_rng(5)
    d = 6
    near = 1000.0 + rng.normal(0, 0.01, (10, d))  # half the map about +1000, half about -1000: centre 0
    wts = np.concatenate([near, -near]).reshape(4, 5, d).astype(np.float32)
    x = (near[rng.integers(0, 10, 300)] + rng.normal(0, 0.004, (300, d))).astype(np.float32)
    first, _second, d2 = qj.best_two(wts, x, fused_plan.KernelPlan("tiled", 64, 4))
    ref_first, _ref_second, ref_d2 = metrics.best_two(wts.astype(np.float64), x.astype(np.float64))
    assert (first == ref_first).mean() > 0.99  # float32 against the float64 reference: ties within rounding
    same = first == ref_first
    np.testing.assert_allclose(d2[same], ref_d2[same], rtol=1e-4, atol=1e-9)


@pytest.mark.cpu_backend
def test_the_quality_pass_reads_the_runs_own_rows_in_whole_chunks():
    """The run's rows, placed as its trainer places them, are the quality pass's own (no copy), searched in
    chunks the last of which overlaps the one before; the measures are the reference's."""
    from som_studio.core import jax_runtime

    for n in (37, 50, 61, 99, 130):
        wts, data = _map(6, 5, 3, n, seed=n, dtype=np.float32)
        rows = jax_runtime.placeable(data, np.float32)
        q = qj.DeviceQuality(rows, 6, 5, np.float32, budget=16 * 30 * 4)
        try:
            assert q.plan.chunk < n and q._x.unsafe_buffer_pointer() == rows.ctypes.data, n
            assert q(wts) == pytest.approx(metrics.quality(wts, data), rel=1e-6)
        finally:
            q.close()


def test_the_quality_program_compiles_on_a_thread_of_its_own_which_gives_back_its_error():
    import threading

    from som_studio.core.plans.quality_jax import Compiling

    seen = []

    class Lowered:
        def compile(self):
            seen.append(threading.current_thread().name)
            return "program"

    lowered_on = []
    compiling = Compiling(lambda: lowered_on.append(threading.current_thread().name) or Lowered())
    assert compiling.wait() == ("program", 0)
    assert lowered_on == [threading.current_thread().name] and seen == ["som-quality-compile"]

    class Broken:
        def compile(self):
            raise MemoryError("no room for the program")

    with pytest.raises(MemoryError, match="no room"):
        Compiling(lambda: Broken()).wait()


def test_a_quality_program_compiled_meanwhile_measures_as_one_compiled_at_once():
    from som_studio.core import jax_runtime
    from som_studio.core.plans.quality_jax import DeviceQuality

    rng = np.random.default_rng(4)
    data = rng.random((70, 5)).astype(np.float32)
    weights = rng.random((3, 4, 5)).astype(np.float32)
    at_once = DeviceQuality(data, 3, 4, np.float32)
    meanwhile = DeviceQuality(data, 3, 4, np.float32)
    before = jax_runtime.compile_count(this_thread=True)
    meanwhile.start_compile()
    meanwhile.compile()
    assert jax_runtime.compile_count(this_thread=True) == before  # its compile counted on its own thread
    assert meanwhile(weights) == at_once(weights)
    qe, te = metrics.measure(weights.astype(np.float64), data.astype(np.float64))[:2]
    np.testing.assert_allclose(meanwhile(weights), (qe, te), rtol=1e-5)
