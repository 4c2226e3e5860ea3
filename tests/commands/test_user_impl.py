"""``--impl FILE.py:CLASS``: a user's implementation through the command line, end to end."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from som_studio import cli
from tests.core.test_user_impl import GOOD, LAZY, RUN_LOOP

ROOT = Path(__file__).resolve().parents[2]


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_smallest_example_runs_as_the_docs_write_it(monkeypatch, capsys, forget):
    monkeypatch.chdir(ROOT)
    argv = "bench --impl docs/examples/my_som.py:MySom --grid 60x34 --epochs 5".split()  # as the docs write it
    code, out, err = _run(capsys, *argv)
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("my_som.py:MySom "))
    assert " batch " in row and " ok " in row
    assert "my_som.py:MySom agrees with numpy-batch: final maps differ by at most" in out  # the flag below


def test_explain_refuses_to_write_the_program_of_a_users_class_before_it_trains(monkeypatch, capsys, forget, tmp_path):
    """It trained, then said the run 'failed' and wrote nothing: its jax.jit programs are its own."""
    monkeypatch.chdir(ROOT)
    argv = ["explain", "--impl", "docs/examples/my_som.py:MySom", "--grid", "8x6", "--epochs", "2"]
    code, out, err = _run(capsys, *argv, "--hlo", tmp_path / "x.hlo")
    assert code == 2 and "--hlo: my_som.py:MySom is your own class: its programs are compiled inside it" in err
    assert "ok in" not in out + err and not (tmp_path / "x.hlo").exists()


def test_a_users_run_beside_ours_with_its_file_and_hash_in_the_json(tmp_path, monkeypatch, capsys, forget):
    (tmp_path / "my_som.py").write_text(GOOD.replace("class Good", "class MySom"))
    monkeypatch.chdir(tmp_path)
    code, _, err = _run(
        capsys, "bench", "--impl", "./my_som.py:MySom,numpy-batch", "--grid", "8x6", "--samples", "60",
        "--epochs", "3", "--quiet", "--json", "runs.json",
    )  # fmt: skip
    assert code == 0, err
    runs = json.loads((tmp_path / "runs.json").read_text())["runs"]
    assert [r["impl"] for r in runs] == ["my_som.py:MySom", "numpy-batch"]
    mine = runs[0]["extra"]
    assert mine["user_impl"]["file"] == str((tmp_path / "my_som.py").resolve())
    assert mine["user_impl"]["sha256"] == hashlib.sha256((tmp_path / "my_som.py").read_bytes()).hexdigest()
    assert mine["agreement"]["agrees"] is True and mine["agreement"]["reference"] == "numpy-batch"
    assert "agreement" not in runs[1].get("extra", {})  # ours are checked by the ladder's own tests


def test_a_run_that_disagrees_is_shown_so_and_never_ranked(tmp_path, capsys, forget):
    lazy = tmp_path / "lazy.py"
    lazy.write_text(LAZY)
    code, out, err = _run(
        capsys, "bench", "--impl", f"{lazy}:Good,numpy-batch", "--grid", "8x6", "--samples", "60", "--epochs", "3",
        "--quiet", "--json", tmp_path / "runs.json",
    )  # fmt: skip
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("lazy.py:Good "))
    assert "  disagrees with numpy-batch: not ranked  " in row  # its speed-up cell
    assert "warning: lazy.py:Good disagrees with numpy-batch: final maps differ by up to" in out
    base = next(line for line in out.splitlines() if line.startswith("numpy-batch "))
    assert "  baseline  " in base  # the reference is its own baseline: the lazy run is no baseline
    record = json.loads((tmp_path / "runs.json").read_text())["runs"][0]
    assert record["extra"]["agreement"]["agrees"] is False


def test_a_run_that_breaks_part_way_says_so_once_with_its_traceback(tmp_path, capsys, forget):
    broken = tmp_path / "broken.py"
    breaks = "        if first >= 15:\n            raise ValueError('my bug')\n"  # past the agreement check's 10
    broken.write_text(GOOD.replace(RUN_LOOP, breaks + RUN_LOOP))
    code, out, err = _run(
        capsys, "bench", "--impl", f"{broken}:Good,numpy-batch", "--grid", "8x6", "--samples", "60", "--epochs", "40",
    )  # fmt: skip
    assert code == 1
    assert f"broken.py:Good: failed: {broken}: Good raised an error while training\nTraceback" in err
    assert err.count("ValueError: my bug") == 1 and "Traceback" not in out
    assert f"warning: broken.py:Good failed: {broken}: Good raised an error while training\n" in out


def test_compare_takes_a_users_implementation_too(tmp_path, capsys, forget):
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    code, out, err = _run(
        capsys, "compare", "--impl", f"numpy-batch,{good}:Good", "--grid", "8x6", "--samples", "60", "--epochs", "3",
        "--quiet", "--json", tmp_path / "cmp.json", "--baseline", f"{good}:Good",
    )  # fmt: skip
    assert code == 0, err
    assert "good.py:Good" in out and "good.py:Good agrees with numpy-batch" in out + err


def test_a_map_that_turns_nan_part_way_ends_the_run_at_its_last_whole_map(tmp_path, capsys, forget):
    """The map is checked after every timed chunk: the timings stop at the last whole map, which the run keeps."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.events import Failed, Snapshot
    from som_studio.session.session import Session

    nan = tmp_path / "nan.py"
    # The chunk that reaches past iteration 15 breaks the map, however the run sizes its chunks.
    breaks = "        if first + count > 15:\n            self.w = self.w * np.nan\n            return\n"
    nan.write_text(GOOD.replace(RUN_LOOP, breaks + RUN_LOOP))
    code, _out, err = _run(
        capsys, "bench", "--impl", f"{nan}:Good", "--grid", "8x6", "--samples", "60", "--epochs", "40", "--json",
        tmp_path / "runs.json",
    )  # fmt: skip
    assert code == 1
    found = re.search(r"Good.get_map\(\) returned a map with NaN or infinite values after iteration (\d+) "
                      r"\(the last whole map: iteration (\d+)\)", err)  # fmt: skip
    assert found and int(found[2]) <= 15 < int(found[1])
    chunks = json.loads((tmp_path / "runs.json").read_text())["runs"][0]["timings"]["chunks"]
    assert sum(c["count"] for c in chunks) == int(found[2])  # no broken chunk timed
    cfg = RunConfig(impl="nan.py:Good", width=8, height=6, data=DataSpec(samples=60), epochs=40)
    events = list(Session(cfg, snapshot_interval_s=None).run())
    last, failed = events[-2:]
    assert isinstance(failed, Failed) and isinstance(last, Snapshot) and np.isfinite(last.map).all()
    assert last.iteration == sum(c.count for c in failed.record.chunks)


