"""Every implementation that declares hex, toroid or missing values trains the NumPy reference's SOM.

The registry is iterated (as :mod:`tests.core.test_agreement` does): whatever an
implementation's capabilities say it trains, it is held here to ``numpy-batch``
or ``numpy-online`` on the four lattices (rect/hex x planar/toroid) and on data
with missing values, under every kernel plan (batch: each BMU form forced, with
a small budget so that examples come in several chunks; ``jax-scan-online``:
every online plan). Tolerances are the agreement suite's: float32 2e-5 over 4
epochs or 100 steps, float64 1e-10 (batch) and 1e-9 (online, as the plans' own test).
"""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.plans import fused_plan, online_plan
from som_studio.core.som.problem import make_problem
from tests.grids import product, representative

pytest.importorskip("jax")

LATTICES = [("rect", False), ("rect", True), ("hex", False), ("hex", True)]
REFERENCE = {"online": "numpy-online", "batch": "numpy-batch"}
TOL = {"float32": 2e-5, "float64": 1e-10}


def _data(n: int, d: int, missing: bool) -> np.ndarray:
    rng = np.random.default_rng(11)
    x = rng.random((n, d))
    if missing:
        holes = rng.random((n, d)) < 0.2
        holes[:, 0] &= ~holes[:, 1:].all(axis=1)  # every row keeps a known feature
        x[holes] = np.nan
    return x


def _cfg(kind: str, lattice: tuple[str, bool], precision: str, iterations: int, shape=(9, 8)) -> RunConfig:
    w, h = shape
    topology, toroid = lattice
    cfg = RunConfig(
        width=w,
        height=h,
        data=DataSpec(samples=70),
        seed=3,
        precision=precision,
        topology=topology,
        toroid=toroid,
        sigma_start=(w / 2, h / 2),
        sigma_end=(0.7, 0.7),
    )
    return (
        cfg.replace(steps=iterations, epochs=None) if kind == "online" else cfg.replace(epochs=iterations, steps=None)
    )


