"""Hex vs rect, toroid vs planar, missing values vs none: per-iteration cost, side by side.

Runs ``jax-fused-batch`` and ``jax-scan-online`` (or ``--impl``) on the playbook
workload (240 x 135 map, 1000 random colours) in five variants, in one process:
rect planar (the base), rect toroid, hex planar, hex toroid (240 x 136: a hex
toroid needs an even height) and rect planar with 10 % of the values missing
(NaN, every row keeping a known feature). Every variant is warmed up (compiled)
first, then one chunk of each is timed in turn, ``--chunks`` times (so drift
on a shared machine hits every variant alike); the median seconds per
iteration and its ratio to the base are printed. The
targets: hex <= 1.5x, toroid <= 1.1x, missing values <= 1.5x.

    python bench/topology.py                # the playbook workload
    python bench/topology.py --quick        # 60 x 34 (seconds)
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from _common import fmt_s, table

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.core.som.problem import load_problem_data, make_problem

VARIANTS = [
    ("rect planar", "rect", False, False),
    ("rect toroid", "rect", True, False),
    ("hex planar", "hex", False, False),
    ("hex toroid", "hex", True, False),
    ("missing 10 %", "rect", False, True),
]


def _with_holes(data: np.ndarray, share: float = 0.1) -> np.ndarray:
    rng = np.random.default_rng(1)
    holes = rng.random(data.shape) < share
    holes[:, 0] &= ~holes[:, 1:].all(axis=1)
    out = data.copy()
    out[holes] = np.nan
    return out


def _trainer(name: str, cfg: RunConfig, data: np.ndarray, iterations: int):
    impl = registry.get(name)
    cfg = cfg.replace(
        impl=name,
        steps=iterations if impl.kind == "online" else None,
        epochs=iterations if impl.kind == "batch" else None,
    )
    trainer = impl.create(make_problem(cfg, impl.kind, data))
    trainer.warmup()
    return trainer


def _interleaved(trainers: list, per_chunk: int, chunks: int) -> list[float]:
    """Median seconds per iteration of each trainer, timing one chunk of each in turn (drift hits all alike)."""
    per_it: list[list[float]] = [[] for _ in trainers]
    for c in range(chunks):
        for k, trainer in enumerate(trainers):
            t0 = time.perf_counter()
            trainer.run(c * per_chunk, per_chunk)
            per_it[k].append((time.perf_counter() - t0) / per_chunk)
    return [statistics.median(v) for v in per_it]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="60 x 34 map")
    ap.add_argument("--impl", default="jax-fused-batch,jax-scan-online", help="comma-separated implementations")
    ap.add_argument("--chunks", type=int, default=5, help="timed chunks per variant (the median is reported)")
    ap.add_argument("--epochs", type=int, default=2, help="batch epochs per chunk")
    ap.add_argument("--steps", type=int, default=2000, help="online steps per chunk")
    args = ap.parse_args()
    w, h = (60, 34) if args.quick else (240, 135)
    base = RunConfig(width=w, height=h, data=DataSpec(samples=1000), seed=0)
    data = load_problem_data(base)
    rows = []
    for name in args.impl.split(","):
        kind = registry.get(name).kind
        per_chunk = args.steps if kind == "online" else args.epochs
        trainers, maps = [], []
        for label, topology, toroid, missing in VARIANTS:
            height = h + (h % 2) if (topology == "hex" and toroid) else h
            cfg = base.replace(height=height, topology=topology, toroid=toroid, sigma_start=None, sigma_end=None)
            print(f"{name}: {label}: compiling ...", flush=True)
            trainers.append(_trainer(name, cfg, _with_holes(data) if missing else data, per_chunk * args.chunks))
            maps.append(f"{w}x{height}")
        print(f"{name}: timing {args.chunks} chunks of each, in turn ...", flush=True)
        medians = _interleaved(trainers, per_chunk, args.chunks)
        for (label, *_), size, med, trainer in zip(VARIANTS, maps, medians, trainers, strict=True):
            plan = str(getattr(trainer, "describe", dict)().get("kernel_plan", ""))
            rows.append([name, label, size, fmt_s(med), f"{med / medians[0]:.2f}x", plan])
            trainer.close()
    print()
    print(table(["implementation", "variant", "map", "median / iteration", "vs rect planar", "kernel plan"], rows))


if __name__ == "__main__":
    main()
