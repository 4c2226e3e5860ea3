"""Benchmark the desktop app: cost of live views on every rung, event-loop lateness, Stop latency, launch time.

Measures, side by side in one run, on the playbook workload by default
(240x135 map, 1000 random colours):

(a) for each rung (``--impl``: one, a comma-separated list, or ``all``, every
    registered single-device implementation), the slowdown of a run watched live
    in the app against the same run headless (``som-studio bench`` in a fresh
    process), alternating headless and app runs; each rung trains for its
    playbook length unless ``--epochs`` / ``--steps`` say otherwise; with the
    interval the runs give the median slowdown (resampled: 15 runs a side pin it
    to about +-4 points on a shared 2-core machine, 3 runs a side to about +-10);
(b) the GUI event loop's lateness while each rung trains (a 10 ms timer;
    lateness is how much later than due each tick fires), p50/p99/max, and over
    the whole run (start-up, compile and saving the run included), in one more
    app run after (a)'s: the timer is the instrument's own work in the app's
    process, and (a) measures the app without it;
(c) Stop latency: from pressing Stop to the worker process gone, during
    compilation and during training, p50/p99/max;
(d) time from launching ``som-studio`` to its window shown (a fresh process
    each time, interpreter start included);
(e) with ``all``: a many-rows workload after the rungs (jax-fused-batch on
    100,000 rows), measured as (a) and (b);
(f) the app's *Compare implementations* against ``som-studio compare`` on the
    same configuration: each run's speed-up over the NumPy run, both ways, the
    median of the races and from each rung's best race (the NumPy baseline's
    step, a Python loop, moves by half between processes on a shared machine).

Targets (from the issues): (a) < 5 %, (b) p99 < 30 ms and max < 200 ms while a
fast rung trains, (c) p99 < 200 ms, (d) < 1.5 s, (f) within 10 %. These are measurements,
printed; nothing here asserts.

Run under a real or virtual display for honest paint costs::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/gui.py --skip c,d
    .venv/bin/python bench/gui.py --impl jax-fused-batch --screenshot shot.png   # also a mid-training shot
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

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import ROOT  # noqa: E402  (bench/ on the path first; ROOT, this checkout, on it before the install)

#: Every process this script starts (headless runs, compares, launches) imports SOM Studio from ROOT too, as the
#: app in this process and its workers do: a before/after from two worktrees times the code of each.
CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

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


def resolution(headless: list[float], app: list[float], resamplings: int = 2000) -> tuple[float, float]:
    """The app's median over headless's, less one, in percent, as far as these runs tell it: the 5th and 95th
    percentiles over resamplings of both sides' runs (with 15 runs a side on this machine, about +-4 points)."""
    rng = np.random.default_rng(0)
    h = np.median(rng.choice(headless, (resamplings, len(headless))), axis=1)
    a = np.median(rng.choice(app, (resamplings, len(app))), axis=1)
    ratios = 100 * (a / h - 1)
    return float(np.percentile(ratios, 5)), float(np.percentile(ratios, 95))


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
            cwd=ROOT,
        )
        assert p.stdout is not None
        line = p.stdout.readline()
        t = time.perf_counter() - t0
        p.wait(30)
        if line.strip() == "shown":
            times.append(t)
    return times


#: Each rung's length on the playbook workload when ``--epochs`` / ``--steps`` are not given: a few
#: seconds of training here (the fast rungs the issue measured, the slow ones short enough to repeat).
PLAYBOOK = {
    "numpy-online": 5_000,
    "numpy-batch": 10,
    "jax-naive-online": 2_000,
    "jax-jit-online": 10_000,
    "jax-vmap-batch": 5,
    "jax-fused-batch": 300,
    "jax-scan-online": 150_000,
}
#: Lengths of a rung not listed above.
DEFAULT_LENGTH = {"batch": 10, "online": 50_000}
#: (e): many rows, few epochs: a long epoch and a large data set in the worker.
MANY_ROWS = ("jax-fused-batch", 100_000, 10)
#: (f): the rungs raced, in order (the first is the baseline), and their steps.
RACE = ("numpy-online", "jax-jit-online", "jax-scan-online")
RACE_STEPS = 10_000


