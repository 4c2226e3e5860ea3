"""Training from a stream against the same run in memory, on a synthetic cytometry-like Parquet data set.

    python bench/stream.py --rows 10000000                  # 10^7 x 50, 32x32, 10 epochs: streamed and in memory
    python bench/stream.py --rows 100000000 --epochs 1      # 10^8 x 50 (20 GB): streamed only (it does not fit)
    python bench/stream.py --rows 200000,20000000 --features 20 --epochs 1 --no-memory   # peak RSS against rows
    python bench/stream.py --rows 1000000 --features 20 --grid 8x8 --epochs 1 --impl jax-scan-online

An online rung (``--impl jax-scan-online``) trains one step per row and pass: ``--epochs`` passes are
``rows x epochs`` steps, in the files' order when streamed and at seeded random rows in memory.

The data set is written once into ``--dir`` (a folder per size, reused by later runs): a seeded
mixture of 20 populations, each a skewed (log-normal) cloud around its own centre, as arcsinh-
transformed marker intensities look, in uncompressed files of 10^6 rows and row groups of 2^17,
written by two processes (10^8 rows: about 5 minutes here). Every run is
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
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial
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


def dataset(folder: Path, rows: int, features: int, seed: int = 0, workers: int = 2) -> Path:
    """The data set of ``rows`` x ``features`` in ``folder`` (written once; a ``done`` file marks it whole).

    Files are written by ``workers`` processes, each file from its own seeded generator, so the data
    are the same whatever the number of workers or a writing interrupted and taken up again.
    """
    out = folder / f"cyto-{rows}x{features}-s{seed}-v2"
    if (out / "done").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    todo = [
        (out, i, first, min(FILE_ROWS, rows - first), features, seed)
        for i, first in enumerate(range(0, rows, FILE_ROWS))
    ]
    todo = [t for t in todo if not _part(out, t[1]).exists()]
    t0 = time.perf_counter()
    done = rows - sum(t[3] for t in todo)
    # spawn, not fork: the pool's workers start clean of this process's threads (pyarrow's, JAX's).
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        for n in pool.map(_write_part, todo):
            done += n
            print(f"  wrote {done:,} of {rows:,} rows ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    (out / "done").write_text("ok\n")
    return out


def _part(out: Path, i: int) -> Path:
    return out / f"part{i:05d}.parquet"


def _write_part(job: tuple[Path, int, int, int, int, int]) -> int:
    """Write file ``i`` of the data set: ``n`` rows drawn feature-major, so every column is contiguous."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out, i, _first, n, features, seed = job
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.0, 4.0, size=(features, POPULATIONS)).astype(np.float32) - 1.0
    spread = rng.uniform(0.1, 0.6, size=(features, POPULATIONS)).astype(np.float32)
    weights = rng.dirichlet(np.full(POPULATIONS, 2.0))
    r = np.random.default_rng([seed, i])
    pop = r.choice(POPULATIONS, size=n, p=weights)
    x = r.standard_normal((features, n), dtype=np.float32)
    x *= spread[:, pop]
    np.exp(x, out=x)
    x += centres[:, pop]
    table = pa.Table.from_arrays([pa.array(col) for col in x], names=[f"m{j:02d}" for j in range(features)])
    path = _part(out, i)
    tmp = path.with_suffix(".tmp")
    # Uncompressed and plain: random floats do not compress, and writing is then a copy to disk.
    pq.write_table(table, tmp, row_group_size=GROUP_ROWS, compression="none", use_dictionary=False)
    tmp.rename(path)
    return n


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
    """``som-studio bench ARGS --json`` in a fresh process: its run and its peak RSS in bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "runs.json"
        run, peak = _child([sys.executable, "-m", "som_studio", "bench", *args, "--quiet", "--json", str(out)], out)
        return run["runs"][0], peak


#: The in-memory run: the folder read whole into one float32 array, then ``som_studio.train`` on it.
#: (Given the folder, ``som-studio bench`` would stream a table whose float64 copies do not fit in
#: half the available memory, as 10^7 x 50 here, without being asked.)
IN_MEMORY = """
import json, sys
from pathlib import Path
import numpy as np, pyarrow.dataset as ds
import som_studio
folder, out, impl, grid, count, n = sys.argv[1:7]
table = ds.dataset(sorted(str(p) for p in Path(folder).glob("*.parquet")), format="parquet").to_table()
x = np.empty((table.num_rows, table.num_columns), np.float32)
for j, col in enumerate(table.columns):
    x[:, j] = col.to_numpy()
del table
run = som_studio.train(x, impl=impl, grid=grid, scaling="none", init="random", seed=0, **{count: int(n)})
json.dump(run.record, open(out, "w"))
"""


def in_memory(folder: Path, impl: str, grid: str, count: str, n: int) -> tuple[dict, int]:
    """The same run as ``bench`` 's, with every row in memory (``count`` ``epochs`` or ``steps``, ``n`` of
    them): its run and its peak RSS in bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [sys.executable, "-c", IN_MEMORY, str(folder), str(out), impl, grid, count, str(n)]
        return _child(cmd, out)


def _child(cmd: list[str], out: Path) -> tuple[dict, int]:
    """Run ``cmd`` in a fresh process: the JSON it writes to ``out`` and its peak RSS in bytes.

    The peak is the child's own ``VmHWM`` (``/proc/PID/status``), read until it exits: the rusage of
    ``wait4`` also counts the pages of this process that the child was forked with (Linux keeps the
    larger high-water mark across ``exec``), and this process holds JAX and the data it wrote.
    """
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "stderr.txt"
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
        got: dict = json.loads(out.read_text())
        return got, peak


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
        key, n = ("steps", rows * args.epochs) if online else ("epochs", args.epochs)
        common = ["--data", str(folder), "--impl", args.impl, "--grid", args.grid, f"--{key}", str(n)]
        common += ["--scaling", "none", "--init", "random"]
        streamed = [*common, "--stream"] + (["--batch-rows", str(args.batch_rows)] if args.batch_rows else [])
        runs = [("streamed", partial(bench, streamed))]
        if not args.no_memory:
            runs.append(("in memory", partial(in_memory, folder, args.impl, args.grid, key, n)))
        for name, go in runs:
            run, rss = go()
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
