"""The sharded implementations over 1, 2, 4 and 8 devices and several layouts, side by side.

For each device count a fresh process starts JAX with that many (simulated CPU)
devices and runs, for every layout DATAxMAP using all of them, each sharded
implementation (where the map is split: jax-shardmap-batch with each of its
ways to move rows for the smoothing, jax-jit-sharded-batch with each way of
writing its program; jax-pmap-batch where the map axis is 1), timing per-epoch medians
and reading the bytes each device sends per epoch from the compiled program.
The single-device fused implementation (jax-fused-batch) runs in the
one-device process, as the baseline of the speed-up column.

    python bench/scaling.py                 # 240 x 135 map, 1000 colours
    python bench/scaling.py --quick         # 60 x 34 map (seconds per layout)
    python bench/scaling.py --gpu           # the machine's own devices, no simulation

Simulated CPU devices share this machine's cores, so their times show the cost
of partitioning and communication, not a speed-up; the bytes are what real
devices would exchange. Ratios are measured side by side in this one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _common import ROOT, fmt_s, table

DEVICE_COUNTS = (1, 2, 4, 8)
SHARDED = ("jax-pmap-batch", "jax-jit-sharded-batch", "jax-shardmap-batch")
BASELINE = "jax-fused-batch"


def layouts(n: int) -> list[str]:
    """Every DATAxMAP layout with DATA * MAP = n, data-parallel first."""
    return [f"{n // m}x{m}" for m in range(1, n + 1) if n % m == 0]


def _time(trainer, epochs_per_chunk: int, repeats: int) -> float:
    trainer.warmup()
    times = []
    first = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        trainer.run(first, epochs_per_chunk)  # returns with results ready
        times.append((time.perf_counter() - t0) / epochs_per_chunk)
        first += epochs_per_chunk
    return statistics.median(times)


def worker(args: argparse.Namespace) -> None:
    """One device count: print one JSON line per (layout, implementation)."""
    from som_studio.core import jax_runtime

    if not args.gpu:
        jax_runtime.configure(args.worker)
    from som_studio.config import DataSpec, RunConfig
    from som_studio.core.impls import registry
    from som_studio.core.impls.jax_jit_sharded import PROGRAMS, JaxJitShardedBatch
    from som_studio.core.impls.jax_shardmap import SMOOTHING, JaxShardmapBatch
    from som_studio.core.som.problem import make_problem

    n = args.worker
    w, h = args.grid
    epochs = args.epochs_per_chunk * args.repeats
    base = RunConfig(width=w, height=h, data=DataSpec(samples=args.samples), seed=0, epochs=epochs)
    cases: list[tuple[str, str, str | None]] = []
    if n == 1 and BASELINE in registry.names():
        cases.append((BASELINE, "1x1", None))
    for lay in layouts(n):
        for impl in SHARDED:
            if not registry.get(impl).map_axis and not lay.endswith("x1"):
                continue
            if impl == "jax-shardmap-batch" and not lay.endswith("x1"):
                cases += [(impl, lay, s) for s in SMOOTHING]  # the row exchange matters only when map > 1
            elif impl == "jax-jit-sharded-batch" and not lay.endswith("x1"):
                cases += [(impl, lay, p) for p in PROGRAMS]  # so does how the program is written
            else:
                cases.append((impl, lay, None))
    for impl, lay, smoothing in cases:
        cfg = base.replace(impl=impl, layout=lay)
        problem = make_problem(cfg, "batch")
        if smoothing in PROGRAMS:
            trainer = JaxJitShardedBatch(problem, program=smoothing)
        elif smoothing is not None:
            trainer = JaxShardmapBatch(problem, smoothing=smoothing)
        else:
            trainer = registry.get(impl).create(problem)
        try:
            per_epoch = _time(trainer, args.epochs_per_chunk, args.repeats)
            desc = trainer.describe() if hasattr(trainer, "describe") else {}
        finally:
            trainer.close()
        label = impl if smoothing is None else f"{impl} ({smoothing})"
        if smoothing is None and ("smoothing" in desc or "program" in desc):
            label = f"{impl} (auto: {desc.get('smoothing') or desc.get('program')})"
        print(
            json.dumps(
                {
                    "devices": n,
                    "layout": lay,
                    "impl": label,
                    "epoch_s": per_epoch,
                    "bytes_per_epoch": desc.get("bytes_per_epoch"),
                    "collectives": len([c for c in desc.get("collectives", []) if c["per_epoch"] and c["sent_bytes"]]),
                }
            ),
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="60 x 34 map")
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--epochs-per-chunk", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--devices", default=",".join(map(str, DEVICE_COUNTS)), help="device counts, comma-separated")
    ap.add_argument("--gpu", action="store_true", help="use the machine's devices (no simulated CPU devices)")
    ap.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.grid = (60, 34) if args.quick else (240, 135)
    if args.worker is not None:
        worker(args)
        return
    rows_data = []
    for n in (int(x) for x in args.devices.split(",")):
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            str(n),
            "--samples",
            str(args.samples),
            "--epochs-per-chunk",
            str(args.epochs_per_chunk),
            "--repeats",
            str(args.repeats),
        ]
        cmd += ["--quick"] if args.quick else []
        cmd += ["--gpu"] if args.gpu else []
        print(f"{n} device(s): {', '.join(layouts(n))} ...", file=sys.stderr, flush=True)
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if proc.returncode != 0:
            print(f"  failed:\n{proc.stderr[-3000:]}", file=sys.stderr)
            continue
        rows_data += [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    base = next((r for r in rows_data if r["impl"] == BASELINE), None)
    if base is None:
        base = next((r for r in rows_data if r["devices"] == 1 and r["impl"].startswith("jax-jit-sharded")), None)
    rows = []
    for r in rows_data:
        ratio = base["epoch_s"] / r["epoch_s"] if base and r["epoch_s"] else None
        b = r["bytes_per_epoch"]
        rows.append(
            [
                r["impl"],
                str(r["devices"]),
                r["layout"],
                fmt_s(r["epoch_s"]),
                f"{ratio:.2f}x" if ratio else "-",
                "-" if b is None else f"{b / 1024:.1f} KiB",
                str(r["collectives"]) if b is not None else "-",
            ]
        )
    w, h = args.grid
    print(
        f"workload: {w}x{h} map, {args.samples} random colours, float32; "
        f"median of {args.repeats} chunks of {args.epochs_per_chunk} epochs"
    )
    print(f"speed-up: against {base['impl'] if base else '?'} on 1 device, measured in this run")
    print("sent/epoch: bytes each device sends per epoch (ring estimates from the compiled HLO's collectives)")
    print(table(["implementation", "devices", "layout", "epoch", "speed-up", "sent/epoch", "collectives"], rows))


if __name__ == "__main__":
    main()
