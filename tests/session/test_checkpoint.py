"""Checkpoints and resume: a run stopped or killed after a checkpoint resumes to the uninterrupted map."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from som_studio import cli
from som_studio.config import DataSpec, RunConfig
from som_studio.session.checkpoint import CheckpointError, Checkpoints, read_latest, resume_from
from som_studio.session.events import ChunkTimed, Failed, Finished, Snapshot
from som_studio.session.session import Session


def _final(session: Session, stop_at: int | None = None):
    """The final map and record of ``session``; with ``stop_at``, cancelled once that many iterations are done."""
    final, record = None, None
    for ev in session.run():
        if isinstance(ev, Snapshot):
            final = ev.map
        elif isinstance(ev, ChunkTimed) and stop_at is not None and ev.end >= stop_at:
            session.cancel()
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
    return final, record


@pytest.mark.parametrize(
    ("impl", "count", "topology", "toroid"),
    [
        ("numpy-batch", {"epochs": 6}, "hex", False),
        ("numpy-online", {"steps": 40}, "rect", True),
        ("jax-fused-batch", {"epochs": 6}, "rect", False),
        ("jax-scan-online", {"steps": 40}, "hex", False),
    ],
)
def test_stopped_and_resumed_equals_uninterrupted(tmp_path, impl, count, topology, toroid):
    cfg = RunConfig(impl=impl, width=5, height=4, topology=topology, toroid=toroid, data=DataSpec(samples=120), **count)
    whole, _ = _final(Session(cfg, snapshot_interval_s=None))
    half = cfg.iterations // 2
    stopped, rec = _final(
        Session(cfg, snapshot_interval_s=None, max_chunk=2, checkpoint=Checkpoints(tmp_path, every_s=0)), half
    )
    assert rec.status == "cancelled"
    saved = resume_from(tmp_path, cfg)
    assert half <= saved.iteration < cfg.iterations  # stopping keeps where it stood
    assert np.array_equal(saved.map, stopped)
    resumed, rec = _final(Session(cfg, snapshot_interval_s=None, resume=saved))
    assert rec.status == "ok" and rec.extra["resumed"]["iteration"] == saved.iteration
    assert rec.chunks.arrays()[0][0] == saved.iteration  # nothing before the checkpoint trained again
    np.testing.assert_array_equal(resumed, whole)  # bit for bit
    assert rec.history[0]["iteration"] == 0  # the history measured before the stop carries on


def test_a_resumed_run_says_again_what_was_measured_before_its_checkpoint(tmp_path):
    """Its quality points before the stop come as events before any training (a watcher's quality plot waited for
    a first measurement the resumed run does not make again), and are in its record once."""
    from som_studio.session.events import QualityMeasured
    from som_studio.storage import RunRecorder

    cfg = RunConfig(impl="numpy-batch", width=5, height=4, data=DataSpec(samples=120), epochs=20)
    _final(
        Session(
            cfg, snapshot_interval_s=None, max_chunk=2, quality_points=10, checkpoint=Checkpoints(tmp_path, every_s=0)
        ),
        10,
    )
    saved = resume_from(tmp_path, cfg)
    before = [h["iteration"] for h in saved.meta["history"]]
    assert before and max(before) <= saved.iteration
    events = list(Session(cfg, snapshot_interval_s=None, quality_points=10, resume=saved).run())
    first_chunk = next(i for i, ev in enumerate(events) if isinstance(ev, ChunkTimed))
    said = [ev.iteration for ev in events[:first_chunk] if isinstance(ev, QualityMeasured)]
    assert said == before
    record = events[-1].record
    iterations = [h["iteration"] for h in record.history]
    assert iterations == sorted(set(iterations)) and iterations[: len(before)] == before
    # What a watcher keeps of the events is the record's history.
    kept = RunRecorder.new()
    for ev in events:
        kept.feed(ev)
    assert [h["iteration"] for h in kept.record.history] == iterations


def test_a_half_written_checkpoint_is_never_read(tmp_path):
    cfg = RunConfig(impl="numpy-batch", width=4, height=3, data=DataSpec(samples=50), epochs=4)
    _final(Session(cfg, snapshot_interval_s=None, checkpoint=Checkpoints(tmp_path, every_s=0)))
    complete = read_latest(tmp_path)
    assert complete.iteration == 4  # a run that ends keeps its last checkpoint
    # What a run killed while writing its next checkpoint leaves: the next step under Orbax's temporary name.
    torn = tmp_path / f"{complete.step + 1}.orbax-checkpoint-tmp"
    shutil.copytree(tmp_path / str(complete.step), torn)
    (torn / "meta" / "metadata").write_text('{"format": "som-studio checkpoint", "iteration": 9')
    again = read_latest(tmp_path)
    assert again.step == complete.step and np.array_equal(again.map, complete.map)
    Checkpoints(tmp_path).start()  # the next run that writes here clears it away
    assert not torn.exists() and read_latest(tmp_path).step == complete.step


def test_a_failed_write_keeps_the_previous_checkpoint(tmp_path):
    # A file-size limit makes every write past it fail, as a full disk does (EFBIG instead of ENOSPC).
    script = textwrap.dedent(
        """
        import resource, signal, sys
        import numpy as np
        from som_studio.session.checkpoint import CheckpointError, Checkpoints
        ck = Checkpoints(sys.argv[1], every_s=0)
        meta = {"format": "som-studio checkpoint", "config": {}, "iteration": 1}
        ck.save({"map": np.ones((4, 5, 3))}, meta)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
        try:
            ck.save({"map": np.random.default_rng(0).random((60, 60, 20))}, {**meta, "iteration": 2})
        except CheckpointError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120, check=True
    )
    assert "could not write a checkpoint (File too large)" in out.stdout
    assert "the checkpoint at iteration 1 is kept" in out.stdout
    assert "Traceback" not in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0"]  # nothing half-written left
    kept = read_latest(tmp_path)
    assert kept.iteration == 1 and np.array_equal(kept.map, np.ones((4, 5, 3)))


