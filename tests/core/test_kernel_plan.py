"""The kernel plan: chosen per device by a pure function, forced for tests, and every plan exact.

Every plan is run on the CPU (forced) by every JAX batch implementation that
follows the plan and held to the NumPy reference at the agreement tolerances of
``tests/core/test_agreement.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.plans import fused_plan
from som_studio.session.session import Session, run_to_completion
from tests.core.test_agreement import REFERENCE, SHAPES, TOL, _cfg, _train
from tests.grids import representative

MiB = 1 << 20


def test_the_cpu_takes_the_blocked_search_with_few_features_on_a_big_map_and_matmul_elsewhere():
    plan = fused_plan.choose("cpu", 32_400, 3, 1000, 4)
    assert plan.form == "blocked" and plan.block == fused_plan.UNIT_BLOCK
    assert plan.chunk == fused_plan.sample_chunk(1000, 3, plan.block)
    assert str(plan) == "blocked/block=512/chunk=1000"
    edge, big = fused_plan.CPU_BLOCKED_MAX_FEATURES, fused_plan.CPU_BLOCKED_MIN_UNITS
    assert fused_plan.choose("cpu", big, edge, 10_000, 4).form == "blocked"
    for units, features in [(big, edge + 1), (big - 1, 3), (1200, 300)]:
        many = fused_plan.choose("cpu", units, features, 10_000, 4)
        assert many.form == "matmul" and many.block == fused_plan.matmul_block(features)
        assert str(many) == f"matmul/block={many.block}/chunk={many.chunk}"


@pytest.mark.parametrize("backend", ["gpu", "cuda", "tpu"])
def test_accelerators_take_direct_with_few_features_and_matmul_with_many(backend):
    few = fused_plan.choose(backend, 1 << 20, 3, 100_000, 4)
    assert few.form == "direct" and str(few) == f"direct/argmin-all/chunk={few.chunk}"
    many = fused_plan.choose(backend, 256 * 256, 50, 20_000, 4)
    assert many.form == "matmul" and many.block == fused_plan.matmul_block(50)
    assert str(many).startswith(f"matmul/block={many.block}/chunk=")


def test_the_matmul_block_shrinks_as_features_grow():
    blocks = [fused_plan.matmul_block(d) for d in (1, 10, 50, 300, 784, 100_000)]
    assert blocks == sorted(blocks, reverse=True)
    assert blocks[0] == fused_plan.MAX_MATMUL_BLOCK and blocks[-1] == fused_plan.MIN_MATMUL_BLOCK
    assert all(b & (b - 1) == 0 for b in blocks)  # powers of two


@pytest.mark.parametrize("form", ["direct", "matmul"])
@pytest.mark.parametrize(
    ("units", "samples", "budget"), [(1 << 20, 100_000, 1 << 30), (32_400, 1000, 4 * MiB), (5, 7, 1)]
)
def test_chunks_stay_within_the_budget_and_are_balanced(form, units, samples, budget):
    plan = fused_plan.choose("gpu", units, 3, samples, 4, budget=budget, form=form)
    chunks = -(-samples // plan.chunk)
    per = fused_plan.per_example_elements(form, units, 3)
    assert plan.chunk == 1 or plan.chunk * per * 4 <= budget
    assert chunks * plan.chunk - samples < chunks  # padding under one example per chunk


def test_a_plan_is_forced_by_the_context_manager_and_the_environment(monkeypatch):
    monkeypatch.delenv(fused_plan.ENV_VAR, raising=False)
    with fused_plan.forced("blocked"):
        assert fused_plan.choose("cpu", 100, 3, 10, 4).form == "blocked"
    assert fused_plan.choose("cpu", 100, 3, 10, 4).form == "matmul"
    monkeypatch.setenv(fused_plan.ENV_VAR, "direct")
    assert fused_plan.choose("cpu", 100, 3, 10, 4).form == "direct"
    with fused_plan.forced("blocked"):  # the context manager wins over the environment
        assert fused_plan.choose("gpu", 100, 3, 10, 4).form == "blocked"
    monkeypatch.setenv(fused_plan.ENV_VAR, "fastest")
    with pytest.raises(ValueError, match="SOM_STUDIO_KERNEL_PLAN: unknown kernel plan 'fastest'"):
        fused_plan.choose("cpu", 100, 3, 10, 4)
    with pytest.raises(ValueError, match="unknown kernel plan"):
        with fused_plan.forced("fast"):
            pass
    # The preflight's estimate never fails on it (the run refuses it with the message above).
    from som_studio.core.impls import memory
    from som_studio.core.impls.protocol import ProblemSize

    assert memory.jax_fused_batch(ProblemSize(9, 12, 3, 100, 5, 4)) > 0


def _planned_batch_impls() -> list[tuple[str, str]]:
    """(implementation, layout) of every JAX batch implementation that searches by the kernel plan."""
    out = []
    for impl in registry.all_implementations():
        if impl.backend == "jax" and impl.kind == "batch" and impl.name != "jax-vmap-batch":
            out.append((impl.name, ("2x2" if impl.map_axis else "4x1") if impl.shards else "1x1"))
    return out


def _plan_cases() -> list:
    """Every form of every planned implementation: the single-device one on every shape in float32 and
    the first in float64 (exact agreement to 1e-10); the sharded ones (the same search, per device)
    on the first shape in both precisions and on the widest (16 features)."""
    out = []
    for name, layout in _planned_batch_impls():
        shapes = (
            [(s, "float32") for s in SHAPES] if layout == "1x1" else [(SHAPES[0], "float32"), (SHAPES[-1], "float32")]
        )
        for form in fused_plan.FORMS:
            for shape, precision in [*shapes, (SHAPES[0], "float64")]:
                ident = f"{name}-{form}-{'x'.join(map(str, shape))}-{precision}"
                out.append(pytest.param(name, layout, form, shape, precision, id=ident))
    return out


@pytest.mark.parametrize(("name", "layout", "form", "shape", "precision"), representative(_plan_cases(), pairs_with=0))
def test_every_plan_matches_numpy_batch(name, layout, form, shape, precision):
    cfg = _cfg(*shape, precision=precision)
    ref = _train(REFERENCE["batch"], cfg, 4)
    # A small budget: several example chunks (and blocks) in every form.
    with fused_plan.forced(form, budget=2048):
        got = _train(name, cfg.replace(layout=layout), 4)
    np.testing.assert_allclose(got, ref, atol=TOL[precision], rtol=0)


def test_every_jax_run_records_its_kernel_plan_and_compiled_memory(monkeypatch):
    monkeypatch.setenv(fused_plan.ENV_VAR, "matmul")
    cfg = RunConfig(impl="jax-fused-batch", width=12, height=9, data=DataSpec(samples=120), seed=3, epochs=3)
    record = run_to_completion(Session(cfg, snapshot_interval_s=None, quality_points=0))
    assert record.status == "ok", record.message
    assert record.extra["kernel_plan"].startswith("matmul/block=")
    assert record.extra["memory_compiled_bytes"] > 12 * 9 * 3 * 4
