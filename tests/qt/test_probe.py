"""The device probe's teardown: never a running reader thread deleted (a fatal error in Qt)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A probe shut down while its reader thread still has work after the process ended (a loaded
# machine: the reader's last join and signal are late). Run in its own process: had the probe
# deleted the running thread, Qt would abort that process, not the test run.
SCRIPT = r"""
import time
from PySide6.QtCore import QCoreApplication, QTimer
from som_studio.qt import pipe_reader, probe

run = pipe_reader.PipeReader.run
def late(self):
    run(self)
    time.sleep(3)  # past any bounded wait for the thread
pipe_reader.PipeReader.run = late

app = QCoreApplication([])
p = probe.DeviceProbe()
p.start(None)
time.sleep(0.3)
p.shutdown()
assert not p.running
QTimer.singleShot(500, app.quit)  # deferred deletions happen here
app.exec()
print("clean exit")
"""


def test_shutting_a_probe_down_waits_for_its_reader_thread():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env["QT_QPA_PLATFORM"] = "offscreen"
    out = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "clean exit" in out.stdout
    assert "Destroyed while thread is still running" not in out.stderr
