"""Runs across processes: two processes on 127.0.0.1 train the map one process trains.

Each test starts its processes in their own session, bounds them in time and
kills whatever is left, so no test can hang or leak a process.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from som_studio import cli

WORKER = Path(__file__).with_name("dist_worker.py")
LIMIT_S = 120
# Each test starts two JAX processes that must meet within their init timeout: one such pair at a
# time on a 2-core machine, so their start-up does not also compete with the next test's pair.
pytestmark = pytest.mark.xdist_group("process-pairs")


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(
    args: list[str], launcher: list[str] = (), extra_env: dict[str, str] | None = None, **kw
) -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(extra_env or {}))
    # The test process's 8 devices are not the children's; its other flags are.
    env["XLA_FLAGS"] = " ".join(f for f in env.get("XLA_FLAGS", "").split() if "device_count" not in f)
    env.pop("JAX_PLATFORMS", None)
    return subprocess.Popen(
        [*launcher, sys.executable, *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
        **kw,
    )


def _finish(procs: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    """Wait for every process (bounded); kill all of them, whatever happens."""
    deadline = time.monotonic() + LIMIT_S
    try:
        out = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            out.append((p.returncode, stdout, stderr))
        return out
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def _stream_folder(folder: Path) -> Path:
    """Three Parquet files of 40-row groups, 5 % of the values missing, a label column: 13 groups over 500
    rows, so process 0's share (6 groups) is shorter than process 1's (7) and ends a batch sooner."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(11)
    x = rng.random((500, 3)) * [1.0, 3.0, 0.5]
    x[rng.random(x.shape) < 0.05] = np.nan
    x[np.isnan(x).all(axis=1), 0] = 0.5  # every row knows a feature
    kinds = np.where(x[:, 1] > 1.5, "high", "low")
    folder.mkdir()
    for i, (a, b) in enumerate([(0, 160), (160, 360), (360, 500)]):
        table = pa.table({"a": x[a:b, 0], "kind": kinds[a:b], "b": x[a:b, 1], "c": x[a:b, 2]})
        pq.write_table(table, folder / f"part{i}.parquet", row_group_size=40)
    return folder


def test_two_processes_train_the_maps_of_one(tmp_path):
    """2 processes x 2 CPU devices against one process over 4 devices (this one), in one launch: the in-memory
    runs (layouts 2x2 and 4x1, the same map to 1e-12), then the streamed runs, each process reading its half
    of the row groups against one process reading them all: the same map (float32 rounding), hits, QE and
    TE; ``by_process`` the halves."""
    from tests.session.dist_worker import IMPLS, STREAM_IMPLS, main

    folder = str(_stream_folder(tmp_path / "data"))
    coord = f"127.0.0.1:{_port()}"
    procs = [_start([str(WORKER), folder, str(tmp_path / "two"), "2", coord, "2", str(i)]) for i in range(2)]
    for rc, _, err in _finish(procs):
        assert rc == 0, err[-3000:]
    assert main([folder, str(tmp_path / "one"), "8"]) == 0  # this process: 8 devices, the layouts use 4
    for impl, _ in IMPLS:
        two = np.load(tmp_path / f"two-{impl}.npy")
        one = np.load(tmp_path / f"one-{impl}.npy")
        assert two.shape == (9, 7, 3)
        np.testing.assert_allclose(two, one, rtol=0, atol=1e-12)
    for impl, _layout, _lattice in STREAM_IMPLS:
        two = np.load(tmp_path / f"two-{impl}.npz")
        one = np.load(tmp_path / f"one-{impl}.npz")
        assert two["map"].shape == (6, 5, 3)
        np.testing.assert_allclose(two["map"], one["map"], rtol=0, atol=2e-6)
        np.testing.assert_array_equal(two["hits"], one["hits"])
        np.testing.assert_allclose(two["quality"], one["quality"], rtol=1e-6)
        assert list(one["by_process"]) == [500] and list(two["by_process"]) == [240, 260]


def test_a_file_one_process_does_not_see_stops_every_process_naming_it(tmp_path):
    """The same relative --data on two 'machines' (working folders), one of which lacks a file."""
    homes = [tmp_path / "host0", tmp_path / "host1"]
    for home in homes:
        home.mkdir()
        _stream_folder(home / "data")
    (homes[1] / "data" / "part2.parquet").unlink()
    coord = f"127.0.0.1:{_port()}"
    args = ["-m", "som_studio", "--cpu-devices", "1", "bench", "--impl", "jax-shardmap-batch", "--layout", "2x1"]
    args += ["--data", "data", "--labels", "kind", "--stream", "--grid", "5x4", "--epochs", "2", "--coordinator", coord]
    args += ["--num-processes", "2", "--init-timeout", "30", "-q"]
    procs = [_start([*args, "--process-id", str(i)], cwd=homes[i]) for i in range(2)]
    results = _finish(procs)
    for rc, out, err in results:
        assert rc == 1, err[-3000:]
        assert "data/part2.parquet: process 1 of 2 does not see this file, which process 0 of 2 reads" in out + err


