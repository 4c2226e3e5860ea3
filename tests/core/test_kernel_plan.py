"""The kernel plan: chosen per device by a pure function, forced for tests, and every plan exact.

Every plan is run on the CPU (forced) by every JAX batch implementation that
follows the plan and held to the NumPy reference at the agreement tolerances of
``tests/core/test_agreement.py``.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.plans import fused_plan
from som_studio.session.session import Session, run_to_completion
from tests.core.test_agreement import REFERENCE, SHAPES, TOL, _cfg, _train
from tests.grids import EXHAUSTIVE, representative

MiB = 1 << 20


def _faster(backend, units, features, samples, fast, slow, sums=True):
    """Whether the cost model predicts form ``fast`` faster than form ``slow`` at these sizes."""
    pred = {p.form: t for p, t in fused_plan.rank(backend, units, features, samples, 4, sums=sums)}
    return pred[fast] < pred[slow]


# The crossovers measured with whole epochs on the CPU (docs/benchmarks.md, "Kernel plans by shape"):
# (examples, features, units, the faster form, the slower one).
CPU_CROSSOVERS = [
    (1_000, 3, 240 * 135, "blocked", "matmul"),  # the playbook: 11.35 ms against 19.72 ms
    (10_000, 3, 40 * 30, "matmul", "blocked"),  # 0.36
    (10_000, 3, 240 * 135, "blocked", "matmul"),  # 1.38
    (10_000, 8, 40 * 30, "matmul", "blocked"),  # 0.21
    # Measured again with jax 0.12.0.1 on a 2-core AVX-512 machine (20 epochs from a random map, the median
    # epoch, each form forced; the table in docs/benchmarks.md, "The CPU's cost model refitted"): the blocked
    # form has overtaken the matmul form's blocks of 32 on 100x100 maps with few features.
    (1_000, 3, 100 * 100, "blocked", "matmul"),  # 2.46 ms against 4.39 ms
    (10_000, 3, 100 * 100, "blocked", "matmul"),  # 13.8 ms against 36.5 ms
    (50_000, 3, 100 * 100, "blocked", "matmul"),  # 71.7 ms against 143.7 ms
    # The matmul form's chunks holding 8 MiB of scores (fused_plan.CPU_SCORES_BYTES; 32 MiB: 37-39 ms):
    (10_000, 8, 100 * 100, "matmul", "blocked"),  # 17-20 ms against 22-26 ms
    # Not held: 10,000 x 5 on 100x100, blocked 12.7-23 ms against matmul 18-19 (the model: 24.8 against 23.0;
    # its blocked term grows with the features, the epochs hardly from 3 to 5).
    (10_000, 50, 40 * 30, "matmul", "blocked"),  # from 10 features matmul wins at every size
    (10_000, 300, 100 * 100, "matmul", "blocked"),
    # tiled against matmul, whole epochs with each form forced, least of 5 (docs/benchmarks.md, "Many rows on
    # small maps: the screened search"): the CPU's tiled epoch re-ranks only the examples near a tie.
    (1_000_000, 30, 10 * 10, "tiled", "matmul"),  # 130 ms against 515 ms
    (1_000_000, 16, 10 * 10, "tiled", "matmul"),  # 119 ms against 651 ms
    (1_000_000, 10, 20 * 20, "tiled", "matmul"),  # 238 ms against 488 ms
    (1_000_000, 50, 20 * 20, "tiled", "matmul"),  # 507 ms against 789 ms
    (100_000, 50, 20 * 20, "tiled", "matmul"),  # 49 ms against 97 ms
    (200_000, 100, 20 * 20, "tiled", "matmul"),  # 164 ms against 219 ms
    (1_000_000, 200, 10 * 10, "tiled", "matmul"),  # 604 ms against 1,276 ms
    (5_000, 2048, 20 * 20, "matmul", "tiled"),  # 77 ms against 251 ms (nine in ten near a tie)
    # On a map sampled from the data tiled wins (361 ms against 412), but in a run the next epochs' maps are
    # drawn together: at 100,000 x 1,000 on 10x10, two epochs from a sampled map took 1.15 s tiled against 0.94.
    (100_000, 784, 10 * 10, "matmul", "tiled"),
    # Not held: 50,000 x 128 on 50x50, matmul 259 ms against tiled 284-289, nearer than the model's fit.
    # Maps of a thousand units and more, clustered data, 10 epochs from the PCA map (bench -q, the median epoch,
    # each form forced; docs/benchmarks.md, "Mid-sized maps"): more of the examples lie near a tie there.
    (10_000, 16, 40 * 30, "matmul", "tiled"),  # 8.4-8.5 ms against 11.5-11.7 ms
    (10_000, 50, 50 * 50, "matmul", "tiled"),  # 39-61 ms against 116-122 ms
    (10_000, 128, 40 * 30, "matmul", "tiled"),  # 57-70 ms against 73-97 ms
    # Not held: 30,000 x 30 on 30x30, matmul 54-59 ms against tiled 72-93 (the model: tiled 0.72x matmul's).
    # 20 epochs from a random map (bench/envelope.py --quick, the median epoch, each form as the model chose
    # it in one run): early maps crowd units together, and a share of the examples near a tie is ranked
    # against every unit.
    (10_000, 300, 40 * 30, "matmul", "tiled"),  # 69 ms against 101 ms
    (10_000, 784, 40 * 30, "matmul", "tiled"),  # 184 ms against 382 ms
    # torchsom's shape: tiled 42 ms against matmul 77 ms with blocks of 4 units; the matmul form with blocks
    # of one unit (the block its cost model picks), 17.3 ms against tiled 49.5 ms (medians of 100 epochs).
    (16_000, 300, 25 * 15, "matmul", "tiled"),
]


# Searches alone (the quality pass, projection), forced plans timed in process CPU time (docs/benchmarks.md,
# "The quality pass at wide rows"): a big map leaves a tile room for a few examples, each few reading the map.
CPU_SEARCH_CROSSOVERS = [
    (10_000, 784, 100 * 100, "matmul", "tiled"),  # 2.44 s against 12.0 s (tiles of 3 examples)
    (10_000, 300, 100 * 100, "matmul", "tiled"),  # 0.89 s against 3.01 s (tiles of 4)
    (10_000, 300, 240 * 135, "matmul", "tiled"),  # 2.91 s against 17.2 s (tiles of 1)
    (20_000, 2048, 20 * 20, "matmul", "tiled"),  # 0.72 s against 3.93 s (tiles of 3)
    (10_000, 784, 40 * 30, "matmul", "tiled"),  # 0.35 s against 0.44 s (tiles of 8)
    (100_000, 30, 10 * 10, "tiled", "matmul"),  # 45 ms against 101 ms
    (100_000, 50, 20 * 20, "tiled", "matmul"),  # 117 ms against 170 ms
]


@pytest.mark.parametrize(("samples", "features", "units", "fast", "slow"), CPU_CROSSOVERS)
def test_the_cost_model_orders_the_cpu_plans_as_they_were_measured(samples, features, units, fast, slow):
    assert _faster("cpu", units, features, samples, fast, slow)


@pytest.mark.parametrize(("samples", "features", "units", "fast", "slow"), CPU_SEARCH_CROSSOVERS)
def test_the_cost_model_orders_the_cpu_searches_as_they_were_measured(samples, features, units, fast, slow):
    assert _faster("cpu", units, features, samples, fast, slow, sums=False)


def test_the_cost_model_picks_every_plan_somewhere():
    chosen = {
        fused_plan.choose(backend, units, d, n, 4).form
        for backend, units, d, n in [
            ("cpu", 240 * 135, 3, 1_000),
            ("cpu", 10 * 10, 30, 1_000_000),
            ("cpu", 20 * 20, 2048, 5_000),
            ("gpu", 1 << 20, 3, 100_000),
        ]
    }
    assert chosen == set(fused_plan.FORMS)
    playbook = fused_plan.choose("cpu", 32_400, 3, 1000, 4)
    assert str(playbook) == f"blocked/block={fused_plan.UNIT_BLOCK}/chunk=1000"
    small = fused_plan.choose("cpu", 100, 30, 1_000_000, 4)
    assert str(small) == f"tiled/block={fused_plan.MIN_MATMUL_BLOCK}/chunk={small.chunk}"
    assert (
        small.chunk * fused_plan.per_example_elements("tiled", 100, 30, small.block) * 4 <= fused_plan.TILE_BYTES["cpu"]
    )


def test_a_prediction_grows_with_the_work_and_falls_with_the_ceilings():
    plan = fused_plan.choose("cpu", 1200, 20, 10_000, 4, form="matmul")
    base = fused_plan.predict(plan, 1200, 20, 10_000, 4)
    twice = fused_plan.choose("cpu", 1200, 20, 20_000, 4, form="matmul")
    assert fused_plan.predict(twice, 1200, 20, 20_000, 4) > base
    faster = fused_plan.predict(plan, 1200, 20, 10_000, 4, ceilings=(424e9, 80e9))
    assert faster == pytest.approx(base / 2, rel=0.2) and faster < base
    # A search alone costs less than the epoch around it.
    assert fused_plan.predict(plan, 1200, 20, 10_000, 4, sums=False) < base


@pytest.mark.parametrize("backend", ["gpu", "cuda", "tpu"])
def test_accelerators_take_direct_with_few_features_and_matmul_with_many(backend):
    # Reasoned from the H100's figures (../shared/GPU.md), not measured by the model on a GPU.
    few = fused_plan.choose(backend, 1 << 20, 3, 100_000, 4)
    assert few.form == "direct" and str(few) == f"direct/argmin-all/chunk={few.chunk}"
    many = fused_plan.choose(backend, 256 * 256, 50, 20_000, 4)
    assert many.form == "matmul" and many.block == fused_plan.matmul_block(50)
    assert str(many).startswith(f"matmul/block={many.block}/chunk=")


# Whole epochs of jax-fused-batch on an NVIDIA H200 (jax 0.11.2, bench/gpu_check.py and bench/envelope.py, each
# form forced with SOM_STUDIO_KERNEL_PLAN; see docs/benchmarks.md, "The accelerator's cost model, fitted"):
# (examples, features, units, {form: seconds per epoch}).
H200_FORMS = [
    (1_000, 3, 240 * 135, {"direct": 98.4e-6}),  # the playbook
    (100_000, 3, 240 * 135, {"direct": 6.11e-3}),
    (100_000, 3, 1024 * 1024, {"direct": 141.2e-3}),
    (100_000, 3, 100 * 100, {"direct": 1.02e-3}),
    (100_000, 50, 240 * 135, {"matmul": 17.16e-3}),
    (100_000, 784, 240 * 135, {"matmul": 118.5e-3}),
    (1_000_000, 30, 10 * 10, {"direct": 2.70e-3, "tiled": 1.80e-3, "matmul": 2.07e-3}),
    (1_000_000, 10, 10 * 10, {"direct": 1.14e-3, "tiled": 1.40e-3, "matmul": 1.59e-3}),
    (1_000_000, 50, 10 * 10, {"direct": 4.70e-3, "tiled": 2.44e-3, "matmul": 2.44e-3}),
    (1_000_000, 16, 20 * 20, {"direct": 1.90e-3, "tiled": 4.67e-3, "matmul": 3.56e-3}),
    (1_000_000, 50, 20 * 20, {"direct": 6.98e-3, "tiled": 6.72e-3, "matmul": 4.23e-3}),
    (100_000, 3, 10 * 10, {"direct": 0.291e-3, "tiled": 0.296e-3, "matmul": 0.339e-3}),
    (100_000, 30, 10 * 10, {"direct": 0.418e-3, "tiled": 0.316e-3, "matmul": 0.276e-3}),
    (100_000, 50, 50 * 50, {"direct": 10.84e-3, "tiled": 3.77e-3, "matmul": 1.86e-3}),
    (20_000, 50, 256 * 256, {"direct": 51.95e-3, "tiled": 17.30e-3, "matmul": 6.97e-3}),
    (200_000, 100, 10 * 10, {"direct": 5.12e-3, "tiled": 1.04e-3, "matmul": 1.03e-3}),
    (20_000, 300, 25 * 15, {"direct": 12.80e-3, "tiled": 0.727e-3, "matmul": 0.564e-3}),
    (100_000, 784, 10 * 10, {"direct": 19.05e-3, "tiled": 2.56e-3, "matmul": 2.39e-3}),
    (200_000, 1000, 10 * 10, {"direct": 49.62e-3, "tiled": 6.44e-3, "matmul": 5.72e-3}),
    (5_000, 2048, 20 * 20, {"direct": 17.81e-3, "tiled": 0.875e-3, "matmul": 0.755e-3}),
]
H200_EPOCHS = [(form, n, d, m, t) for n, d, m, forms in H200_FORMS for form, t in forms.items()]
# Where the fastest form measured was at least 10 % faster than another: (examples, features, units, the
# fastest, the slower).
# Not held, the model nearer than the measurement: 200,000 x 1,000 and 100,000 x 784 on 10x10 (matmul 13 % and
# 7 % faster than tiled, which the model picks) and 100,000 x 30 on 10x10 (matmul 14 % faster than tiled).
H200_CROSSOVERS = [
    (n, d, m, fast, slow)
    for n, d, m, forms in H200_FORMS
    for fast in [min(forms, key=forms.get)]
    for slow in forms
    if forms[fast] * 1.1 < forms[slow] and (n, d, m) not in {(200_000, 1000, 100), (100_000, 30, 100)}
]


@pytest.mark.parametrize(("form", "samples", "features", "units", "measured"), H200_EPOCHS)
def test_the_accelerator_model_predicts_the_measured_gpu_epochs_within_a_factor_of_four(
    form, samples, features, units, measured
):
    plan = fused_plan.choose("gpu", units, features, samples, 4, form=form)
    assert measured / 4 < fused_plan.predict(plan, units, features, samples, 4, "gpu") < measured * 4


@pytest.mark.parametrize(("samples", "features", "units", "fast", "slow"), H200_CROSSOVERS)
def test_the_cost_model_orders_the_gpu_plans_as_they_were_measured(samples, features, units, fast, slow):
    assert _faster("gpu", units, features, samples, fast, slow)


# The best-two search alone on the H200, each form forced, best of 5 (docs/benchmarks.md).
H200_SEARCH_CROSSOVERS = [
    (1_000_000, 30, 10 * 10, "tiled", "matmul"),  # 1.22 ms against 1.51 (direct 1.87)
    (1_000_000, 30, 10 * 10, "tiled", "direct"),
    (20_000, 50, 256 * 256, "matmul", "tiled"),  # 6.83 ms against 8.19 (direct 50.6)
    (20_000, 50, 256 * 256, "matmul", "direct"),
]


@pytest.mark.parametrize(("samples", "features", "units", "fast", "slow"), H200_SEARCH_CROSSOVERS)
def test_the_cost_model_orders_the_gpu_searches_as_they_were_measured(samples, features, units, fast, slow):
    assert _faster("gpu", units, features, samples, fast, slow, sums=False)


def test_an_accelerator_takes_the_direct_form_with_few_features_and_a_product_form_past_them():
    # The direct form's loop over features reads and writes its plane of distances every feature; a product
    # form's search is one product (the bare one 0.4-0.6 ms at the wide shapes on the H200).
    for samples, features, units in [(5_000, 2048, 400), (16_000, 300, 375), (1_000_000, 30, 100)]:
        assert fused_plan.choose("gpu", units, features, samples, 4).form in ("matmul", "tiled")
    for samples, features, units in [(1_000_000, 10, 100), (1_000_000, 16, 400), (1_000, 3, 32_400)]:
        assert fused_plan.choose("gpu", units, features, samples, 4).form == "direct"


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


@pytest.mark.parametrize(("units", "features"), [(10_000, 3), (32_400, 8), (1200, 20)])
def test_the_cpus_search_keeps_a_chunks_scores_within_the_cache(units, features):
    """Big maps: the chunk as many examples as 8 MiB of scores hold, not as the whole budget holds."""
    for form in ("matmul", "direct"):
        plan = fused_plan.choose("cpu", units, features, 100_000, 4, form=form)
        assert fused_plan.CPU_SCORES_BYTES / 2 < plan.chunk * units * 4 <= fused_plan.CPU_SCORES_BYTES
    # An accelerator's chunk is one kernel: the budget alone bounds it.
    gpu = fused_plan.choose("gpu", units, features, 100_000, 4, form="matmul")
    assert gpu.chunk * units * 4 > fused_plan.CPU_SCORES_BYTES


def test_a_map_past_the_cache_keeps_chunks_that_amortise_reading_it():
    """A map streamed whole every trip: chunks as large as the streamed budget holds, their scores uncapped."""
    units, features = 10_000, 784
    assert units * (features + 1) * 4 > fused_plan.CHUNK_BUDGET["cpu"]
    plan = fused_plan.choose("cpu", units, features, 10_000, 4, form="matmul")
    per = fused_plan.per_example_elements("matmul", units, features, plan.block)
    assert plan.chunk * units * 4 > fused_plan.CPU_SCORES_BYTES
    assert plan.chunk * per * 4 <= fused_plan.CPU_STREAMED_BUDGET < 2 * plan.chunk * per * 4


def test_wide_rows_on_small_maps_keep_the_chunks_their_budget_gives():
    plan = fused_plan.choose("cpu", 400, 2048, 5000, 4, form="matmul")
    per = fused_plan.per_example_elements("matmul", 400, 2048, plan.block)
    assert plan.chunk * 400 * 4 < fused_plan.CPU_SCORES_BYTES
    assert plan.chunk * per * 4 <= fused_plan.CHUNK_BUDGET["cpu"] < 2 * plan.chunk * per * 4


def test_a_plan_is_forced_by_the_context_manager_and_the_environment(monkeypatch):
    monkeypatch.delenv(fused_plan.ENV_VAR, raising=False)
    with fused_plan.forced("blocked"):
        assert fused_plan.choose("cpu", 100, 3, 10, 4).form == "blocked"
    assert fused_plan.choose("cpu", 100, 3, 10, 4) == fused_plan.rank("cpu", 100, 3, 10, 4)[0][0]
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


@pytest.mark.parametrize(("name", "layout", "form", "shape", "precision"), representative(_plan_cases()))
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
    # The cost model's account: the plan that ran, predicted beside measured, the runner-up's prediction.
    model = record.extra["plan_model"]
    assert model["plan"] == record.extra["kernel_plan"] and model["forced"] is True
    assert model["measured_s_per_epoch"] == record.median_s > 0 and model["predicted_s_per_epoch"] > 0
    ranked = fused_plan.rank("cpu", 12 * 9, 3, 120, 4, ceilings=None)
    assert model["runner_up"] == str(next(p for p, _ in ranked if p.form != "matmul")) or model["ceilings"]["measured"]
    assert model["runner_up_predicted_s"] > 0
    from som_studio.report.inside import notes

    (line,) = [n for n in notes(["jax-fused-batch"], [record]) if "kernel plan" in n]
    assert line.startswith(f"jax-fused-batch: kernel plan {model['plan']}, predicted ") and "(forced)" in line


@pytest.mark.parametrize("rows", [1, 3, 4, 37])
def test_row_sums_in_pieces_are_the_unit_sums(monkeypatch, rows):
    """Rows widened a piece at a time give the sums of the whole joined rows to the bit; indices past the units drop."""
    from som_studio.core.plans import neighbourhood

    jnp = neighbourhood.jnp
    rng = np.random.default_rng(rows)
    n, d, units = 37, 5, 6
    data = rng.normal(size=(n, d)).astype(np.float32) * 1e3
    weights = (rng.random((n, d)) < 0.8).astype(np.float32)
    idx = rng.integers(0, units + 1, n).astype(np.int32)  # units itself: a padding row, dropped
    width = 2 * d
    monkeypatch.setattr(neighbourhood, "SUMS_PIECE_BYTES", rows * width * 8)
    got = np.asarray(neighbourhood.row_sums(jnp.asarray(data), jnp.asarray(weights), jnp.asarray(idx), units))
    joined = jnp.asarray(np.concatenate([data, weights], axis=1)).astype(neighbourhood.accumulator(jnp.float32))
    whole = neighbourhood.jax.ops.segment_sum(joined, jnp.asarray(idx), num_segments=units)  # all rows widened at once
    np.testing.assert_array_equal(got, np.asarray(whole))
    want = np.zeros((units, width))
    np.add.at(want, idx[idx < units], np.concatenate([data, weights], axis=1)[idx < units].astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("missing", [False, True])
def test_the_tiled_sums_scattered_are_the_accelerators_products(missing):
    """The CPU's tiled sums (the screened search, each tile's rows scattered) and an accelerator's (the matmul
    form's search, a one-hot product per tile), both run here, give the same float64 sums, and the same as the
    search's units summed row by row; padding rows past ``count`` belong to no unit."""
    from som_studio.core.plans import kernels

    jnp = kernels.jnp
    rng = np.random.default_rng(7)
    n, d, units, count = 103, 6, 22, 97
    data = rng.random((n, d)).astype(np.float32)
    wt = jnp.asarray(rng.random((d, units)).astype(np.float32))
    known = None
    if missing:
        mask = rng.random((n, d)) < 0.8
        data = np.where(mask, data, 0).astype(np.float32)
        known = jnp.asarray(mask.astype(np.float32))
    x = jnp.asarray(data)
    got = {
        way: np.asarray(kernels.tiled_sums(wt, x, 16, 4, known, jnp.asarray(count), cpu=way)) for way in (True, False)
    }
    np.testing.assert_array_equal(got[True], got[False])
    best = np.asarray(kernels.bmus(wt, x, fused_plan.KernelPlan("tiled", 16, 4), known))
    vals = np.concatenate([data, np.ones((n, 1), np.float32) if known is None else np.asarray(known)], axis=1)
    want = np.zeros((units, vals.shape[1]))
    np.add.at(want, best[:count], vals[:count].astype(np.float64))
    np.testing.assert_allclose(got[True], want, rtol=1e-12)