def _train(trainer, iterations: int, facts: dict | None = None) -> np.ndarray:
    """The final map, in two chunks; ``facts`` gets what the trainer describes of itself before it closes."""
    try:
        trainer.warmup()
        trainer.run(0, iterations // 3)
        trainer.run(iterations // 3, iterations - iterations // 3)
        if facts is not None:
            facts.update(trainer.describe())
        return trainer.get_map()
    finally:
        trainer.close()


def _capable(kind: str, lattice: tuple[str, bool], missing: bool) -> list[str]:
    return [
        i.name
        for i in registry.all_implementations()
        if i.kind == kind and i.backend == "jax" and not i.shards and i.refusal(*lattice, missing) is None
    ]


def _cases(kind: str) -> list:
    out = []
    for lattice in LATTICES:
        for missing in (False, True):
            for name in _capable(kind, lattice, missing):
                if lattice == ("rect", False) and not missing:
                    continue  # the agreement suite's own case
                ids = f"{name}-{lattice[0]}-{'toroid' if lattice[1] else 'planar'}{'-missing' if missing else ''}"
                out.append(pytest.param(name, lattice, missing, id=ids))
    return out


def _problem(kind, lattice, missing, precision, iterations, shape=(9, 8), features=3):
    cfg = _cfg(kind, lattice, precision, iterations, shape)
    return make_problem(cfg, kind, _data(70, features, missing))


def _planned(cases: list) -> list:
    """``cases`` with every kernel-plan form for an implementation that searches by the plan, one for the others."""
    from tests.core.test_kernel_plan import _planned_batch_impls

    planned = {name for name, _layout in _planned_batch_impls()}
    out = []
    for case in cases:
        name = case.values[0]
        for form in fused_plan.FORMS if name in planned else fused_plan.FORMS[:1]:
            out.append(pytest.param(*case.values, form, id=f"{case.id}-{form}"))
    return out


@pytest.mark.parametrize("name,lattice,missing,form", representative(_planned(_cases("batch")), pairs_with=0))
def test_batch_every_plan_matches_numpy_batch(name, lattice, missing, form):
    p = _problem("batch", lattice, missing, "float32", 4)
    ref = _train(registry.get(REFERENCE["batch"]).create(p), 4)
    with fused_plan.forced(form, budget=4096):
        got = _train(registry.get(name).create(p), 4)
    np.testing.assert_allclose(got, ref, atol=TOL["float32"], rtol=0)


@pytest.mark.parametrize("name,lattice,missing", representative(_cases("online"), pairs_with=0))
def test_online_matches_numpy_online_over_100_steps(name, lattice, missing):
    p = _problem("online", lattice, missing, "float32", 100)
    ref = _train(registry.get(REFERENCE["online"]).create(p), 100)
    got = _train(registry.get(name).create(p), 100)
    np.testing.assert_allclose(got, ref, atol=TOL["float32"], rtol=0)


# Every lattice whole; missing values on the two lattices furthest apart (rect planar, hex toroid).
LATTICE_CASES = [(lt, False) for lt in LATTICES] + [(("rect", False), True), (("hex", True), True)]


def _lattice_id(case: tuple) -> str:
    (topology, toroid), missing = case
    return f"{topology}-{'toroid' if toroid else 'planar'}-{'missing' if missing else 'full'}"


@pytest.mark.parametrize(
    "plan,case",
    representative(
        product(
            online_plan.all_plans(),
            LATTICE_CASES,
            ids=lambda c: f"{online_plan.OnlinePlan.describe(c[0])}-{_lattice_id(c[1])}",
        )
    ),
)
def test_every_online_plan_matches_numpy_online_float64(plan, case):
    lattice, missing = case
    from som_studio.core.impls.jax_scan_online import ScanOnline

    # An odd height on a planar hex map (one even row more), 16 features past the matmul threshold.
    shape = (7, 8) if lattice[1] else (7, 9)
    p = _problem("online", lattice, missing, "float64", 150, shape, features=5)
    ref = _train(registry.get("numpy-online").create(p), 150)
    got = _train(ScanOnline(p, plan), 150)
    np.testing.assert_allclose(got, ref, atol=1e-9, rtol=0)


@pytest.mark.parametrize(
    "form,case", representative(product(fused_plan.FORMS, LATTICE_CASES, ids=lambda c: f"{c[0]}-{_lattice_id(c[1])}"))
)
def test_fused_batch_every_plan_float64(case, form):
    lattice, missing = case
    shape = (7, 8) if lattice[1] else (7, 9)
    p = _problem("batch", lattice, missing, "float64", 3, shape, features=5)
    ref = _train(registry.get("numpy-batch").create(p), 3)
    with fused_plan.forced(form, budget=4096):
        got = _train(registry.get("jax-fused-batch").create(p), 3)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)


@pytest.mark.parametrize(
    "form,features,lattice",
    representative(
        product(
            fused_plan.FORMS,
            [3, 50, 300],
            [("rect", False), ("hex", True)],
            ids=lambda c: f"{c[0]}-{c[1]}-{'hex-toroid' if c[2][1] else 'rect'}",
        )
    ),
)
def test_fused_batch_every_plan_at_every_width_with_missing_values(lattice, form, features):
    # Few and many features: the matmul form's vectorised re-rank and its small blocks, the
    # blocked form's wide gather; float64, so every plan must choose exactly the reference's units.
    p = _problem("batch", lattice, True, "float64", 3, (7, 8), features=features)
    ref = _train(registry.get("numpy-batch").create(p), 3)
    with fused_plan.forced(form, budget=1 << 16):
        got = _train(registry.get("jax-fused-batch").create(p), 3)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)


@pytest.mark.parametrize("form", ["matmul", "tiled"])
def test_very_wide_rows_searched_in_feature_slabs_match_numpy_batch(form):
    # Past WIDE_FEATURES the re-rank sums its candidates' differences slab by slab of features (the last
    # slab part padding): float64 on a hex toroid with missing values, so every unit must be the reference's.
    features = fused_plan.WIDE_FEATURES + fused_plan.FEATURE_SLAB // 2 + 3
    p = _problem("batch", ("hex", True), True, "float64", 3, (7, 8), features=features)
    ref = _train(registry.get("numpy-batch").create(p), 3)
    with fused_plan.forced(form, budget=1 << 20):
        got = _train(registry.get("jax-fused-batch").create(p), 3)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)


@pytest.mark.parametrize("name", [i.name for i in registry.all_implementations() if i.backend == "jax"])
def test_every_jax_implementation_declares_every_lattice_and_missing_values(name):
    impl = registry.get(name)
    for lattice in LATTICES:
        for missing in (False, True):
            assert impl.refusal(*lattice, missing) is None, (lattice, missing)


# -- the sharded implementations, on the 8 simulated CPU devices (tests/conftest.py) -----------------


def _sharded_cases() -> list:
    """Each sharded implementation on a layout that splits both axes (or the data's alone) and on one
    whose map blocks pad a row; every lattice without missing values, the wrapped ones with them
    (the planar ones with missing values: ``test_sharded_every_plan_with_missing_values_float32``,
    the smoothing test and the fused tests cover them)."""
    out = []
    for impl in registry.all_implementations():
        if not impl.shards:
            continue
        for layout in ("2x2", "1x3") if impl.map_axis else ("4x1",):
            for lattice in LATTICES:
                for missing in (False, True) if lattice[1] else (False,):
                    lt = f"{lattice[0]}-{'toroid' if lattice[1] else 'planar'}-{'missing' if missing else 'full'}"
                    out.append(pytest.param(impl.name, layout, lattice, missing, id=f"{impl.name}-{layout}-{lt}"))
    return out


