"""Cancel latency of the fast implementations on the playbook workload.

For each implementation, a session is started on the playbook workload (240 x
135 map, 1000 random colours; 500 epochs or 500,000 steps, ten times the
playbook's, so no run finishes before its cancel) on a worker thread; after a random delay in the steady state
another thread calls ``Session.cancel()``, and the latency is the time from
that call until the worker receives ``Finished`` with status ``cancelled``.
It covers the chunk in flight (a jitted loop cannot be interrupted: the session
sizes chunks to ~40 ms so this stays short) and the final map copy; a cancelled
run skips the final QE/TE pass.

    python bench/cancel_latency.py              # 10 cancels per implementation
    python bench/cancel_latency.py --repeats 3 --impl jax-fused-batch

Prints, per implementation, the latency to the final map (the session has
stopped training: the chunk in flight plus one map copy) and to ``Finished``,
median / p95 / max (target: under 100 ms).
"""

from __future__ import annotations

import argparse
import random
import threading
import time

import numpy as np
from _common import fmt_s, table

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.som.problem import load_problem_data
from som_studio.session.events import ChunkTimed, Failed, Finished, Snapshot
from som_studio.session.session import Session


def one_cancel(cfg: RunConfig, data: np.ndarray, delay_s: float) -> tuple[float, float, str]:
    """(to the final map, to ``Finished``, status) of one cancel issued ``delay_s`` into the run."""
    session = Session(cfg, data=data, snapshot_interval_s=1 / 30, quality_points=0)
    steady = threading.Event()
    done = threading.Event()
    out: dict[str, object] = {}

    def worker() -> None:
        for ev in session.run():
            if isinstance(ev, ChunkTimed):
                steady.set()
            elif isinstance(ev, Snapshot):
                out["snap"] = time.perf_counter()
            elif isinstance(ev, (Finished, Failed)):
                out["t"] = time.perf_counter()
                out["status"] = ev.record.status
        steady.set()
        done.set()

    th = threading.Thread(target=worker, name="bench-session")
    th.start()
    steady.wait()
    time.sleep(delay_s)
    t0 = time.perf_counter()
    session.cancel()
    done.wait()
    th.join()
    return float(out["snap"]) - t0, float(out["t"]) - t0, str(out.get("status"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", default="jax-fused-batch,jax-scan-online", help="default %(default)s")
    ap.add_argument("--repeats", type=int, default=10, help="cancels per implementation; default %(default)s")
    args = ap.parse_args()
    base = RunConfig(width=240, height=135, data=DataSpec(samples=1000), seed=0, precision="float32")
    data = load_problem_data(base)
    rng = random.Random(0)
    rows = []
    for name in [n.strip() for n in args.impl.split(",") if n.strip()]:
        impl = registry.get(name)
        # Ten times the playbook's iterations, so no run can finish before its cancel lands.
        cfg = base.replace(
            impl=name, epochs=500 if impl.kind == "batch" else None, steps=500_000 if impl.kind == "online" else None
        )
        lat, stop, statuses = [], [], set()
        for _ in range(args.repeats):
            # Past the first chunks (1, 4, 16 iterations) so chunks are at their steady ~40 ms size.
            s, f, status = one_cancel(cfg, data, rng.uniform(0.15, 0.3))
            statuses.add(status)
            if status != "cancelled":
                continue  # finished before the cancel: no latency to measure
            stop.append(s)
            lat.append(f)
        rows.append(
            [
                name,
                ",".join(sorted(statuses)),
                str(len(lat)),
                fmt_s(float(np.median(stop))),
                fmt_s(max(stop)),
                fmt_s(float(np.median(lat))),
                fmt_s(float(np.percentile(lat, 95))),
                fmt_s(max(lat)),
            ]
        )
        print(f"{name}: done", flush=True)
    print(
        table(
            ["implementation", "status", "cancels", "final map: median", "max", "Finished: median", "p95", "max"], rows
        )
    )
    print(
        "latency from Session.cancel() on another thread to the final map (training stopped) and to "
        "Finished(status=cancelled) (target < 100 ms); a cancelled run skips the final QE/TE pass"
    )


if __name__ == "__main__":
    main()