def speedups(records: list) -> dict[str, float | None]:
    """Each run's speed-up per iteration over its baseline, by the comparison's own rule (the app's and the CLI's)."""
    from som_studio.report.content import build_report

    values = build_report(records).summary_values()
    return {v["implementation"]: v["speed-up"] for v in values} | {
        f"{v['implementation']} median": v["median / it"] for v in values
    }


def rungs(spec: str) -> list[str]:
    """``--impl``'s rungs: ``all`` (every registered single-device implementation), one, or a list."""
    from som_studio.core.impls import registry

    if spec == "all":
        return [i.name for i in registry.all_implementations() if not i.shards]
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in registry.names()]
    if unknown or not names:
        raise SystemExit(
            f"bench/gui.py: --impl: unknown implementation {', '.join(unknown) or repr(spec)} "
            f"(known: {', '.join(registry.names())}, or all)"
        )
    return names


def length(impl: str, args: argparse.Namespace) -> int:
    """Iterations for ``impl``: ``--epochs`` / ``--steps`` when given, else its playbook length."""

    kind = _kind(impl)
    given = args.epochs if kind == "batch" else args.steps
    return given if given is not None else PLAYBOOK.get(impl, DEFAULT_LENGTH[kind])


def _kind(impl: str) -> str:
    from som_studio.core.impls import registry

    return registry.get(impl).kind


def seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3f} s"
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.1f} us"


def headless_run(impl: str, iterations: int, samples: int, args: argparse.Namespace, workdir: Path, k: int) -> dict:
    out = workdir / f"headless-{impl}-{samples}-{k}.json"
    flag = "--epochs" if _kind(impl) == "batch" else "--steps"
    cmd = [
        sys.executable,
        "-m",
        "som_studio",
        "bench",
        "--impl",
        impl,
        "--grid",
        args.grid,
        "--samples",
        str(samples),
        flag,
        str(iterations),
        "--json",
        str(out),
        "--quiet",
    ]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=CHILD_ENV)
    return json.loads(out.read_text())["runs"][0]


