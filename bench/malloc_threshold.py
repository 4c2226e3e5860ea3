"""What fixing glibc's mmap threshold costs the worker's hot paths, side by side with glibc's own.

    .venv/bin/python bench/malloc_threshold.py --rounds 5
    .venv/bin/python bench/malloc_threshold.py --thresholds 131072 1048576 4194304

The worker fixes the threshold (``som_studio/worker/malloc.py``) so that its
memory does not step up minutes into a run. Each setting runs in a fresh
process (the threshold is per process and cannot be unset), the settings taking
turns round by round, and each process times on the app's default problem
(240x135 map, 1000 colours):

* ``step``: one ``jax-jit-online`` step (4,000 steps after warm-up), what a live
  run's speed is made of;
* ``frame``: the sender's work for one live frame (copy the map off the device,
  draw the RGB picture).

``dynamic`` is glibc's default (128 KiB, raised as blocks are freed); a number is
a fixed threshold in bytes, with the trim threshold at twice it, as the worker
sets them. It prints medians over the rounds and their ratio to ``dynamic``;
nothing here asserts. Linux with glibc only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

from _common import ROOT, table

CHILD = r"""
import json, sys, time
import numpy as np
from som_studio.worker import malloc
if sys.argv[1] != "dynamic":
    assert malloc.fix_mmap_threshold(int(sys.argv[1]))
malloc.cap_arenas()
from som_studio import picture
from som_studio.config import RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.core.som.problem import make_problem
jax_runtime.configure(None)
cfg = RunConfig(impl="jax-jit-online", steps=200_000)
impl = registry.get(cfg.impl)
trainer = impl.create(make_problem(cfg, impl.kind))
trainer.warmup()
trainer.run(0, 500)
t0 = time.perf_counter()
trainer.run(500, 4000)
step = (time.perf_counter() - t0) / 4000
lo, hi = np.zeros(3), np.ones(3)
t0 = time.perf_counter()
for i in range(200):
    picture.make_frame(i, trainer.get_map(), picture.ViewChoice("rgb", 0), lo, hi, picture.MapViews())
frame = (time.perf_counter() - t0) / 200
print(json.dumps({"step_us": step * 1e6, "frame_ms": frame * 1e3}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="processes per setting, taking turns (default %(default)s)")
    ap.add_argument(
        "--thresholds",
        nargs="+",
        type=int,
        default=[128 * 1024, 4 * 1024 * 1024],
        metavar="BYTES",
        help="fixed thresholds to compare with glibc's dynamic one (default: 128 KiB and the worker's 4 MiB)",
    )
    args = ap.parse_args()
    modes = ["dynamic", *(str(t) for t in args.thresholds)]
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for r in range(args.rounds):
        for mode in modes:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, mode],
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
                text=True,
                timeout=600,
            )
            if out.returncode != 0:
                print(out.stderr[-2000:], file=sys.stderr)
                return 1
            results[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr, flush=True)
    med = {m: {k: statistics.median(x[k] for x in results[m]) for k in ("step_us", "frame_ms")} for m in modes}
    rows = []
    for m in modes:
        label = m if m == "dynamic" else f"fixed {int(m) / 1024:g} KiB"
        rows.append(
            [
                label,
                f"{med[m]['step_us']:.0f}",
                f"{med[m]['step_us'] / med['dynamic']['step_us']:.2f}x",
                f"{med[m]['frame_ms']:.2f}",
                f"{med[m]['frame_ms'] / med['dynamic']['frame_ms']:.2f}x",
            ]
        )
    print(table(["threshold", "step µs", "vs dynamic", "frame ms", "vs dynamic"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