@pytest.mark.cpu_backend
def test_a_run_with_checkpoints_compiles_nothing_in_its_timed_chunks(tmp_path):
    """Orbax's imports (a fresh process's first) end before the run's programs are built: they add JAX options
    to every program's cache key, and a program built before them compiled again inside the first chunk."""
    script = textwrap.dedent(
        """
        import sys
        from som_studio.config import DataSpec, RunConfig
        from som_studio.session.checkpoint import Checkpoints
        from som_studio.session.session import Session, run_to_completion
        cfg = RunConfig(impl="jax-naive-online", width=12, height=8, data=DataSpec(samples=200), steps=50)
        ck = Checkpoints(sys.argv[1], 600.0, at_end=False)
        rec = run_to_completion(Session(cfg, quality_points=0, checkpoint=ck))
        print(rec.status, rec.warmup_compiles, rec.compiles)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=120, check=True
    )
    status, warmup, compiles = out.stdout.split()
    assert status == "ok" and int(warmup) > 0
    assert int(compiles) == int(warmup)  # every primitive compiled in the warm-up, none again


def test_waiting_for_the_checkpoints_imports_is_their_cost_not_the_runs(tmp_path, monkeypatch):
    """The app keeps checkpoints for every run: the wait for Orbax's imports is booked as the checkpoints'
    (excluded from training time), not as the run's initial map (half a second of a small run's total)."""
    monkeypatch.setattr(Checkpoints, "ready", lambda self: time.sleep(0.5))  # imports still under way
    cfg = RunConfig(impl="numpy-batch", width=6, height=4, data=DataSpec(samples=60), epochs=3)
    ck = Checkpoints(tmp_path / "ck", 600.0, at_end=False)
    _final_map, record = _final(Session(cfg, quality_points=0, checkpoint=ck))
    assert record.status == "ok" and record.phases["checkpoint"] >= 0.5
    assert record.phases["init"] < record.phases["checkpoint"]  # the initial map of 60 rows, alone
    assert record.total_s < record.phases["checkpoint"]  # training, compile and initial map: none of the wait


def test_no_checkpoint_to_resume_from(tmp_path):
    with pytest.raises(CheckpointError, match="holds no complete checkpoint"):
        read_latest(tmp_path)


BENCH = ["bench", "--impl", "numpy-batch", "--samples", "3000", "--epochs", "30", "--quiet"]


def test_a_folder_holding_the_users_own_files_is_refused_before_orbax_deletes_them(tmp_path, capsys):
    """Orbax keeps one checkpoint and removes every other numbered folder: a user's '2024' went with its files."""
    import som_studio

    mine = tmp_path / "ck" / "numpy-batch" / "2024"
    mine.mkdir(parents=True)
    (mine / "report.txt").write_text("keep")
    assert cli.main([*BENCH, "--grid", "6x5", "--checkpoint", str(tmp_path / "ck")]) == 2
    assert f"--checkpoint: {mine.parent}: holds 2024/, not checkpoints" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"checkpoint: .*: holds ck/, not checkpoints; checkpoints are kept in a "):
        som_studio.train(np.random.default_rng(0).random((40, 3)), grid="4x3", epochs=2, checkpoint=tmp_path)
    with pytest.raises(ValueError, match=r"resume: .*numpy-batch: holds 2024/, not checkpoints"):
        som_studio.train(np.random.default_rng(0).random((40, 3)), grid="4x3", epochs=2, resume=mine.parent)
    assert (mine / "report.txt").read_text() == "keep"
    session = Session(RunConfig(impl="numpy-batch", width=4, height=3, data=DataSpec(samples=40), epochs=2),
                      checkpoint=Checkpoints(mine.parent), snapshot_interval_s=None)  # fmt: skip
    failed = list(session.run())[-1]  # the app's way in: the run fails naming the folder
    assert isinstance(failed, Failed) and "holds 2024/, not checkpoints" in failed.record.message
    assert (mine / "report.txt").read_text() == "keep"


