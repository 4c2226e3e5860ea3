"""Soak the desktop app: one long live run, the app's and the worker's resident memory sampled.

    .venv/bin/python bench/soak.py --minutes 6 --impl jax-jit-online --json soak.json

Starts the real app (``som-studio`` with no command, in a fresh process) on a
virtual display (``xvfb-run``, when no ``DISPLAY`` is set), picks IMPL in the run
panel, measures its speed with a short first run, then starts one run long
enough to last M minutes with the live views on (map, timings, quality) and
stops it at M minutes. Every ~10 s this process reads the resident set of the
app and of its worker process from ``/proc`` (no sampling code runs inside the
measured processes) and writes::

    {"samples": [{"t_s": ..., "app_rss_mb": ..., "worker_rss_mb": ...}, ...]}

with ``t_s`` counted from the start of the long run. Extra keys say what ran
(``impl``, ``minutes``, ``iterations``, ``growth``). ``--iterations N`` runs
exactly N iterations instead (no calibration; stopped at M minutes if still
going): ``bench/long_run.py`` compares 1 and 100 million steps so. ``--tracemalloc`` also has
the app write the Python allocations that grew most between minute 2 and the
end (slower; for finding a leak, not for the figures).

Needs Linux (``/proc``) and, without a display, ``xvfb-run``
(Debian/Ubuntu: ``apt-get install -y xvfb xauth libxcb-icccm4 libxcb-keysyms1``).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_S = 10.0

# Runs inside the app's process: drives the run panel as a user would, reports
# on stdout. The app itself is started through the CLI, exactly as `som-studio`.
APP_SNIPPET = r"""
import gc, json, os, sys, time, tracemalloc
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from som_studio.qt import main_window

IMPL, MINUTES, CALIB = os.environ["SOAK_IMPL"], float(os.environ["SOAK_MINUTES"]), int(os.environ["SOAK_CALIB"])
FIXED = int(os.environ.get("SOAK_ITERATIONS") or 0)
TRACE = os.environ.get("SOAK_TRACEMALLOC")
GRID, SAMPLES = os.environ.get("SOAK_GRID"), int(os.environ.get("SOAK_SAMPLES") or 0)
_show = main_window.MainWindow.showEvent
state = {"phase": "idle"}

def say(**kw):
    print("SOAK " + json.dumps(kw), flush=True)

def configure(win, iterations):
    p = win.panel
    i = p.impl.findData(IMPL)
    if i < 0:
        say(error=f"no implementation named {IMPL!r} in the app")
        QApplication.instance().exit(3)
        return False
    p.impl.setCurrentIndex(i)
    if GRID:
        p.grid.setCurrentText(GRID)
    if SAMPLES:
        p.random_data.setChecked(True)
        p.samples.setValue(SAMPLES)
    p.iterations.setValue(iterations)
    p.simulate.setChecked(False)
    if not p.state.runnable:
        say(error=f"cannot run: {p.state.reason}")
        QApplication.instance().exit(3)
        return False
    return True

