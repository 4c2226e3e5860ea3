from __future__ import annotations

from som_studio.core.impls import memory, registry
from som_studio.core.impls.protocol import ProblemSize
from som_studio.i18n import format_bytes


def _size(side, samples=1000, features=3):
    return ProblemSize(height=side, width=side, features=features, samples=samples, iterations=50, itemsize=4)


def test_every_implementation_estimates_memory():
    for impl in registry.all_implementations():
        assert impl.estimate(_size(16)) > 0


def test_numpy_batch_needs_no_quadratic_memory():
    # The playbook reserves an M x M neighbourhood cache: 8.4 GB at 240 x 135.
    # Ours is bounded: growing the map 16x in units grows the estimate ~linearly.
    small = memory.numpy_batch(_size(256, samples=100_000))
    big = memory.numpy_batch(_size(1024, samples=100_000))
    assert big < 20 * small
    m = 1024 * 1024
    assert big < m * m * 4 / 1000


def test_vmap_batch_estimate_scales_with_examples_times_units():
    a = memory.jax_vmap_batch(_size(64, samples=1000))
    b = memory.jax_vmap_batch(_size(64, samples=2000))
    assert 1.8 < (b - memory.JAX_OVERHEAD) / (a - memory.JAX_OVERHEAD) < 2.1


def test_the_preflights_estimate_follows_the_plan_of_the_devices_backend():
    """A GPU's kernel plan searches in chunks of up to 1 GiB, the CPU's of 32 MiB: the preflight estimates
    the plan of the devices it judges for, not the CPU's (256 x 256 map, 100,000 x 50: 1.37 GB against 299 MB)."""
    import dataclasses

    from som_studio.config import RunConfig
    from som_studio.session.preflight import Devices, memory_need, problem_size

    cfg = RunConfig(impl="jax-fused-batch", width=256, height=256, epochs=1)
    size = problem_size(cfg, 100_000, 50)
    gpu = Devices(count=1, backend="gpu", memory=(80 << 30, "GPU memory"))
    on_gpu = memory.jax_fused_batch(dataclasses.replace(size, backend="gpu"))
    assert memory_need(registry.get("jax-fused-batch"), cfg, 100_000, 50, gpu)[0] == on_gpu
    assert on_gpu > memory.jax_fused_batch(size) == memory_need(registry.get("jax-fused-batch"), cfg, 100_000, 50)[0]


def test_an_accelerators_estimate_counts_the_chunk_its_plan_was_sized_to_hold():
    """On an H200, a jax-fused-batch epoch of 100,000 x 3 on 1024 x 1024 peaked at 1.57 GB where the estimate
    said 229 MB (the CPU's plan, its distances fused away). On a GPU the estimate counts the chunk of distances
    the direct plan was sized to (256 examples x 1,048,576 units: 1.07 GB) and cuBLAS's workspace."""
    s = ProblemSize(height=1024, width=1024, features=3, samples=100_000, iterations=2, itemsize=4, backend="gpu")
    on_device = memory.device_estimate(memory.jax_fused_batch, s)
    assert 256 * 1024 * 1024 * 4 + memory.GPU_GEMM_WORKSPACE < on_device < 1.57e9


def test_format_bytes():
    assert format_bytes(512) == "512 B"
    assert format_bytes(3 * 1024**3) == "3.0 GiB"


# -- the estimates against XLA's own accounting of the program that runs -------------------------
# (width, height, features, samples): the playbook's map; many features and examples (several chunks).
PLAYBOOK, WIDE = (240, 135, 3, 1000), (100, 80, 20, 5000)


