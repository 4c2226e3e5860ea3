"""``som-studio explain``: the roofline table headless, the optimized HLO, a profiler trace, and clean refusals."""

from __future__ import annotations

import json
import os

import pytest

from som_studio import cli
from som_studio.core.inspection import inside
from tests.conftest import needs_qt

SMALL = ["--grid", "10x8", "--samples", "60", "--epochs", "3", "--quiet"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SOM_STUDIO_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(inside, "CEILING_SIZES", {k: (256, 4 << 20, 3) for k in ("cpu", "gpu", "tpu")})


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_explain_prints_the_table_and_writes_the_hlo_and_the_json(tmp_path, capsys):
    hlo, js = tmp_path / "fused.hlo", tmp_path / "runs.json"
    code, out, err = _run(capsys, "explain", *SMALL, "--hlo", str(hlo), "--json", str(js))
    assert code == 0, err
    assert "FLOPs / it" in out and "jax-fused-batch" in out and "GFLOP/s" in out
    assert "measured by jit(jnp.dot)" in out and "(the best of 1 measurement)" in out
    text = hlo.read_text(encoding="utf-8")
    mask = os.umask(0o022)
    os.umask(mask)
    assert hlo.stat().st_mode & 0o777 == 0o666 & ~mask  # not the temporary file's private mode
    assert text.startswith("HloModule") and "ENTRY" in text
    run = json.loads(js.read_text(encoding="utf-8"))["runs"][0]
    got = run["extra"]["inside"]
    for key in inside.KEYS:
        assert key in got
    assert set(got["compile_phases_s"]) == {"trace", "lower", "compile"}
    assert "programs" not in got  # the text went to --hlo


def test_explain_holds_a_numpy_run_to_the_host_cpus_ceilings(capsys):
    code, out, err = _run(capsys, "explain", "--impl", "numpy-batch", *SMALL)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("numpy-batch") and "%" in line)
    assert any(w in row for w in ("memory", "compute", "interpreter overhead"))  # what bounds it, not "-"
    assert "ceilings of cpu/cpu" in out


def test_explain_writes_a_trace_perfetto_opens(tmp_path, capsys):
    # Of a folder's files too: the trace read the data by itself, a file at a time, and stopped on a folder.
    import numpy as np

    (tmp_path / "rows").mkdir()
    for k in range(2):
        np.save(tmp_path / "rows" / f"part{k}.npy", np.random.default_rng(k).random((30, 3)))
    argv = ["--data", str(tmp_path / "rows"), *SMALL]
    code, _out, err = _run(capsys, "explain", *argv, "--trace", str(tmp_path / "trace"))
    assert code == 0, err
    assert list((tmp_path / "trace").glob("plugins/profile/*/perfetto_trace.json.gz"))
    # Streamed, the run has no one program an iteration runs: refused before it trains.
    for flag in ("--trace", "--hlo"):
        code, _out, err = _run(capsys, "explain", *argv, "--stream", flag, str(tmp_path / "out"))
        assert code == 2 and f"{flag}: a streamed run calls its programs batch by batch" in err
        assert "ok in" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--impl", "jax-nope"], "unknown implementation"),
        (["--impl", "jax-fused-batch,jax-vmap-batch", "--hlo", "x.hlo"], "--hlo"),
        (
            ["--impl", "numpy-batch", "--trace", "somewhere"],
            "--trace: numpy-batch is not a JAX implementation; name one in --impl (such as jax-fused-batch)",
        ),
        (
            ["--impl", "numpy-batch,numpy-online", "--hlo", "x.hlo"],
            "--hlo: numpy-batch, numpy-online are not JAX implementations; name one in --impl",
        ),
    ],
)
def test_explain_refuses_bad_input_cleanly(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _out, err = _run(capsys, "explain", *SMALL, *argv)
    assert code == 2
    assert err.startswith("som-studio explain: error:") and words in err
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())  # nothing half-written


def test_explain_never_writes_its_hlo_over_its_input(tmp_path, capsys):
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n3,4\n5,6\n", encoding="utf-8")
    before = data.read_bytes()
    code, _out, err = _run(capsys, "explain", "--data", str(data), "--grid", "3x2", "--hlo", str(data), "--force")
    assert code == 2 and "--hlo" in err and "input" in err
    assert data.read_bytes() == before


def test_explain_refuses_a_bad_flag_value(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["explain", "--grid", "ten"])
    assert stop.value.code == 2
    assert "explain: error: argument --grid" in capsys.readouterr().err


def test_keep_programs_needs_inside(capsys):
    code, _out, err = _run(capsys, "bench", "--impl", "jax-fused-batch", "--keep-programs", *SMALL)
    assert code == 2 and "--keep-programs" in err and "--inside" in err
    code, _out, err = _run(capsys, "compare", "--impl", "numpy-batch", "--keep-programs", *SMALL)
    assert code == 2 and "--keep-programs" in err and "--inside" in err


def test_bench_inside_adds_the_table_and_extra_inside(tmp_path, capsys):
    js = tmp_path / "runs.json"
    code, out, err = _run(
        capsys, "bench", "--impl", "numpy-batch,jax-fused-batch", "--inside", *SMALL, "--json", str(js)
    )
    assert code == 0, err
    assert "FLOPs / it" in out and "bound" in out
    runs = json.loads(js.read_text(encoding="utf-8"))["runs"]
    assert runs[0]["extra"]["inside"]["flops_source"] == "analytic"
    assert runs[1]["extra"]["inside"]["kernels_per_iteration"] >= 1


@needs_qt
def test_compare_inside_puts_the_runs_under_the_roofline_of_its_report(tmp_path, capsys):
    page = tmp_path / "r.html"
    code, _out, err = _run(
        capsys, "compare", "--impl", "numpy-batch,jax-fused-batch", "--inside", *SMALL, "--report", str(page)
    )
    assert code == 0, err
    html = page.read_text(encoding="utf-8")
    assert "roofline" in html.lower() and "FLOPs / it" in html
