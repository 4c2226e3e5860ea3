"""Outputs that would clobber or litter: --save-runs over a kept run, a refused run's folder."""

from __future__ import annotations

import pytest

from som_studio import cli

SMALL = ["--impl", "numpy-batch", "--grid", "3x2", "--samples", "20", "--epochs", "1", "--quiet"]


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", ["bench", "compare"])
def test_save_runs_refuses_to_replace_a_kept_run_without_force(tmp_path, capsys, command):
    runs = tmp_path / "runs"
    code, _, err = _run(capsys, command, *SMALL, "--save-runs", runs)
    assert code == 0, err
    kept = runs / "numpy-batch.somrun"
    before = kept.read_bytes()
    code, out, err = _run(capsys, command, *SMALL, "--save-runs", runs)
    assert code == 2 and "Traceback" not in err
    assert f"--save-runs: {kept}: exists; use --force to overwrite it" in err
    assert "ok in" not in out + err  # refused before any training
    assert kept.read_bytes() == before
    code, _, err = _run(capsys, command, *SMALL, "--save-runs", runs, "--force")
    assert code == 0, err
    assert kept.read_bytes() != before  # a new run (its own id and time), written in place of the old
    assert sorted(p.name for p in runs.iterdir()) == ["numpy-batch.somrun"]  # no temporary file left


def test_a_refused_run_leaves_no_runs_folder(tmp_path, capsys):
    runs = tmp_path / "deep" / "runs"
    code, _, err = _run(capsys, "bench", *SMALL, "--topology", "hex", "--toroid", "--grid", "6x5", "--save-runs", runs)
    assert code == 2 and "--toroid" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,x\n")
    code, _, err = _run(capsys, "bench", *SMALL, "--data", bad, "--save-runs", runs)
    assert code == 2 and "non-numeric value 'x'" in err
    assert not (tmp_path / "deep").exists()


def test_save_runs_naming_a_file_is_refused_up_front(tmp_path, capsys):
    not_a_folder = tmp_path / "runs"
    not_a_folder.write_text("a file")
    code, _, err = _run(capsys, "bench", *SMALL, "--save-runs", not_a_folder)
    assert code == 2 and f"--save-runs: {not_a_folder}: is a file, not a folder" in err
    code, _, err = _run(capsys, "bench", *SMALL, "--save-runs", not_a_folder / "inside")
    assert code == 2 and f"cannot create ({not_a_folder} is not a folder)" in err
    assert not_a_folder.read_text() == "a file"
