"""An outside clock against the recorded ``timings.mean_s``: is the per-iteration figure honest?

Runs each chosen implementation through a :class:`~som_studio.session.session.Session`,
as ``som-studio bench`` does (no snapshots; quality points as given), and
times the training loop from outside with the wall clock: from the ``Compiled``
event (warm-up done) to the last ``ChunkTimed`` event, less the quality
measurements the session makes between chunks (each from the event before
it to its ``QualityMeasured`` event: the session does not count them as
training either). That outside time per iteration is set beside the record's
``mean_s`` (training seconds per iteration summed over the timed chunks)
and its median; the gap is the per-chunk overhead the chunks do not see
(bookkeeping, events, pacing decisions).

    python bench/clock.py                      # the playbook workload, a few rungs
    python bench/clock.py --quick              # 60 x 34 map, short runs (seconds)
    python bench/clock.py --impl jax-scan-online --repeat 3
    python bench/clock.py --snapshots 0.0333   # the app's frame rate: snapshots every 1/30 s

A ratio ``outside / mean`` near 1.00 means ``mean_s`` is what a stopwatch
sees; the target is within 5 %, and per-chunk overhead under 2 %.
"""

from __future__ import annotations

import argparse
import time

from _common import fmt_s, table

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.session.events import ChunkTimed, Compiled, Failed, Finished, QualityMeasured, Snapshot
from som_studio.session.session import Session

#: The rungs timed by default: one of each kind of loop (NumPy, a per-step host loop, whole chunks on the device).
DEFAULT_IMPLS = "numpy-batch,numpy-online,jax-fused-batch,jax-scan-online,jax-jit-online"


def outside_clock(session: Session) -> dict:
    """Run ``session``; the outside clock's figures and the record's, side by side."""
    t_compiled = t_last = None
    t_prev = time.perf_counter()
    spans: list[tuple[str, float, float]] = []  # (what, end, seconds) of the session's own measurements
    record = None
    for ev in session.run():
        now = time.perf_counter()
        if isinstance(ev, Compiled):
            t_compiled = now
        elif isinstance(ev, ChunkTimed):
            t_last = now
        elif isinstance(ev, QualityMeasured):
            spans.append(("quality", now, now - t_prev))  # the measurement the session made since the last event
        elif isinstance(ev, Snapshot):
            spans.append(("snapshot", now, now - t_prev))  # the map copy the session made since the last event
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
        t_prev = time.perf_counter()  # our own handling of the event is not the session's
    assert record is not None and t_compiled is not None and t_last is not None
    # Only what the session did inside the timed loop: after warm-up, before the last chunk's event.
    inside = [(what, sec) for what, end, sec in spans if t_compiled < end <= t_last]
    quality_s = sum(sec for what, sec in inside if what == "quality")
    snapshot_s = sum(sec for what, sec in inside if what == "snapshot")
    iterations = sum(c.count for c in record.chunks)
    wall = t_last - t_compiled
    return {
        "impl": record.impl,
        "iterations": iterations,
        "chunks": len(record.chunks),
        "wall_s": wall,
        "quality_s": quality_s,
        "snapshot_s": snapshot_s,
        "outside_s": (wall - quality_s - snapshot_s) / iterations,
        "mean_s": record.mean_s,
        "median_s": record.median_s,
        "chunk_sum_s": sum(c.seconds for c in record.chunks),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="60 x 34 map, 10 epochs / 5000 steps")
    ap.add_argument("--impl", default=DEFAULT_IMPLS, help="comma-separated implementations (default: %(default)s)")
    ap.add_argument("--epochs", type=int, help="batch epochs (default: 50, quick 10)")
    ap.add_argument("--steps", type=int, help="online steps (default: 50,000, quick 5000)")
    ap.add_argument("--quality-points", type=int, default=10, help="as bench's (default: %(default)s)")
    ap.add_argument("--snapshots", type=float, default=None, metavar="S", help="snapshot interval (default: none)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per implementation (default: %(default)s)")
    args = ap.parse_args()
    w, h = (60, 34) if args.quick else (240, 135)
    epochs = args.epochs or (10 if args.quick else 50)
    steps = args.steps or (5000 if args.quick else 50_000)
    base = RunConfig(width=w, height=h, data=DataSpec(samples=1000), seed=0)
    rows = []
    for name in args.impl.split(","):
        kind = registry.get(name).kind
        cfg = base.replace(
            impl=name, epochs=epochs if kind == "batch" else None, steps=steps if kind == "online" else None
        )
        for _ in range(args.repeat):
            r = outside_clock(
                Session(cfg, data=None, snapshot_interval_s=args.snapshots, quality_points=args.quality_points)
            )
            print(f"{name}: {r['iterations']} iterations in {r['chunks']} chunks", flush=True)
            overhead = (r["wall_s"] - r["quality_s"] - r["snapshot_s"] - r["chunk_sum_s"]) / r["chunk_sum_s"]
            rows.append(
                [
                    name,
                    str(r["chunks"]),
                    fmt_s(r["median_s"]),
                    fmt_s(r["mean_s"]),
                    fmt_s(r["outside_s"]),
                    f"{r['outside_s'] / r['mean_s']:.3f}",
                    f"{r['outside_s'] / r['median_s']:.3f}",
                    f"{overhead * 100:+.2f} %",
                    fmt_s(r["quality_s"]),
                ]
            )
    print()
    print(
        f"workload: {w}x{h} map, 1000 random colours, {epochs} epochs / {steps} steps, "
        f"quality points {args.quality_points}, snapshots {args.snapshots or 'none'}"
    )
    print(
        table(
            [
                "implementation",
                "chunks",
                "median/it",
                "mean/it",
                "outside/it",
                "outside/mean",
                "outside/median",
                "between chunks",
                "quality",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
