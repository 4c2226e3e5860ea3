"""Benchmark the desktop app: cost of live views, event-loop lateness, Stop latency, launch time.

Measures, side by side in one run, on the playbook workload by default
(240x135 map, 1000 random colours):

(a) the slowdown of a run watched live in the app against the same run headless
    (``som-studio bench`` in a fresh process), alternating headless and app runs;
(b) the GUI event loop's lateness during training (a 10 ms timer; lateness is
    how much later than due each tick fires), p50/p99/max;
(c) Stop latency: from pressing Stop to the worker process gone, during
    compilation and during training, p50/p99/max;
(d) time from launching ``som-studio`` to its window shown (a fresh process
    each time, interpreter start included).

Targets (from the issue): (a) < 5 %, (b) p99 < 30 ms, (c) p99 < 200 ms, (d) < 1.5 s.
These are measurements, printed; nothing here asserts.

Run under a real or virtual display for honest paint costs::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/gui.py
    .venv/bin/python bench/gui.py --screenshot resources/screenshot.png   # also saves a mid-training shot
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LAUNCH_SNIPPET = r"""
import sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from som_studio.qt import main_window

_show = main_window.MainWindow.showEvent

def showEvent(self, event):
    _show(self, event)
    def shown():
        print("shown", flush=True)
        self.close()
        QApplication.instance().quit()
    QTimer.singleShot(0, shown)  # after the first expose and paint have been processed

