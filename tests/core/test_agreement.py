"""Every registered implementation trains the same SOM as the NumPy reference.

Tolerances: at float32 two correct implementations differ by rounding only
(different summation order, exp implementations), ~1e-7 relative per operation,
accumulated over a few hundred updates: 2e-5 absolute on values in [0, 1]. At
float64 the same argument gives 1e-10. Online trajectories are compared
elementwise only over 100 steps: after one best-matching unit flips on a
near-tie, the runs diverge legitimately, so full runs are compared by QE (2 %).
"""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.som.problem import make_problem
from som_studio.session.session import Session, run_to_completion
from tests.grids import product, representative

TOL = {"float32": 2e-5, "float64": 1e-10}
REFERENCE = {"online": "numpy-online", "batch": "numpy-batch"}
SHAPES = [(12, 9, 3), (7, 1, 3), (5, 6, 1), (6, 5, 16)]


def _impls(kind):
    return [i.name for i in registry.all_implementations() if i.kind == kind and not i.shards]


def _train(name, cfg, iterations):
    impl = registry.get(name)
    if impl.kind == "online":
        cfg = cfg.replace(steps=iterations, epochs=None)
    else:
        cfg = cfg.replace(epochs=iterations, steps=None)
    cfg = cfg.replace(impl=name)
    cfg.validate(impl.kind)
    data = _data(cfg)
    problem = make_problem(cfg, impl.kind, data)
    trainer = impl.create(problem)
    try:
        trainer.warmup()
        trainer.run(0, iterations // 2)
        trainer.run(iterations // 2, iterations - iterations // 2)
        return trainer.get_map()
    finally:
        trainer.close()


def _data(cfg):
    features = cfg.data.samples  # encoded below: samples*1000 + features
    n, d = divmod(features, 1000)
    rng = np.random.default_rng(cfg.seed + 100)
    return rng.random((n, d))


def _cfg(w, h, d, precision="float32", n=80):
    # The data are made by _data from (n, d); sigma shrinks fast so maps differ across units.
    return RunConfig(
        width=w,
        height=h,
        data=DataSpec(samples=n * 1000 + d),
        seed=2,
        precision=precision,
        sigma_start=(max(w / 2, 1.0), max(h / 2, 1.0)),
        sigma_end=(0.7, 0.7),
    )


def _shape_id(case: tuple) -> str:
    return f"{case[0]}-{'x'.join(map(str, case[1]))}"


@pytest.mark.parametrize("name,shape", representative(product(_impls("batch"), SHAPES, ids=_shape_id)))
def test_batch_matches_numpy_batch(name, shape):
    cfg = _cfg(*shape)
    ref = _train(REFERENCE["batch"], cfg, 4)
    got = _train(name, cfg, 4)
    np.testing.assert_allclose(got, ref, atol=TOL["float32"], rtol=0)


@pytest.mark.parametrize("name,shape", representative(product(_impls("online"), SHAPES, ids=_shape_id)))
def test_online_matches_numpy_online_over_100_steps(name, shape):
    cfg = _cfg(*shape)
    ref = _train(REFERENCE["online"], cfg, 100)
    got = _train(name, cfg, 100)
    np.testing.assert_allclose(got, ref, atol=TOL["float32"], rtol=0)


@pytest.mark.parametrize("name", _impls("batch") + _impls("online"))
def test_float64_agreement(name):
    kind = registry.get(name).kind
    cfg = _cfg(9, 7, 3, precision="float64")
    n = 100 if kind == "online" else 3
    ref = _train(REFERENCE[kind], cfg, n)
    got = _train(name, cfg, n)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, ref, atol=TOL["float64"], rtol=0)


@pytest.mark.parametrize("name", [n for n in _impls("online") if n != "jax-naive-online"])
def test_full_online_run_matches_reference_quality(name):
    base = RunConfig(width=14, height=10, data=DataSpec(samples=200), seed=5, steps=3000)
    ref = run_to_completion(Session(base.replace(impl=REFERENCE["online"]), snapshot_interval_s=None, quality_points=0))
    got = run_to_completion(Session(base.replace(impl=name), snapshot_interval_s=None, quality_points=0))
    assert ref.status == got.status == "ok"
    assert got.qe == pytest.approx(ref.qe, rel=0.02)


@pytest.mark.parametrize("name", ["numpy-online", "numpy-batch", "jax-jit-online", "jax-vmap-batch"])
def test_same_seed_same_map(name):
    cfg = _cfg(8, 6, 3)
    np.testing.assert_array_equal(_train(name, cfg, 6), _train(name, cfg, 6))


def test_training_orders_the_map():
    """A trained map is ordered: neighbours are alike and BMU pairs are adjacent."""
    from som_studio.core.som.metrics import quality, u_matrix

    cfg = RunConfig(impl="numpy-batch", width=10, height=8, data=DataSpec(samples=150), epochs=8, seed=0)
    problem = make_problem(cfg, "batch")
    t = registry.get("numpy-batch").create(problem)
    t.run(0, 8)
    trained = t.get_map()
    _, te0 = quality(problem.init_map, problem.data)
    _, te1 = quality(trained, problem.data)
    assert te1 < 0.5 * te0
    assert u_matrix(trained).mean() < 0.5 * u_matrix(problem.init_map).mean()


def test_an_asynchronous_map_copy_is_the_map_it_was_started_on():
    # Every single-device trainer that copies its map asynchronously gives what get_map() gives at the
    # moment the copy started, after the chunk that made it; the next chunk then trains on as before.
    names = [i.name for i in registry.all_implementations() if not i.shards]
    cfg = _cfg(8, 6, 3)
    checked = []
    for name in names:
        impl = registry.get(name)
        c = cfg.replace(impl=name, **({"steps": 20, "epochs": None} if impl.kind == "online" else {"epochs": 4}))
        trainer = impl.create(make_problem(c, impl.kind, _data(c)))
        if not hasattr(trainer, "copy_map_async"):
            trainer.close()
            continue
        try:
            trainer.warmup()
            trainer.run(0, 2)
            expected = trainer.get_map()
            finish = trainer.copy_map_async()
            np.testing.assert_array_equal(finish(), expected)
            trainer.run(2, 2)
            assert not np.array_equal(trainer.get_map(), expected)
        finally:
            trainer.close()
        checked.append(name)
    assert {"jax-fused-batch", "jax-scan-online", "jax-jit-online"} <= set(checked)
