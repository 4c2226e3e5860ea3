"""Outputs that would clobber or litter: --save-runs over a kept run, a refused run's folder, --out over its input."""

from __future__ import annotations

from pathlib import Path

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


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kept")
    data = folder / "rows.csv"
    data.write_text("a,b,c\n" + "".join(f"{i / 10},{(i * 7 % 10) / 10},{(i * 3 % 10) / 10}\n" for i in range(20)))
    assert cli.main(["bench", *SMALL, "--data", str(data), "--save-runs", str(folder)]) == 0
    return folder / "numpy-batch.somrun", data


@pytest.mark.parametrize("which", ["data", "run"])
@pytest.mark.parametrize("force", [False, True])
def test_project_refuses_to_write_over_its_own_input_even_with_force(small_run, tmp_path, capsys, which, force):
    run, data = small_run
    target = data if which == "data" else run
    # The same file by another name: a symbolic link.
    alias = tmp_path / f"alias{target.suffix}.csv"
    alias.symlink_to(target)
    before = target.read_bytes()
    for out in (target, alias):
        code, _, err = _run(capsys, "project", run, data, "--out", out, *(["--force"] if force else []))
        assert code == 2 and "Traceback" not in err
        name = "DATA" if which == "data" else "RUN.somrun"
        assert f"--out: {out}: is also this command's input {name}; no command writes over a file it reads" in err
    assert target.read_bytes() == before


@pytest.mark.parametrize("as_glob", [False, True], ids=["folder", "glob"])
def test_no_command_writes_over_a_file_of_the_folder_or_glob_it_reads(small_run, tmp_path, capsys, as_glob):
    run, data = small_run
    folder = tmp_path / "parts"
    folder.mkdir()
    for name in ("a.csv", "b.csv"):
        (folder / name).write_bytes(data.read_bytes())
    source = str(folder / "*.csv") if as_glob else str(folder)
    attempts = [
        ("bench", *SMALL, "--data", source, "--json", folder / "b.csv", "--force"),
        ("compare", *SMALL, "--data", source, "--csv", folder / "a.csv", "--force"),
        ("project", run, source, "--out", folder / "b.csv", "--force"),
    ]
    for argv in attempts:
        code, _, err = _run(capsys, *argv)
        assert code == 2 and "no command writes over a file it reads" in err, (argv, err)
    # A new data file there would be read as data by the next run on the same folder or glob.
    code, _, err = _run(capsys, "bench", *SMALL, "--data", source, "--json", folder / "c.csv")
    assert code == 2 and "whose files are being read" in err and not (folder / "c.csv").exists()
    assert all((folder / name).read_bytes() == data.read_bytes() for name in ("a.csv", "b.csv"))


def test_bench_and_compare_refuse_an_output_that_is_their_data(small_run, capsys):
    _, data = small_run
    before = data.read_bytes()
    for command, flag in (("bench", "--json"), ("compare", "--csv"), ("compare", "--json")):
        code, _, err = _run(capsys, command, *SMALL, "--data", data, flag, data, "--force")
        assert code == 2 and f"{flag}: {data}: is also this command's input --data" in err
    assert data.read_bytes() == before