def test_a_lattice_a_users_class_does_not_declare_is_refused_naming_the_attribute(tmp_path, capsys, forget):
    good = tmp_path / "good.py"
    good.write_text(GOOD)
    argv = ["bench", "--impl", f"{good}:Good", "--grid", "8x6", "--samples", "60", "--epochs", "3"]
    code, _out, err = _run(capsys, *argv, "--topology", "hex")
    hex_words = "good.py:Good trains rect maps only (its class's topologies); if Good trains hex maps, add 'hex' to"
    assert code == 2 and f"{hex_words} topologies" in err
    code, _out, err = _run(capsys, *argv, "--toroid")
    assert code == 2 and "good.py:Good does not say it trains toroid maps; if Good does, set toroid = True in it" in err


def test_compares_reference_is_numpy_batch_before_a_users_numpy_class_listed_first(tmp_path, capsys, forget):
    good = tmp_path / "good.py"
    good.write_text(GOOD)  # declares no backend: a NumPy one
    code, out, err = _run(
        capsys, "compare", "--impl", f"{good}:Good,numpy-batch", "--grid", "8x6", "--samples", "60", "--epochs", "3",
        "--quiet",
    )  # fmt: skip
    assert code == 0, err
    assert "  baseline  " in next(line for line in out.splitlines() if line.startswith("numpy-batch "))


