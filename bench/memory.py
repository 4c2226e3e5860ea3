"""Memory estimates against measured peaks, on the playbook workload.

Each implementation runs in a fresh process (`som-studio bench --json`), which
measures the peak resident-memory growth of the run (plus device memory where
the backend reports it). The estimate is what the implementation predicts
before it starts, and what the session uses to refuse runs that would not fit.
The issue's bar: estimates within 30 % of the measured peak.

    python bench/memory.py [--quick] [--impl a,b]
"""

from __future__ import annotations

import argparse

from _common import bench_in_subprocess, table

from som_studio.core.impls import registry
from som_studio.i18n import format_bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer iterations (memory does not depend on them)")
    ap.add_argument("--impl", help="comma-separated subset (default: every single-device implementation)")
    args = ap.parse_args()
    names = args.impl.split(",") if args.impl else [i.name for i in registry.all_implementations() if not i.shards]
    epochs, steps = (3, 2000) if args.quick else (10, 10_000)
    rows = []
    for name in names:
        n_steps = min(steps, 500) if name == "jax-naive-online" else steps
        (run,) = bench_in_subprocess(
            ["--impl", name, "--grid", "240x135", "--samples", "1000", "--epochs", str(epochs), "--steps", str(n_steps)]
        )
        est, peak = run["memory"]["estimate_bytes"], run["memory"]["peak_bytes"]
        err = (est - peak) / peak * 100 if peak else float("nan")
        rows.append(
            [
                name,
                run["status"],
                format_bytes(est),
                format_bytes(peak),
                f"{err:+.0f} %",
                "yes" if abs(err) <= 30 else "NO",
            ]
        )
        print(f"{name}: estimate {format_bytes(est)}, measured {format_bytes(peak)}", flush=True)
    print()
    print("workload: 240x135 map, 1000 random colours (float32)")
    print(table(["implementation", "status", "estimate", "measured peak", "error", "within 30 %"], rows))


if __name__ == "__main__":
    main()
