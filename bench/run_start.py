"""How soon a run the app starts is training: its process forked from the server, or spawned.

The app starts each run in a process of its own (``som_studio.worker.start``). This
script starts the same small run both ways, alternating, through the app's own
:class:`~som_studio.qt.controller.RunController` (offscreen Qt, no window), and times
from ``start()`` to the run's ``Started`` event (the process is up and has read the
run), to its ``Compiled`` event (its programs are ready: training begins), and to
its end. Spawned is ``SOM_STUDIO_WORKER_START=spawn``; the fork server is started
(and has imported) before the first timed run, as the app starts it when it opens.

    python bench/run_start.py                       # jax-fused-batch and numpy-batch, 7 rounds
    python bench/run_start.py --impl jax-fused-batch --rounds 11

It also prints the CPU seconds each run's process had used by its ``Compiled`` event
(from ``/proc``): the start every run of the app, and each of the test suite's, pays.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from _common import table

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from som_studio.config import DataSpec, RunConfig


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", default="jax-fused-batch,numpy-batch", help="rungs, comma-separated")
    ap.add_argument("--rounds", type=int, default=7, help="runs each way, alternated (default 7)")
    args = ap.parse_args()

    from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer

    from som_studio.qt.controller import RunController
    from som_studio.worker import start

    app = QCoreApplication.instance() or QCoreApplication([])
    controller = RunController()
    if not start.warm(120):
        raise SystemExit("bench/run_start.py: the fork server did not start")
    marks: dict[str, float] = {}
    controller.run_started.connect(lambda *_: marks.setdefault("started", time.perf_counter()))
    tick = os.sysconf("SC_CLK_TCK")

    def compiled(*_: object) -> None:
        marks.setdefault("compiled", time.perf_counter())
        with open(f"/proc/{controller.process.pid}/stat") as f:  # utime and stime, after the name's ")"
            fields = f.read().rsplit(")", 1)[1].split()
        marks["cpu"] = (int(fields[11]) + int(fields[12])) / tick

    controller.compiled.connect(compiled)

    def run(impl: str, how: str) -> tuple[float, float, float, float]:
        if how == "spawn":
            os.environ[start.START_VAR] = "spawn"
        else:
            os.environ.pop(start.START_VAR, None)
        cfg = RunConfig(impl=impl, width=10, height=10, data=DataSpec(samples=500), epochs=5, seed=1)
        marks.clear()
        loop = QEventLoop()
        controller.run_ended.connect(loop.quit)
        t0 = time.perf_counter()
        controller.start(cfg)
        QTimer.singleShot(300_000, loop.quit)
        loop.exec()
        end = time.perf_counter()
        controller.run_ended.disconnect(loop.quit)
        if "compiled" not in marks or "cpu" not in marks:
            raise SystemExit(f"bench/run_start.py: the {impl} run ({how}) did not train")
        return marks["started"] - t0, marks["compiled"] - t0, end - t0, marks["cpu"]

    rows = []
    for impl in args.impl.split(","):
        got: dict[str, list[tuple[float, float, float, float]]] = {"spawn": [], "fork server": []}
        run(impl, "fork server")  # this rung's first compiles fill JAX's cache for both ways
        for _ in range(args.rounds):
            for how in got:
                got[how].append(run(impl, how))
        med = {how: [statistics.median(x[i] for x in got[how]) for i in range(4)] for how in got}
        for how in got:
            started, compiled, ended, cpu = med[how]
            rows.append([impl, how, f"{started:.2f} s", f"{compiled:.2f} s", f"{ended:.2f} s", f"{cpu:.2f} s"])
        ratio = med["spawn"][1] / med["fork server"][1]
        rows.append([impl, "spawn / fork server", "", f"{ratio:.2f}x", "", ""])
    os.environ.pop(start.START_VAR, None)
    print(table(["rung", "started by", "to Started", "to Compiled", "to the end", "its CPU to Compiled"], rows))
    print(f"(medians of {args.rounds} runs each way, alternated; 10x10 map, 500 examples, 5 epochs)")
    del app
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