def test_cli_resumes_a_run_stopped_before_its_first_checkpoint_afresh(tmp_path, capsys):
    """Ctrl-C while a run prepares (a big stream's statistics pass) leaves its folder empty: --resume starts it."""
    (tmp_path / "ck" / "numpy-batch").mkdir(parents=True)
    argv = [*BENCH, "--grid", "6x5", "--resume", str(tmp_path / "ck"), "--json", str(tmp_path / "runs.json")]
    assert cli.main(argv) == 0, capsys.readouterr().err
    assert "resuming" not in capsys.readouterr().err
    assert read_latest(tmp_path / "ck" / "numpy-batch").iteration == 30  # its checkpoints went on into the folder
    assert cli.main([*BENCH, "--grid", "6x5", "--resume", str(tmp_path / "nowhere")]) == 2
    assert "give it again with --checkpoint instead" in capsys.readouterr().err


def test_cli_killed_after_a_checkpoint_resumes_to_the_uninterrupted_map(tmp_path, capsys):
    ck = tmp_path / "ck"
    argv = [*BENCH, "--grid", "12x10", "--checkpoint", str(ck), "--checkpoint-every", "0.3"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "som_studio", *argv], stderr=subprocess.PIPE, start_new_session=True, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not any(p.name.isdigit() for p in (ck / "numpy-batch").glob("*")):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.05)
        still_running = proc.poll() is None
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert still_running
    killed_at = read_latest(ck / "numpy-batch").iteration
    assert 0 < killed_at < 30
    # The same command again, --resume forgotten: the killed run's checkpoint is kept, and the way on said.
    assert cli.main(argv) == 2
    assert (
        f"--checkpoint: {ck / 'numpy-batch'} holds an unfinished checkpoint of numpy-batch (iteration {killed_at} "
        f"of 30); go on from it with --resume {ck}, or pass --force"
    ) in capsys.readouterr().err
    assert read_latest(ck / "numpy-batch").iteration == killed_at
    code = cli.main([*argv[:-4], "--resume", str(ck), "--save-runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert f"resuming at iteration {killed_at}" in err
    assert cli.main(argv) == 0  # a finished run's checkpoint holds nothing to go on from: replaced
    from som_studio import load_run

    resumed = load_run(tmp_path / "runs" / "numpy-batch.somrun")
    cfg = RunConfig(impl="numpy-batch", width=12, height=10, data=DataSpec(samples=3000), epochs=30)
    whole, _ = _final(Session(cfg, snapshot_interval_s=None, quality_points=0, final_quality=False))
    np.testing.assert_array_equal(resumed.codebook, whole)
    assert resumed.record["extra"]["resumed"]["iteration"] == killed_at


def test_cli_refuses_to_resume_with_other_settings(tmp_path, capsys):
    cfg = RunConfig(impl="numpy-batch", width=6, height=5, data=DataSpec(samples=100), epochs=3)
    _final(Session(cfg, snapshot_interval_s=None, checkpoint=Checkpoints(tmp_path / "numpy-batch", every_s=0)))
    small = ["bench", "--impl", "numpy-batch", "--samples", "100", "--epochs", "3", "-q", "--resume", str(tmp_path)]
    assert cli.main([*small, "--grid", "7x5"]) == 2
    err = capsys.readouterr().err
    assert "--grid: differs from the checkpoint" in err and "(6x5 there, 7x5 here)" in err
    assert cli.main([*small, "--grid", "6x5", "--seed", "3"]) == 2
    assert "--seed: differs from the checkpoint" in capsys.readouterr().err
    assert cli.main([*small[:-1], str(tmp_path / "nowhere"), "--grid", "6x5"]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "table.csv").write_text("a,b\n1,2\n")  # a data file given where the folder goes
    assert cli.main([*small[:-1], str(tmp_path / "table.csv"), "--grid", "6x5"]) == 2
    assert f"--resume: {tmp_path / 'table.csv'}: a file, not a folder of checkpoints" in capsys.readouterr().err
    # What may differ: how the run reports and where it saves.
    code = cli.main([*small, "--grid", "6x5", "--json", str(tmp_path / "runs.json"), "--checkpoint-every", "5"])
    assert code == 0, capsys.readouterr().err


def test_cli_refuses_a_changed_data_file(tmp_path, capsys):
    data = tmp_path / "x.npy"
    np.save(data, np.random.default_rng(0).random((40, 3)))
    argv = ["bench", "--impl", "numpy-batch", "--data", str(data), "--grid", "4x3", "--epochs", "2", "-q"]
    assert cli.main([*argv, "--checkpoint", str(tmp_path / "ck")]) == 0
    np.save(data, np.random.default_rng(1).random((40, 3)))
    os.utime(data, ns=(time.time_ns(), time.time_ns() + 10**9))
    capsys.readouterr()
    assert cli.main([*argv, "--resume", str(tmp_path / "ck")]) == 2
    assert f"--data: {Path(data)} changed since the checkpoint" in capsys.readouterr().err


def test_the_same_data_file_named_from_another_folder_resumes(tmp_path, capsys, monkeypatch):
    # A job resumed from another working folder was refused: '--data: differs ... (x.npy there, /.../x.npy here)'.
    (tmp_path / "job").mkdir()
    np.save(tmp_path / "job" / "x.npy", np.random.default_rng(0).random((40, 3)))
    argv = ["bench", "--impl", "numpy-batch", "--grid", "4x3", "--epochs", "2", "-q"]
    monkeypatch.chdir(tmp_path / "job")
    assert cli.main([*argv, "--data", "x.npy", "--checkpoint", "ck"]) == 0
    monkeypatch.chdir(tmp_path)
    for named in ("job/x.npy", str(tmp_path / "job" / "x.npy"), "./job/../job/x.npy"):
        assert cli.main([*argv, "--data", named, "--resume", "job/ck"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((40, 3)))  # the same values in another file
    assert cli.main([*argv, "--data", "x.npy", "--resume", "job/ck"]) == 2
    assert "--data: differs from the checkpoint" in capsys.readouterr().err


class _Killed(Exception):
    """Stands for a kill right after a checkpoint was written (the process would be gone)."""


class _KilledAfter(Checkpoints):
    """Checkpoints that stop the run once one is written inside an epoch, ``rows`` rows or more into it."""

    def __init__(self, folder, rows: int) -> None:
        super().__init__(folder, every_s=0)
        self.rows = rows

    def save(self, arrays, meta):
        super().save(arrays, meta)
        if meta["position"]["row"] >= self.rows and meta["iteration"] >= 1:
            raise _Killed


@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory):
    """Two Parquet files, row groups of 50 rows, 5 % of the values missing."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(3)
    x = rng.random((300, 3))
    x[rng.random(x.shape) < 0.05] = np.nan
    d = tmp_path_factory.mktemp("parts")
    for i, (a, b) in enumerate([(0, 130), (130, 300)]):
        pq.write_table(pa.table({c: x[a:b, j] for j, c in enumerate("abc")}), d / f"p{i}.parquet", row_group_size=50)
    return d


@pytest.mark.parametrize("impl", ["numpy-batch", "jax-fused-batch"])
def test_a_streamed_run_killed_inside_an_epoch_resumes_to_the_uninterrupted_map(tmp_path, parquet_folder, impl):
    cfg = RunConfig(
        impl=impl,
        data=DataSpec(path=str(parquet_folder)),
        width=5,
        height=4,
        epochs=3,
        topology="hex",
        scaling="zscore",
        stream=True,
        batch_rows=64,
    )
    whole, _ = _final(Session(cfg, snapshot_interval_s=None))
    _, rec = _final(Session(cfg, snapshot_interval_s=None, checkpoint=_KilledAfter(tmp_path, rows=128)))
    assert rec.status == "failed"
    saved = resume_from(tmp_path, cfg)
    assert saved.iteration == 1 and saved.meta["position"]["row"] == saved.meta["reader"]["row"] == 128
    assert set(saved.arrays) > {"map"}  # the epoch's partial sums
    resumed, rec = _final(Session(cfg, snapshot_interval_s=None, resume=saved))
    assert rec.status == "ok", rec.message
    np.testing.assert_array_equal(resumed, whole)  # bit for bit
    # Its first chunk trained the rest of epoch 1 (rows 128-299): counted, but not timed as a whole epoch.
    first, count, seconds = rec.chunks.arrays()
    assert rec.extra["resumed"]["row"] == 128 and (first[0], count[0], rec.reached) == (1, 1, 3)
    assert rec.mean_s == pytest.approx(seconds[1:].sum() / count[1:].sum())
    assert len(rec.iteration_s) == len(seconds) - 1


class _StopAsked(Checkpoints):
    """Checkpoints that, once armed, have the run asked to stop (as Stop does) when the trainer next looks.

    The session looks once between chunks (after the event that arms it); the trainer then looks at each batch.
    """

    session: Session | None = None
    looks_left = -1

    def due(self) -> bool:
        if self.looks_left == 0 and self.session is not None:
            self.session.cancel()
        self.looks_left -= 1
        return False


def test_a_streamed_run_stopped_inside_an_epoch_saves_there_and_resumes(tmp_path, parquet_folder):
    cfg = RunConfig(
        impl="numpy-batch", data=DataSpec(path=str(parquet_folder)), width=4, height=3, epochs=3, stream=True,
        batch_rows=64,
    )  # fmt: skip
    whole, _ = _final(Session(cfg, snapshot_interval_s=None))
    ck = _StopAsked(tmp_path, every_s=3600)
    session = ck.session = Session(cfg, snapshot_interval_s=None, checkpoint=ck)
    record = None
    for ev in session.run():
        if isinstance(ev, ChunkTimed):
            ck.looks_left = 1  # Stop pressed during epoch 1: it stops at the batch it is on, saved there
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert record.status == "cancelled" and record.iterations_done == 1
    saved = resume_from(tmp_path, cfg)
    assert (saved.iteration, saved.meta["position"]["row"]) == (1, 64)
    # Resumed from the folder, as the app's Resume names it (the session reads and checks what it holds).
    resumed, rec = _final(Session(cfg, snapshot_interval_s=None, resume=str(tmp_path)))
    assert rec.status == "ok", rec.message
    np.testing.assert_array_equal(resumed, whole)


def test_orbax_is_imported_while_the_run_prepares_so_a_stop_writes_its_checkpoint_without_the_imports(tmp_path):
    """In a fresh process: Orbax is not imported by the folder's checks themselves, and is once ready() returns."""
    code = (
        "import sys\n"
        "from som_studio.session.checkpoint import Checkpoints\n"
        "assert 'orbax.checkpoint' not in sys.modules\n"
        f"ck = Checkpoints({str(tmp_path / 'ck')!r})\n"
        "ck.start()\n"
        "ck.ready()\n"
        "assert 'orbax.checkpoint' in sys.modules\n"
        "assert not [t for t in __import__('threading').enumerate() if t.name == 'som-orbax-import']\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_a_resumes_other_data_is_named_by_its_path_not_its_spec():
    # It read '({"path": "pq", "scale": false, "source": "file"} there, {"path": "pq_copy", ...} here)'.
    from som_studio.session.checkpoint import config_differences

    run = RunConfig(impl="numpy-batch", data=DataSpec(path="cells/"), width=5, height=4, epochs=3)
    assert config_differences(run, run.replace(data=DataSpec(path="/scratch/cells/"))) == [
        ("data", "cells/", "/scratch/cells/")
    ]
    random = run.replace(data=DataSpec(samples=500))
    assert config_differences(random, random.replace(data=DataSpec(samples=800))) == [("samples", "500", "800")]
    assert config_differences(run, random)[0] == ("data", "cells/", "random")


def test_a_resumes_other_schedule_names_the_end_that_differs_in_the_flags_words():
    # A changed --sigma-end read '--sigma-start: differs ... ({"end": [0.75, 0.75], "start": [2.5, 2.0]} there, ...)'.
    from som_studio.session.checkpoint import config_differences

    run = RunConfig(impl="numpy-online", width=5, height=4, steps=30, sigma_start=(2.5, 2.0), sigma_end=(0.75, 0.75))
    assert config_differences(run, run.replace(sigma_end=(1.0, 1.0))) == [("sigma_end", "0.75", "1")]
    assert config_differences(run, run.replace(sigma_start=(2.5, 2.5))) == [("sigma_start", "2.5,2", "2.5")]
    assert config_differences(run, run.replace(lr_end=0.05)) == [("lr_end", "0.01", "0.05")]


def test_a_runs_peak_memory_leaves_out_the_checkpoints_imports(tmp_path):
    # Orbax's imports (JAX's among them, for a NumPy run) were counted in the run's peak: 75 MiB where the same
    # run without checkpoints grew 6 MiB, so the app's runs read ten times the command line's. A fresh process:
    # the imports happen in it as in a worker's first run.
    code = textwrap.dedent(
        f"""
        from som_studio.config import DataSpec, RunConfig
        from som_studio.session.checkpoint import Checkpoints
        from som_studio.session.events import Finished
        from som_studio.session.session import Session

        cfg = RunConfig(impl="numpy-batch", width=30, height=20, epochs=3, data=DataSpec(samples=500))
        ck = Checkpoints({str(tmp_path / "ck")!r}, 60, at_end=False)
        for e in Session(cfg, checkpoint=ck, snapshot_interval_s=None).run():
            if isinstance(e, Finished):
                print(e.record.status, e.record.peak_bytes, e.record.phases["checkpoint"])
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    status, peak, waited = out.stdout.split()
    assert status == "ok" and float(waited) > 0  # the imports' wait is the checkpoints' phase
    assert int(peak) < 32 << 20, out.stdout  # a run of this size grows a few MiB
