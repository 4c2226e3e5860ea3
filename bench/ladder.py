"""The playbook's ladder, side by side, on the playbook workload.

Runs every registered single-device implementation on the same SOM (240 x 135
map, 1000 random colours; 50 epochs batch, 50,000 steps online) in one process,
one after another, and prints per-iteration medians, p95s and means, the
compile time apart, the ratio of each median to the NumPy reference of its kind,
and the kernel plan each JAX run recorded.

    python bench/ladder.py            # the playbook workload (a few minutes here)
    python bench/ladder.py --quick    # 60 x 34, 10 epochs, 5000 steps (seconds)

Ratios are measured side by side in this one run; absolute times on a shared
machine are noisy, ratios less so.
"""

from __future__ import annotations

import argparse

from _common import fmt_s, table

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.session.session import Session, run_to_completion


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="scaled-down workload")
    ap.add_argument("--impl", help="comma-separated subset (default: every single-device implementation)")
    ap.add_argument(
        "--naive-steps",
        type=int,
        default=None,
        help="steps for jax-naive-online (default: all of them; it is slow by design)",
    )
    args = ap.parse_args()
    if args.quick:
        w, h, epochs, steps = 60, 34, 10, 5000
    else:
        w, h, epochs, steps = 240, 135, 50, 50_000
    names = args.impl.split(",") if args.impl else [i.name for i in registry.all_implementations() if not i.shards]
    base = RunConfig(width=w, height=h, data=DataSpec(samples=1000), seed=0)
    records = []
    for name in names:
        impl = registry.get(name)
        n = steps if impl.kind == "online" else epochs
        if name == "jax-naive-online" and args.naive_steps:
            n = args.naive_steps
        cfg = base.replace(
            impl=name, steps=n if impl.kind == "online" else None, epochs=n if impl.kind == "batch" else None
        )
        print(f"running {name} ({n} {'steps' if impl.kind == 'online' else 'epochs'}) ...", flush=True)
        records.append(run_to_completion(Session(cfg, snapshot_interval_s=None, quality_points=0)))
    ref = {r.kind: r for r in records if registry.get(r.impl).backend == "numpy"}
    rows = []
    for r in records:
        base_r = ref.get(r.kind)
        ratio = base_r.median_s / r.median_s if base_r and r.median_s and base_r.median_s else None
        rows.append(
            [
                r.impl,
                r.kind,
                r.status,
                fmt_s(r.compile_s),
                fmt_s(r.median_s),
                fmt_s(r.p95_s),
                fmt_s(r.mean_s),
                fmt_s(r.total_s),
                f"{r.qe:.4g}" if r.qe is not None else "-",
                f"{ratio:.1f}x" if ratio else "-",
                r.extra.get("kernel_plan", "-"),
            ]
        )
    print()
    print(f"workload: {w}x{h} map, 1000 random colours, {epochs} epochs (batch) / {steps} steps (online)")
    print(
        table(
            [
                "implementation",
                "kind",
                "status",
                "compile",
                "median/it",
                "p95/it",
                "mean/it",
                "total",
                "QE",
                "vs numpy-*",
                "kernel plan",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