def test_bench_across_two_processes_only_process_0_writes(tmp_path):
    coord = f"127.0.0.1:{_port()}"
    common = [
        "--cpu-devices",
        "1",
        "bench",
        "--impl",
        "jax-shardmap-batch",
        "--layout",
        "2x1",
        "--grid",
        "6x5",
        "--samples",
        "12",
        "--epochs",
        "3",
        "--coordinator",
        coord,
        "--num-processes",
        "2",
        "--init-timeout",
        "30",
    ]
    procs = [
        _start(["-m", "som_studio", *common, "--process-id", str(i), "--json", str(tmp_path / f"p{i}.json")])
        for i in range(2)
    ]
    (rc0, out0, err0), (rc1, out1, err1) = _finish(procs)
    assert rc0 == 0, err0[-3000:]
    assert rc1 == 0, err1[-3000:]
    assert "jax-shardmap-batch on 2x1: sends" in out0 and out1 == "" and err1 == ""
    assert "[Gloo]" not in err0
    assert not (tmp_path / "p1.json").exists()
    run = json.loads((tmp_path / "p0.json").read_text())["runs"][0]
    assert run["status"] == "ok" and run["layout"] == "2x1"
    assert [c["group"] for c in run["extra"]["collectives"] if c["per_epoch"] and c["sent_bytes"]] == [2]


@pytest.mark.skipif(
    shutil.which("mpirun") is None, reason="mpirun is not installed (Open MPI: apt-get install openmpi-bin)"
)
def test_mpirun_with_coordinator_auto_streams_each_process_its_share(tmp_path):
    """Open MPI starts two processes of one device each; they find each other with --coordinator auto and
    each streams its share of a folder: the map of one process over two devices."""
    from som_studio import load_run
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.distributed import LOCKSTEP_SESSION
    from som_studio.session.events import Snapshot
    from som_studio.session.session import Session

    folder = _stream_folder(tmp_path / "data")
    run = ["--data", str(folder), "--labels", "kind", "--stream", "--batch-rows", "64", "--grid", "5x6"]
    run += ["--epochs", "3", "--impl", "jax-jit-sharded-batch", "--layout", "2x1"]
    # A root shell (a container's) must allow mpirun to start processes as root.
    allow = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    out = tmp_path / "runs.json"
    proc = _start(
        ["-m", "som_studio", "--cpu-devices", "1", "bench", *run, "--coordinator", "auto", "--init-timeout", "30"]
        + ["--save-runs", str(tmp_path), "--json", str(out), "-q"],
        launcher=["mpirun", "-np", "2", "--oversubscribe"],
        extra_env=allow,
    )
    ((rc, _out, err),) = _finish([proc])
    assert rc == 0, err[-3000:]
    assert json.loads(out.read_text())["runs"][0]["extra"]["stream"]["by_process"] == [240, 260]
    two = load_run(tmp_path / "jax-jit-sharded-batch.somrun").codebook
    cfg = RunConfig(impl="jax-jit-sharded-batch", width=5, height=6, data=DataSpec(path=str(folder)), epochs=3)
    cfg = cfg.replace(labels="kind", stream=True, batch_rows=64, layout="2x1")
    one = None
    for ev in Session(cfg, snapshot_interval_s=None, **LOCKSTEP_SESSION).run():  # this process, two devices
        if isinstance(ev, Snapshot):
            one = ev.map
    np.testing.assert_allclose(two, one, rtol=0, atol=2e-6)


def test_coordinator_auto_outside_a_cluster_is_refused(capsys, monkeypatch):
    for name in [n for n in os.environ if n.startswith(("OMPI_", "SLURM_", "PMI_", "PMIX_"))]:
        monkeypatch.delenv(name)
    assert cli.main(["bench", "--impl", "jax-shardmap-batch", "--epochs", "1", "--coordinator", "auto"]) == 2
    assert "--coordinator auto: no cluster found" in capsys.readouterr().err
    assert cli.main(["bench", "--coordinator", "auto", "--num-processes", "2"]) == 2
    assert "come from the cluster with --coordinator auto" in capsys.readouterr().err