@pytest.mark.parametrize(
    ("text", "spec", "problem"),
    [
        (None, "nope.py:MySom", "nope.py: no such file"),
        (GOOD, "my_som.py:Other", "my_som.py: defines no Other"),
        ("class MySom:\n    kind = 'batch'\n", "my_som.py:MySom", "my_som.py: MySom lacks the method(s) warmup, run"),
        ("raise RuntimeError('no GPU here')\n", "my_som.py:MySom", "my_som.py: raised an error when imported"),
        (
            GOOD.replace("return self.w.astype(self.p.dtype)", "return self.w[0]"),
            "my_som.py:Good",
            "my_som.py: Good.get_map() returned shape (5, 3)",
        ),
        ("my_som.py", "my_som.py:", "my_som.py: '' is not a class name"),
        (GOOD, "my_som.py", "my_som.py: name the class in it too, as ./my_som.py:Good"),
        (
            "from collections import OrderedDict as Imported\n\nclass A:\n    pass\n\nclass B(A):\n    pass\n",
            "my_som.py",
            "my_som.py: name the class in it too, one of ./my_som.py:A, ./my_som.py:B",
        ),
        (None, "nope.py", "nope.py: no such file"),
    ],
    ids=[
        "no-file",
        "no-class",
        "missing-method",
        "import-error",
        "wrong-shape",
        "no-class-name",
        "no-colon",
        "no-colon-classes",
        "no-colon-no-file",
    ],
)
def test_bad_input_is_refused_with_the_file_and_the_problem(tmp_path, monkeypatch, capsys, forget, text, spec, problem):
    if text is not None:
        (tmp_path / "my_som.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    code, out, err = _run(capsys, "bench", "--impl", f"./{spec}", "--grid", "4x3", "--samples", "20", "--epochs", "1")
    assert code == 2
    assert err.startswith(f"som-studio bench: error: --impl: ./{problem}")
    assert "som_studio" not in err and "ok in" not in out + err  # our traceback never; nothing trained


def test_an_output_is_never_the_implementations_own_file(tmp_path, capsys, forget):
    """--json over the --impl file replaced the user's Python source with JSON, --force given or not."""
    mine = tmp_path / "my_som.py"
    mine.write_text(GOOD)
    for command in ("bench", "compare"):
        code, _out, err = _run(
            capsys, command, "--impl", f"{mine}:Good", "--grid", "4x3", "--samples", "20", "--epochs", "1",
            "--json", str(mine), "--force",
        )  # fmt: skip
        assert code == 2 and f"is also this command's input --impl {mine}:Good; no command writes over" in err
    assert mine.read_text() == GOOD


def test_a_file_that_loops_at_import_is_refused_and_the_command_ends(tmp_path, monkeypatch, capsys, forget):
    from som_studio.core.impls import user_impl

    monkeypatch.setattr(user_impl, "IMPORT_TIMEOUT_S", 1.5)
    (tmp_path / "spin.py").write_text("import time\nwhile True:\n    time.sleep(0.01)\n")
    code, _, err = _run(capsys, "bench", "--impl", f"{tmp_path}/spin.py:Spin,numpy-batch", "--grid", "4x3")
    assert code == 2
    assert err == (
        f"som-studio bench: error: --impl: {tmp_path}/spin.py: did not finish importing within 1.5 s "
        "(does it loop or wait at import?)\n"
    )


def test_a_users_run_is_saved_and_checkpointed_under_one_name_without_its_colon(tmp_path, monkeypatch, capsys, forget):
    (tmp_path / "my_som.py").write_text(GOOD.replace("class Good", "class MySom"))
    monkeypatch.chdir(tmp_path)
    small = ["--impl", "./my_som.py:MySom", "--grid", "4x3", "--samples", "20", "--epochs", "2", "--quiet"]
    code, _, err = _run(capsys, "compare", *small, "--save-runs", "runs", "--maps", "maps", "--checkpoint", "ck")
    assert code == 0, err
    assert [p.name for p in (tmp_path / "runs").iterdir()] == ["my_som.py_MySom.somrun"]
    assert [p.name for p in (tmp_path / "maps").iterdir()] == ["my_som.py_MySom.png"]
    assert [p.name for p in (tmp_path / "ck").iterdir()] == ["my_som.py_MySom"]
    # A checkpoint made under the implementation's own name (colon and all) is still resumed.
    (tmp_path / "ck" / "my_som.py_MySom").rename(tmp_path / "ck" / "my_som.py:MySom")
    code, _, err = _run(capsys, "bench", *small, "--resume", "ck")
    assert code == 0, err
    assert "my_som.py:MySom: resuming at iteration 2 of 2 from ck/my_som.py:MySom" in err
