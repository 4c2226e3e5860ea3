"""``jax-scan-online``'s kernel plans: every plan trains the very SOM of ``numpy-online``.

The plans differ only in how the loop is laid out (``K`` straight-line steps per
trip, a masked tail) and how the first minimum is found (by rows, or one argmin
over all units); each is forced in turn here on the CPU and held elementwise to
the NumPy reference at the same tolerance as the one-step loop (float64:
``atol = 1e-9``), with chunk sizes that are not multiples of ``K``.
"""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.plans import online_plan
from som_studio.core.plans.online_plan import OnlinePlan, choose
from som_studio.core.som.problem import make_problem
from tests.grids import product, representative

jso = pytest.importorskip("som_studio.core.impls.jax_scan_online")
jax = jso.jax


def _problem(width: int, height: int, features: int, steps: int, precision: str = "float64"):
    cfg = RunConfig(
        impl="numpy-online",
        width=width,
        height=height,
        data=DataSpec(samples=60),
        steps=steps,
        seed=5,
        precision=precision,
    )
    data = np.random.default_rng(7).random((60, features))
    return make_problem(cfg, "online", data)


def _train(problem, chunks: list[int], plan: OnlinePlan | None = None, name: str = "jax-scan-online"):
    trainer = jso.ScanOnline(problem, plan) if plan is not None else registry.get(name).create(problem)
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


SHAPES = [(12, 9, 3), (7, 1, 1), (5, 13, 16)]
STEPS = 200


@pytest.mark.parametrize(
    "plan,shape",
    representative(
        product(
            online_plan.all_plans() + [OnlinePlan("rows", 3)],
            SHAPES,
            ids=lambda c: f"{OnlinePlan.describe(c[0])}-{'x'.join(map(str, c[1]))}",
        )
    ),
)
def test_every_plan_matches_numpy_online(plan, shape):
    p = _problem(*shape, STEPS)
    ref = _train(p, [200], name="numpy-online")
    # 0 and chunks of 1, 5 and 17: tails of every length against K = 3, 4 and 16.
    got = _train(p, [0, 1, 5, 17, 77, 100], plan)
    np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0)


@pytest.mark.parametrize("plan", [OnlinePlan("rows", 1), OnlinePlan("all", 16)], ids=OnlinePlan.describe)
def test_float32_plans_agree_elementwise_over_100_steps(plan):
    # The agreement suite's float32 tolerance (tests/core/test_agreement.py).
    p = _problem(12, 9, 3, 100, precision="float32")
    ref = _train(p, [100], name="numpy-online")
    got = _train(p, [33, 67], plan)
    np.testing.assert_allclose(got, ref, atol=2e-5, rtol=0)


def test_masked_tail_leaves_the_map_unchanged():
    # A one-step chunk with K = 16: 15 masked steps must not move a unit (nor the 9 of the last trip).
    # The problem of the plans' test on its first shape: the same compiled programs.
    p = _problem(*SHAPES[0], STEPS)
    one = _train(p, [1, STEPS - 1], OnlinePlan("all", 16))
    ref = _train(p, [1, STEPS - 1], OnlinePlan("rows", 1))
    np.testing.assert_array_equal(one, ref)


def test_first_argmin_all_takes_first_in_row_major_order():
    v = np.full((4, 5), 3.0)
    v[2, 1] = v[1, 3] = v[3, 0] = 1.0
    r, c = jax.jit(jso.first_argmin_all)(v)
    assert (int(r), int(c)) == (1, 3)


def test_describe_names_the_plan():
    p = _problem(6, 5, 3, 10)
    t = jso.ScanOnline(p, OnlinePlan("all", 4))
    try:
        t.warmup()
        facts = t.describe()
        assert facts["kernel_plan"] == "direct/argmin-all/steps-per-trip=4"
        assert facts["memory_compiled_bytes"] > 0  # XLA's account of the program that runs
    finally:
        t.close()
    t = registry.get("jax-scan-online").create(p)
    try:
        # the plan of the device it runs on (an accelerator's blocks steps per loop trip)
        assert t.describe()["kernel_plan"] == choose(t.device.platform, 30, 3).describe()
    finally:
        t.close()


def test_choose_keeps_the_cpu_loop_and_blocks_steps_on_accelerators():
    assert choose("cpu", 32_400, 3) == OnlinePlan("rows", 1)
    small = choose("gpu", 32_400, 3)
    assert small.argmin == "all" and small.steps_per_trip == online_plan.K_SMALL
    assert choose("cuda", 1024 * 1024, 3).steps_per_trip == online_plan.K_MEDIUM
    assert choose("gpu", 1024 * 1024, 50).steps_per_trip == 1
    # Larger steps never get more steps per trip than smaller ones.
    ks = [choose("gpu", m, 3).steps_per_trip for m in (1, 10**4, 10**5, 10**6, 10**7)]
    assert ks == sorted(ks, reverse=True)


def test_plan_trips_and_validation():
    assert OnlinePlan("rows", 4).trips(0) == 0
    assert OnlinePlan("rows", 4).trips(9) == 3
    assert OnlinePlan("all", 1).trips(7) == 7
    with pytest.raises(ValueError, match="steps_per_trip"):
        OnlinePlan("rows", 0)
    with pytest.raises(ValueError, match="argmin"):
        OnlinePlan("cols", 1)  # type: ignore[arg-type]
