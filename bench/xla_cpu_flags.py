"""XLA's own CPU paths for the search's products: each flag set timed in a fresh process, held to the default.

XLA's CPU backend can hand dots (and element-wise ops and reductions) to libraries of its own:
YNNPACK, XNNPACK and oneDNN, chosen by ``XLA_FLAGS``. Whether one of them runs the searches of
many rows on a small map faster is a question for each jaxlib: this script asks it. For each flag
set, in a fresh process with that ``XLA_FLAGS``, at one shape (uniform float32 examples and map,
seeded), it times, best of a few, after compiling:

* ``floor``: the bare search, a jitted ``argmin(|w|^2 - 2 x.w)`` over all examples at once;
* ``product+min``: the same product reduced to each example's least score (XLA fuses the two);
* ``epoch``: one ``jax-fused-batch`` epoch by the plan the cost model chooses at this shape;

and checks that the epoch's map is the default's to the bit (``exact``). A flag set that this
jaxlib does not know makes its process fail, named in the table. The flag sets run ``--rounds``
times, in turn, the order reversed every other round (a shared machine's load moves between
processes); each figure is the best of every round's.

    python bench/xla_cpu_flags.py                          # 1,000,000 x 30 on 10x10, every flag set
    python bench/xla_cpu_flags.py --shape 100000:50:20x20 --rounds 3 --only default,"oneDNN thunks"
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The flag sets tried, by name: the default first (what the others are held to).
FLAG_SETS = {
    "default": "",
    "no YNNPACK dots": "--xla_cpu_experimental_ynn_fusion_type=",
    "YNNPACK + eltwise + reduce": "--xla_cpu_experimental_ynn_fusion_type=+eltwise,+reduce",
    "XNNPACK dots": "--xla_cpu_experimental_ynn_fusion_type=-dot --xla_cpu_experimental_xnn_fusion_type=dot",
    "XNNPACK all": "--xla_cpu_experimental_ynn_fusion_type=-dot "
    "--xla_cpu_experimental_xnn_fusion_type=dot,eltwise,reduce",
    "use XNNPACK": "--xla_cpu_use_xnnpack=true",
    "XNNPACK graph greedy": "--xla_cpu_experimental_xnn_graph_fusion_mode=XNN_GRAPH_FUSION_MODE_GREEDY",
    "oneDNN thunks": "--xla_cpu_experimental_ynn_fusion_type=-dot --xla_cpu_use_onednn=true",
    "oneDNN dots": "--xla_cpu_experimental_ynn_fusion_type=-dot --xla_cpu_experimental_onednn_fusion_type=dot",
    "512-bit vectors": "--xla_cpu_prefer_vector_width=512",
}


def child(shape: tuple[int, int, int, int], repeats: int, out: str) -> None:
    """Time the floor, the product reduced to its minimum and one epoch in this process; write them to ``out``."""
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from som_studio.core import jax_runtime
    from som_studio.core.impls import jax_fused
    from som_studio.core.plans import fused_plan

    jax = jax_runtime.jax()
    jnp, lax = jax.numpy, jax.lax
    n, d, width, height = shape
    m = width * height
    rng = np.random.default_rng(0)
    x = jax.device_put(rng.random((n, d), dtype=np.float32))
    w = jax.device_put(rng.random((d, height, width), dtype=np.float32))
    sigma = jnp.asarray(1.5, jnp.float32)
    plan = fused_plan.choose("cpu", m, d, n, 4)

    def scores(x, w):
        wt = w.reshape(d, m)
        return jnp.sum(wt * wt, axis=0) - 2 * jnp.matmul(x, wt, precision=lax.Precision.HIGHEST)

    programs = {
        "floor": jax.jit(lambda x, w: jnp.argmin(scores(x, w), axis=1)),
        "product+min": jax.jit(lambda x, w: jnp.min(scores(x, w), axis=1)),
        "epoch": jax.jit(lambda x, w: jax_fused.batch_epoch(w, x, sigma, sigma, plan)),
    }
    times: dict[str, float] = {}
    for name, program in programs.items():
        result = jax.block_until_ready(program(x, w))
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            jax.block_until_ready(program(x, w))
            best = min(best, time.perf_counter() - t)
        times[name] = best
    np.save(out + ".npy", np.asarray(result))  # the epoch's map, held to the default's
    Path(out).write_text(json.dumps({"times": times, "plan": str(plan)}))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", default="1000000:30:10x10", help="N:D:WxH (default: %(default)s)")
    ap.add_argument("--repeats", type=int, default=3, help="timed calls per program (default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=2, help="runs of every flag set, in turn (default: %(default)s)")
    ap.add_argument("--only", help="comma-separated flag set names (default: all; the default's always runs)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    n, d, grid = args.shape.split(":")
    width, height = (int(v) for v in grid.lower().split("x"))
    shape = (int(n), int(d), width, height)
    if args.child:
        child(shape, args.repeats, args.child)
        return
    import tempfile

    import numpy as np

    names = list(FLAG_SETS)
    if args.only:
        wanted = {v.strip() for v in args.only.split(",")}
        unknown = wanted - set(names)
        if unknown:
            ap.error(f"--only: unknown flag sets {sorted(unknown)}; choose from {names}")
        names = [k for k in names if k == "default" or k in wanted]
    load = os.getloadavg()[0]
    best: dict[str, dict[str, float]] = {}
    plans: dict[str, str] = {}
    exact: dict[str, str] = {}
    failed: dict[str, str] = {}
    reference = None
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            # the default first in the first round: every other map is held to its map
            for name in names if r % 2 == 0 else names[::-1]:
                if name in failed:
                    continue
                out = str(Path(tmp) / f"{name}-{r}.json")
                env = {**os.environ, "XLA_FLAGS": FLAG_SETS[name], "SOM_STUDIO_COMPILE_CACHE": "off"}
                cmd = [sys.executable, __file__, "--shape", args.shape, "--repeats", str(args.repeats), "--child", out]
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if proc.returncode or not Path(out).exists():
                    failed[name] = (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]
                    continue
                got = json.loads(Path(out).read_text())
                new_map = np.load(out + ".npy")
                reference = new_map if reference is None else reference
                gap = float(np.abs(new_map - reference).max())
                if exact.get(name, "exact") == "exact":
                    exact[name] = "exact" if np.array_equal(new_map, reference) else f"differs by up to {gap:.3g}"
                plans[name] = got["plan"]
                mine = best.setdefault(name, {})
                for k, v in got["times"].items():
                    mine[k] = min(mine.get(k, float("inf")), v)
    print(
        f"{shape[0]:,} x {shape[1]} on {width}x{height}: best of {args.repeats} calls x {args.rounds} rounds, "
        f"load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    )
    print(f"{'flags':28s} {'floor':>10s} {'product+min':>12s} {'epoch':>10s}  {'vs default':>10s}  plan, exact")
    for name in names:
        if name in failed:
            print(f"{name:28s} failed: {failed[name]}")
            continue
        t = best[name]
        ratio = best["default"]["epoch"] / t["epoch"] if "default" in best else float("nan")
        cells = [f"{t[k] * 1e3:8.1f} ms" for k in ("floor", "product+min", "epoch")]
        print(
            f"{name:28s} {cells[0]:>10s} {cells[1]:>12s} {cells[2]:>10s}  {ratio:9.2f}x  {plans[name]}, {exact[name]}"
        )


if __name__ == "__main__":
    main()
