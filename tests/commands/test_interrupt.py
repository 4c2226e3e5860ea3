"""Ctrl-C during ``bench`` and ``compare``: a real SIGINT in each phase of a run.

Exit status 130, and the table, ``--json`` and the report still written with the
finished runs and the interrupted run as ``"status": "cancelled"``. The phase is
reached for sure, not guessed by sleeping: the data is a named pipe the command
blocks on, and the progress bar (on a pseudo-terminal) says when a run started
and when it trained.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import needs_qt


class Command:
    """``som-studio ARGS`` in a child process whose stderr is a terminal (so the progress bar shows)."""

    def __init__(self, *argv: str) -> None:
        self._master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "som_studio", *argv],
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
        )
        os.close(slave)
        self.err = ""

    def wait_for(self, pattern: str, timeout: float = 120) -> None:
        """Read stderr until ``pattern`` (a regex) shows."""
        end = time.monotonic() + timeout
        while not re.search(pattern, self.err):
            assert self.proc.poll() is None, f"ended before {pattern!r}: {self.err}"
            assert time.monotonic() < end, f"no {pattern!r} in {self.err!r}"
            self._read(0.1)

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], wait)
        if not ready:
            return True
        try:
            chunk = os.read(self._master, 4096)
        except OSError:  # the child closed its side
            return False
        self.err += chunk.decode(errors="replace")
        return bool(chunk)

    def interrupt(self) -> tuple[int, str, str]:
        self.proc.send_signal(signal.SIGINT)
        # stdout read on a thread while the terminal is drained here: a child whose progress bar filled the
        # terminal's small buffer blocked writing it, before it could see the signal, while this read waited
        # for its stdout to end (a hang).
        got: list[str] = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.read() if self.proc.stdout else ""))
        reader.start()
        end = time.monotonic() + 120
        while self.proc.poll() is None:
            assert time.monotonic() < end, f"still running 120 s after Ctrl-C: {self.err[-2000:]!r}"
            self._read(0.05)
        reader.join(timeout=60)
        while self._read(0):
            pass
        os.close(self._master)
        return self.proc.returncode, got[0] if got else "", self.err


def _run(json_doc: Path) -> list[dict]:
    return json.loads(json_doc.read_text())["runs"]


def test_ctrl_c_while_training_keeps_the_finished_run_and_cancels_the_current(tmp_path) -> None:
    out = tmp_path / "runs.json"
    cmd = Command(
        "bench", "--impl", "numpy-batch,numpy-online", "--grid", "8x6", "--samples", "50",
        "--epochs", "3", "--steps", "5000000", "--json", str(out),
    )  # fmt: skip
    cmd.wait_for(r"numpy-online .*\] [1-9]\d*/5000000")  # the online run is training
    status, table, err = cmd.interrupt()
    assert status == 130
    assert "som-studio bench: interrupted" in err and "Traceback" not in err
    # Said at once: a chunk may be long (your own class's run()), and the first Ctrl-C seemed ignored.
    assert "stopping when the chunk under way ends; Ctrl-C again stops at once" in err
    runs = _run(out)
    assert [(r["impl"], r["status"]) for r in runs] == [("numpy-batch", "ok"), ("numpy-online", "cancelled")]
    assert runs[1]["timings"]["chunks"]  # what it trained is kept
    assert re.search(r"numpy-online\s+online\s+cancelled", table)


def test_ctrl_c_while_compiling_cancels_the_run(tmp_path) -> None:
    out = tmp_path / "runs.json"
    # A big map: the initial quality pass and the compile take a good second after the bar shows 0.
    cmd = Command("bench", "--impl", "jax-fused-batch,numpy-batch", "--epochs", "1000", "--json", str(out))
    cmd.wait_for(r"jax-fused-batch .*\] 0/1000")
    status, table, err = cmd.interrupt()
    assert status == 130 and "Traceback" not in err
    (run,) = _run(out)  # numpy-batch, after it, never started
    assert (run["impl"], run["status"]) == ("jax-fused-batch", "cancelled")
    # Reached while compiling, unless the signal came late enough to land in the chunk loop.
    assert re.search(r"interrupted \(Ctrl-C\) while compiling|cancelled after", run["message"])
    assert "jax-fused-batch" in table and "numpy-batch" not in table


def test_ctrl_c_while_loading_the_data_writes_the_cancelled_run(tmp_path) -> None:
    data = tmp_path / "rows.csv"
    rows = np.random.default_rng(0).random((10_000, 3))
    block = "".join(f"{x:.6f},{y:.6f},{z:.6f}\n" for x, y, z in rows)
    data.write_text("a,b,c\n" + block * 150)  # 1,500,000 rows, written in a tenth of the time
    out = tmp_path / "runs.json"
    cmd = Command("bench", "--impl", "numpy-batch", "--grid", "4x3", "--data", str(data), "--json", str(out))
    # The command is loading the data while it holds the file open (its 40 MB take it a second or more).
    end = time.monotonic() + 60
    while not any(os.path.realpath(fd.path) == str(data) for fd in os.scandir(f"/proc/{cmd.proc.pid}/fd")):
        assert time.monotonic() < end and cmd.proc.poll() is None, cmd.err
        time.sleep(0.005)
    status, table, err = cmd.interrupt()
    assert status == 130 and "Traceback" not in err
    # nothing compiled, nothing timed: the table has no column of figures for it
    assert re.search(r"^numpy-batch\s+batch\s+cancelled\s+1x1$", table, re.M) and "compile" not in table
    (run,) = _run(out)
    assert run["status"] == "cancelled" and run["kind"] == "batch"
    assert run["message"] == "interrupted (Ctrl-C) while loading the data"


@needs_qt
@pytest.mark.filterwarnings("ignore")
def test_ctrl_c_during_compare_writes_the_report_with_the_cancelled_run(tmp_path) -> None:
    report, doc = tmp_path / "r.html", tmp_path / "r.json"
    cmd = Command(
        "compare", "--impl", "numpy-batch,numpy-online", "--grid", "8x6", "--samples", "50",
        "--epochs", "3", "--steps", "5000000", "--json", str(doc), "--report", str(report),
    )  # fmt: skip
    cmd.wait_for(r"numpy-online .*\] [1-9]\d*/5000000")
    status, _table, err = cmd.interrupt()
    assert status == 130, err
    assert "som-studio compare: interrupted" in err and "Traceback" not in err
    assert [(r["impl"], r["status"]) for r in _run(doc)] == [("numpy-batch", "ok"), ("numpy-online", "cancelled")]
    html = report.read_text()
    assert "numpy-online" in html and "cancelled" in html


@pytest.mark.parametrize(("where", "phase"), [("_load", "loading the data"), ("Session", "preparing the run")])
def test_a_ctrl_c_swallowed_while_the_data_loads_or_the_run_prepares_stops_there(
    tmp_path, capsys, monkeypatch, where, phase
) -> None:
    # pyarrow's lazy `import pandas` catches the KeyboardInterrupt the handler raises in it: only the
    # handler's flag is left, and the command stops on it before training.
    import som_studio.session.session as session_module
    from som_studio import cli
    from som_studio.commands import bench

    target = bench if where == "_load" else session_module
    real = getattr(target, where)

    def swallowed(*args, **kw):
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass
        return real(*args, **kw)

    monkeypatch.setattr(target, where, swallowed)
    doc, runs = tmp_path / "runs.json", tmp_path / "runs"
    argv = ["bench", "--impl", "numpy-batch,numpy-online", "--grid", "4x3", "--samples", "20", "--epochs", "2"]
    code = cli.main([*argv, "--steps", "20", "-q", "--json", str(doc), "--save-runs", str(runs)])
    err = capsys.readouterr().err
    assert code == 130, err
    assert "ok in" not in err and "som-studio bench: interrupted" in err
    (record,) = _run(doc)  # the later run never started
    assert record["status"] == "cancelled" and record["message"] == f"interrupted (Ctrl-C) while {phase}"
    assert not runs.exists()  # nothing saved
