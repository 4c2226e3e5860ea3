from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from som_studio import __version__, cli
from som_studio.commands import COMMANDS
from som_studio.core.impls import registry

SMALL = ["--grid", "10x8", "--samples", "60", "--epochs", "3", "--steps", "200", "--quiet"]
# A count that no listed implementation trains by is refused.
ONLINE = [a for a in SMALL if a not in ("--epochs", "3")]
BATCH = [a for a in SMALL if a not in ("--steps", "200")]


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_imports_neither_qt_nor_jax():
    names = ["bench", "list", "devices"] + [c for c in COMMANDS if c not in ("bench", "list_impls", "devices")]
    probe = (
        "import sys, contextlib, io\n"
        "from som_studio import cli\n"
        f"for argv in [['--help']] + [[c, '--help'] for c in {names!r}]:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try: cli.main(argv)\n"
        "        except SystemExit: pass\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'PySide6', 'pyqtgraph')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_leave_exits_as_python_would(tmp_path):
    """The command's fast exit still waits for other threads, runs atexit functions and flushes output."""
    probe = (
        "import atexit, sys, threading, time\n"
        "from pathlib import Path\n"
        "from som_studio import cli\n"
        f"folder = Path({str(tmp_path)!r})\n"
        "atexit.register(lambda: (folder / 'atexit').write_text('ran'))\n"
        "threading.Thread(target=lambda: (time.sleep(0.2), (folder / 'thread').write_text('done'))).start()\n"
        "sys.stdout.write('buffered, no newline')\n"
        "cli.leave(3)\n"
        "print('never reached')\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 3, out.stderr
    assert out.stdout == "buffered, no newline"
    assert (tmp_path / "atexit").read_text() == "ran"
    assert (tmp_path / "thread").read_text() == "done"


def test_module_command_exits_with_its_status(tmp_path):
    """``python -m som_studio`` leaves with the command's status and its output whole."""
    ok = subprocess.run([sys.executable, "-m", "som_studio", "list"], capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and registry.all_implementations()[0].name in ok.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "som_studio", "bench", "--data", str(tmp_path / "none.npy"), "--grid", "4x3"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "none.npy" in bad.stderr


def test_a_gzipd_table_trains_as_its_text_and_a_damaged_one_is_one_line_naming_it(tmp_path, capsys):
    """``--data cells.csv.gz`` trains the map its text does; a cut one is refused in one line, without a traceback."""
    text = "r,g,b\n" + "".join(f"{i / 40},{1 - i / 40},{i % 3 / 2}\n" for i in range(40))
    (tmp_path / "cells.csv").write_text(text)
    (tmp_path / "cells.csv.gz").write_bytes(gzip.compress(text.encode()))
    qe = []
    for name in ("cells.csv", "cells.csv.gz"):
        argv = ["bench", "--data", str(tmp_path / name), "--impl", "numpy-batch", "--grid", "4x3", "--epochs", "2"]
        assert cli.main([*argv, "--json", str(tmp_path / f"{name}.json"), "--quiet"]) == 0
        qe.append(json.loads((tmp_path / f"{name}.json").read_text())["runs"][0]["quality"]["qe"])
    assert qe[0] == qe[1]
    bad = tmp_path / "bad.csv.gz"
    bad.write_bytes(gzip.compress(text.encode())[:-20])
    out = subprocess.run(
        [sys.executable, "-m", "som_studio", "bench", "--data", str(bad), "--grid", "4x3", "--epochs", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr == (
        f"som-studio bench: error: --data: {bad}: not a valid gzip file (Compressed file ended before the "
        "end-of-stream marker was reached)\n"
    )


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert __version__ in capsys.readouterr().out


def test_list(capsys):
    code, out, _ = _run(capsys, "list")
    assert code == 0
    for impl in registry.all_implementations():
        assert impl.name in out and impl.description in out


@pytest.mark.cpu_backend
def test_devices(capsys):
    code, out, _ = _run(capsys, "devices")
    assert code == 0 and "backend: cpu" in out


def test_bench_mixes_kinds_and_writes_json(capsys, tmp_path):
    path = tmp_path / "runs.json"
    code, out, err = _run(
        capsys, "bench", "--impl", "numpy-batch,numpy-online,jax-vmap-batch", *SMALL, "--json", str(path)
    )
    assert code == 0, err
    for name in ("numpy-batch", "numpy-online", "jax-vmap-batch"):
        assert name in out
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == 1
    runs = doc["runs"]
    assert [r["impl"] for r in runs] == ["numpy-batch", "numpy-online", "jax-vmap-batch"]
    batch, online = runs[0], runs[1]
    assert batch["config"]["epochs"] == 3 and "steps" not in batch["config"]
    assert online["config"]["steps"] == 200 and "epochs" not in online["config"]
    for r in runs:
        assert r["status"] == "ok" and r["layout"] == "1x1"
        t = r["timings"]
        assert sum(c["count"] for c in t["chunks"]) == r["config"].get("epochs", r["config"].get("steps"))
        # Over iterations: each chunk's time per iteration counted once per iteration it ran.
        per_it = np.repeat(t["iteration_s"], [c["count"] for c in t["chunks"]])
        assert t["median_s"] == pytest.approx(float(np.percentile(per_it, 50, method="inverted_cdf")))
        assert t["mean_s"] == pytest.approx(sum(c["seconds"] for c in t["chunks"]) / len(per_it))
        assert t["total_s"] >= sum(c["seconds"] for c in t["chunks"])
        assert r["quality"]["qe"] > 0 and 0 <= r["quality"]["te"] <= 1
        assert r["memory"]["estimate_bytes"] > 0 and r["memory"]["peak_bytes"] >= 0
    assert runs[2]["timings"]["compiles"] >= 1 and runs[2]["timings"]["compile_s"] > 0
    assert runs[0]["timings"]["compile_s"] == pytest.approx(0, abs=0.01)
    # The config is enough to re-run.
    from som_studio.config import RunConfig

    again = RunConfig.from_dict(runs[1]["config"])
    assert again.validate("online").steps == 200


def test_existing_output_needs_force(capsys, tmp_path):
    path = tmp_path / "runs.json"
    path.write_text("precious")
    code, _, err = _run(capsys, "bench", "--impl", "numpy-online", *ONLINE, "--json", str(path))
    assert code == 2 and "exists" in err and "--force" in err
    assert path.read_text() == "precious"
    code, _, _ = _run(capsys, "bench", "--impl", "numpy-online", *ONLINE, "--json", str(path), "--force")
    assert code == 0 and json.loads(path.read_text())["runs"][0]["impl"] == "numpy-online"


def test_unwritable_output_is_refused_before_training(capsys, tmp_path):
    code, out, err = _run(capsys, "bench", "--impl", "numpy-online", *ONLINE, "--json", str(tmp_path / "no" / "x.json"))
    assert code == 2 and "does not exist" in err and out == ""


class _Broken:
    def __init__(self, problem):
        raise RuntimeError("this implementation is broken")


@pytest.fixture
def broken_impl(register_impl):
    return register_impl("test-broken", f"{__name__}:_Broken")


def test_one_failure_does_not_stop_the_others(capsys, tmp_path, broken_impl):
    path = tmp_path / "runs.json"
    code, out, _err = _run(capsys, "bench", "--impl", f"{broken_impl.name},numpy-batch", *BATCH, "--json", str(path))
    assert code == 1
    runs = json.loads(path.read_text())["runs"]
    assert runs[0]["status"] == "failed" and "broken" in runs[0]["message"]
    assert runs[1]["status"] == "ok"
    assert "this implementation is broken" in out


@pytest.mark.parametrize(
    ("argv", "text"),
    [
        (["bench", "--impl", "nope"], "unknown implementation"),
        (["bench", "--impl", "numpy-batch", "--grid", "0x4"], "--grid"),
        (["bench", "--impl", "numpy-batch", "--grid", "big"], "--grid"),
        (["bench", "--impl", "numpy-batch", "--epochs", "0"], "--epochs"),
        (["bench", "--impl", "numpy-online", "--sigma-start", "0"], "--sigma-start"),
        (["bench", "--impl", "numpy-batch", "--data", "/no/such.csv"], "no such file"),
        (["bench", "--impl", "numpy-batch,numpy-online", "--baseline", "jax-vmap-batch"], "--baseline"),
        (["--cpu-devices", "0", "list"], "--cpu-devices"),
        (["--cpu-devices", "100000", "list"], "--cpu-devices"),
        # a count is checked even where no listed implementation uses it
        (["bench", "--impl", "numpy-batch", "--steps", "-1"], "--steps"),
        # epochs for online implementations only: refused, not silently replaced by the default steps
        (["bench", "--impl", "numpy-online", "--epochs", "5"], "--epochs: applies to batch implementations"),
        (["bench", "--impl", "numpy-batch", "--seed", "-1"], "--seed"),
        (["bench", "--impl", "numpy-batch", "--scale"], "--scale"),
    ],
)
def test_bad_input_is_a_clear_error_without_traceback(capsys, argv, text):
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    _, err = capsys.readouterr()
    assert code == 2
    assert text in err
    assert "Traceback" not in err


def test_cli_entry_point_runs_as_a_process(tmp_path):
    (tmp_path / "d.csv").write_text("r,g,b\n" + "\n".join(f"{i / 40},{1 - i / 40},0.5" for i in range(40)))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "som_studio",
            "bench",
            "--impl",
            "numpy-online,jax-jit-online",
            "--grid",
            "6x5",
            "--steps",
            "100",
            "--data",
            str(tmp_path / "d.csv"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "jax-jit-online" in out.stdout and "speed-up" in out.stdout


def test_bench_speedups_default_to_the_first_listed_of_each_kind():
    from som_studio.commands.bench import speedups
    from som_studio.session.record import Chunk, RunRecord

    def rec(impl, kind, seconds):
        return RunRecord(impl=impl, kind=kind, config={}, status="ok", chunks=[Chunk(0, 1, seconds)])

    runs = [
        rec("jax-vmap-batch", "batch", 1.0),
        rec("numpy-batch", "batch", 4.0),
        rec("numpy-online", "online", 2.0),
        rec("jax-jit-online", "online", 0.5),
    ]
    assert speedups(runs) == {"jax-vmap-batch": 1.0, "numpy-batch": 0.25, "numpy-online": 1.0, "jax-jit-online": 4.0}
    assert speedups(runs, "numpy-batch")["jax-vmap-batch"] == 4.0


def test_a_failed_run_is_nobodys_baseline_and_has_no_speed_up():
    """Its timings end where it broke (a NaN map after 150 epochs, say): they measure no finished computation."""
    from collections import namedtuple

    from som_studio.commands.bench import speedups
    from som_studio.comparison.rules import judge, speedup_notes
    from som_studio.session.record import Chunk, RunRecord

    def rec(impl, seconds, status="ok"):
        return RunRecord(impl=impl, kind="batch", config={}, status=status, chunks=[Chunk(0, 1, seconds)])

    runs = [rec("mine.py:NanLater", 0.1, "failed"), rec("numpy-batch", 4.0), rec("jax-fused-batch", 0.5)]
    assert speedups(runs) == {"mine.py:NanLater": None, "numpy-batch": 1.0, "jax-fused-batch": 8.0}
    assert speedups(runs, "mine.py:NanLater", prefer_numpy=False)["jax-fused-batch"] == 8.0
    assert speedup_notes(runs, [None, 1.0, 8.0])[0] == "failed: not ranked"
    run = namedtuple("run", "name record planned")
    verdict = judge([run(r.impl, r, 300) for r in runs], prefer_numpy=False)  # bench's rule: the first timed
    assert verdict.speedup == (None, 1.0, 8.0) and verdict.baseline_of[1:] == ("numpy-batch", "numpy-batch")
    assert verdict.end_to_end[0] is None and verdict.pays_off[0] is None
    named = judge([run(r.impl, r, 300) for r in runs], baseline="mine.py:NanLater")  # --baseline names it
    assert named.baseline_of[2] == "numpy-batch" and any(
        f.text == "mine.py:NanLater cannot be the baseline (failed: not ranked): the speed-ups are measured as if "
        "none was named"
        for f in named.flags
    )


def test_a_failed_run_that_compiled_shows_its_compile_as_the_runs_page_does():
    """Compiled, then broken while training: its compile is a real figure; broken while compiling, it has none."""
    from collections import namedtuple

    from som_studio.comparison.rules import judge
    from som_studio.comparison.summary import summary_values
    from som_studio.session.record import Chunk, RunRecord

    run = namedtuple("run", "name record planned")
    later = RunRecord(impl="jax-fused-batch", kind="batch", config={}, status="failed", compile_s=0.074)
    later.chunks = [Chunk(0, 5, 0.01)]
    early = RunRecord(impl="jax-vmap-batch", kind="batch", config={}, status="failed")
    base = RunRecord(impl="numpy-batch", kind="batch", config={}, chunks=[Chunk(0, 5, 1.0)])
    runs = [run(r.impl, r, 10) for r in (base, later, early)]
    compiles = [row["compile"] for row in summary_values(runs, judge(runs))]
    assert compiles == [None, 0.074, None]


def test_a_resumed_run_has_no_end_to_end_figure_and_says_it_was_resumed():
    """Its totals are of the iterations since its checkpoint: against a whole run they compare nothing."""
    from collections import namedtuple

    from som_studio.comparison.rules import judge
    from som_studio.session.record import Chunk, RunRecord

    def rec(impl, seconds, first=0, **extra):
        chunks = [Chunk(first, 400 - first, seconds * (400 - first))]
        r = RunRecord(impl=impl, kind="batch", config={}, status="ok", chunks=chunks, extra=extra, compile_s=0.5)
        r.total_s = sum(c.seconds for c in chunks)
        return r

    run = namedtuple("run", "name record planned")
    whole = [run("numpy-batch", rec("numpy-batch", 0.04), 400), run("fused", rec("jax-fused-batch", 0.001), 400)]
    assert judge(whole).end_to_end[1] is not None
    resumed = rec("numpy-batch", 0.04, 255, resumed={"checkpoint": "ck3/numpy-batch", "iteration": 255})
    verdict = judge([run("numpy-batch", resumed, 400), whole[1]])
    assert verdict.speedup[1] == 40.0  # per iteration it is still measured
    assert verdict.end_to_end == (None, None) and verdict.pays_off == (None, None)
    from som_studio.comparison.summary import SUMMARY_HEADER, summary_rows

    after = SUMMARY_HEADER.index("faster after")
    row = summary_rows([run("numpy-batch", resumed, 400), whole[1]], verdict)[1]
    assert row[after] == "-"  # not "never": nothing whole to pay off against
    assert any(
        f.text.startswith("numpy-batch was resumed at iteration 255 from ck3/numpy-batch: its timings and totals")
        for f in verdict.flags
    )


def test_an_interrupted_command_says_where_each_stopped_runs_checkpoint_is_kept(capsys):
    from som_studio.commands.common import say_interrupted
    from som_studio.session.record import RunRecord

    stopped = RunRecord(impl="numpy-batch", kind="batch", config={}, status="cancelled")
    stopped.extra["checkpoint"] = {"folder": "ck4/numpy-batch", "iteration": 206}
    done = RunRecord(impl="jax-fused-batch", kind="batch", config={}, status="ok")
    done.extra["checkpoint"] = {"folder": "ck4/jax-fused-batch", "iteration": 400}
    streamed = RunRecord(impl="jax-fused-batch", kind="batch", config={}, status="cancelled")
    streamed.extra["checkpoint"] = {"folder": "ck5/jax-fused-batch", "iteration": 0, "row": 917_504}
    streamed.samples = 1_000_000
    whole = RunRecord(impl="jax-fused-batch", kind="batch", config={}, status="cancelled", samples=100_000)
    whole.extra["checkpoint"] = {"folder": "ck6/jax-fused-batch", "iteration": 2, "row": 100_000}
    say_interrupted("bench", [done, stopped, streamed, whole])
    assert capsys.readouterr().err == (
        "numpy-batch: its checkpoint at iteration 206 is kept in ck4/numpy-batch; go on with --resume ck4\n"
        # A streamed epoch stopped part way keeps its rows read so far.
        "jax-fused-batch: its checkpoint at iteration 0 and 917,504 rows into the next is kept in "
        "ck5/jax-fused-batch; go on with --resume ck5\n"
        # ...and stopped after its last batch, before its update: every row of it read.
        "jax-fused-batch: its checkpoint at iteration 2, with the next one's 100,000 rows all read but not yet "
        "applied, is kept in ck6/jax-fused-batch; go on with --resume ck6\n"
        "som-studio bench: interrupted\n"
    )


def test_a_sweeps_map_is_not_ranked_and_its_samples_count_every_map():
    """A combination kept from a sweep of 12 maps carries the sweep's timings: 12 maps' epochs, not one map's."""
    from collections import namedtuple

    from som_studio.comparison.rules import judge
    from som_studio.session.record import Chunk, RunRecord

    def rec(impl, seconds, **extra):
        return RunRecord(impl=impl, kind="batch", config={}, status="ok", chunks=[Chunk(0, 1, seconds)], extra=extra)

    runs = [rec("numpy-batch", 4.0, sweep={"combinations": 12, "settings": {"sigma": 2}}), rec("jax-fused-batch", 1.0)]
    runs[0].samples = runs[1].samples = 1000
    assert runs[0].throughput == 12 * 1000 / 4.0 and runs[1].throughput == 1000.0
    run = namedtuple("run", "name record planned")
    verdict = judge([run("sigma 2", runs[0], 1), run("fused", runs[1], 1)])
    assert verdict.speedup == (None, 1.0) and verdict.notes[0] == "12 maps trained together: not ranked"
    assert any(
        f.text == "sigma 2: its timings are its sweep's, 12 maps trained together in each epoch" for f in verdict.flags
    )


def test_json_dash_prints_the_json_alone_and_the_table_on_stderr(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for command in ("bench", "compare", "explain"):
        argv = [command, "--impl", "numpy-batch", "--grid", "5x4", "--samples", "30", "--epochs", "2", "-q"]
        assert cli.main([*argv, "--json", "-"]) == 0
        out, err = capsys.readouterr()
        doc = json.loads(out)  # nothing else on stdout
        assert [r["impl"] for r in doc["runs"]] == ["numpy-batch"]
        assert "median / it" in err
        assert not Path("-").exists()


def test_csv_dash_prints_the_csv_alone_and_the_table_on_stderr(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["compare", "--impl", "numpy-batch", "--grid", "5x4", "--samples", "30", "--epochs", "2", "-q"]
    assert cli.main([*argv, "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("impl,kind,status,chunk") and len(lines) == 3  # one row per epoch, nothing else
    assert "median / it" in err and "wrote" not in err
    assert list(tmp_path.iterdir()) == []


def test_devices_layout_without_json_prints_the_sharding(capsys):
    # The README's own command: a layout described with no --json (it failed on a name bound only with --json).
    assert cli.main(["devices", "--layout", "1x1", "--grid", "24x13"]) == 0
    out, _err = capsys.readouterr()
    assert "1x1" in out and "map" in out


def test_devices_json_dash_prints_the_json_alone(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["devices", "--layout", "1x1", "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["layout"] == "1x1" and err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compare", "--report", "-"], "--report: - is standard output, which this output cannot go to"),
        (["compare", "--pdf", "-"], "--pdf: - is standard output, which this output cannot go to"),
        (["compare", "--animation", "-"], "--animation: - is standard output, which this output cannot go to"),
        (["compare", "--maps", "-"], "--maps: - is standard output, which a folder of files cannot go to"),
        (["compare", "--csv", "-", "--json", "-"], "--csv: goes to standard output (-), as --json does"),
        (["bench", "--save-runs", "-"], "--save-runs: - is standard output, which a folder of files cannot go to"),
        (["explain", "--hlo", "-"], "--hlo: - is standard output, which this output cannot go to"),
        (["explain", "--trace", "-"], "--trace: - is standard output, which a folder of files cannot go to"),
        (["sweep", "--vary", "seed=1,2", "--report", "-"], "--report: - is standard output, which this output"),
    ],
)
def test_dash_is_refused_where_the_output_cannot_go_to_stdout(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    command, *rest = argv
    small = ["--grid", "5x4", "--samples", "30", "--epochs", "2", "-q"]
    impl = [] if command == "sweep" else ["--impl", "jax-fused-batch" if command == "explain" else "numpy-batch"]
    assert cli.main([command, *impl, *small, *rest]) == 2
    out, err = capsys.readouterr()
    assert f"som-studio {command}: error: {message}" in err
    assert "ok in" not in err and out == ""  # refused before any training
    assert list(tmp_path.iterdir()) == []


def test_doctor_json_writes_a_file_like_every_command_and_prints_alone_or_with_dash(capsys, tmp_path):
    out = tmp_path / "doctor.json"
    status = cli.main(["doctor", "--json", str(out)])
    printed, err = capsys.readouterr()
    doc = json.loads(out.read_text())
    assert "findings" in doc and "python" in printed.lower() and f"wrote {out}" in err
    assert cli.main(["doctor", "--json", str(out)]) == 2  # an existing file needs --force
    assert "--force" in capsys.readouterr().err
    assert cli.main(["doctor", "--json", str(out), "--force"]) == status
    capsys.readouterr()
    for argv in (["doctor", "--json"], ["doctor", "--json", "-"]):
        assert cli.main(argv) == status
        assert json.loads(capsys.readouterr().out)["findings"] == doc["findings"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--grid", "-3x5"], "argument --grid: width and height must be positive, got -3x5"),
        (["--grid=-3x5"], "argument --grid: width and height must be positive, got -3x5"),
        (["-q", "--toroid", "--grid", "3x-5"], "argument --grid: width and height must be positive, got 3x-5"),
        (["--layout", "-2x1"], "--layout: expected DATAxMAP with positive sizes such as 2x2, got '-2x1'"),
        (["--sigma-end", "-.5"], "--sigma-end: radii must be finite and > 0, got (-0.5, -0.5)"),
    ],
)
def test_a_value_that_starts_with_a_dash_is_the_options_and_refused_in_its_words(capsys, argv, message):
    try:
        code = cli.main(["bench", "--impl", "numpy-batch", *argv])
    except SystemExit as stop:  # argparse's refusal of the value's type
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "expected one argument" not in err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_a_count_says_one_rule_for_zero_and_negatives(capsys, value):
    with pytest.raises(SystemExit) as stop:
        cli.main(["bench", "--epochs", value])
    assert stop.value.code == 2
    assert f"argument --epochs: must be at least 1, got {value}" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["bench", "--foo"], ["sweep", "--vary", "seed=1,2", "--impl", "x"]])
def test_an_unknown_option_is_told_by_its_command_with_its_usage(capsys, argv):
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and f"som-studio {argv[0]}: error: unrecognized arguments: " in err
    assert err.startswith(f"usage: som-studio {argv[0]} ")  # not the top level's


@pytest.mark.parametrize("value", ["0", "1"])
def test_clusters_say_one_least_number_wherever_they_are_read(capsys, value):
    with pytest.raises(SystemExit):
        cli.main(["bench", "--clusters", value])
    assert f"argument --clusters: must be at least 2, got {value}" in capsys.readouterr().err
    import som_studio

    with pytest.raises(ValueError, match=f"clusters: must be at least 2, got {value}"):
        som_studio.train(np.zeros((8, 2)), grid="3x2", clusters=int(value))


def test_a_prose_file_has_no_numeric_data_rather_than_ragged_rows(capsys, tmp_path):
    prose = tmp_path / "story.csv"
    prose.write_text("It was a dark and stormy night, and the rain fell.\nThen, suddenly, a shot rang out!\nEnd.\n")
    assert cli.main(["bench", "--impl", "numpy-batch", "--grid", "4x3", "--data", str(prose), "-q"]) == 2
    err = capsys.readouterr().err
    assert "no numeric data" in err and "ragged" not in err


def test_one_iteration_is_singular():
    from som_studio.app_model.live import LiveProgress
    from som_studio.session.record import Chunk, RunRecord

    record = RunRecord(impl="numpy-batch", kind="batch", config={}, status="ok", chunks=[Chunk(0, 1, 0.01)])
    assert "1 iteration in" in LiveProgress.finished(record)
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.session import Session, run_to_completion

    session = Session(RunConfig(impl="numpy-batch", width=4, height=3, data=DataSpec(samples=20), epochs=1))
    session.cancel()  # stops before its one epoch
    assert run_to_completion(session).message == "cancelled after 0 of 1 iteration"


def test_compare_without_an_output_flag_says_it_wrote_nothing(capsys):
    argv = ["compare", "--impl", "numpy-batch", "--grid", "4x3", "--samples", "20", "--epochs", "1", "-q"]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err
    assert "compare wrote no file" in err and "--report" in err and "--json" in err


def test_a_run_logged_to_a_file_says_how_far_it_is_now_and_then(capsys, monkeypatch):
    # stderr not a terminal (a log over SSH, a pipe): no progress bar, and a long run was silent to its end.
    from som_studio.commands.common import Progress

    monkeypatch.setattr(Progress, "LOG_EVERY_S", 0.0)
    argv = ["bench", "--impl", "numpy-batch", "--grid", "3x2", "--samples", "20", "--epochs", "3"]
    code, _, err = _run(capsys, *argv)
    assert code == 0 and "numpy-batch: 3 of 3 iterations" in err and "\r" not in err
    code, _, err = _run(capsys, *argv, "--quiet")
    assert code == 0 and "iterations" not in err


@pytest.mark.parametrize(
    ("impls", "counts", "message"),
    [
        ("numpy-batch", ["--steps", "100"], "--steps: applies to online implementations and none is listed "
         "(numpy-batch trains in epochs); use --epochs N"),
        ("numpy-batch", ["--epochs", "3", "--steps", "100"], "--steps: applies to online implementations and none "
         "is listed (numpy-batch trains in epochs); leave it out"),
        ("numpy-online,jax-jit-online", ["--epochs", "3", "--steps", "100"], "--epochs: applies to batch "
         "implementations and none is listed (numpy-online, jax-jit-online train in steps); leave it out"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("command", ["bench", "compare"])
def test_a_count_no_listed_implementation_trains_by_is_refused(capsys, command, impls, counts, message):
    code, out, err = _run(capsys, command, "--impl", impls, "--grid", "6x4", "--samples", "30", "-q", *counts)
    assert code == 2 and f"som-studio {command}: error: {message}\n" == err and out == ""


def test_both_counts_go_with_both_kinds(capsys):
    code, _, err = _run(capsys, "bench", "--impl", "numpy-online,numpy-batch", "--grid", "6x4", "--samples", "30",
                        "-q", "--epochs", "2", "--steps", "50")  # fmt: skip
    assert code == 0, err