@pytest.mark.parametrize(
    ("command", "flag", "saved"),
    [
        ("bench", "--json", "numpy-batch.somrun"),
        ("compare", "--csv", "numpy-batch.somrun"),
        ("compare", "--json", "numpy-batch.somrun"),
        ("explain", "--json", "numpy-batch.somrun"),
        ("sweep", "--json", "sigma_end-1.somrun"),
    ],
)
@pytest.mark.parametrize("kept", [False, True], ids=["new", "kept"])
def test_no_output_is_a_file_save_runs_writes_not_even_with_force(tmp_path, capsys, command, flag, saved, kept):
    runs = tmp_path / "runs"
    runs.mkdir()
    if kept:
        (runs / saved).write_bytes(b"a run kept before")
    argv = [*SMALL[2:], "--vary", "sigma_end=1,2"] if command == "sweep" else SMALL
    code, out, err = _run(capsys, command, *argv, "--save-runs", runs, flag, runs / saved, "--force")
    assert code == 2 and "Traceback" not in err
    assert f"{runs / saved} is also the file of " in err and "give each output its own file" in err
    assert "ok in" not in out + err and "wrote" not in err  # refused before any training
    assert [p.name for p in runs.iterdir()] == ([saved] if kept else [])
    if kept:
        assert (runs / saved).read_bytes() == b"a run kept before"


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", ["bench", "compare"])
def test_a_checkpoint_folder_that_cannot_be_made_is_refused_before_training(tmp_path, capsys, command):
    # /proc takes no new folder, not even from root (for whom os.access says it is writable).
    code, out, err = _run(capsys, command, *SMALL, "--checkpoint", "/proc/som-studio-x/ck")
    assert code == 2 and "Traceback" not in err
    assert "--checkpoint: /proc/som-studio-x/ck: cannot create (/proc is not writable)" in err
    assert "ok in" not in out + err
    (tmp_path / "ck").mkdir()
    (tmp_path / "ck" / "numpy-batch").write_text("not a folder")
    code, out, err = _run(capsys, command, *SMALL, "--checkpoint", tmp_path / "ck")
    assert code == 2 and f"--checkpoint: {tmp_path / 'ck' / 'numpy-batch'}: is a file, not a folder" in err
    assert "ok in" not in out + err
    code, out, err = _run(capsys, command, *SMALL, "--checkpoint", "-")
    assert code == 2 and "--checkpoint: - is standard output, which a folder of files cannot go to" in err
    assert not Path("-").exists()


def test_random_colours_too_many_for_memory_are_refused_before_they_are_made(capsys, monkeypatch):
    """2e9 of them ended in numpy's MemoryError traceback: no implementation's estimate had been asked yet."""
    import som_studio
    from som_studio.core.impls import memory

    monkeypatch.setattr(memory, "host_available", lambda: 1 << 20)
    code, _out, err = _run(capsys, "bench", "--impl", "numpy-batch", "--grid", "4x3", "--samples", "100000")
    assert code == 2 and "--samples: 100,000 random colours need about 4.6 MiB to make, but only 1.0 MiB" in err
    with pytest.raises(ValueError, match=r"samples: 100,000 random colours need about 4.6 MiB to make"):
        som_studio.train(samples=100_000, grid="4x3", epochs=1)


@pytest.mark.parametrize(("flag", "keyword"), [("--labels", "labels"), ("--ignore", "ignore"), ("--id", "id_column")])
def test_a_column_role_without_data_is_refused_by_its_own_flag(capsys, flag, keyword):
    """--ignore a without --data named --labels."""
    import numpy as np

    import som_studio

    code, _out, err = _run(capsys, "bench", "--impl", "numpy-batch", "--grid", "4x3", "--epochs", "1", flag, "a")
    assert code == 2 and f"error: {flag}: labels, ignored and id columns name columns of a data file" in err
    given = {keyword: ["a"] if keyword == "ignore" else "a"}
    with pytest.raises(ValueError, match=rf"^{keyword}: an array has no named columns"):
        som_studio.train(np.zeros((5, 3)), grid="3x2", epochs=1, **given)


def test_a_run_whose_file_appeared_meanwhile_does_not_take_the_results_with_it(tmp_path, capsys, monkeypatch):
    """Two commands saving into one folder: the second trained in full, then stopped on '--save-runs: … exists'
    with no table and no --json. Its results are written; the file the other wrote is kept; the exit says why."""
    import json

    from som_studio.commands import bench

    folder, doc = tmp_path / "R", tmp_path / "runs.json"
    train_one = bench._train_one

    def another_command_saves_first(session, *args):
        got = train_one(session, *args)
        if session.config.impl == "numpy-batch":
            folder.mkdir(exist_ok=True)
            (folder / "numpy-batch.somrun").write_text("the other command's run")
        return got

    monkeypatch.setattr(bench, "_train_one", another_command_saves_first)
    argv = ["--impl", "numpy-batch,jax-fused-batch", "--grid", "4x3", "--samples", "30", "--epochs", "2"]
    code, out, err = _run(capsys, "bench", *argv, "--save-runs", folder, "--json", doc)
    assert code == 2 and "--save-runs:" in err and "numpy-batch.somrun: exists" in err
    assert [r["impl"] for r in json.loads(doc.read_text())["runs"]] == ["numpy-batch", "jax-fused-batch"]
    assert "jax-fused-batch" in out and (folder / "jax-fused-batch.somrun").exists()
    assert (folder / "numpy-batch.somrun").read_text() == "the other command's run"