main_window.MainWindow.showEvent = showEvent
from som_studio.cli import main
sys.exit(main([]))
"""


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def measure_launch(n: int, env: dict[str, str]) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        p = subprocess.Popen(
            [sys.executable, "-c", LAUNCH_SNIPPET],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=env,
        )
        assert p.stdout is not None
        line = p.stdout.readline()
        t = time.perf_counter() - t0
        p.wait(30)
        if line.strip() == "shown":
            times.append(t)
    return times


def headless_run(args: argparse.Namespace, workdir: Path, k: int) -> dict:
    out = workdir / f"headless{k}.json"
    cmd = [
        sys.executable,
        "-m",
        "som_studio",
        "bench",
        "--impl",
        args.impl,
        "--grid",
        args.grid,
        "--samples",
        str(args.samples),
        "--epochs",
        str(args.epochs),
        "--steps",
        str(args.steps),
        "--json",
        str(out),
        "--quiet",
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())["runs"][0]


class Lateness:
    """A 10 ms timer in the GUI thread; records how late each tick fires."""

    def __init__(self, interval_ms: int = 10) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.interval = interval_ms / 1000
        self.samples: list[float] = []
        self._last: float | None = None
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            self.samples.append(max(0.0, now - self._last - self.interval))
        self._last = now

    def start(self) -> None:
        self._last = None
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", default="numpy-batch", help="implementation for (a) and (b); default %(default)s")
    ap.add_argument("--grid", default="240x135")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=10, help="for batch implementations (default %(default)s)")
    ap.add_argument("--steps", type=int, default=50_000, help="for online implementations (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=2, help="headless and app runs each, alternating")
    ap.add_argument(
        "--stop-impls", default="numpy-batch,jax-jit-online", help="implementations whose Stop latency is measured"
    )
    ap.add_argument("--stops", type=int, default=6, help="stops per implementation and phase")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--screenshot", metavar="PNG", help="save the window mid-training here")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: a,b,c,d")
    args = ap.parse_args()
    skip = set(args.skip.split(","))

    os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
    workdir = Path(tempfile.mkdtemp(prefix="som-gui-bench-"))
    # Keep the user's settings out of it: a private config home for every app started here.
    env = dict(os.environ, XDG_CONFIG_HOME=str(workdir / "config"))
    os.environ["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]
    print(
        f"platform: {os.environ['QT_QPA_PLATFORM']}   cores: {os.cpu_count()}   workload: {args.impl} "
        f"{args.grid}, {args.samples} samples, {args.epochs} epochs / {args.steps} steps"
    )

    if "d" not in skip:
        launch = measure_launch(args.launches, env)
        print(
            f"(d) launch to visible window: median {pct(launch, 50):.2f} s, max {max(launch):.2f} s "
            f"over {len(launch)} launches (target < 1.5 s)"
        )

    from PySide6.QtCore import QEventLoop, QTimer
    from PySide6.QtWidgets import QApplication

    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    app = QApplication.instance() or QApplication([])
    win = MainWindow(Settings(workdir / "bench.ini"))
    win.resize(1400, 860)
    win.show()
    lateness = Lateness()

    def configure(impl: str) -> None:
        p = win.panel
        p.impl.setCurrentIndex(p.impl.findData(impl))
        p.grid.setCurrentText(args.grid)
        p.random_data.setChecked(True)
        p.samples.setValue(args.samples)
        p.iterations.setValue(args.steps if p.selected_impl().kind == "online" else args.epochs)
        p.simulate.setChecked(False)
        if not p.state.runnable:
            raise SystemExit(f"bench/gui.py: cannot run: {p.state.reason}")

    def wait_for(signal, timeout_s: float = 900) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)

    if "a" not in skip or "b" not in skip:
        heads, apps = [], []
        gui_cpu: list[float] = []  # the app process's CPU time / wall time during each app run
        shot_taken = False
        for k in range(args.repeats):
            heads.append(headless_run(args, workdir, k))
            configure(args.impl)
            total = win.panel.state.config.iterations

            def maybe_shot(chunks, total=total) -> None:
                nonlocal shot_taken
                if args.screenshot and not shot_taken and chunks[-1].end >= total * 0.45:
                    shot_taken = True
                    win.grab().save(args.screenshot)
                    print(f"saved {args.screenshot} at iteration {chunks[-1].end}")

            win.controller.chunks_timed.connect(maybe_shot)
            lateness.start()
            r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            win.start_run()
            wait_for(win.controller.run_ended)
            r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            gui_cpu.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / (w1 - w0))
            lateness.stop()
            win.controller.chunks_timed.disconnect(maybe_shot)
            apps.append(win.runs.records[-1].to_dict())
        print("\n(a) live views against headless, same config, fresh process each run")
        print(f"{'run':<10} {'compile':>9} {'median/it':>10} {'sum chunks':>11} {'total':>9}")
        for name, runs in (("headless", heads), ("app", apps)):
            for r in runs:
                t = r["timings"]
                print(
                    f"{name:<10} {t['compile_s']:9.3f} {t['median_s']:10.4f} "
                    f"{sum(c['seconds'] for c in t['chunks']):11.3f} {t['total_s']:9.3f}"
                )
        h_med = np.median([r["timings"]["median_s"] for r in heads])
        a_med = np.median([r["timings"]["median_s"] for r in apps])
        h_sum = np.median([sum(c["seconds"] for c in r["timings"]["chunks"]) for r in heads])
        a_sum = np.median([sum(c["seconds"] for c in r["timings"]["chunks"]) for r in apps])
        print(
            f"slowdown, median time per iteration: {100 * (a_med / h_med - 1):+.1f} %   "
            f"training time (sum of chunks): {100 * (a_sum / h_sum - 1):+.1f} %   (target < 5 %)"
        )
        spread = [r["timings"]["median_s"] for r in heads]
        print(f"  (headless runs alone differ by {100 * (max(spread) / min(spread) - 1):.0f} %: machine noise)")
        print(
            f"the app process (GUI and reader thread) used {100 * np.median(gui_cpu):.1f} % of one core "
            f"while a run was watched (the worker trains in its own process)"
        )
        s = lateness.samples
        print(
            f"\n(b) event-loop lateness during training (10 ms timer, {len(s)} ticks): "
            f"p50 {1e3 * pct(s, 50):.1f} ms, p99 {1e3 * pct(s, 99):.1f} ms, max {1e3 * max(s):.1f} ms "
            f"(target p99 < 30 ms)"
        )

    if "c" not in skip:
        rng = random.Random(0)
        print("\n(c) Stop latency: Stop pressed -> worker process gone")
        print(f"{'implementation':<18} {'phase':<10} {'n':>3} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}  how it ended")
        lateness.samples.clear()
        lateness.start()
        for impl in [s for s in args.stop_impls.split(",") if s]:
            for phase in ("compile", "training"):
                lat, how = [], []
                for _ in range(args.stops):
                    configure(impl)
                    win.panel.iterations.setValue(10**7 if win.panel.selected_impl().kind == "online" else 10**4)
                    win.controller.stop_latencies.clear()
                    wait_sig = win.controller.run_started if phase == "compile" else win.controller.chunks_timed
                    loop = QEventLoop()
                    wait_sig.connect(loop.quit)
                    win.start_run()
                    loop.exec()
                    wait_sig.disconnect(loop.quit)
                    if phase == "training":
                        end = time.perf_counter() + rng.uniform(0.1, 1.0)
                        while time.perf_counter() < end:
                            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
                    win.controller.stop()
                    wait_for(win.controller.run_ended)
                    lat += win.controller.stop_latencies
                    how.append(
                        "killed" if win.controller.last_exitcode and win.controller.last_exitcode < 0 else "cancelled"
                    )
                kinds = ", ".join(f"{h} {how.count(h)}" for h in sorted(set(how)))
                print(
                    f"{impl:<18} {phase:<10} {len(lat):>3} {1e3 * pct(lat, 50):8.1f} {1e3 * pct(lat, 99):8.1f} "
                    f"{1e3 * max(lat):8.1f}  {kinds}"
                )
        lateness.stop()
        s = lateness.samples
        print(f"event-loop lateness during the stop runs: p99 {1e3 * pct(s, 99):.1f} ms, max {1e3 * max(s):.1f} ms")

    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