def test_a_peer_that_never_arrives_is_a_clear_error(tmp_path):
    coord = f"127.0.0.1:{_port()}"
    t0 = time.monotonic()
    ((rc, out, err),) = _finish(
        [
            _start(
                [
                    "-m",
                    "som_studio",
                    "--cpu-devices",
                    "1",
                    "bench",
                    "--impl",
                    "jax-shardmap-batch",
                    "--layout",
                    "2x1",
                    "--grid",
                    "6x5",
                    "--epochs",
                    "2",
                    "--coordinator",
                    coord,
                    "--num-processes",
                    "2",
                    "--process-id",
                    "0",
                    "--init-timeout",
                    "2",
                ]
            )
        ]
    )
    assert rc == 2 and out == ""
    assert (
        f"som-studio bench: error: process 0 of 2: gave up waiting for the other processes at {coord} after 2 s" in err
    )
    assert time.monotonic() - t0 < LIMIT_S


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--coordinator", "127.0.0.1:1"], "--coordinator needs --num-processes P and --process-id I"),
        (["--num-processes", "2"], "--num-processes and --process-id need --coordinator"),
        (["--coordinator", "nohost", "--num-processes", "2", "--process-id", "0"], "expected HOST:PORT"),
        (["--coordinator", "h:5", "--num-processes", "2", "--process-id", "2"], "--process-id: must be in 0..1"),
        (
            ["--coordinator", "h:5", "--num-processes", "2", "--process-id", "0", "--impl", "numpy-batch"],
            "numpy-batch runs on one device; only sharded implementations span processes",
        ),
        # At once, not after waiting for the other processes.
        (
            ["--coordinator", "h:5", "--num-processes", "2", "--process-id", "0", "--checkpoint", "ck"],
            "--checkpoint: saves runs in one process; it cannot go with --coordinator yet",
        ),
    ],
)
def test_bad_distributed_options_are_refused(args, words, capsys):
    base = ["bench", "--impl", "jax-shardmap-batch", "--epochs", "1", "--grid", "4x4"]
    if "--impl" in args:
        base = base[:1] + base[3:]
    assert cli.main([*base, *args]) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize(
    ("devices", "layout", "epochs", "words"),
    [
        (("1", "1"), "2x1", ("3", "4"), "process 1 was given different run options from process 0 (epochs)"),
        # Gathering the runs' digests failed on it with a traceback ("cannot reshape array of size 3").
        (("2", "1"), "3x1", ("3", "3"), "the processes see different numbers of devices (0: 2, 1: 1)"),
    ],
)
def test_processes_given_different_runs_are_refused(devices, layout, epochs, words):
    coord = f"127.0.0.1:{_port()}"
    procs = [
        _start(
            [
                "-m",
                "som_studio",
                "--cpu-devices",
                devices[i],
                "bench",
                "--impl",
                "jax-shardmap-batch",
                "--layout",
                layout,
                "--grid",
                "6x5",
                "--epochs",
                epochs[i],
                "--coordinator",
                coord,
                "--num-processes",
                "2",
                "--process-id",
                str(i),
                "--init-timeout",
                "30",
            ]
        )
        for i in range(2)
    ]
    for rc, out, err in _finish(procs):
        assert rc == 2 and out == "" and "Traceback" not in err
        assert words in err


def _processes_with(text: str) -> list[int]:
    """Pids whose command line contains ``text`` (Linux /proc)."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if text in (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                    pids.append(int(d.name))
            except OSError:
                pass
    return pids


def test_a_peer_that_dies_is_a_clear_error_and_nothing_is_left(tmp_path):
    coord = f"127.0.0.1:{_port()}"
    # Two runs: process 0 reports the first one's end on stderr; process 1 dies during the second.
    common = [
        "-m",
        "som_studio",
        "--cpu-devices",
        "1",
        "bench",
        "--impl",
        "jax-shardmap-batch,jax-jit-sharded-batch",
        "--layout",
        "2x1",
        "--grid",
        "6x5",
        "--samples",
        "12",
        "--epochs",
        "1500",
        "--coordinator",
        coord,
        "--num-processes",
        "2",
        "--init-timeout",
        "5",
        "-q",
    ]
    p0 = _start([*common, "--process-id", "0"])
    p1 = _start([*common, "--process-id", "1"])
    try:
        deadline = time.monotonic() + LIMIT_S
        line = ""
        while "jax-shardmap-batch: ok" not in line and time.monotonic() < deadline:
            line = p0.stderr.readline()
            assert line or p0.poll() is None, "process 0 ended before its first run did"
        os.killpg(p1.pid, signal.SIGKILL)  # the supervisor; its child must follow it
        ((rc, _, err),) = _finish([p0])
        assert rc == 2
        assert "process 0 of 2: the distributed run was lost" in err
        # Without JAX's runtime log before it (some forty C++ lines and a stack trace).
        assert "Check failure stack trace" not in err and "coordination_service" not in err, err
    finally:
        _finish([p0, p1])
    for _ in range(20):  # the orphaned child notices its supervisor is gone within ~0.5 s
        if not _processes_with(coord):
            break
        time.sleep(0.25)
    assert _processes_with(coord) == []


def test_a_coordinator_host_that_does_not_exist_is_refused_at_once(capsys, monkeypatch):
    # JAX's runtime waited out --init-timeout for it, printed a C++ lookup error, then aborted.
    import socket

    def lookup(host, *args, **kw):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    argv = ["bench", "--impl", "jax-shardmap-batch", "--epochs", "1", "--grid", "4x4"]
    argv += ["--coordinator", "nosuchhost.invalid:5566", "--num-processes", "2", "--process-id", "0"]
    assert cli.main(argv) == 2
    assert "--coordinator: cannot find host 'nosuchhost.invalid' (Name or service not known)" in capsys.readouterr().err
