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

``--again`` times a fast start instead: the same ``bench`` command twice, fresh processes, with a
compilation cache folder of its own that starts empty (the device ceilings stay the user's), and
prints for each its outside wall time against ``total_s + phases.quality + phases.model + 2 s`` and
its compile times (the second run's target: under 0.2 s), then where the outside time went
that ``total_s`` does not hold: the data, JAX's start, the quality program, and the rest (Python,
imports, the table and the JSON, exit). Modules are byte-compiled first, as an installed package
ships them: an editable checkout run with ``PYTHONDONTWRITEBYTECODE=1`` compiles SOM Studio's
sources in every process, tenths of a second that land in whatever phase imports them.

    python bench/wall_clock.py --again -- --impl jax-fused-batch --data rows.npy --grid 40x30 --epochs 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def timed(cmd: list[str], **extra_env: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra_env}
    t = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench_args", nargs="*", help="after --: som-studio bench's arguments (default: %(default)s)")
    ap.add_argument("--again", action="store_true", help="the same command twice from an empty compile cache")
    args = ap.parse_args()
    bench_args = args.bench_args or DEFAULT
    if args.again:
        again(bench_args)
        return
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


def _children_cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def again(bench_args: list[str]) -> None:
    """The same command twice from an empty compile cache: the wall-time budget and the compile times of each."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "som_studio")], env=env, check=True)
    rows, outside_parts = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, 2):
            out = Path(tmp) / f"runs{n}.json"
            cmd = [sys.executable, "-m", "som_studio", "bench", *bench_args, "--quiet", "--json", str(out)]
            cpu0 = _children_cpu_s()
            outside = timed(cmd, SOM_STUDIO_COMPILE_CACHE=str(Path(tmp) / "jax"))
            cpu = _children_cpu_s() - cpu0
            runs = json.loads(out.read_text())["runs"]
            t = [r["timings"] for r in runs]
            ph = {k: sum(x["phases"][k] for x in t) for k in t[0]["phases"]}
            total = sum(x["total_s"] for x in t)
            budget = total + ph["quality"] + ph["model"] + 2.0
            compile_s = sum(x["compile_s"] for x in t)
            rows.append(
                [
                    f"{n}",
                    fmt_s(outside),
                    fmt_s(cpu),
                    fmt_s(total),
                    fmt_s(budget),
                    "yes" if outside <= budget else "no",
                    fmt_s(compile_s),
                    fmt_s(ph["compile"]),
                ]
            )
            # Outside total_s: reading the data, JAX's start (init less the initial map, which total_s holds),
            # the quality program's compile (the compile phase less the trainer's), and the process's own rest.
            jax_start = ph["init"] - (total - compile_s - ph["train"])
            parts = {"data": ph["data"], "JAX start": jax_start, "quality compile": ph["compile"] - compile_s}
            parts["rest"] = outside - total - ph["quality"] - ph["model"] - sum(parts.values())
            outside_parts.append([f"{n}", *(fmt_s(v) for v in parts.values())])
    head = ["run", "outside", "CPU", "total_s", "budget", "within", "compile_s", "compile phase"]
    print(table(head, rows))
    print(
        "\nbudget: total_s + phases.quality + phases.model + 2 s; compile_s: the trainer's programs; CPU: the "
        "process's user + system seconds (on a busy machine the outside time is the other jobs' as much as ours)\n"
    )
    print(table(["run", "data", "JAX start", "quality compile", "rest (Python, imports, output, exit)"], outside_parts))


if __name__ == "__main__":
    main()
