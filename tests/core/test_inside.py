"""The inside of a run: XLA's counts with loop trips, the analytic count, the ceilings, and when it is recorded."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.core.inspection import hlo, inside
from som_studio.core.plans import fused_plan
from som_studio.core.som.problem import load_problem_table, make_problem
from som_studio.session.events import ChunkTimed, Finished
from som_studio.session.session import Session, run_to_completion
from tests.grids import EXHAUSTIVE

jax = jax_runtime.jax()
jnp = jax.numpy

#: Small ceilings so that a test measures them in well under a second (the figures are not asserted).
SMALL_CEILINGS = (256, 4 << 20, 3)


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    """Ceilings cached in a folder of the test's own, measured small and briefly (``repeats`` runs each)."""
    monkeypatch.setenv("SOM_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(inside, "CEILING_SIZES", {k: SMALL_CEILINGS for k in ("cpu", "gpu", "tpu")})
    monkeypatch.setattr(inside, "CEILING_MIN_S", 0.0)
    return tmp_path / "cache"


def _trainer(name: str, **kw):
    cfg = RunConfig(impl=name, **kw)
    impl = registry.get(name)
    return impl, impl.create(make_problem(cfg, impl.kind, load_problem_table(cfg).values))


def test_the_counter_reproduces_xla_and_multiplies_loop_bodies_by_their_trips():
    n = 64

    def f(x):
        return jax.lax.fori_loop(0, 10, lambda i, a: jnp.dot(a, x, precision="highest") + 1.0, x)

    compiled = jax.jit(f).lower(np.ones((n, n), np.float32)).compile()
    xla = inside._cost_analysis(compiled)
    costs = hlo.ProgramCosts(compiled.as_text())
    once, trips = costs.whole(trips=False), costs.whole(trips=True)
    body = 2 * n**3 + n * n  # the product and the + 1
    assert xla["flops"] is not None
    assert once["flops"] == pytest.approx(xla["flops"], rel=0.01)
    assert once["flops"] == pytest.approx(body, rel=0.05)
    assert trips["flops"] == pytest.approx(10 * body, rel=0.05)
    assert costs.loops == [(costs.loops[0][0], 10)]
    assert costs.iteration_loop is None  # a known trip count: not a loop over the run's iterations


def test_a_conditional_counts_its_largest_branch_and_the_record_takes_the_analytic_count():
    """One branch of a conditional runs: XLA counts its largest, as the counter does (not their sum), and a run
    whose program branches is recorded by the SOM's own count, since which branch ran depends on the data."""
    n = 64

    def f(x, big):
        def twice(a):
            return jnp.dot(jnp.dot(a, a, precision="highest"), a, precision="highest")

        return jax.lax.cond(big, twice, lambda a: jnp.dot(a, a, precision="highest"), x)

    compiled = jax.jit(f).lower(np.ones((n, n), np.float32), True).compile()
    xla = inside._cost_analysis(compiled)
    once = hlo.ProgramCosts(compiled.as_text()).whole(trips=False)
    assert once["conditionals"] == 1
    assert once["flops"] == pytest.approx(4 * n**3, rel=0.05)  # the two products' branch, not all three
    assert once["flops"] == pytest.approx(xla["flops"], rel=0.01)
    counted = {"flops": 1e6, "bytes": 2e6}
    ceiling = {"matmul_flops_per_s": 1e12, "bandwidth_bytes_per_s": 1e11}
    static = {"xla_flops_per_iteration": 5e6, "xla_bytes_per_iteration": 6e6}
    branching = {**static, "counts": {"conditionals_per_iteration": 265.0}}
    plain = inside.assemble(static, counted, ceiling=ceiling, seconds_per_iteration=1e-3)
    branched = inside.assemble(branching, counted, ceiling=ceiling, seconds_per_iteration=1e-3)
    assert (plain["flops_source"], plain["flops_per_iteration"], plain["bytes_per_iteration"]) == ("xla", 5e6, 6e6)
    assert (branched["flops_source"], branched["bytes_source"]) == ("analytic", "analytic")
    assert (branched["flops_per_iteration"], branched["bytes_per_iteration"]) == (1e6, 2e6)
    # A count the measured time could not have done: 6 GB in a millisecond is 60x this memory's ceiling.
    too_much = inside.assemble(
        {**static, "xla_bytes_per_iteration": 6e9}, counted, ceiling=ceiling, seconds_per_iteration=1e-3
    )
    assert (too_much["bytes_source"], too_much["bytes_per_iteration"], too_much["flops_source"]) == (
        "analytic",
        2e6,
        "xla",
    )


@pytest.mark.parametrize("form", [None, "direct"])
def test_analytic_count_and_cost_analysis_agree_on_the_fused_epoch(form):
    """The playbook's workload: XLA's FLOPs per epoch (inner loops times their trips) within 10 % of the count
    of the SOM's own operations under the plan that runs (the CPU's own, and the direct form an accelerator
    runs, with its first-argmin over every unit), and the text's count of a call within 1 % of ``cost_analysis``."""
    with fused_plan.forced(form):
        impl, trainer = _trainer("jax-fused-batch", width=240, height=135, epochs=5)
    try:
        static = inside.inspect(trainer)
        p = trainer.p
        counted = inside.analytic(
            impl.work_algorithm,
            str(trainer.plan),
            height=p.height,
            width=p.width,
            features=p.features,
            samples=p.samples,
            itemsize=p.dtype.itemsize,
        )
        assert static["xla_flops_per_iteration"] == pytest.approx(counted["flops"], rel=0.10)
        if static["counts"]["loop_trips_per_iteration"] > 1:  # the CPU's: units in blocks, examples in chunks
            # Counting a loop's body once would miss most of the epoch.
            assert static["cost_analysis"]["flops"] < 0.5 * static["xla_flops_per_iteration"]
        assert set(static["compile_phases_s"]) == {"trace", "lower", "compile"}
        assert all(v is not None and v > 0 for v in static["compile_phases_s"].values())
    finally:
        trainer.close()


@pytest.mark.parametrize("argmin", ["rows", "all"])
def test_analytic_count_follows_the_online_steps_argmin(argmin):
    """An online step's first minimum by rows (the CPU's) or by one argmin over every unit (an accelerator's):
    the count follows the form that runs, within 10 % of XLA's as for the epoch (1.4 % on the CPU, where the
    count that took the argmin for a minimum was 30 % under for "all")."""
    from som_studio.core.impls import jax_scan_online
    from som_studio.core.plans.online_plan import OnlinePlan

    cfg = RunConfig(impl="jax-scan-online", width=24, height=13, steps=20)
    problem = make_problem(cfg, "online", load_problem_table(cfg).values)
    plan = OnlinePlan(argmin, 1)
    trainer = jax_scan_online.ScanOnline(problem, plan)
    try:
        static = inside.inspect(trainer)
    finally:
        trainer.close()
    counted = inside.analytic("online", plan.describe(), height=13, width=24, features=3, samples=1000, itemsize=4)
    assert static["xla_flops_per_iteration"] == pytest.approx(counted["flops"], rel=0.10)


def test_the_matmul_ceiling_is_what_a_plain_dot_reaches(own_cache):
    """Two measurements in one process, each the best of its runs: the ceiling is a plain product's rate.

    This machine is shared (the same program timed twice in a row has differed 4x here), so the two are taken
    in short turns, many times over, and the best of each compared: the best run is the one that had the
    machine alone, and both get such turns. A measurement off by a constant factor (a wrong FLOP count,
    another program) never meets the plain product's best.
    """
    n, repeats = 768, 3
    device = jax.devices()[0]
    a = jax.random.uniform(jax.random.key(1), (n, n), jnp.float32)
    b = jax.random.uniform(jax.random.key(2), (n, n), jnp.float32)
    # Jitted, as the ceiling's product is: an eager product pays Python's dispatch too, and on a GPU a product
    # of this size takes about as long as its dispatch.
    dot = jax.jit(lambda x, y: jnp.dot(x, y, precision="highest"))
    dot(a, b).block_until_ready()

    def plain() -> float:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            dot(a, b).block_until_ready()
            best = min(best, time.perf_counter() - t)
        return 2 * n**3 / best

    plains, ceilings = [], []
    for turn in range(40):
        plains.append(plain())
        ceilings.append(inside.measure_ceilings(device, sizes=(n, 1 << 20, repeats))["matmul_flops_per_s"])
        if turn >= 5 and max(ceilings) == pytest.approx(max(plains), rel=0.2):
            break
    assert max(ceilings) == pytest.approx(max(plains), rel=0.2)


def test_ceilings_are_measured_once_per_device_and_say_how(own_cache):
    device = jax.devices()[0]
    first = inside.ceilings(device)
    assert first["cached"] is False
    assert first["matmul_flops_per_s"] > 0 and first["bandwidth_bytes_per_s"] > 0
    assert "HIGHEST" in first["measured_with"]["matmul"] and "MiB" in first["measured_with"]["bandwidth"]
    again = inside.ceilings(device)
    assert again["cached"] is True and again["matmul_flops_per_s"] == first["matmul_flops_per_s"]
    # A damaged cache is measured past, not an error.
    (own_cache / "ceilings.json").write_text("{not json", encoding="utf-8")
    assert inside.ceilings(device)["cached"] is False
    assert json.loads((own_cache / "ceilings.json").read_text(encoding="utf-8"))


def test_a_ceiling_a_run_beat_is_measured_again_and_the_best_figure_is_kept(own_cache):
    device = jax.devices()[0]
    first = inside.ceilings(device)
    assert first["measurements"] == 1 and first["measured_at"].endswith("Z")
    peak, bw = first["matmul_flops_per_s"], first["bandwidth_bytes_per_s"]
    # A rate below the figure proves nothing; one above it marks the figure stale and the cost model reads it.
    assert not inside.note_achieved(device, peak / 2, "a slow run")
    assert inside.ceilings(device)["cached"] is True
    assert inside.note_achieved(device, peak * 1000, "a fast run")
    assert inside.cached_ceilings(device) == (peak * 1000, bw)
    again = inside.ceilings(device)
    assert again["cached"] is False and again["measurements"] == 2 and "stale" not in again
    # A figure measured as if the machine were busy is not kept over the better one measured before.
    table = json.loads((own_cache / "ceilings.json").read_text(encoding="utf-8"))
    key = next(iter(table))
    table[key].update(matmul_flops_per_s=1e30, measured_at="2020-01-01T00:00:00Z")
    (own_cache / "ceilings.json").write_text(json.dumps(table), encoding="utf-8")
    kept = inside.ceilings(device, refresh=True)
    assert kept["matmul_flops_per_s"] == 1e30 and kept["measured_at"] == "2020-01-01T00:00:00Z"
    assert kept["measurements"] == 3 and kept["bandwidth_measured_at"] > "2020"
    assert inside.cached_ceilings(device) == (1e30, kept["bandwidth_bytes_per_s"])
    # Measured again below what a run reached: the rate reached still stands for the cost model.
    table = json.loads((own_cache / "ceilings.json").read_text(encoding="utf-8"))
    table[key].update(matmul_flops_per_s=1.0, measurements=1)
    (own_cache / "ceilings.json").write_text(json.dumps(table), encoding="utf-8")
    assert inside.note_achieved(device, 1e31, "a run")
    again = inside.ceilings(device)
    assert again["matmul_flops_per_s"] < 1e31 and inside.cached_ceilings(device)[0] == 1e31


def _rungs() -> list:
    """Every built-in rung; the default run takes the last (the ladder's fastest) of each family, by backend, kind
    and whether it shards, and -m exhaustive the others."""
    builtin = [i for i in registry.all_implementations() if registry.is_builtin(i.name)]
    last = {(i.backend, i.kind, bool(i.shards)): i.name for i in builtin}
    return [pytest.param(i.name, marks=[] if i.name in last.values() else [EXHAUSTIVE]) for i in builtin]


@pytest.mark.parametrize("name", _rungs())
def test_every_built_in_rung_records_its_inside(name, own_cache):
    impl = registry.get(name)
    layout = "2x1" if impl.shards else "1x1"
    count = {"epochs": 2} if impl.kind == "batch" else {"steps": 20}
    cfg = RunConfig(impl=name, width=12, height=8, data=DataSpec(samples=50), layout=layout, **count)
    record = run_to_completion(Session(cfg, inside=True, quality_points=0, final_quality=False))
    assert record is not None and record.status == "ok", record and record.message
    got = record.extra["inside"]
    assert set(inside.KEYS) <= set(got)
    assert got["flops_per_iteration"] is not None and got["flops_per_iteration"] > 0
    assert set(got["compile_phases_s"]) == {"trace", "lower", "compile"}
    if impl.backend == "numpy":
        assert got["flops_source"] == "analytic" and got["ceilings"] is None
        assert got["kernels_per_iteration"] is None  # no XLA program: never invented
    else:
        assert got["flops_source"] == "xla"
        assert got["kernels_per_iteration"] >= 1
        assert got["ceilings"]["matmul_flops_per_s"] > 0 and got["ceilings"]["measured_with"]
        assert got["achieved_flops_per_s"] == pytest.approx(got["flops_per_iteration"] / record.median_s)
        assert got["bound"] in ("memory", "compute", "launch overhead")
    json.dumps(record.to_dict())  # the record stays plain JSON


def test_what_bounds_a_run_far_below_its_ceilings_follows_its_kernels():
    """Many short kernels: launch overhead; no kernels counted (a NumPy run): the interpreter's overhead, not
    "compute" at 0.1 % of the ceiling; near the ceiling, the roofline's own side."""
    ceilings = {"matmul_flops_per_s": 200e9, "bandwidth_bytes_per_s": 7e9}
    base = {"flops_per_iteration": 4e6, "bytes_per_iteration": 2e4, "ceilings": ceilings}
    numpy_run = {**base, "achieved_flops_per_s": 2e8, "seconds_per_iteration": 0.02, "kernels_per_iteration": None}
    assert inside.roofline(numpy_run)["bound"] == "overhead"
    short = {**numpy_run, "seconds_per_iteration": 1e-4, "kernels_per_iteration": 50}
    assert inside.roofline(short)["bound"] == "launch overhead"
    busy = {**numpy_run, "achieved_flops_per_s": 1.5e11}
    assert inside.roofline(busy)["bound"] == "compute"


def test_the_inside_is_recorded_after_the_timed_iterations(own_cache, monkeypatch):
    """Structure, not timing: inspecting the program happens after the last timed chunk, never between chunks."""
    order: list[str] = []
    real = inside.inspect

    def watched(trainer, **kw):
        order.append("inspect")
        return real(trainer, **kw)

    monkeypatch.setattr(inside, "inspect", watched)
    cfg = RunConfig(impl="jax-fused-batch", width=12, height=8, epochs=30, data=DataSpec(samples=50))
    session = Session(cfg, inside=True, quality_points=3, max_chunk=4)
    for ev in session.run():
        order.append(type(ev).__name__)
    chunks = [i for i, e in enumerate(order) if e == ChunkTimed.__name__]
    assert len(chunks) > 3
    assert order.index("inspect") > chunks[-1]
    assert order[-1] == Finished.__name__


def test_a_recompiling_run_says_why(own_cache):
    """jax-jit-online compiles its step through jit's cache: a changed argument type is explained."""
    from som_studio.core.inspection.inside import cache_misses

    f = jax.jit(lambda x: x * 2)
    f(np.ones(3, np.float32)).block_until_ready()
    with cache_misses() as found:
        f(np.ones(3, np.float32)).block_until_ready()
        assert found == []
        f(np.ones(4, np.float32)).block_until_ready()
    assert found and "f32[4]" in found[0]


def test_a_program_that_cannot_be_inspected_leaves_the_run_whole(own_cache, monkeypatch):
    def broken(trainer, **kw):
        raise RuntimeError("no cost analysis on this backend")

    monkeypatch.setattr(inside, "inspect", broken)
    cfg = RunConfig(impl="jax-fused-batch", width=12, height=8, epochs=3, data=DataSpec(samples=50))
    record = run_to_completion(Session(cfg, inside=True, quality_points=0))
    assert record is not None and record.status == "ok"
    got = record.extra["inside"]
    assert "no cost analysis" in got["error"]
    from som_studio.report.inside import notes

    assert any(n.startswith("fused: its program was not inspected: ") for n in notes(["fused"], [record]))
    assert got["flops_source"] == "analytic" and got["flops_per_iteration"] > 0
    assert got["kernels_per_iteration"] is None and got["ceilings"] is None


def test_a_run_faster_than_the_cached_ceiling_marks_it_stale(own_cache):
    from som_studio import cli

    device = jax.devices()[0]
    inside.ceilings(device)
    table = json.loads((own_cache / "ceilings.json").read_text(encoding="utf-8"))
    entry = next(iter(table.values()))
    entry["matmul_flops_per_s"] = 1.0  # as if measured while the machine did nothing else
    (own_cache / "ceilings.json").write_text(json.dumps(table), encoding="utf-8")
    argv = ["bench", "--impl", "jax-fused-batch", "--grid", "4x3", "--samples", "40", "--epochs", "2", "--quiet"]
    assert cli.main(argv) == 0
    entry = next(iter(json.loads((own_cache / "ceilings.json").read_text(encoding="utf-8")).values()))
    assert "jax-fused-batch at 40x3 on 4x3 reached" in entry["stale"]
    assert inside.cached_ceilings(device)[0] == entry["achieved_flops_per_s"] > 1.0


def _inside_of(cfg: RunConfig) -> dict:
    record = run_to_completion(Session(cfg, inside=True, quality_points=0, final_quality=False))
    assert record is not None and record.status == "ok", record and record.message
    return record.extra["inside"]


def test_a_run_without_a_program_is_held_to_the_ceilings_kept(own_cache, tmp_path):
    """A NumPy run and a streamed run have no program to inspect, but sit under the ceilings a JAX run kept."""
    pytest.importorskip("pyarrow")
    np.save(tmp_path / "rows.npy", np.random.default_rng(0).random((60, 3)))
    numpy_run = RunConfig(impl="numpy-batch", width=4, height=3, data=DataSpec(samples=50), epochs=2)
    streamed = RunConfig(impl="jax-fused-batch", width=4, height=3, data=DataSpec(path=str(tmp_path)), epochs=2)
    streamed = streamed.replace(stream=True, batch_rows=16)
    # None kept: a NumPy run starts no JAX to measure them, a streamed run does not wait for a measurement.
    for cfg in (numpy_run, streamed):
        assert _inside_of(cfg)["ceilings"] is None
    kept = inside.ceilings(jax.devices("cpu")[0])
    for cfg in (numpy_run, streamed):
        got = _inside_of(cfg)
        assert got["ceilings"]["matmul_flops_per_s"] == kept["matmul_flops_per_s"]
        assert got["fraction_of_ceiling"] > 0 and got["bound"] in ("memory", "compute", "overhead")


def test_the_ceilings_kept_are_a_devices_own_by_its_whole_name(own_cache):
    figures = {"matmul_flops_per_s": 1e12, "bandwidth_bytes_per_s": 1e11}
    method = f"/method={inside.CEILINGS_METHOD}"
    table = {"gpu/NVIDIA H100 NVL" + method: figures, "cpu/cpu/method=0": figures}  # another device; another way
    own_cache.mkdir(parents=True)
    (own_cache / "ceilings.json").write_text(json.dumps(table), encoding="utf-8")
    assert inside.kept_ceilings("gpu/NVIDIA H100") is None and inside.kept_ceilings("cpu") is None
    assert inside.kept_ceilings("gpu/NVIDIA H100 NVL")["matmul_flops_per_s"] == 1e12
    assert inside.kept_ceilings("gpu")["cached"] is True  # a platform alone: whichever of its devices is kept


def test_a_streamed_run_records_the_hand_count_without_an_error(own_cache, tmp_path):
    pytest.importorskip("pyarrow")
    np.save(tmp_path / "rows.npy", np.random.default_rng(0).random((60, 3)))
    cfg = RunConfig(impl="jax-fused-batch", width=4, height=3, data=DataSpec(path=str(tmp_path)), epochs=2)
    cfg = cfg.replace(stream=True, batch_rows=16)
    record = run_to_completion(Session(cfg, inside=True, quality_points=0, final_quality=False))
    assert record is not None and record.status == "ok", record and record.message
    got = record.extra["inside"]
    assert "error" not in got  # a streamed epoch runs batch pieces, not one chunk program: nothing to inspect
    assert got["flops_source"] == "analytic" and got["flops_per_iteration"] > 0
    # Its table's figures are "-" but the hand count's: the footnote says why.
    from som_studio.report.inside import notes

    assert any("a streamed run calls its programs batch by batch" in n for n in notes(["fused"], [record]))
