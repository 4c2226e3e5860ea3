"""A 100-million-step run against a 1-million-step one: the app's and the worker's resident memory.

    .venv/bin/python bench/long_run.py [--minutes 1.5] [--impl jax-jit-online]

Runs ``bench/soak.py --iterations N`` for N = 1,000,000 and 100,000,000 (the
real app on a virtual display, live views on, each run stopped after M
minutes) and prints each one's resident memory at the end and at its most,
side by side, with the ratio 100M / 1M (the target: within 10 %). Schedules
and the sample order come a block at a time: made for the whole run at once,
the 100M run's worker would hold ~1.6 GB of them before its first step.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COUNTS = (1_000_000, 100_000_000)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=1.5, help="how long each run lasts (default 1.5)")
    ap.add_argument("--impl", default="jax-jit-online", help="an online implementation (default jax-jit-online)")
    ap.add_argument("--json", metavar="FILE", help="also write both runs' samples here")
    args = ap.parse_args()
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in COUNTS:
            out = Path(tmp) / f"{n}.json"
            cmd = [sys.executable, str(ROOT / "bench" / "soak.py"), "--minutes", str(args.minutes)]
            cmd += ["--impl", args.impl, "--iterations", str(n), "--json", str(out)]
            print(f"long_run: {n:,} steps for {args.minutes} min", flush=True)
            if subprocess.call(cmd, stdout=subprocess.DEVNULL) != 0 or not out.exists():
                print(f"long_run: the {n:,}-step soak failed", file=sys.stderr)
                return 1
            runs[n] = json.loads(out.read_text())
    small, big = (runs[n]["samples"] for n in COUNTS)
    print(f"\n{'resident MB':<22}{'1M steps':>12}{'100M steps':>12}{'100M / 1M':>12}")
    for key in ("worker_rss_mb", "app_rss_mb"):
        for what, pick in (
            ("end", lambda s, k=key: [x[k] for x in s if x[k]][-1]),
            ("max", lambda s, k=key: max(x[k] for x in s if x[k])),
        ):
            a, b = pick(small), pick(big)
            print(f"{key.split('_')[0] + ' ' + what:<22}{a:>12.1f}{b:>12.1f}{b / a:>12.3f}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"impl": args.impl, "runs": {str(n): runs[n] for n in COUNTS}}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
