"""Training from a stream against the same run in memory, on a synthetic cytometry-like Parquet data set.

    python bench/stream.py --rows 10000000                  # 10^7 x 50, 32x32, 10 epochs: streamed and in memory
    python bench/stream.py --rows 100000000 --epochs 1      # 10^8 x 50 (20 GB): streamed only (it does not fit)
    python bench/stream.py --rows 200000,20000000 --features 20 --epochs 1 --no-memory   # peak RSS against rows
    python bench/stream.py --rows 1000000 --features 20 --grid 8x8 --epochs 1 --impl jax-scan-online

An online rung (``--impl jax-scan-online``) trains one step per row and pass: ``--epochs`` passes are
``rows x epochs`` steps, in the files' order when streamed and at seeded random rows in memory.

The data set is written once into ``--dir`` (a folder per size, reused by later runs): a seeded
mixture of 20 populations, each a skewed (log-normal) cloud around its own centre, as arcsinh-
transformed marker intensities look, in files of 10^6 rows and row groups of 2^17. Every run is
``som-studio bench`` in a fresh process, so its peak RSS (the process's own ``VmHWM``) is one
run's. Printed per run: seconds per epoch, rows per second, example-unit pairs per second, achieved
FLOP/s of the BMU search (2 D per pair) against the measured float32 matmul ceiling of
this machine, the share of training spent waiting for data, peak RSS; beside them FloatSOM's
published figures (10^8 x 50, 32x32, 10 iterations: 610 s on one V100; 10^9 rows: 369 s on 8
V100s) as pairs per second.
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

import numpy as np
from _common import ROOT, table

POPULATIONS = 20
FILE_ROWS = 1_000_000
GROUP_ROWS = 1 << 17
#: FloatSOM (2026), as published: (rows, units, iterations, seconds, GPUs).
FLOATSOM = [
    ("FloatSOM, 1 V100 (published)", 10**8, 1024, 10, 610.0, 1),
    ("FloatSOM, 8 V100 (published)", 10**9, 1024, 10, 369.0, 8),
]


def dataset(folder: Path, rows: int, features: int, seed: int = 0) -> Path:
    """The data set of ``rows`` x ``features`` in ``folder`` (written once; a ``done`` file marks it whole)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = folder / f"cyto-{rows}x{features}-s{seed}"
    if (out / "done").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.0, 4.0, size=(POPULATIONS, features))
    spread = rng.uniform(0.1, 0.6, size=(POPULATIONS, features))
    weights = rng.dirichlet(np.full(POPULATIONS, 2.0))
    names = [f"m{j:02d}" for j in range(features)]
    t0 = time.perf_counter()
    for i, first in enumerate(range(0, rows, FILE_ROWS)):
        path = out / f"part{i:05d}.parquet"
        if path.exists():
            continue
        n = min(FILE_ROWS, rows - first)
        r = np.random.default_rng([seed, i])
        pop = r.choice(POPULATIONS, size=n, p=weights)
        skew = np.exp(r.normal(size=(n, features)).astype(np.float32) * spread[pop].astype(np.float32))
        x = (centres[pop] + skew - 1.0).astype(np.float32)
        tmp = path.with_suffix(".tmp")
        pq.write_table(pa.table({c: x[:, j] for j, c in enumerate(names)}), tmp, row_group_size=GROUP_ROWS)
        tmp.rename(path)
        print(f"  wrote {first + n:,} of {rows:,} rows ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    (out / "done").write_text("ok\n")
    return out


def matmul_ceiling() -> float:
    """float32 FLOP/s of a large matrix product on JAX's default device (best of five)."""
    import jax
    import jax.numpy as jnp

    n = 2048
    a = jnp.ones((n, n), jnp.float32)
    f = jax.jit(lambda a: a @ a)
    f(a).block_until_ready()
    best = min(_timed(lambda: f(a).block_until_ready()) for _ in range(5))
    return 2 * n**3 / best


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench(args: list[str]) -> tuple[dict, int]:
    """``som-studio bench ARGS --json`` in a fresh process: its run and its peak RSS in bytes.

    The peak is the child's own ``VmHWM`` (``/proc/PID/status``), read until it exits: the rusage of
    ``wait4`` also counts the pages of this process that the child was forked with (Linux keeps the
    larger high-water mark across ``exec``), and this process holds JAX and the data it wrote.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out, log = Path(tmp) / "runs.json", Path(tmp) / "stderr.txt"
        cmd = [sys.executable, "-m", "som_studio", "bench", *args, "--quiet", "--json", str(out)]
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        with open(log, "w") as err:
            proc = subprocess.Popen(
                cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": path}, stdout=subprocess.DEVNULL, stderr=err
            )
            peak = 0
            while proc.poll() is None:
                peak = max(peak, _hwm(proc.pid))
                time.sleep(0.2)
        if not out.exists():
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{log.read_text()}")
        return json.loads(out.read_text())["runs"][0], peak


def _hwm(pid: int) -> int:
    """A process's peak resident memory so far, in bytes (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="10000000", help="rows, or several separated by commas; default %(default)s")
    ap.add_argument("--features", type=int, default=50, help="default %(default)s")
    ap.add_argument("--grid", default="32x32", help="default %(default)s")
    ap.add_argument("--epochs", type=int, default=10, help="passes over the data (online: rows x passes steps)")
    ap.add_argument("--impl", default="jax-fused-batch", help="default %(default)s")
    ap.add_argument("--batch-rows", type=int, default=None, help="default: the preflight's")
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "som-studio-stream"), help="default %(default)s")
    ap.add_argument("--no-memory", action="store_true", help="skip the in-memory runs")
    args = ap.parse_args()
    sizes = [int(r) for r in args.rows.split(",")]
    from som_studio.core.impls import registry

    online = registry.get(args.impl).kind == "online"
    ceiling = matmul_ceiling()
    print(f"float32 matmul ceiling here: {ceiling / 1e9:.1f} GFLOP/s", flush=True)
    head = ["run", "rows", "s / epoch", "rows/s", "pairs/s", "FLOP/s", "of ceiling", "read wait", "peak RSS", "QE"]
    rows_out: list[list[str]] = []
    units = int(np.prod([int(v) for v in args.grid.split("x")]))
    for rows in sizes:
        folder = dataset(Path(args.dir), rows, args.features)
        count = ["--steps", str(rows * args.epochs)] if online else ["--epochs", str(args.epochs)]
        common = ["--data", str(folder), "--impl", args.impl, "--grid", args.grid, *count]
        common += ["--scaling", "none", "--init", "random"]
        runs = [
            ("streamed", [*common, "--stream"] + (["--batch-rows", str(args.batch_rows)] if args.batch_rows else []))
        ]
        if not args.no_memory:
            runs.append(("in memory", common))
        for name, cmd in runs:
            run, rss = bench(cmd)
            if run["status"] != "ok":
                rows_out.append([name, f"{rows:,}", run["status"], run.get("message") or "", "", "", "", "", "", ""])
                continue
            train = run["timings"]["total_s"]
            pairs = rows * units * args.epochs / train
            flops = 2 * args.features * pairs
            read = run["timings"]["phases"].get("read", 0.0)
            rows_out.append(
                [
                    name,
                    f"{rows:,}",
                    f"{train / args.epochs:.2f}",
                    f"{rows * args.epochs / train:,.0f}",
                    f"{pairs:.3g}",
                    f"{flops:.3g}",
                    f"{flops / ceiling:.0%}",
                    f"{read / train:.0%}",
                    f"{rss / 2**20:,.0f} MiB",
                    f"{run['quality']['qe']:.4f}" if run["quality"].get("qe") is not None else "-",
                ]
            )
            print(table(head, rows_out[-1:]), flush=True)
    for name, n, m, it, s, _gpus in FLOATSOM:
        rows_out.append(
            [name, f"{n:,}", f"{s / it:.1f}", f"{n * it / s:,.0f}", f"{n * m * it / s:.3g}", "", "", "", "", ""]
        )
    print()
    print(table(head, rows_out))


if __name__ == "__main__":
    main()
