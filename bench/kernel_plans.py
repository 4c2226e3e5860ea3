"""Where the CPU's kernel plans cross: each BMU-search form timed at the shapes users have.

The constants of :mod:`som_studio.core.plans.fused_plan` that choose the search on the
CPU (``CPU_BLOCKED_MAX_FEATURES``: blocked or matmul; ``MATMUL_BLOCK_FEATURES``:
units per candidate block of the matmul form) come from this script's table. Every form
is timed side by side in one process, on the same examples and map, as the
search ``jax-fused-batch`` runs in its epoch (jitted, float32, chunked by the
plan's memory budget), with a plain jitted ``argmin(|w|^2 - 2 x.w)`` beside
them as the floor.

    python bench/kernel_plans.py                 # features 3..784, maps 40x30..240x135 (a few minutes)
    python bench/kernel_plans.py --quick         # fewer shapes
    python bench/kernel_plans.py --blocks 8,16,32,64 --features 50,300
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.plans import fused_plan, kernels

jax = jax_runtime.jax()
jnp = jax.numpy


def best_of(fn, *args, repeats: int = 3) -> float:
    """Least wall time of ``repeats`` calls (after one that compiles), results ready."""
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t)
    return min(times)


def floor_search(wt, x):
    c = jnp.sum(wt * wt, axis=0)
    return jnp.argmin(c[None, :] - 2 * jnp.matmul(x, wt, precision=kernels.HIGHEST), axis=1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--features", default="3,6,8,10,16,50,300,784", help="comma-separated (default: %(default)s)")
    ap.add_argument("--maps", default="40x30,100x100,240x135", help="WxH, comma-separated (default: %(default)s)")
    ap.add_argument("--samples", type=int, default=10_000, help="examples (default: %(default)s)")
    ap.add_argument("--blocks", default="4,8,16,32", help="matmul block sizes to try (default: %(default)s)")
    ap.add_argument("--quick", action="store_true", help="features 3,10,50,300 on 40x30 and 100x100")
    args = ap.parse_args(argv)
    features = [int(f) for f in args.features.split(",")]
    maps = [tuple(int(v) for v in m.split("x")) for m in args.maps.split(",")]
    if args.quick:
        features, maps = [3, 10, 50, 300], [(40, 30), (100, 100)]
    blocks = [int(b) for b in args.blocks.split(",")]
    rng = np.random.default_rng(0)
    n = args.samples
    head = ["features", "map", "blocked", *(f"matmul/{b}" for b in blocks), "floor", "chosen", "chosen/best"]
    print("  ".join(f"{h:>12}" for h in head), flush=True)
    for d in features:
        for w, h in maps:
            m = w * h
            wt = jnp.asarray(rng.random((d, m), dtype=np.float32))
            x = jnp.asarray(rng.random((n, d), dtype=np.float32))
            times: dict[str, float] = {}
            if d <= 64:  # the blocked form gathers two 512-unit blocks per example: hopeless past that
                plan = fused_plan.choose("cpu", m, d, n, 4, form="blocked")
                times["blocked"] = best_of(jax.jit(lambda a, b, p=plan: kernels.bmus(a, b, p)), wt, x)
            for b in blocks:
                plan = fused_plan.choose("cpu", m, d, n, 4, form="matmul")
                plan = fused_plan.KernelPlan("matmul", plan.chunk, block=min(b, m))
                times[f"matmul/{b}"] = best_of(jax.jit(lambda a, c, p=plan: kernels.bmus(a, c, p)), wt, x)
            if n * m * 4 <= 1 << 31:  # the floor holds all N x M scores at once
                times["floor"] = best_of(jax.jit(floor_search), wt, x)
            chosen = fused_plan.choose("cpu", m, d, n, 4)
            key = "blocked" if chosen.form == "blocked" else f"matmul/{chosen.block}"
            best = min(v for k, v in times.items() if k != "floor")
            cells = [f"{times[k] * 1e3:.1f} ms" if k in times else "-" for k in head[2:-2]]
            ratio = f"{times[key] / best:.2f}x" if key in times else "?"
            print("  ".join(f"{c:>12}" for c in [str(d), f"{w}x{h}", *cells, chosen.form, ratio]), flush=True)


if __name__ == "__main__":
    main()
