"""Traced programs kept between processes (``core/kept_programs.py``): read back only where nothing they were
traced from changed, and then the same program.

A fresh ``jax.jit`` of a fresh function stands for a new process: JAX's own caches in memory are per function,
so only the kept file can spare its trace. Each test keeps its programs in a folder of its own.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime, kept_programs
from som_studio.core.impls import user_impl
from som_studio.core.plans import fused_plan, screen
from som_studio.core.som.problem import make_problem

jax = jax_runtime.jax()
jnp = jax.numpy


@pytest.fixture
def kept(monkeypatch, tmp_path):
    """The kept programs' folder, in a compilation cache folder of this test's own."""
    monkeypatch.setattr(jax_runtime, "compile_cache_in_use", lambda: str(tmp_path))
    return tmp_path / kept_programs.FOLDER


def _program(traces: list):
    """A jitted program, new each call, that counts its traces in ``traces``."""

    def f(w, x, n, scale):
        traces.append(1)
        d = jnp.sum((x[:, None, :] - w[None, :, :] * scale) ** 2, axis=-1)
        return w + n, jnp.argmin(d, axis=1)

    return jax.jit(f, static_argnums=(3,), donate_argnums=(0,))


def _args(rows=6, dtype=np.float32, scale=2.0):
    rng = np.random.default_rng(3)
    return (rng.random((4, 3)).astype(dtype), rng.random((rows, 3)).astype(dtype), np.int32(5), scale)


def _lower(traces, args=None, key=(), name="p"):
    return kept_programs.lower(
        _program(traces),
        _args() if args is None else args,
        name=name,
        key=key,
        static_argnums=(3,),
        donate_argnums=(0,),
    )


def _run(compiled, args):
    w, x, n, _ = args
    out = compiled(jax.device_put(w), x, n)
    return [np.asarray(o) for o in out]


def test_a_program_lowered_again_is_read_back_not_traced_and_runs_the_same(kept):
    traces: list = []
    first = _lower(traces).compile()
    assert len(traces) == 1 and len(list(kept.glob("*" + kept_programs.SUFFIX))) == 1
    again = _lower(traces).compile()
    assert len(traces) == 1  # read back
    direct = _program([]).lower(*_args()).compile()
    for got, want in zip(_run(again, _args()), _run(direct, _args()), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(_run(first, _args()), _run(direct, _args()), strict=True):
        np.testing.assert_array_equal(got, want)


def test_anything_its_trace_depends_on_traces_it_again(kept, monkeypatch):
    traces: list = []
    _lower(traces)
    changed = [
        dict(args=_args(scale=3.0)),  # a static argument
        dict(key=("another plan",)),  # what the function closes over
        dict(args=_args(rows=7)),  # a shape
        dict(args=_args(dtype=np.float64)),  # a dtype
        dict(name="q"),
    ]
    for n, change in enumerate(changed, start=2):
        _lower(traces, **change)
        assert len(traces) == n, change
    # Constants of som_studio.core that a traced function may read, changed by a test or a user.
    monkeypatch.setattr(screen, "BEST_TWO_MIN_UNITS", screen.BEST_TWO_MIN_UNITS + 1)
    _lower(traces)
    monkeypatch.setitem(fused_plan.TILE_BYTES, "cpu", fused_plan.TILE_BYTES["cpu"] // 2)
    _lower(traces)
    assert len(traces) == len(changed) + 3
    assert len(list(kept.glob("*" + kept_programs.SUFFIX))) == len(changed) + 3
    # A registry that grows as the process goes is not a constant: the program is read back.
    monkeypatch.setattr(user_impl, "_USER_FOLDERS", [*user_impl._USER_FOLDERS, "/somewhere"])
    _lower(traces)
    assert len(traces) == len(changed) + 3


def test_a_damaged_file_is_traced_again_and_written_over(kept):
    traces: list = []
    _lower(traces)
    (path,) = kept.glob("*" + kept_programs.SUFFIX)
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    compiled = _lower(traces).compile()
    assert len(traces) == 2
    for got, want in zip(_run(compiled, _args()), _run(_program([]).lower(*_args()).compile(), _args()), strict=True):
        np.testing.assert_array_equal(got, want)
    _lower(traces)
    assert len(traces) == 2


def test_the_donated_argument_stays_donated_in_the_program_read_back(kept):
    for _ in range(2):  # written, then read back
        compiled = _lower([]).compile()
        w = jax.device_put(_args()[0])
        compiled(w, _args()[1], np.int32(1))
        assert w.is_deleted()


def test_nothing_is_kept_without_the_compilation_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(jax_runtime, "compile_cache_in_use", lambda: None)
    traces: list = []
    _lower(traces)
    _lower(traces)
    assert len(traces) == 2 and kept_programs.folder() is None


def test_the_folder_keeps_within_its_bound_dropping_the_programs_used_longest_ago(tmp_path):
    for i, name in enumerate(["old", "mid", "new"]):
        path = tmp_path / f"{name}{kept_programs.SUFFIX}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    (tmp_path / "other.txt").write_bytes(b"x" * 1000)  # not a kept program: not counted, not removed
    kept_programs._bound(tmp_path, most=250)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid.exported", "new.exported", "other.txt"]


def _fused_map(problem, epochs):
    from som_studio.core.impls import jax_fused

    t = jax_fused.FusedBatch(problem)
    try:
        t.warmup()
        t.run(0, epochs)
        return t.get_map()
    finally:
        t.close()


@pytest.mark.parametrize("topology, missing", [("rect", False), ("hex", True)])
def test_a_second_trainer_reads_its_epoch_program_back_and_trains_the_same_map(kept, monkeypatch, topology, missing):
    from jax import export

    data = np.random.default_rng(2).random((90, 5))
    if missing:
        data[::7, 1] = np.nan
    cfg = RunConfig(
        impl="jax-fused-batch", width=6, height=4, data=DataSpec(samples=90), epochs=3, seed=1, topology=topology
    )
    problem = make_problem(cfg, "batch", data)
    exports = []
    real = export.export
    monkeypatch.setattr(export, "export", lambda *a, **k: exports.append(1) or real(*a, **k))
    first = _fused_map(problem, 3)
    assert exports == [1]
    again = _fused_map(problem, 3)
    assert exports == [1]  # read back
    np.testing.assert_array_equal(again, first)
    monkeypatch.setattr(jax_runtime, "compile_cache_in_use", lambda: None)
    np.testing.assert_array_equal(_fused_map(problem, 3), first)  # as traced here, kept or not


def test_a_streamed_run_reads_its_batch_programs_back_and_trains_the_same_map(kept, monkeypatch, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from jax import export

    from som_studio.core.data import stream
    from som_studio.core.impls import registry
    from som_studio.core.impls import streamed as streamed_trainer
    from som_studio.core.som.problem import make_stream_problem

    x = np.random.default_rng(5).random((300, 3))
    x[::11, 2] = np.nan
    pq.write_table(pa.table({c: x[:, j] for j, c in enumerate("abc")}), tmp_path / "x.parquet", row_group_size=90)
    cfg = RunConfig(impl="jax-fused-batch", data=DataSpec(path=str(tmp_path)), width=5, height=4, epochs=2)
    exports = []
    real = export.export
    monkeypatch.setattr(export, "export", lambda *a, **k: exports.append(1) or real(*a, **k))

    def trained():
        problem = make_stream_problem(cfg, "batch", stream.open_source(str(tmp_path)), 64)
        trainer = streamed_trainer.create(registry.get("jax-fused-batch"), problem)
        try:
            trainer.warmup()
            trainer.run(0, 2)
            return trainer.get_map()
        finally:
            trainer.close()

    first = trained()
    made = len(exports)
    names = sorted(path.name.split("-")[1] for path in kept.glob("*" + kept_programs.SUFFIX))
    assert made == len(names) and {"add", "update"} <= set(names)  # a batch's sums (a shorter batch's), the update
    np.testing.assert_array_equal(trained(), first)
    assert len(exports) == made  # read back


_READ_BACK = """
import json, sys
import numpy as np
from som_studio.core import jax_runtime, kept_programs
jax_runtime.configure(1)
jax = jax_runtime.jax()
jax_runtime.compile_cache_in_use = lambda: sys.argv[1]
a = np.diag(np.arange(1.0, 5.0, dtype=np.float32))
plain = kept_programs.lower(jax.jit(lambda a: a @ a.T + 1), (a,), name="plain").compile()
scipy = "scipy.linalg" in sys.modules
eigh = kept_programs.lower(jax.jit(lambda a: jax.numpy.linalg.eigh(a)[0]), (a,), name="eigh").compile()
print(json.dumps({"scipy": scipy, "plain": np.asarray(plain(a)).tolist(), "eigh": np.asarray(eigh(a)).tolist()}))
"""


@pytest.mark.cpu_backend
def test_a_program_read_back_sets_lapack_up_only_where_it_calls_it(tmp_path):
    """JAX makes its LAPACK calls ready before lowering any program read back, and that imports SciPy (a
    seventh of a second of a command's start): a program that calls none is read back without, one that does
    (an eigendecomposition) with. Two processes, as a command run twice: the first keeps both programs, the
    second reads them back with neither ready."""
    import json
    import subprocess
    import sys

    def run() -> dict:
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        out = subprocess.run([sys.executable, "-c", _READ_BACK, str(tmp_path)], capture_output=True, text=True, env=env)
        assert out.returncode == 0, out.stderr[-3000:]
        return json.loads(out.stdout.splitlines()[-1])

    run()
    kept = sorted((tmp_path / kept_programs.FOLDER).glob("*" + kept_programs.SUFFIX))
    assert len(kept) == 2
    got = run()
    assert sorted((tmp_path / kept_programs.FOLDER).glob("*" + kept_programs.SUFFIX)) == kept  # read back
    assert got["scipy"] is False  # the plain program read back without LAPACK's set-up
    a = np.diag(np.arange(1.0, 5.0, dtype=np.float32))
    np.testing.assert_array_equal(got["plain"], a @ a.T + 1)
    np.testing.assert_allclose(got["eigh"], [1.0, 2.0, 3.0, 4.0], rtol=1e-6)