class Lateness:
    """A 10 ms timer in the GUI thread; records how late each tick fires."""

    def __init__(self, interval_ms: int = 10) -> None:
        from PySide6.QtCore import Qt, QTimer

        self.interval = interval_ms / 1000
        self.samples: list[float] = []
        self.training: list[float] = []  # the ticks while a run trains (between compiled and its end)
        self.in_training = False
        self._last: float | None = None
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            late = max(0.0, now - self._last - self.interval)
            self.samples.append(late)
            if self.in_training:
                self.training.append(late)
        self._last = now

    def start(self) -> None:
        self._last = None
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--impl",
        default="all",
        help="rungs for (a) and (b): one, a comma-separated list, or all (every single-device rung; default)",
    )
    ap.add_argument("--grid", default="240x135")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--epochs", type=int, help="for batch implementations (default: each rung's playbook length)")
    ap.add_argument("--steps", type=int, help="for online implementations (default: each rung's playbook length)")
    ap.add_argument("--repeats", type=int, default=2, help="headless and app runs each, alternating")
    ap.add_argument(
        "--stop-impls", default="numpy-batch,jax-jit-online", help="implementations whose Stop latency is measured"
    )
    ap.add_argument("--stops", type=int, default=6, help="stops per implementation and phase")
    ap.add_argument("--launches", type=int, default=3)
    ap.add_argument("--screenshot", metavar="PNG", help="save the window mid-training here (the first rung's run)")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: a,b,c,d,e,f")
    args = ap.parse_args()
    skip = set(args.skip.split(","))
    impls = rungs(args.impl)
    lengths = {impl: length(impl, args) for impl in impls}

    os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
    workdir = Path(tempfile.mkdtemp(prefix="som-gui-bench-"))
    # Keep the user's settings out of it: a private config home for every app started here.
    env = dict(CHILD_ENV, XDG_CONFIG_HOME=str(workdir / "config"))
    os.environ["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"]
    print(
        f"platform: {os.environ['QT_QPA_PLATFORM']}   cores: {os.cpu_count()}   "
        f"load average: {' '.join(f'{v:.1f}' for v in os.getloadavg())}   workload: {args.grid}, "
        f"{args.samples} samples; " + ", ".join(f"{i} {n:,}" for i, n in lengths.items())
    )
    import som_studio

    print(f"code: {Path(som_studio.__file__).resolve().parent.parent}")  # which checkout was timed

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

    def configure(impl: str, iterations: int | None = None, samples: int | None = None) -> None:
        p = win.panel
        p.impl.setCurrentIndex(p.impl.findData(impl))
        p.grid.setCurrentText(args.grid)
        p.random_data.setChecked(True)
        p.samples.setValue(samples or args.samples)
        p.iterations.setValue(iterations or length(impl, args))
        p.simulate.setChecked(False)
        if not p.state.runnable:
            raise SystemExit(f"bench/gui.py: cannot run: {p.state.reason}")

    def wait_for(signal, timeout_s: float = 900) -> None:
        loop = QEventLoop()
        signal.connect(loop.quit)
        QTimer.singleShot(int(timeout_s * 1000), loop.quit)
        loop.exec()
        signal.disconnect(loop.quit)

    # The app process's CPU seconds between compiled and the last timed chunk, and that stretch's wall seconds:
    # what the training's cores lose to watching (the run's end, its record and its saving, come after it).
    cpu_at: dict[str, tuple[float, float]] = {}

    def cpu_now() -> tuple[float, float]:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime, time.perf_counter()

    def training_on(*_: object) -> None:
        lateness.in_training = True
        cpu_at["on"] = cpu_now()

    def training_off(*_: object) -> None:
        lateness.in_training = False

    def chunk_timed(*_: object) -> None:
        if lateness.in_training:
            cpu_at["off"] = cpu_now()

    win.controller.compiled.connect(training_on)
    win.controller.chunks_timed.connect(chunk_timed)

    def idle_cpu(seconds: float) -> float:
        """The app process's CPU seconds per second while the window waits (the timer running or not)."""
        loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        c0, t0 = cpu_now()
        loop.exec()
        c1, t1 = cpu_now()
        return (c1 - c0) / (t1 - t0)

    # What the instrument itself costs: the lateness timer of (b) runs in this process, in (b)'s own app run.
    idle_cpu(1.0)  # the window's first paints
    quiet = idle_cpu(2.0)
    lateness.start()
    timer_cost = max(idle_cpu(2.0) - quiet, 0.0)
    lateness.stop()
    lateness.samples.clear()
    win.controller.run_finished.connect(training_off)
    win.controller.run_failed.connect(training_off)
    shot_taken = False
    rows: list[tuple] = []

    def measure(impl: str, iterations: int, samples: int, label: str) -> None:
        """(a) and (b) for one workload: headless and app runs alternating, then (b)'s app run, then the figures."""
        nonlocal shot_taken
        heads, apps = [], []
        gui_cpu: list[float] = []  # the app process's CPU time / wall time during each app run
        training_cpu: list[float] = []  # its CPU seconds per second of training (compiled to the run's end)
        lateness.samples.clear()
        lateness.training.clear()
        print(f"\n== {label} ==")
        for k in range(args.repeats):
            heads.append(headless_run(impl, iterations, samples, args, workdir, k))
            configure(impl, iterations, samples)

            def maybe_shot(chunks, total=iterations) -> None:
                nonlocal shot_taken
                if args.screenshot and not shot_taken and chunks[-1].end >= total * 0.45:
                    shot_taken = True
                    win.grab().save(args.screenshot)
                    print(f"saved {args.screenshot} at iteration {chunks[-1].end}")

            win.controller.chunks_timed.connect(maybe_shot)
            r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            win.start_run()
            wait_for(win.controller.run_ended)
            r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            gui_cpu.append((r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime) / (w1 - w0))
            if "on" in cpu_at and "off" in cpu_at:
                (c0, t0), (c1, t1) = cpu_at.pop("on"), cpu_at.pop("off")
                training_cpu.append((c1 - c0) / max(t1 - t0, 1e-9))
            win.controller.chunks_timed.disconnect(maybe_shot)
            apps.append(win.runs.records[-1].to_dict())
        if "b" not in skip:  # the same app run once more with the lateness timer ticking; its timings are not (a)'s
            configure(impl, iterations, samples)
            lateness.start()
            win.start_run()
            wait_for(win.controller.run_ended)
            lateness.stop()
            cpu_at.clear()
        print("(a) live views against headless, same config, fresh process each run")
        print(
            f"{'run':<10} {'compile s':>9} {'median/it':>10} {'sum chunks':>11} {'total s':>8} "
            f"{'chunks':>7} {'it/chunk':>9} {'frames s':>9}"
        )
        for name, runs in (("headless", heads), ("app", apps)):
            for r in runs:
                t = r["timings"]
                counts = [c["count"] for c in t["chunks"]]
                print(
                    f"{name:<10} {t['compile_s']:9.3f} {seconds(t['median_s']):>10} "
                    f"{sum(c['seconds'] for c in t['chunks']):11.3f} {t['total_s']:8.3f} {len(counts):7d} "
                    f"{np.median(counts) if counts else 0:9.0f} {t['phases'].get('frames', 0.0):9.4f}"
                )
        h_med = np.median([r["timings"]["median_s"] for r in heads])
        a_med = np.median([r["timings"]["median_s"] for r in apps])
        h_sum = np.median([sum(c["seconds"] for c in r["timings"]["chunks"]) for r in heads])
        a_sum = np.median([sum(c["seconds"] for c in r["timings"]["chunks"]) for r in apps])
        d_med, d_sum = 100 * (a_med / h_med - 1), 100 * (a_sum / h_sum - 1)
        print(
            f"slowdown, median time per iteration: {d_med:+.1f} %   "
            f"training time (sum of chunks): {d_sum:+.1f} %   (target < 5 %)"
        )
        spread = [r["timings"]["median_s"] for r in heads]
        noise = 100 * (max(spread) / min(spread) - 1)
        print(f"  (headless runs alone differ by {noise:.0f} %: machine noise)")
        if len(heads) >= 3:  # fewer runs resample to themselves: no interval to tell
            low, high = resolution(spread, [r["timings"]["median_s"] for r in apps])
            print(
                f"  (from these runs the median slowdown lies within {low:+.1f} % .. {high:+.1f} %, "
                "90 % of resamplings)"
            )
        print(
            f"the app process (GUI and reader thread) used {100 * np.median(gui_cpu):.1f} % of one core "
            f"while a run was watched (the worker trains in its own process)"
        )
        print(
            f"    while it trained: {np.median(training_cpu) if training_cpu else float('nan'):.3f} CPU seconds "
            f"per second of training (compiled to the last chunk; (b)'s 10 ms timer, {timer_cost:.3f} more, "
            "ran in a run of its own)"
        )
        s, w = lateness.training, lateness.samples
        if "b" in skip:
            rows.append((label, h_med, a_med, d_med, d_sum, noise, None, None, np.median(gui_cpu)))
            return
        print(
            f"(b) event-loop lateness during training (10 ms timer, {len(s)} ticks): "
            f"p50 {1e3 * pct(s, 50):.1f} ms, p99 {1e3 * pct(s, 99):.1f} ms, max {1e3 * max(s, default=0):.1f} ms "
            f"(target p99 < 30 ms, max < 200 ms)"
        )
        print(
            f"    over the whole run (start-up, compile and saving the run included, {len(w)} ticks): "
            f"p99 {1e3 * pct(w, 99):.1f} ms, max {1e3 * max(w, default=0):.1f} ms"
        )
        rows.append(
            (label, h_med, a_med, d_med, d_sum, noise, 1e3 * pct(s, 99), 1e3 * max(s, default=0), np.median(gui_cpu))
        )

    if "a" not in skip or "b" not in skip:
        for impl in impls:
            n = lengths[impl]
            unit = "epochs" if _kind(impl) == "batch" else "steps"
            measure(impl, n, args.samples, f"{impl}: {n:,} {unit}, {args.samples:,} samples")
        if args.impl == "all" and "e" not in skip:
            impl, samples, n = MANY_ROWS
            measure(impl, n, samples, f"(e) many rows: {impl}: {n:,} epochs, {samples:,} samples")
        print("\nsummary (medians; slowdowns of the app against headless)")
        print("| workload | headless / it | app / it | median / it | sum of chunks | noise | p99 | max | GUI CPU |")
        print("|---|---|---|---|---|---|---|---|---|")
        for label, h, a, dm, ds, noise, p99, mx, cpu in rows:
            print(
                f"| {label} | {seconds(h)} | {seconds(a)} | {dm:+.1f} % | {ds:+.1f} % | {noise:.0f} % | "
                f"{'-' if p99 is None else f'{p99:.0f} ms'} | {'-' if mx is None else f'{mx:.0f} ms'} | "
                f"{100 * cpu:.0f} % |"
            )

    if "f" not in skip:
        from som_studio.session.record import RunRecord

        print(
            f"\n(f) Compare implementations in the app against som-studio compare: {', '.join(RACE)}, "
            f"{RACE_STEPS:,} steps"
        )
        cli_runs: list[dict[str, float | None]] = []
        app_runs: list[dict[str, float | None]] = []
        for k in range(args.repeats):  # alternating, as (a)
            out = workdir / f"compare{k}.json"
            cmd = [sys.executable, "-m", "som_studio", "compare", "--impl", ",".join(RACE), "--grid", args.grid]
            cmd += ["--samples", str(args.samples), "--steps", str(RACE_STEPS), "--json", str(out), "--quiet"]
            subprocess.run(
                cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=CHILD_ENV
            )
            cli_runs.append(speedups([RunRecord.from_dict(r) for r in json.loads(out.read_text())["runs"]]))
            configure(RACE[0], RACE_STEPS)
            win.comparison.set_ticked_impls(list(RACE))
            before = len(win.runs.records)
            if not win.comparison.compare_ticked():
                raise SystemExit("bench/gui.py: the app refused to compare")
            wait_for(win.comparison.queue.finished, timeout_s=1800)
            app_runs.append(speedups(win.runs.records[before:]))

        def median(runs: list[dict[str, float | None]], name: str) -> float | None:
            values = [r[name] for r in runs if r.get(name)]
            return float(np.median(values)) if values else None

        def best(runs: list[dict[str, float | None]], name: str) -> float | None:
            values = [r[name + " median"] for r in runs if r.get(name + " median")]
            return min(values) if values else None

        def best_speedup(runs: list[dict[str, float | None]], name: str) -> float | None:
            base, own = best(runs, RACE[0]), best(runs, name)
            return base / own if base and own else None

        cli = {name: median(cli_runs, name) for name in RACE}  # speed-ups
        in_app = {name: median(app_runs, name) for name in RACE}
        print(f"speed-ups per iteration over {RACE[0]}, median of {args.repeats} races each way")
        print(f"{'implementation':<18} {'compare (CLI)':>14} {'app':>8} {'differ':>8}   median / it: CLI, app")
        for name in RACE:
            c, a = cli.get(name), in_app.get(name)
            differ = f"{100 * (a / c - 1):+.1f} %" if a and c else "-"
            medians = f"{seconds(median(cli_runs, name + ' median'))}, {seconds(median(app_runs, name + ' median'))}"
            print(f"{name:<18} {f'{c:.2f}x' if c else '-':>14} {f'{a:.2f}x' if a else '-':>8} {differ:>8}   {medians}")
        # A process's single-threaded Python loop runs 0.5x-1.5x slower than another's here, the same code
        # (480-740 us a numpy-online step, either side), and every speed-up over it moves with it: the best race
        # of each rung, each side, is the time a process takes when the machine lets it.
        print(f"the same from each rung's best race of {args.repeats}, each way")
        for name in RACE:
            c, a = best_speedup(cli_runs, name), best_speedup(app_runs, name)
            differ = f"{100 * (a / c - 1):+.1f} %" if a and c else "-"
            bests = f"{seconds(best(cli_runs, name))}, {seconds(best(app_runs, name))}"
            print(f"{name:<18} {f'{c:.2f}x' if c else '-':>14} {f'{a:.2f}x' if a else '-':>8} {differ:>8}   {bests}")

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
