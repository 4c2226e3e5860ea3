"""Run the Qt tier (``tests/qt``) again and again, each time in a fresh process, to catch a rare flake.

    .venv/bin/python bench/qt_loop.py --runs 10
    .venv/bin/python bench/qt_loop.py --runs 100 --json qt_loop.json --keep-going

A flake as rare as one pytest-qt fatal error in 40 full runs needs many runs to show. Each run here is
``python -X faulthandler -m pytest tests/qt`` in a new interpreter (a crash
takes only its own run down); the script reports how many consecutive runs
passed, the longest streak, and, for every failed run, its exit status (a
negative one is the signal that killed it: -6 is SIGABRT, a Qt fatal error) and
the tail of its output, saved in full under ``--logs``. It is CPU heavy: on a
shared machine run a few at a time. Nothing here asserts; it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def describe(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return {0: "passed", 1: "tests failed", 2: "interrupted", 3: "internal error", 4: "usage error"}.get(
        code, f"exit {code}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10, help="how many runs (default %(default)s)")
    ap.add_argument("--keep-going", action="store_true", help="go on after a failure (default: stop at the first)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds before a run counts as hung")
    ap.add_argument("--logs", type=Path, help="folder for the full output of failed runs (default: a temp folder)")
    ap.add_argument("--json", metavar="FILE", help="write every run's status and duration here")
    ap.add_argument("pytest_args", nargs="*", help="extra arguments for pytest (after --)")
    args = ap.parse_args()
    logs = args.logs or Path(tempfile.mkdtemp(prefix="som-qt-loop-"))
    logs.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen")}
    cmd = [sys.executable, "-X", "faulthandler", "-m", "pytest", "tests/qt", "-q", "-p", "no:cacheprovider"]
    cmd += args.pytest_args
    runs: list[dict] = []
    streak = best = 0
    for i in range(1, args.runs + 1):
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
            code, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            code = -9
            output = f"{exc.stdout or ''}{exc.stderr or ''}\n[hung: killed after {args.timeout:.0f} s]"
        seconds = time.perf_counter() - t0
        last = next((line for line in reversed(output.strip().splitlines()) if line.strip()), "")
        run = {"run": i, "exit": code, "status": describe(code), "seconds": round(seconds, 1), "summary": last}
        if code == 0:
            streak += 1
            best = max(best, streak)
            print(f"run {i:3d}: passed in {seconds:5.0f} s   ({last.strip('= ')})", flush=True)
        else:
            streak = 0
            log = logs / f"run-{i:03d}.log"
            log.write_text(output)
            run["log"] = str(log)
            print(f"run {i:3d}: {describe(code)} after {seconds:.0f} s; full output: {log}", flush=True)
            print("    " + "\n    ".join(output.strip().splitlines()[-40:]), flush=True)
        runs.append(run)
        if code != 0 and not args.keep_going:
            break
    passed = sum(r["exit"] == 0 for r in runs)
    leading = next((i for i, r in enumerate(runs) if r["exit"] != 0), len(runs))
    print(
        f"\n{passed} of {len(runs)} runs passed; {leading} consecutive from the first, "
        f"longest streak {best}, current streak {streak}"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"runs": runs, "passed": passed, "consecutive_from_first": leading, "longest": best}, indent=1)
        )
    return 0 if passed == len(runs) else 1


if __name__ == "__main__":
    sys.exit(main())