def start(win):
    win.resize(1600, 1000)
    ctl = win.controller

    def on_ended(*_):
        if state["phase"] == "calibrate":
            rec = win.runs.records[-1]
            per_it = rec.median_s or 0.0
            if rec.status != "ok" or per_it <= 0:
                say(error=f"calibration run ended {rec.status}: {rec.message or 'no timings'}")
                QApplication.instance().exit(3)
                return
            # 1.25x the time left: the run must outlast the soak; it is stopped at M minutes.
            n = int(MINUTES * 60 / per_it * 1.25)
            begin(max(1, min(n, 100_000_000)), per_it)
        elif state["phase"] == "soak":
            rec = win.runs.records[-1]
            say(phase="ended-early", status=rec.status, message=rec.message)
            finish()

    def begin(n, per_it):
        if not configure(win, n):
            return
        state["phase"] = "soak"
        if TRACE:
            gc.collect()
            tracemalloc.start(12)
        win.start_run()
        say(phase="soak", iterations=n, per_iteration_s=per_it, worker_pid=ctl.process.pid)
        QTimer.singleShot(int(120_000 if MINUTES > 2.5 else MINUTES * 30_000), snap_early)
        QTimer.singleShot(int(MINUTES * 60_000), finish)

    def snap_early():
        if TRACE:
            gc.collect()
            state["snap"] = tracemalloc.take_snapshot()

    def finish():
        if state["phase"] == "done":
            return
        was = state["phase"]
        state["phase"] = "done"
        if TRACE and "snap" in state:
            gc.collect()
            top = tracemalloc.take_snapshot().compare_to(state["snap"], "traceback")[:15]
            say(tracemalloc=[{"kb": s.size_diff / 1024, "count": s.count_diff,
                              "where": [str(f) for f in s.traceback.format()[-6:]]} for s in top])
        if was == "soak" and ctl.busy:
            ctl.stop()
        say(phase="done")
        QTimer.singleShot(2000, win.close)

    ctl.run_ended.connect(on_ended)
    if not configure(win, 1):
        return
    if FIXED:  # a run of a given length, no calibration: stopped at M minutes if still going
        begin(FIXED, None)
        return
    n = CALIB if win.panel.selected_impl().kind == "online" else max(2, CALIB // 10_000)
    configure(win, n)
    state["phase"] = "calibrate"
    win.start_run()
    say(phase="calibrate", iterations=n, app_pid=os.getpid())

def showEvent(self, event):
    _show(self, event)
    if state["phase"] == "idle":
        state["phase"] = "starting"
        QTimer.singleShot(500, lambda: start(self))

main_window.MainWindow.showEvent = showEvent
from som_studio.cli import main
sys.exit(main(sys.argv[1:]))
"""


def rss_mb(pid: int) -> float | None:
    """Resident set size of ``pid`` in MB (10^6 bytes), or ``None`` when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) * 1024 / 1e6, 2)
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def growth(samples: list[dict], key: str, t0: float, t1: float) -> float | None:
    """Relative growth of ``key`` from the sample nearest ``t0`` seconds to the last one at or before ``t1``."""
    pts = [s for s in samples if s.get(key) is not None]
    before = [s for s in pts if s["t_s"] <= t1 + SAMPLE_S / 2]
    if not before:
        return None
    start = min(before, key=lambda s: abs(s["t_s"] - t0))
    end = before[-1]
    if end["t_s"] <= start["t_s"]:
        return None
    return end[key] / start[key] - 1.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, required=True, help="how long the live run lasts")
    ap.add_argument("--impl", required=True, help="implementation to run, e.g. jax-jit-online")
    ap.add_argument("--json", required=True, metavar="FILE", help="where the samples go")
    ap.add_argument("--grid", help="map size WxH (default: the app's)")
    ap.add_argument("--samples", type=int, help="random data of this many samples (default: the app's data)")
    ap.add_argument("--calibrate", type=int, default=20_000, help="steps of the speed-measuring first run")
    ap.add_argument(
        "--iterations", type=int, help="run exactly this many iterations (no calibration run), stopped at M minutes"
    )
    ap.add_argument("--tracemalloc", action="store_true", help="report the app's Python allocations that grew")
    args = ap.parse_args()
    if args.minutes <= 0:
        ap.error("--minutes must be more than 0")
    if not Path("/proc/self/status").exists():
        ap.error("needs Linux: resident memory is read from /proc")

    if not os.environ.get("DISPLAY") and not os.environ.get("SOAK_UNDER_XVFB"):
        xvfb = shutil.which("xvfb-run")
        if not xvfb:
            ap.error(
                "no DISPLAY and no xvfb-run: install it (apt-get install -y xvfb xauth libxcb-icccm4 "
                "libxcb-keysyms1) or run under a display"
            )
        cmd = [xvfb, "-a", "-s", "-screen 0 1600x1000x24", sys.executable, *sys.argv]
        return subprocess.call(cmd, env={**os.environ, "SOAK_UNDER_XVFB": "1"})

    workdir = Path(tempfile.mkdtemp(prefix="som-soak-"))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "QT_QPA_PLATFORM": "xcb",
        # The user's settings and kept runs stay out of it.
        "XDG_CONFIG_HOME": str(workdir / "config"),
        "XDG_DATA_HOME": str(workdir / "data"),
        "XDG_CACHE_HOME": str(workdir / "cache"),
        "SOAK_IMPL": args.impl,
        "SOAK_MINUTES": str(args.minutes),
        "SOAK_CALIB": str(args.calibrate),
        "SOAK_GRID": args.grid or "",
        "SOAK_SAMPLES": str(args.samples or ""),
        "SOAK_ITERATIONS": str(args.iterations or ""),
    }
    if args.tracemalloc:
        env["SOAK_TRACEMALLOC"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-c", APP_SNIPPET], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True, bufsize=1
    )
    lines: queue.Queue[str] = queue.Queue()
    # A thread reads the app's output: sampling must not wait on it.
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    out: dict = {"impl": args.impl, "minutes": args.minutes, "samples": []}
    worker_pid: int | None = None
    t0: float | None = None
    next_sample = 0.0
    deadline = time.monotonic() + args.minutes * 60 + 600  # compile, calibration and a slow exit
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            while not lines.empty():
                line = lines.get().rstrip("\n")
                if not line.startswith("SOAK "):
                    continue
                msg = json.loads(line[5:])
                print(f"soak: {msg}" if "tracemalloc" not in msg else "soak: tracemalloc report received", flush=True)
                if "error" in msg:
                    out["error"] = msg["error"]
                if msg.get("phase") == "soak":
                    worker_pid, t0 = msg["worker_pid"], time.monotonic()
                    out["iterations"] = msg["iterations"]
                    out["per_iteration_s"] = msg["per_iteration_s"]
                if "tracemalloc" in msg:
                    out["tracemalloc"] = msg["tracemalloc"]
                if msg.get("phase") in ("done", "ended-early"):
                    t0 = None if msg.get("phase") == "done" else t0
                    if msg.get("phase") == "ended-early":
                        out["ended_early"] = msg
            now = time.monotonic()
            if t0 is not None and now >= t0 + next_sample:
                s = {"t_s": round(now - t0, 2), "app_rss_mb": rss_mb(proc.pid), "worker_rss_mb": rss_mb(worker_pid)}  # type: ignore[arg-type]
                out["samples"].append(s)
                print(
                    f"soak: t={s['t_s']:7.1f} s  app {s['app_rss_mb']} MB  worker {s['worker_rss_mb']} MB",
                    flush=True,
                )
                next_sample += SAMPLE_S
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
    minutes = args.minutes
    out["growth"] = {
        key: {
            "from_2_min": growth(out["samples"], key, 120.0, minutes * 60) if minutes > 2 else None,
            "whole": growth(out["samples"], key, 0.0, minutes * 60),
        }
        for key in ("app_rss_mb", "worker_rss_mb")
    }
    Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    for key, g in out["growth"].items():
        bits = [f"{k.replace('_', ' ')} {v * 100:+.2f} %" for k, v in g.items() if v is not None]
        print(f"{key}: {', '.join(bits) or 'not enough samples'}")
    print(f"wrote {args.json} ({len(out['samples'])} samples)")
    return 0 if out["samples"] and "error" not in out else 1


if __name__ == "__main__":
    sys.exit(main())
