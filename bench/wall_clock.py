"""A stopwatch around a whole ``som-studio bench`` process against its runs' ``timings.wall_s``.

Each run record carries ``wall_s``, the seconds from the start of the run to its
final event. A whole ``bench`` process is those runs plus the process's own
start-up (Python, SOM Studio's imports, JAX's devices) and its last words (the
table, the JSON). This script times, side by side in one go:

1. the start-up alone: a fresh process that imports what ``bench`` imports, then
   exits (JAX starts inside the first JAX run, in its ``data`` phase);
2. the whole ``som-studio bench ... --json FILE`` process, from outside;

and prints the outside time beside the sum of the runs' ``wall_s`` plus the
start-up, with their ratio (the target: within 5 %), and each run's phases.

    python bench/wall_clock.py                                   # three rungs on a 60x34 map
    python bench/wall_clock.py -- --impl jax-fused-batch --grid 1024x1024 --samples 100000 --epochs 1
    python bench/wall_clock.py -- --impl jax-fused-batch --data rows.npy --grid 25x15 --epochs 100 --init random
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT, fmt_s, table

DEFAULT = ["--impl", "numpy-batch,jax-fused-batch,jax-scan-online", "--grid", "60x34", "--epochs", "20"]
# What the process does before its first run starts: Python and SOM Studio's imports. JAX starts
# inside the first JAX run (its data phase), so it is not start-up here.
STARTUP = "import som_studio.cli, som_studio.commands.bench, som_studio.session.session"


def timed(cmd: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_args", nargs="*", help="after --: som-studio bench's arguments (default: %(default)s)")
    args = ap.parse_args()
    bench_args = args.bench_args or DEFAULT
    startup = timed([sys.executable, "-c", STARTUP])
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "runs.json"
        outside = timed([sys.executable, "-m", "som_studio", "bench", *bench_args, "--quiet", "--json", str(out)])
        runs = json.loads(out.read_text())["runs"]
    walls = sum(r["timings"]["wall_s"] for r in runs)
    rows = [
        [r["impl"], fmt_s(r["timings"]["total_s"]), fmt_s(r["timings"]["wall_s"])]
        + [fmt_s(v) for v in r["timings"]["phases"].values()]
        for r in runs
    ]
    print(table(["run", "total", "wall", *runs[0]["timings"]["phases"]], rows))
    inside = walls + startup
    print(
        f"\noutside {fmt_s(outside)}; runs' wall_s {fmt_s(walls)} + start-up {fmt_s(startup)} = {fmt_s(inside)}: "
        f"ratio {inside / outside:.3f} (target within 5 %: 0.95-1.05)"
    )


if __name__ == "__main__":
    main()