def _compiled_vs_estimate(
    name: str, size: tuple[int, int, int, int], layout: str | None, form: str | None, missing: bool = False
):
    import numpy as np

    from som_studio.config import DataSpec, RunConfig
    from som_studio.core import jax_runtime
    from som_studio.core.plans import fused_plan
    from som_studio.core.plans.sharding import parse_layout
    from som_studio.core.som.problem import make_problem

    w, h, d, n = size
    impl = registry.get(name)
    kind = {"epochs": 3} if impl.kind == "batch" else {"steps": 3}
    cfg = RunConfig(
        impl=name,
        width=w,
        height=h,
        data=DataSpec(samples=n),
        seed=1,
        precision="float32",
        **kind,
        layout=layout or "1x1",
    )
    data_axis, map_axis = parse_layout(cfg.layout)
    s = ProblemSize(
        height=h,
        width=w,
        features=d,
        samples=n,
        iterations=3,
        itemsize=4,
        devices=data_axis * map_axis,
        map_devices=map_axis,
        missing=missing,
        backend=jax_runtime.jax().default_backend(),
    )
    x = np.random.default_rng(0).random((n, d))
    if missing:  # a tenth of the cells missing, every row keeping its first feature
        x[:, 1:][np.random.default_rng(1).random((n, d - 1)) < 0.1] = np.nan
    with fused_plan.forced(form):
        trainer = impl.create(make_problem(cfg, impl.kind, x))
        est = memory.device_estimate(impl.estimate, s)
    try:
        programs = trainer.programs()
        assert len(programs) == 1
        program = next(iter(programs.values())).compile()
        compiled = jax_runtime.compiled_bytes(program)
        m = program.memory_analysis()
        held = m.argument_size_in_bytes + m.output_size_in_bytes - m.alias_size_in_bytes
    finally:
        trainer.close()
    return compiled, held, est


def _memory_cases():
    import pytest

    from som_studio.core.plans import fused_plan

    out = []
    for impl in registry.all_implementations():
        if impl.backend != "jax" or impl.name == "jax-naive-online":  # eager: no one program to compare
            continue
        # Both axes split, and the map's alone (the data's alone is pmap's, below).
        layouts = (["2x2", "1x4"] if impl.map_axis else ["4x1"]) if impl.shards else [None]
        forms = fused_plan.FORMS if impl.kind == "batch" and impl.name != "jax-vmap-batch" else (None,)
        for layout in layouts:
            for form in forms:
                out.append(pytest.param(impl.name, PLAYBOOK, layout, form, id=f"{impl.name}-{layout}-{form}-playbook"))
        if impl.name == "jax-fused-batch":
            out += [pytest.param(impl.name, WIDE, None, f, id=f"{impl.name}-{f}-wide") for f in fused_plan.FORMS]
    return out


def _missing_cases():
    """Data with missing values: the mask of known features and per-feature weights in every program."""
    import pytest

    from som_studio.core.plans import fused_plan

    out = [
        pytest.param("jax-fused-batch", WIDE, None, f, id=f"jax-fused-batch-{f}-wide-missing") for f in fused_plan.FORMS
    ]
    out += [
        pytest.param("jax-vmap-batch", PLAYBOOK, None, None, id="jax-vmap-batch-playbook-missing"),
        pytest.param("jax-scan-online", PLAYBOOK, None, None, id="jax-scan-online-playbook-missing"),
        pytest.param("jax-pmap-batch", WIDE, "4x1", "blocked", id="jax-pmap-batch-4x1-wide-missing"),
        pytest.param("jax-shardmap-batch", WIDE, "2x2", "blocked", id="jax-shardmap-batch-2x2-wide-missing"),
        pytest.param("jax-jit-sharded-batch", WIDE, "2x2", "blocked", id="jax-jit-sharded-batch-2x2-wide-missing"),
    ]
    return out


import pytest  # noqa: E402

from tests.grids import representative  # noqa: E402

#: What an H200 (jax 0.11.2, CUDA 13) compiled at these sizes: docs/benchmarks.md, GPU section.
GPU_TEMPORARIES = (
    "on an H200 the fused plans compiled to 35.7 MB (direct, blocked), 134 MB (matmul) and 261 MB (tiled) at "
    "the playbook size, each with a 32 MiB cuBLAS workspace, and jax-vmap-batch to 2.6 MB against an "
    "estimate of 520 MB (the GPU fuses the per-example neighbourhoods the CPU materialises)"
)


