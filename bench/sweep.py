"""A sweep's maps trained together against the same maps trained one by one, compile included.

32 combinations (8 end radii x 4 seeds, init random) on UCI wine (178 x 13, z-scored, as
scikit-learn ships it) on an 8x6 hex map, 50 epochs: ``som_studio.sweep`` (one vmap-ed program,
one compile) against 32 sequential ``som_studio.train(impl="jax-fused-batch")`` calls (each
compiles its own program, as a user's loop does), in one process, side by side. Both are timed
as whole calls (data, compile, training and the quality pass); JAX is started before either.
Target: together at least 8x faster. The rows are checked against the runs (same QE to 1e-3).

    python bench/sweep.py             # 32 combinations
    python bench/sweep.py --quick     # 8
"""

from __future__ import annotations

import argparse
import itertools
import time

from _common import fmt_s, table

import som_studio

RADII = [0.5, 0.6, 0.75, 0.9, 1.0, 1.25, 1.5, 2.0]
SEEDS = [0, 1, 2, 3]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="8 combinations (4 radii x 2 seeds)")
    args = ap.parse_args()
    from sklearn.datasets import load_wine

    from som_studio.core import jax_runtime

    jax_runtime.jax().devices()  # JAX's start-up is neither side's
    radii, seeds = (RADII[::2], SEEDS[:2]) if args.quick else (RADII, SEEDS)
    frame = load_wine(as_frame=True).frame.rename(columns={"target": "vintage"})
    frame["vintage"] = frame["vintage"].astype(str)
    kw = dict(labels="vintage", grid="8x6", topology="hex", scaling="zscore", init="random")

    t0 = time.perf_counter()
    rows = som_studio.sweep(frame, vary={"sigma_end": radii, "seed": seeds}, **kw)
    together = time.perf_counter() - t0

    t0 = time.perf_counter()
    runs = [
        som_studio.train(frame, impl="jax-fused-batch", sigma_end=r, seed=s, **kw)
        for r, s in itertools.product(radii, seeds)
    ]
    one_by_one = time.perf_counter() - t0

    worst = max(
        abs(row["qe"] - run.record["quality"]["qe"]) / run.record["quality"]["qe"] for row, run in zip(rows, runs)
    )
    n = len(runs)
    print(
        table(
            ["way", "maps", "wall", "compile", "per map"],
            [
                [
                    "together (som_studio.sweep)",
                    str(n),
                    fmt_s(together),
                    fmt_s(rows.timings["compile_s"]),
                    fmt_s(together / n),
                ],
                [
                    "one by one (train, jax-fused-batch)",
                    str(n),
                    fmt_s(one_by_one),
                    fmt_s(sum(r.record["timings"]["compile_s"] for r in runs)),
                    fmt_s(one_by_one / n),
                ],
            ],
        )
    )
    print(
        f"together is {one_by_one / together:.1f}x faster (target >= 8x); per epoch for all maps: "
        f"{fmt_s(rows.timings['per_epoch_s'])}; rows vs runs: QE within {worst:.1e} relative"
    )


if __name__ == "__main__":
    main()