def _reference_distances(wt: np.ndarray, x: np.ndarray, known: np.ndarray | None = None) -> np.ndarray:
    """(N, M) float32 distances ``sum (w - x)^2``, summed in feature order over each example's known features."""
    dist = np.zeros((x.shape[0], wt.shape[1]), wt.dtype)
    for f in range(wt.shape[0]):
        diff = wt[f][None, :] - x[:, f][:, None]
        if known is not None:
            diff = np.where(known[:, f][:, None] != 0, diff, 0).astype(wt.dtype)
        dist = dist + diff * diff
    return dist


def _reference_units(
    wt: np.ndarray, x: np.ndarray, known: np.ndarray | None = None, besides: np.ndarray | None = None
) -> np.ndarray:
    """Each example's first unit at the smallest float32 distance ``sum (w - x)^2`` summed in feature order
    (``besides``: other than each example's unit there, its second-best)."""
    dist = _reference_distances(wt, x, known)
    if besides is not None:
        dist[np.arange(len(x)), besides] = np.inf
    return np.argmin(dist, axis=1)


def _tied_map(rng, d: int, points: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(D, 3 points) integer units, three one step from each of ``points`` integer points (in three features),
    in three thirds of the map (different blocks); each point as near to its three units (a three-way tie), and
    the midpoint of its first two as near to those two."""
    base = rng.integers(0, 5, (points, d)).astype(np.float32) * 4  # points 4 apart: no other unit ties
    axes = np.stack([rng.choice(d, 3, replace=False) for _ in range(points)])
    steps = np.zeros((3, points, d), np.float32)
    for j in range(3):
        steps[j, np.arange(points), axes[:, j]] = 1
    units = np.concatenate([base + steps[j] for j in range(3)])
    return units.T.copy(), base, base + (steps[0] + steps[1]) / 2


def _near_ties(pairs: float, triples: float, crowds: float, missing: bool, d: int = 6):
    """``(wt, x, known)``: 2,560 examples in ``d`` features about the units of :func:`_tied_map`, these shares
    of them tied between two units, among three, and near a tie among ``2 d`` (a crowd: units one step from a
    point along each feature, either way; its last unit the nearest, by less than the screen's reach);
    5 % of the rest's values missing where ``missing``."""
    rng = np.random.default_rng(3)
    n = 2560
    wt, points, mids = _tied_map(rng, d, 14)
    centre = np.full(d, 40, np.float32)  # far from the other units: its crowd ties only among itself
    crowd = np.concatenate([centre + np.eye(d, dtype=np.float32), centre - np.eye(d, dtype=np.float32)])
    wt = np.concatenate([wt, crowd.T], axis=1)
    x = (wt[:, rng.integers(0, wt.shape[1] - 2 * d, n)].T + rng.normal(0, 0.7, (n, d))).astype(np.float32)
    kind = rng.random(n)
    two = kind < pairs
    three = (kind >= pairs) & (kind < pairs + triples)
    twelve = (kind >= pairs + triples) & (kind < pairs + triples + crowds)
    x[two] = mids[rng.integers(0, len(mids), two.sum())]
    x[three] = points[rng.integers(0, len(points), three.sum())]
    x[twelve] = centre - np.eye(d, dtype=np.float32)[d - 1] * 1e-3  # the crowd's last unit is the nearest
    # 5 % missing: units that differ only in features an example lacks tie for it, a few examples in a tile.
    known = (rng.random((n, d)) < 0.95).astype(np.float32) if missing else None
    if missing:
        known[two | three | twelve] = 1  # a tie holds over every feature
        x = np.where(known != 0, x, 0).astype(np.float32)
    return wt, x, known


# Each path of the screen: none near a tie; a few, more and many (ranked directly against their candidates,
# or, with a crowd of 2 d, more than the candidates, against every unit); with and without missing values in
# turn; the last tile overlapping the one before, once. Candidates' distances are summed in feature order
# up to 8 features (d = 6) and in one reduction past them (d = 9). An epoch ranks its examples near a tie
# after every tile, or, with many features, in each tile (``in_tile``, forced here). The quality pass takes
# its best two by whole columns or by blocks (``blocks``, forced).
# The best unit by keys (small maps) or by three passes over the scores (``keyed`` off: larger maps).
# Each case compiles three programs of its own: the default run takes four that try every path above (every
# value of every column, and d = 9 ranked after every tile and in each), -m exhaustive the others too.
@pytest.mark.parametrize(
    ("pairs", "triples", "crowds", "missing", "tile", "in_tile", "blocks", "d", "keyed"),
    [
        pytest.param(0.0, 0.0, 0.0, True, 512, False, False, 6, True, marks=EXHAUSTIVE),
        pytest.param(0.01, 0.0, 0.001, False, 512, False, False, 9, False, marks=EXHAUSTIVE),
        (0.03, 0.01, 0.0, True, 600, False, True, 6, True),
        pytest.param(0.08, 0.05, 0.0, False, 512, False, False, 6, False, marks=EXHAUSTIVE),
        pytest.param(0.05, 0.05, 0.01, True, 512, False, True, 9, True, marks=EXHAUSTIVE),
        (0.1, 0.3, 0.0, False, 512, False, False, 9, True),
        (0.03, 0.01, 0.002, True, 600, True, False, 9, False),
        (0.1, 0.3, 0.01, False, 512, True, True, 9, True),
    ],
)
@pytest.mark.cpu_backend
def test_the_cpus_screened_tiled_sums_are_the_references_however_many_examples_lie_near_a_tie(
    pairs, triples, crowds, missing, tile, in_tile, blocks, d, keyed, monkeypatch
):
    """The CPU's tiled epoch accepts the product's best unit only where no other can be as near; the rest,
    exact ties among them, are ranked again by the direct form against the units that can be (every unit,
    where there are more than a few)."""
    from som_studio.core.plans import kernels, screen

    if in_tile:
        monkeypatch.setattr(kernels, "SCREEN_DEFERRED", 0)
    monkeypatch.setattr(screen, "BEST_TWO_MIN_UNITS", 0 if blocks else 10**9)
    if not keyed:
        monkeypatch.setattr(fused_plan, "KEYED_MAX_BITS", 0)
    jnp = kernels.jnp
    assert 2 * d > fused_plan.SCREEN_CANDIDATES or not crowds  # a crowd has more units than the candidates
    wt, x, known = _near_ties(pairs, triples, crowds, missing, d)
    n = x.shape[0]
    got = np.asarray(
        kernels.tiled_sums(jnp.asarray(wt), jnp.asarray(x), tile, 4, None if known is None else jnp.asarray(known))
    )
    best = _reference_units(wt, x, known)
    vals = np.concatenate([x, np.ones((n, 1), np.float32) if known is None else known], axis=1)
    want = np.zeros((wt.shape[1], vals.shape[1]))
    np.add.at(want, best, vals.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # The quality pass's search of the same tiles: the best and the second-best unit.
    plan = fused_plan.KernelPlan("tiled", tile, 4)
    first, second = kernels.best_two(
        jnp.asarray(wt), jnp.asarray(x), plan, None if known is None else jnp.asarray(known)
    )
    np.testing.assert_array_equal(np.asarray(first), best)
    np.testing.assert_array_equal(np.asarray(second), _reference_units(wt, x, known, besides=best))
    # The quality pass's program ranks its examples near a tie after every chunk (missing values as NaN).
    from som_studio.core.plans import quality_jax

    xq = x if known is None else np.where(known != 0, x, np.nan).astype(np.float32)
    first, second, _ = quality_jax.best_two_program(jnp.asarray(wt), jnp.asarray(xq), plan, known is not None)
    np.testing.assert_array_equal(np.asarray(first)[:n], best)
    np.testing.assert_array_equal(np.asarray(second)[:n], _reference_units(wt, x, known, besides=best))


def test_keys_order_units_as_their_scores_with_nan_first():
    """A key orders as its score, its last bits the unit's index (ties to the first unit), NaN least; with
    those bits cleared it is no more than the score, and within them of it."""
    from som_studio.core.plans import kernels, screen

    jnp = kernels.jnp
    rng = np.random.default_rng(4)
    for dtype in (np.float32, np.float64):
        special = [0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 3.0, 3.0]
        score = np.concatenate([special, rng.normal(0, 10, 56) * 10.0 ** rng.integers(-20, 20, 56)]).astype(dtype)
        cols = np.stack([score, rng.permutation(score)], axis=1)  # (M, T): two examples
        key = np.asarray(screen.keys(jnp.asarray(cols), 6))
        floor = np.asarray(screen.key_floor(jnp.asarray(key), 6, dtype))
        for t in range(2):
            first, later = np.argsort(key[:, t]), np.argsort(cols[:, t], kind="stable")
            assert np.all(np.diff(cols[first, t]) >= 0)  # ordered as the scores
            assert np.all(floor[:, t] <= cols[:, t])
            finite = np.isfinite(cols[:, t]) & (np.abs(cols[:, t]) > 1e-30)
            gap = np.abs(floor[finite, t] - cols[finite, t])
            assert np.all(gap <= np.abs(cols[finite, t]) * 2.0 ** (6 - np.finfo(dtype).nmant))
            assert later[0] == first[0] or cols[later[0], t] == cols[first[0], t]
        cols[5, 1] = np.nan
        key = np.asarray(screen.keys(jnp.asarray(cols), 6))
        assert np.argmin(key[:, 1]) == 5 and np.isnan(np.asarray(screen.key_floor(jnp.asarray(key), 6, dtype))[5, 1])


@pytest.mark.cpu_backend
def test_the_screen_by_keys_ranks_again_what_its_keys_cannot_tell_apart():
    """Examples nearer a later unit than an earlier one by less than a key's index bits (yet more than the
    product's rounding): the keys take the earlier unit, find the example near a tie, and the search gives
    the reference's unit every time."""
    from som_studio.core.plans import kernels, screen

    jnp = kernels.jnp
    rng = np.random.default_rng(6)
    d, m, n = 4, 200, 4000
    wt = rng.random((d, m)).astype(np.float32)
    a = rng.integers(0, m - 1, n)
    b = a + 1 + rng.integers(0, m - 1 - a)  # a later unit
    # Each example on the perpendicular bisector of its two units, moved toward the later one by a gap of
    # 10^-5.5 to 10^-3 of the squared distance: the keys cannot tell most of these apart, and every gap lies
    # beyond the distances' own rounding. Within an ulp or two, XLA's sums (contracted to fused multiply-adds
    # where the backend optimises) and NumPy's may each find the other unit nearer.
    mid, along = (wt[:, a] + wt[:, b]).T / 2, (wt[:, b] - wt[:, a]).T
    lift = rng.normal(0, 0.02, (n, d))
    lift -= along * (np.sum(lift * along, axis=1) / np.sum(along * along, axis=1))[:, None]
    x = mid + lift + along * (10.0 ** rng.uniform(-5.5, -3, n))[:, None]
    x = x.astype(np.float32)
    want = _reference_units(wt, x)
    search = screen.Screen(jnp.asarray(wt))
    assert search.keyed
    first, near, _ = kernels.jax.jit(lambda e: search.settled(e, None))(jnp.asarray(x))
    first, near = np.asarray(first), np.asarray(near)
    wrong = first != want
    assert wrong.sum() > 10 and near[wrong].all()  # the keys took the earlier unit: near, to be ranked again
    plan = fused_plan.KernelPlan("tiled", 512, 4)
    np.testing.assert_array_equal(np.asarray(kernels.bmus(jnp.asarray(wt), jnp.asarray(x), plan)), want)
    sums = np.asarray(kernels.tiled_sums(jnp.asarray(wt), jnp.asarray(x), 512, 4))
    np.testing.assert_array_equal(sums[:, -1], np.bincount(want, minlength=m))
    # The best two (the quality pass's): the keys' second unit is one of the pair as often, and as well checked.
    (first, second), near, _ = kernels.jax.jit(lambda e: search.settled(e, None, True))(jnp.asarray(x))
    wrong = (np.asarray(first) != want) | (np.asarray(second) != _reference_units(wt, x, besides=want))
    assert np.asarray(near)[wrong].all()
    got = kernels.best_two(jnp.asarray(wt), jnp.asarray(x), plan)
    np.testing.assert_array_equal(np.asarray(got[0]), want)
    np.testing.assert_array_equal(np.asarray(got[1]), _reference_units(wt, x, besides=want))


@pytest.mark.parametrize("block", [4, 5, 6])
def test_the_best_two_by_blocks_are_those_by_whole_columns(block):
    """Scores of few distinct values (ties everywhere, within a block and across blocks), a unit padded to
    +inf, floors below the scores: the best, the second (first in row-major order on ties) and the least
    floor of the rest, as whole columns give them."""
    from som_studio.core.plans import screen

    jnp = screen.jnp
    rng = np.random.default_rng(block)
    m, t = 12 * block, 3000
    score = rng.integers(0, 6, (m, t)).astype(np.float32)
    score[-1] = np.inf
    score[:, :40] = 3.0  # every unit tied
    floor = score - rng.integers(0, 3, (m, t)).astype(np.float32)
    low, first, low2, second, third = (
        np.asarray(a) for a in screen.best_two_blocked(jnp.asarray(score), jnp.asarray(floor), block)
    )
    row = np.arange(m)[:, None]
    want_low = score.min(axis=0)
    want_first = np.where(score == want_low, row, m).min(axis=0)
    rest = np.where(row == want_first, np.inf, score)
    want_low2 = rest.min(axis=0)
    want_second = np.where(rest == want_low2, row, m).min(axis=0)
    want_third = np.where((row == want_first) | (row == want_second), np.inf, floor).min(axis=0)
    for got, want in zip((low, first, low2, second, third), (want_low, want_first, want_low2, want_second, want_third)):
        np.testing.assert_array_equal(got, want)
    assert (first[:40] == 0).all() and (second[:40] == 1).all()


@pytest.mark.parametrize(
    ("form", "pairs", "triples", "missing", "d"),
    representative(
        [(form, *ties) for ties in [(0.1, 0.3, True, 9), (0.08, 0.05, False, 6)] for form in fused_plan.FORMS]
    ),
)
def test_every_plan_finds_a_nearest_unit_where_units_tie_exactly(form, pairs, triples, missing, d):
    """Examples equally near two or three units in different blocks (integer data has them): every form finds
    a unit at the smallest distance, on the device the tests run on. Which of the tied units is form-dependent:
    the direct form and the CPU's screened search take the first, as NumPy does; the product forms rank their
    candidate blocks by the product, whose rounding may put a later tied unit's block first."""
    from som_studio.core.plans import kernels

    jnp = kernels.jnp
    wt, x, known = _near_ties(pairs, triples, 0.0, missing, d)
    n, m = x.shape[0], wt.shape[1]
    plan = fused_plan.choose(kernels.jax.default_backend(), m, d, n, 4, budget=1 << 18, form=form)
    k = None if known is None else jnp.asarray(known)
    dist = _reference_distances(wt, x, known)
    for search in (kernels.bmus, lambda wt, data, plan, known: kernels.best_two(wt, data, plan, known)[0]):
        got = np.asarray(kernels.jax.jit(partial(search, plan=plan))(jnp.asarray(wt), jnp.asarray(x), known=k))
        np.testing.assert_array_equal(dist[np.arange(n), got], dist.min(axis=1))
        if form == "direct":
            np.testing.assert_array_equal(got, dist.argmin(axis=1))


@pytest.mark.parametrize("form", fused_plan.FORMS)
def test_every_plan_finds_the_references_units_among_data_far_from_the_origin(form):
    """Examples 100 from the origin and about 1 apart: the expanded form ``|w|^2 - 2 x.w`` about the origin
    rounds by more than the distances between units, so every plan takes it about the map's centre."""
    from som_studio.core.plans import kernels

    jnp = kernels.jnp
    rng = np.random.default_rng(5)
    n, d, units = 3000, 30, 120
    centres = rng.random((12, d)).astype(np.float32) + 100
    x = (centres[rng.integers(0, 12, n)] + rng.normal(0, 0.05, (n, d))).astype(np.float32)
    wt = x[rng.integers(0, n, units)].T.copy()
    plan = fused_plan.choose("cpu", units, d, n, 4, form=form)
    got = np.asarray(kernels.jax.jit(lambda w, e: kernels.bmus(w, e, plan))(jnp.asarray(wt), jnp.asarray(x)))
    np.testing.assert_array_equal(got, _reference_units(wt, x))


@pytest.mark.parametrize("block", [1, 2])
@pytest.mark.parametrize(("features", "missing"), [(1100, True), (300, False)])
def test_the_matmul_forms_smallest_blocks_find_the_direct_forms_units(block, features, missing):
    """Blocks of one and two units (the CPU's cost model picks them at wide rows), in slabs of features past
    WIDE_FEATURES and with missing values: each example's best and second-best unit are the direct form's."""
    from som_studio.core.plans import kernels

    jnp = kernels.jnp
    rng = np.random.default_rng(2)
    n, m = 600, 40
    x = rng.random((n, features), dtype=np.float32)
    wt = (x[rng.choice(n, m, replace=False)].T + rng.normal(0, 0.01, (features, m))).astype(np.float32)
    known = (rng.random((n, features)) < 0.9).astype(np.float32) if missing else None
    x = x if known is None else np.where(known != 0, x, 0).astype(np.float32)
    k = None if known is None else jnp.asarray(known)
    got = kernels.jax.jit(lambda w, e, kn: kernels.matmul(w, e, 256, block, kn, two=True))(wt, x, k)
    want = kernels.jax.jit(lambda w, e, kn: kernels.direct(w, e, 256, kn, two=True))(wt, x, k)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
