"""The app's threads give way to its workers: lowered where the app calls :func:`give_way`, workers not.

Each test runs in a fresh interpreter: lowering a thread's priority cannot be undone without privileges, and
this process's later tests start processes of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from som_studio.worker import priority

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's"),
    pytest.mark.skipif(os.getpriority(os.PRIO_PROCESS, 0) > 19 - priority.GIVE_WAY_NICE, reason="no room below"),
]


def run_script(tmp_path: Path, body: str) -> dict:
    # A file, not ``-c``: a spawned child imports its parent's main module to find its target.
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(body))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_lowered_threads_and_unlowered_processes(tmp_path):
    got = run_script(
        tmp_path,
        """
        import json, multiprocessing, os, threading
        from som_studio.worker import priority

        def nice():
            return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

        def report(conn):
            conn.send(os.getpriority(os.PRIO_PROCESS, 0))

        def child(started):
            ctx = multiprocessing.get_context("spawn")
            r, w = ctx.Pipe(duplex=False)
            p = ctx.Process(target=report, args=(w,))
            started(p)
            value = r.recv()
            p.join()
            return value

        if __name__ == "__main__":
            before = nice()
            first, again = priority.give_way(), priority.give_way()
            seen = []
            t = threading.Thread(target=lambda: seen.append(nice()))
            t.start(); t.join()
            out = dict(
                before=before, first=first, again=again, after=nice(), thread=seen[0],
                unlowered=child(lambda p: priority.unlowered(p.start)), direct=child(lambda p: p.start()),
            )
            print(json.dumps(out))
        """,
    )
    lowered = got["before"] + priority.GIVE_WAY_NICE
    assert got["first"] is True and got["again"] is False  # once: a second call would lower it again
    assert got["after"] == lowered and got["thread"] == lowered  # a thread started later inherits it
    # A process started here would inherit it too; started through unlowered, it trains at the app's priority.
    assert got["direct"] == lowered
    assert got["unlowered"] == got["before"]


def test_app_workers_train_at_the_apps_priority(tmp_path):
    got = run_script(
        tmp_path,
        """
        import json, os, threading
        from som_studio.worker import priority

        if __name__ == "__main__":
            before = os.getpriority(os.PRIO_PROCESS, 0)
            priority.give_way()
            from PySide6.QtCore import QEventLoop, QTimer
            from PySide6.QtWidgets import QApplication
            from som_studio.config import DataSpec, RunConfig
            from som_studio.qt.controller import RunController

            app = QApplication([])
            c = RunController()
            loop = QEventLoop()
            c.run_ended.connect(loop.quit)
            QTimer.singleShot(60_000, loop.quit)  # a guard against a hang, not a timing
            c.start(RunConfig(impl="numpy-online", width=6, height=4, data=DataSpec(samples=30), steps=5_000_000))
            worker = os.getpriority(os.PRIO_PROCESS, c.process.pid)
            c.stop()
            loop.exec()
            gui = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
            print(json.dumps(dict(before=before, gui=gui, worker=worker, ended=not c.busy)))
        """,
    )
    assert got["ended"]
    assert got["gui"] == got["before"] + priority.GIVE_WAY_NICE
    assert got["worker"] == got["before"]
