"""The fast JAX implementations agree with the NumPy references and never recompile.

Tolerances, and why:

* float64: both sides rank the same units (the fused argmin ranks ``|w|^2 - 2 x.w``,
  the reference ``|w - x|^2``; in float64 they differ by ~1e-16 relative, far
  below the gap between distinct units of a random map), so the maps differ only
  by summation order: ``atol = 1e-9``.
* float32: a near-tie between two units may be resolved differently (rounding of
  the two distance forms, ~1e-7 relative), and a different BMU moves whole
  neighbourhoods, so the maps are compared through QE (``rtol = 1e-3``) and
  most units must agree to ``1e-4``.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import memory, registry
from som_studio.core.impls.protocol import ProblemSize
from som_studio.core.plans import fused_plan, kernels
from som_studio.core.som.metrics import quantization_error
from som_studio.core.som.problem import make_problem
from som_studio.session.events import Compiled, Finished
from som_studio.session.session import Session, run_to_completion
from tests.grids import representative

jax = jax_runtime.jax()
jf = pytest.importorskip("som_studio.core.impls.jax_fused")
jso = pytest.importorskip("som_studio.core.impls.jax_scan_online")

SHAPES = [(12, 9), (7, 1), (5, 13)]  # (width, height): landscape, one row, portrait
FEATURES = [1, 3, 16]


def _data(samples: int, features: int, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).random((samples, features))


def _problem(
    kind: str, width: int, height: int, features: int, iterations: int, precision: str = "float64", samples: int = 60
):
    cfg = RunConfig(
        impl="numpy-batch" if kind == "batch" else "numpy-online",
        width=width,
        height=height,
        data=DataSpec(samples=samples),
        epochs=iterations if kind == "batch" else None,
        steps=iterations if kind == "online" else None,
        seed=5,
        precision=precision,
    )
    return make_problem(cfg, kind, _data(samples, features))


def _train(name: str, problem, chunks: list[int]) -> np.ndarray:
    trainer = registry.get(name).create(problem)
    try:
        trainer.warmup()
        first = 0
        for count in chunks:
            trainer.run(first, count)
            first += count
        assert first == problem.iterations
        return trainer.get_map()
    finally:
        trainer.close()


@pytest.mark.parametrize("width,height,features", representative([(*s, f) for s in SHAPES for f in FEATURES]))
def test_fused_batch_matches_numpy_float64(width, height, features):
    p = _problem("batch", width, height, features, 6)
    ref = _train("numpy-batch", p, [6])
    got = _train("jax-fused-batch", p, [1, 2, 3])
    np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0)


@pytest.mark.parametrize("width,height,features", representative([(*s, f) for s in SHAPES for f in FEATURES]))
def test_scan_online_matches_numpy_float64(width, height, features):
    p = _problem("online", width, height, features, 200)
    ref = _train("numpy-online", p, [200])
    got = _train("jax-scan-online", p, [1, 17, 82, 100])
    np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0)


@pytest.mark.parametrize("name,kind,iterations", [("jax-fused-batch", "batch", 8), ("jax-scan-online", "online", 400)])
def test_float32_agrees_with_numpy(name, kind, iterations):
    p = _problem(kind, 24, 10, 3, iterations, precision="float32", samples=300)
    assert p.dtype == np.float32
    ref = _train(f"numpy-{kind}", p, [iterations])
    got = _train(name, p, [iterations // 2, iterations - iterations // 2])
    assert got.dtype == np.float32
    qe_ref, qe_got = quantization_error(ref, p.data), quantization_error(got, p.data)
    assert qe_got == pytest.approx(qe_ref, rel=1e-3)
    close = np.all(np.abs(got - ref) <= 1e-4, axis=-1)
    assert close.mean() >= 0.95


def test_warmup_leaves_state_and_chunks_do_not_recompile():
    for name, kind, T in (("jax-fused-batch", "batch", 9), ("jax-scan-online", "online", 90)):
        p = _problem(kind, 10, 6, 3, T, precision="float32")
        trainer = registry.get(name).create(p)
        try:
            trainer.warmup()
            np.testing.assert_array_equal(trainer.get_map(), p.init_map)
            before = jax_runtime.compile_count()
            first = 0
            for count in (1, 4, 2, T - 7):  # growing, shrinking, crossing boundaries
                trainer.run(first, count)
                first += count
            assert jax_runtime.compile_count() == before, name
            chunked = trainer.get_map()
        finally:
            trainer.close()
        # One chunk or many: the same program on the same numbers, bit for bit.
        whole = _train(name, p, [T])
        np.testing.assert_array_equal(chunked, whole)


class _Counted:
    """A compiled chunk program that keeps the count of epochs of each call (the rest of it as it is)."""

    def __init__(self, compiled, counts: list[int]) -> None:
        self._compiled, self._counts = compiled, counts

    def __call__(self, w, first, count, *args):
        self._counts.append(int(count))
        return self._compiled(w, first, count, *args)

    def __getattr__(self, name):
        return getattr(self._compiled, name)


@pytest.mark.parametrize(("name", "layout"), [("jax-fused-batch", "1x1"), ("jax-shardmap-batch", "2x1")])
@pytest.mark.parametrize("quick", [True, False])
def test_a_quick_epoch_is_run_once_in_the_warm_up_and_the_map_is_left_as_it_was(name, layout, quick, monkeypatch):
    """XLA:CPU compiles a loop's body when it first runs: a warm-up of zero epochs left that to the first timed
    chunk (60 ms against epochs of 0.3 ms). Where an epoch is predicted quick, the warm-up runs one on a copy."""
    if not quick:
        monkeypatch.setattr(fused_plan, "WARM_EPOCH_MAX_S", 0.0)
    impl = registry.get(name)
    cfg = RunConfig(impl=name, width=8, height=6, data=DataSpec(samples=200), epochs=4, seed=3, layout=layout)
    p = make_problem(cfg, impl.kind)
    counts: list[int] = []
    module, _, cls_name = impl.factory.partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    real = cls.chunk_lowered

    def chunk_lowered(self):
        chunk = real(self)

        class Lowered:
            def compile(self):
                return _Counted(chunk.compile(), counts)

            def __getattr__(self, attr):
                return getattr(chunk, attr)

        return Lowered()

    monkeypatch.setattr(cls, "chunk_lowered", chunk_lowered)
    trainer = impl.create(p)
    try:
        trainer.warmup()
        assert max(counts) == (1 if quick else 0), counts
        np.testing.assert_array_equal(trainer.get_map(), p.init_map.astype(trainer.get_map().dtype))
        trainer.run(0, 4)
        warmed = trainer.get_map()
    finally:
        trainer.close()
    monkeypatch.undo()
    np.testing.assert_array_equal(warmed, _train(name, p, [4]))  # the warm epoch left nothing behind


def test_session_compiles_only_in_warmup(small_config):
    for name, extra in (("jax-fused-batch", {"epochs": 12}), ("jax-scan-online", {"steps": 3000})):
        cfg = small_config.replace(impl=name, **extra)
        events = list(Session(cfg, snapshot_interval_s=None, quality_points=3, chunk_target_s=0.002).run())
        compiled = next(e for e in events if isinstance(e, Compiled))
        record = next(e for e in events if isinstance(e, Finished)).record
        assert record.status == "ok", record.message
        assert len({c.count for c in record.chunks}) > 1  # the session did vary the chunk size
        assert record.compiles == compiled.compiles >= 1


def test_session_quality_matches_reference(small_config):
    for fast, ref, extra in (
        ("jax-fused-batch", "numpy-batch", {"epochs": 10}),
        ("jax-scan-online", "numpy-online", {"steps": 2000}),
    ):
        a = run_to_completion(Session(small_config.replace(impl=fast, **extra), quality_points=0))
        b = run_to_completion(Session(small_config.replace(impl=ref, **extra), quality_points=0))
        assert a.status == b.status == "ok"
        assert a.qe == pytest.approx(b.qe, rel=1e-3)


def _brute_bmus(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    d = ((x[:, None, :].astype(np.float64) - w[None, :, :]) ** 2).sum(-1)
    return np.argmin(d, axis=1)  # numpy: first index on ties


@pytest.mark.parametrize(
    "form,units,block",
    representative([(f, *ub) for f in fused_plan.FORMS for ub in [(1, 512), (37, 16), (1000, 64), (1000, 512)]]),
)
def test_every_bmu_form_is_exact_with_first_tie(form, units, block):
    rng = np.random.default_rng(units)
    w = rng.random((units, 4))
    x = rng.random((301, 4))
    if units > 3:
        w[units - 2] = w[1]  # an exact tie: the earlier unit must win
        x[:5] = w[1]
        x[5] = w[units - 1]  # the last unit, in a block padded to a multiple of 16
    # Chunks of 80 examples: four sample chunks, the last one padded.
    plan = fused_plan.KernelPlan(form, 80, block=fused_plan.unit_blocks(units, block)[1])
    got = np.asarray(jax.jit(lambda a, b: kernels.bmus(a, b, plan))(w.T, x))
    np.testing.assert_array_equal(got, _brute_bmus(w, x))


def _assert_best_two(plan, units: int, features: int, examples: int, missing: bool, seed: int) -> None:
    """``best_two`` under ``plan`` against a stable argsort of the direct distances, with an exact tie for the
    best (the earlier unit first, the later second) and, with ``missing``, a fifth of the features unknown."""
    rng = np.random.default_rng(seed)
    w = rng.random((units, features))
    x = rng.random((examples, features))
    w[units - 1] = w[0]
    x[:3] = w[0]
    known = None
    if missing:
        known = (rng.random(x.shape) > 0.2).astype(np.float64)
        known[:, 0] = 1
    xz = x if known is None else np.where(known > 0, x, 0.0)
    first, second = jax.jit(lambda a, b, k: kernels.best_two(a, b, plan, k))(w.T, xz, known)
    d = ((xz[:, None, :] - w[None, :, :]) ** 2 * (1 if known is None else known[:, None, :])).sum(-1)
    order = np.argsort(d, axis=1, kind="stable")
    np.testing.assert_array_equal(np.asarray(first), order[:, 0])
    np.testing.assert_array_equal(np.asarray(second), order[:, 1])


@pytest.mark.parametrize(
    "form,units,block,features,missing",
    representative(
        [
            (f, *shape, missing)
            for f in fused_plan.FORMS
            for shape in [(2, 16, 4), (37, 16, 4), (1000, 64, 4), (300, 16, 40)]
            for missing in (False, True)
        ]
    ),
)
def test_every_form_finds_the_best_two_units(form, units, block, features, missing):
    plan = fused_plan.KernelPlan(form, 80, block=fused_plan.unit_blocks(units, block)[1])
    _assert_best_two(plan, units, features, 203, missing, seed=units + features)


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
def test_very_wide_rows_find_the_best_two_units_in_feature_slabs(missing):
    features = fused_plan.WIDE_FEATURES + 5  # the last slab mostly padding
    _assert_best_two(fused_plan.KernelPlan("matmul", 16, block=4), 24, features, 37, missing, seed=features)


def test_first_argmin_2d_takes_first_in_row_major_order():
    v = np.full((4, 5), 3.0)
    v[2, 1] = v[1, 3] = v[3, 0] = 1.0
    r, c = jax.jit(jso.first_argmin_2d)(v)
    assert (int(r), int(c)) == (1, 3)


def test_fused_batch_memory_is_bounded_at_scale():
    # 1024 x 1024 map, 100,000 examples x 3: an N x M float32 matrix alone would be ~390 GiB.
    s = ProblemSize(height=1024, width=1024, features=3, samples=100_000, iterations=1, itemsize=4)
    est = registry.get("jax-fused-batch").estimate(s)
    assert est < 2 << 30
    # No term grows as N x M: ten times the examples adds only per-example arrays (the host's copy, the
    # device's, the examples with a weight column, and its float64 accumulation copy: under 8 x D floats each).
    s10 = ProblemSize(height=1024, width=1024, features=3, samples=1_000_000, iterations=1, itemsize=4)
    assert registry.get("jax-fused-batch").estimate(s10) - est < 10 * 100_000 * 3 * 4 * 8
    assert memory.jax_fused_batch(s) == est


@pytest.mark.parametrize("samples,features,units", [(1, 1, 1), (1000, 3, 32_400), (100_000, 3, 1 << 20), (7, 16, 5)])
def test_fused_plan_bounds_the_chunk_and_balances_it(samples, features, units):
    from som_studio.core.plans import fused_plan

    g, b = fused_plan.unit_blocks(units)
    assert g * b >= units and b % 16 == 0 and (g - 1) * b < units  # no wholly empty block
    nc = fused_plan.sample_chunk(samples, features, b)
    chunks = -(-samples // nc)
    assert fused_plan.chunk_elements(nc, features, b) <= max(
        fused_plan.ARGMIN_ELEMENTS, fused_plan.chunk_elements(1, features, b)
    )
    assert chunks * nc - samples < chunks  # padding: under one example per chunk