@pytest.mark.parametrize(
    ("name", "size", "layout", "form", "missing"),
    representative(
        [
            *(pytest.param(*c.values, False, id=c.id) for c in _memory_cases()),
            *(pytest.param(*c.values, True, id=c.id) for c in _missing_cases()),
        ],
    ),
)
def test_estimates_hold_to_xlas_accounting_of_the_program(name, size, layout, form, missing):
    """Within 30 % of memory_analysis() (arguments + outputs + temporaries, per device) where it is over 8 MiB.

    On any backend the estimate holds at least the program's arguments and outputs; the temporaries are
    the CPU's (an accelerator's compiler keeps others, ``GPU_TEMPORARIES``).
    """
    from som_studio.core import jax_runtime

    compiled, held, est = _compiled_vs_estimate(name, size, layout, form, missing)
    assert compiled is not None and compiled > 0
    assert 0 < held <= est
    backend = jax_runtime.jax().default_backend()
    if backend != "cpu":
        pytest.skip(f"the estimates model XLA's CPU temporaries; {GPU_TEMPORARIES} (the default backend is {backend})")
    if compiled > 8 * memory.MiB:
        assert abs(est - compiled) <= 0.3 * compiled, f"estimate {est} against compiled {compiled}"
    else:  # small programs: the estimate only has to stay in the same few MiB
        assert est <= compiled + 8 * memory.MiB


def test_missing_values_raise_the_estimate_of_every_implementation():
    """The mask of known features and the per-feature weights are counted wherever data have NaN."""
    import dataclasses

    for impl in registry.all_implementations():
        s = _size(64, samples=5000, features=8)
        assert impl.estimate(dataclasses.replace(s, missing=True)) > impl.estimate(s) or impl.kind == "online", (
            impl.name
        )


def _cgroup(folder, limit, used, cache, v1=False):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ("memory.limit_in_bytes" if v1 else "memory.max")).write_text(f"{limit}\n")
    (folder / ("memory.usage_in_bytes" if v1 else "memory.current")).write_text(f"{used}\n")
    (folder / "memory.stat").write_text(f"{'total_inactive_file' if v1 else 'inactive_file'} {cache}\nanon 5\n")


def test_a_memory_cgroups_limit_bounds_the_memory_a_run_is_judged_against(tmp_path, monkeypatch):
    # Under a container's or a batch job's limit the host's MemAvailable overstates what a run can have: a table
    # judged to fit was read in memory and the job killed.
    gib = 1 << 30
    monkeypatch.setattr(memory, "CGROUP_ROOT", str(tmp_path))
    proc = tmp_path / "self-cgroup"
    monkeypatch.setattr(memory, "PROC_CGROUP", str(proc))
    proc.write_text("0::/job/step\n")
    _cgroup(tmp_path, "max", 40 * gib, 0)
    _cgroup(tmp_path / "job", 8 * gib, 6 * gib, gib)  # the job's limit, set above the step the process runs in
    _cgroup(tmp_path / "job" / "step", "max", 6 * gib, 0)
    assert memory.cgroup_room() == 3 * gib  # 8 - 6, and a GiB of page cache it can drop
    assert memory.host_available() <= 3 * gib
    (tmp_path / "job" / "memory.max").write_text("max\n")
    assert memory.cgroup_room() is None
    # cgroup v1, its hierarchy's limit in memory.stat, as a namespaced container mounts it.
    proc.write_text("4:memory:/docker/abc\n0::/\n")
    _cgroup(tmp_path / "memory", (1 << 63) - 4096, gib, 0, v1=True)
    with (tmp_path / "memory" / "memory.stat").open("a") as f:
        f.write(f"hierarchical_memory_limit {2 * gib}\n")
    assert memory.cgroup_room() == gib
    # No cgroup file system: MemAvailable alone.
    monkeypatch.setattr(memory, "PROC_CGROUP", str(tmp_path / "none"))
    assert memory.cgroup_room() is None and memory.host_available() > 0