def _sharded_problem(lattice, missing, layout, precision="float64"):
    # 8 rows (even: a hex toroid) over 3 map blocks pads a row: the wrap must be at the real height.
    cfg = _cfg("batch", lattice, precision, 3, (7, 8 if lattice[1] else 9)).replace(layout=layout)
    return make_problem(cfg, "batch", _data(30, 4, missing))


@pytest.mark.test_devices
@pytest.mark.parametrize("name,layout,lattice,missing", representative(_sharded_cases(), pairs_with=0))
def test_sharded_match_numpy_batch(name, layout, lattice, missing):
    p = _sharded_problem(lattice, missing, layout)
    ref = _train(registry.get("numpy-batch").create(p), 3)
    got = _train(registry.get(name).create(p), 3)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)


@pytest.mark.test_devices
@pytest.mark.parametrize(
    "rung,form,lattice",
    representative(
        product(
            [("jax-shardmap-batch", "2x2"), ("jax-jit-sharded-batch", "2x1"), ("jax-pmap-batch", "2x1")],
            fused_plan.FORMS,
            LATTICES,
            ids=lambda c: f"{c[0][0]}-{c[0][1]}-{c[1]}-{c[2][0]}-{'toroid' if c[2][1] else 'planar'}",
        )
    ),
)
def test_sharded_every_plan_with_missing_values_float32(rung, form, lattice):
    name, layout = rung
    p = _sharded_problem(lattice, True, layout, "float32")
    ref = _train(registry.get("numpy-batch").create(p), 3)
    with fused_plan.forced(form, budget=2048):
        got = _train(registry.get(name).create(p), 3)
    np.testing.assert_allclose(got, ref, atol=TOL["float32"], rtol=0)


# The sharded rungs' own options, each on a rect map whole and on hex maps with missing values.
OPTION_LATTICES = [(("rect", False), False), (("hex", False), True), (("hex", True), True)]


@pytest.mark.test_devices
@pytest.mark.parametrize(
    "smoothing,case",
    representative(
        product(
            ["all-gather", "psum-scatter", "ring", "replicated-sums"],
            OPTION_LATTICES,
            ids=lambda c: f"{c[0]}-{_lattice_id(c[1])}",
        )
    ),
)
def test_shardmap_every_smoothing_agrees_and_sends_its_collective(smoothing, case):
    from som_studio.core.impls.jax_shardmap import JaxShardmapBatch

    lattice, missing = case
    p = _sharded_problem(lattice, missing, "2x4")
    ref = _train(registry.get("numpy-batch").create(p), 3)
    facts: dict = {}
    got = _train(JaxShardmapBatch(p, smoothing=smoothing), 3, facts)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)
    kinds = {c["kind"] for c in facts["collectives"] if c["per_epoch"] and c["sent_bytes"]}
    expected = {
        "all-gather": "all-gather",
        "psum-scatter": "reduce-scatter",
        "ring": "collective-permute",
        "replicated-sums": "all-reduce",
    }[smoothing]
    assert expected in kinds


@pytest.mark.test_devices
@pytest.mark.parametrize(
    "program,case",
    representative(
        product(["planned", "whole-matrix"], OPTION_LATTICES[::2], ids=lambda c: f"{c[0]}-{_lattice_id(c[1])}")
    ),
)
def test_jit_sharded_programs_agree(program, case):
    from som_studio.core.impls.jax_jit_sharded import JaxJitShardedBatch

    lattice, missing = case
    p = _sharded_problem(lattice, missing, "4x2")
    ref = _train(registry.get("numpy-batch").create(p), 3)
    facts: dict = {}
    got = _train(JaxJitShardedBatch(p, program=program), 3, facts)
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)
    assert facts["program"] == program


@pytest.mark.parametrize("lattice", [("hex", True), ("rect", True)], ids=["hex-toroid", "rect-toroid"])
def test_a_jax_session_measures_quality_on_the_device_for_every_lattice(lattice):
    from som_studio.session.session import Session, run_to_completion

    base = RunConfig(
        width=10, height=8, data=DataSpec(samples=150), seed=1, epochs=6, topology=lattice[0], toroid=lattice[1]
    )
    ref = run_to_completion(Session(base.replace(impl="numpy-batch"), snapshot_interval_s=None))
    got = run_to_completion(Session(base.replace(impl="jax-fused-batch"), snapshot_interval_s=None))
    assert ref.status == got.status == "ok", got.message
    # The same SOM, measured by the device program (TE by the lattice's adjacency) and by the reference.
    assert got.qe == pytest.approx(ref.qe, rel=1e-5)
    assert got.te == pytest.approx(ref.te, abs=1e-9)
