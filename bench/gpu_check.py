"""One command that checks SOM Studio on a GPU machine and measures it there.

Runs where only Python 3.12, jax and numpy exist (no Qt, no network, no
install), from a plain copy of the source tree:

    PYTHONPATH=. python3 bench/gpu_check.py             # the full check (under 8 minutes on an H100)
    PYTHONPATH=. python3 bench/gpu_check.py --quick     # small sizes: a minute or two, on any machine
    PYTHONPATH=. python3 bench/gpu_check.py --skip-tests --out gpu.json

In order:

1. prints the device JAX runs on (backend, kind, memory);
2. runs the Qt-free test tier on that default backend
   (``SOM_STUDIO_TEST_DEFAULT_BACKEND=1``: ``tests/conftest.py`` then does not
   force CPU devices, the Qt tier is not collected, and tests that need 8
   devices or the CPU backend skip with their reason);
3. the ladder: every registered implementation on the playbook workload
   (240 x 135 map, 1000 random colours, float32), each run long enough to time
   (its iteration count set from a short calibration run, so fast rungs run
   thousands of epochs and the NumPy ones a few);
4. scale: one ``jax-fused-batch`` epoch of a 1024 x 1024 map on 100,000 x 3
   examples, quality pass included (its time reported apart);
5. a 50-feature run: 256 x 256 map, 20,000 x 50, ``jax-fused-batch``;
6. XPySom on CuPy on the same workloads, when both import;
7. the outside clock (``bench/clock.py``): ``jax-fused-batch`` and
   ``jax-scan-online`` on the playbook workload with quality points, wall
   clock per iteration against the recorded ``mean_s``;
8. projection (``som-studio project``'s search): 1,000,000 rows x 50 features
   (quick: 20,000) from a ``.npy`` file onto a 256 x 256 map, in chunks;
9. streaming (``--stream``): ``jax-fused-batch`` on a 32 x 32 map read in batches from a folder
   of ``.npy`` files, 4,000,000 x 50 (quick: 200,000), 3 epochs, beside the same run with the
   folder loaded in memory, and the share of training spent waiting for data;
10. the envelope (``bench/envelope.py``): SOM Studio's batch rungs,
   ``jax-scan-online`` and the floor (a bare argmin matmul) on 100,000
   examples x 3, 50, 784 features x 100x100 and 240x135 maps, and torchsom's
   workload (quick: 10,000 x 3 and 50 on 40x30), one process a shape; XPySom
   and MiniSom (on the CPU) only where they import.

It writes one JSON (``--out``) and prints one table: per-iteration median, p95
and mean, example-unit pairs per second, the ratio to the NumPy reference of
the kind and to XPySom. Figures are per iteration: an epoch for batch runs, a
step for online ones. Nothing here is a pass/fail target; the tests are.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: Seconds of training each ladder rung aims at (after a short calibration run).
LADDER_TARGET_S = {"full": 2.0, "quick": 0.2}
#: Iterations of the calibration run, per kind.
CALIBRATE = {"batch": 3, "online": 200}
#: Bounds on a ladder rung's iterations.
MIN_ITERATIONS, MAX_ITERATIONS = 2, 200_000
#: What the check measures, in order (``--only`` picks some).
PARTS = ("ladder", "scale", "features50", "xpysom", "clock", "project", "stream", "envelope")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="bench/gpu_check.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--quick", action="store_true", help="small sizes and short runs (to check the script itself)")
    ap.add_argument("--skip-tests", action="store_true", help="do not run the test tier")
    ap.add_argument("--tests", default="tests", metavar="PATH", help="what pytest runs (default: %(default)s)")
    ap.add_argument("--out", default="gpu_check.json", metavar="FILE", help="the JSON written (default: %(default)s)")
    ap.add_argument(
        "--only",
        metavar="PARTS",
        help=f"comma-separated subset of {','.join(PARTS)} (default: all)",
    )
    return ap.parse_args(argv)


# -- device -----------------------------------------------------------------------------------------
def device_facts() -> dict[str, Any]:
    from som_studio.core import jax_runtime
    from som_studio.session import env

    jax = jax_runtime.jax()
    devices = [env.device_info(d) for d in jax.devices()]
    return {
        "backend": jax.default_backend(),
        "devices": devices,
        "jax": env._version("jax"),
        "jaxlib": env._version("jaxlib"),
        "python": sys.version.split()[0],
        "precision_policy": env.PRECISION_POLICY,
        "precision_env": env.precision_env(),
    }


def print_device(facts: dict[str, Any]) -> None:
    d0 = facts["devices"][0] if facts["devices"] else {"kind": "?"}
    mem = d0.get("memory_limit")
    more = f", {mem / 2**30:.1f} GiB" if mem else ""
    print(
        f"device: {facts['backend']} ({len(facts['devices'])} x {d0['kind']}{more}); "
        f"jax {facts['jax']}, Python {facts['python']}",
        flush=True,
    )
    print(f"precision policy: {facts['precision_policy']}", flush=True)
    for k, v in facts["precision_env"].items():
        print(f"  warning: {k}={v} is set", flush=True)


# -- tests ------------------------------------------------------------------------------------------
def run_tests(path: str) -> dict[str, Any]:
    """The Qt-free tier on the default backend, in a child process; its summary line and exit status."""
    env = dict(os.environ, SOM_STUDIO_TEST_DEFAULT_BACKEND="1", PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "pytest", path, "-q", "-rs", "-p", "no:cacheprovider"]
    print(f"tests: {' '.join(cmd[2:])} (SOM_STUDIO_TEST_DEFAULT_BACKEND=1) ...", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    summary = lines[-1] if lines else ""
    failed = [ln for ln in lines if ln.startswith(("FAILED", "ERROR"))]
    skipped = sorted({ln.split(": ", 1)[-1] for ln in lines if ln.startswith("SKIPPED")})
    print(f"tests: {summary} ({time.perf_counter() - t0:.0f} s)", flush=True)
    for ln in failed:
        print(f"  {ln}", flush=True)
    for reason in skipped:
        print(f"  skipped: {reason}", flush=True)
    if proc.returncode not in (0, 5) and not failed:
        print("\n".join(lines[-30:]), flush=True)
    return {"returncode": proc.returncode, "summary": summary, "failed": failed, "skip_reasons": skipped}


# -- runs ----------------------------------------------------------------------------------------------
def _session_run(cfg, data=None) -> Any:
    from som_studio.session.session import Session, run_to_completion

    return run_to_completion(Session(cfg, data=data, snapshot_interval_s=None, quality_points=0))


def _row(name: str, workload: str, r: Any, units: int, **extra: Any) -> dict[str, Any]:
    """One table row from a run record: per-iteration figures and example-unit pairs per second."""
    per_it = r.samples if r.kind == "batch" else 1
    mean = r.mean_s
    row = {
        "workload": workload,
        "name": name,
        "kind": r.kind,
        "status": r.status,
        "message": r.message,
        "iterations": r.iterations_done,
        "compile_s": r.compile_s,
        "median_s": r.median_s,
        "p95_s": r.p95_s,
        "mean_s": mean,
        "total_s": r.total_s,
        "pairs_per_s": per_it * units / mean if mean else None,
        "qe": r.qe,
        "te": r.te,
        "kernel_plan": r.extra.get("kernel_plan"),
        "estimate_bytes": r.estimate_bytes,
        "peak_bytes": r.peak_bytes,
    }
    row.update(extra)
    return row


def ladder(quick: bool) -> list[dict[str, Any]]:
    """Every registered implementation on the playbook workload, each for about the target time."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.core.impls import registry

    w, h = (60, 34) if quick else (240, 135)
    target = LADDER_TARGET_S["quick" if quick else "full"]
    base = RunConfig(width=w, height=h, data=DataSpec(samples=1000), seed=0, precision="float32")
    rows = []
    for impl in registry.all_implementations():
        cfg = base.replace(impl=impl.name, layout="1x1") if impl.shards else base.replace(impl=impl.name)

        def with_n(n: int, cfg=cfg, impl=impl):
            return cfg.replace(steps=n if impl.kind == "online" else None, epochs=n if impl.kind == "batch" else None)

        probe = _session_run(with_n(CALIBRATE[impl.kind]))
        if probe.status != "ok" or not probe.mean_s:
            rows.append(_row(impl.name, "playbook", probe, w * h))
            print(f"  {impl.name}: {probe.status}: {probe.message}", flush=True)
            continue
        n = int(min(MAX_ITERATIONS, max(MIN_ITERATIONS, target / probe.mean_s)))
        print(f"  {impl.name}: {n} {'steps' if impl.kind == 'online' else 'epochs'} ...", flush=True)
        rows.append(_row(impl.name, "playbook", _session_run(with_n(n)), w * h))
    return rows


def scale(quick: bool) -> list[dict[str, Any]]:
    """``jax-fused-batch`` at 1024 x 1024 x 100k (quick: 256 x 256 x 10k), quality pass timed apart."""
    from som_studio.config import DataSpec, RunConfig

    side, n, epochs = (256, 10_000, 2) if quick else (1024, 100_000, 2)
    cfg = RunConfig(
        impl="jax-fused-batch", width=side, height=side, data=DataSpec(samples=n), seed=0, epochs=epochs
    ).replace(precision="float32")
    t0 = time.perf_counter()
    r = _session_run(cfg)
    wall = time.perf_counter() - t0
    # The whole run's wall time less training and compile: the final quality pass, data and start-up.
    rest = wall - r.total_s
    return [_row("jax-fused-batch", f"{side}x{side} x {n:,} x 3", r, side * side, wall_s=wall, outside_training_s=rest)]


def features50(quick: bool) -> list[dict[str, Any]]:
    """``jax-fused-batch`` on 50 features: 256 x 256 map, 20,000 examples (quick: 64 x 64, 2,000)."""
    import numpy as np

    from som_studio.config import DataSpec, RunConfig

    side, n, epochs = (64, 2000, 3) if quick else (256, 20_000, 10)
    data = np.random.default_rng(0).random((n, 50))
    cfg = RunConfig(
        impl="jax-fused-batch", width=side, height=side, data=DataSpec(samples=n), seed=0, epochs=epochs
    ).replace(precision="float32")
    r = _session_run(cfg, data=data)
    return [_row("jax-fused-batch", f"{side}x{side} x {n:,} x 50", r, side * side)]


def xpysom_rows(quick: bool) -> list[dict[str, Any]]:
    """XPySom on CuPy (batch), on the ladder's and the 50-feature workloads, when both import."""
    try:
        import contextlib
        import io

        import cupy

        with contextlib.redirect_stdout(io.StringIO()):
            import xpysom  # noqa: F401  (only whether it imports)
    except Exception as exc:  # absent or broken: the check goes on without it
        print(f"  XPySom on CuPy: not run ({type(exc).__name__}: {exc})", flush=True)
        return []
    import numpy as np

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from peers import make_xpysom

    from som_studio.config import DataSpec, RunConfig
    from som_studio.core.plans import quality_jax
    from som_studio.core.som.problem import load_problem_data, make_problem

    rows = []
    for label, side_w, side_h, n, d, epochs in (
        ("playbook", *((60, 34) if quick else (240, 135)), 1000, 3, 5 if quick else 50),
        (
            f"{64 if quick else 256}x{64 if quick else 256} x {2000 if quick else 20_000:,} x 50",
            *((64, 64) if quick else (256, 256)),
            2000 if quick else 20_000,
            50,
            3 if quick else 10,
        ),
    ):
        cfg = RunConfig(
            impl="numpy-batch", width=side_w, height=side_h, data=DataSpec(samples=n), seed=0, epochs=epochs
        )
        data = load_problem_data(cfg) if d == 3 else np.random.default_rng(0).random((n, d))
        p = make_problem(cfg, "batch", data)
        som = make_xpysom(p, cupy)  # as bench/peers.py sets it up
        x = p.data.astype(np.float32)
        times = []
        for e in range(p.iterations):
            t0 = time.perf_counter()
            som.train(x, p.iterations, iter_beg=e, iter_end=e + 1)
            cupy.cuda.Device().synchronize()
            times.append(time.perf_counter() - t0)
        steady = times[1:] or times  # the first epoch carries CuPy's kernel compiles
        med = float(np.median(steady))
        mean = float(np.mean(steady))
        qe, te = quality_jax.quality(np.asarray(cupy.asnumpy(som.get_weights())), p.data)
        rows.append(
            {
                "workload": label,
                "name": "XPySom (CuPy)",
                "kind": "batch",
                "status": "ok",
                "message": "",
                "iterations": p.iterations,
                "compile_s": times[0] - med,
                "median_s": med,
                "p95_s": float(np.percentile(steady, 95)),
                "mean_s": mean,
                "total_s": sum(times),
                "pairs_per_s": n * side_w * side_h / mean,
                "qe": qe,
                "te": te,
            }
        )
    return rows


def clock_rows(quick: bool) -> list[dict[str, Any]]:
    """The outside clock against ``mean_s`` (bench/clock.py) for a batch and an online rung, quality points on."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from clock import outside_clock

    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.session import Session

    w, h = (60, 34) if quick else (240, 135)
    base = RunConfig(width=w, height=h, data=DataSpec(samples=1000), seed=0, precision="float32")
    rows = []
    for name, kind, n in (
        ("jax-fused-batch", "batch", 20 if quick else 2000),
        ("jax-scan-online", "online", 5000 if quick else 200_000),
    ):
        cfg = base.replace(impl=name, **({"epochs": n} if kind == "batch" else {"steps": n}))
        c = outside_clock(Session(cfg, snapshot_interval_s=None, quality_points=10))
        ratio = c["outside_s"] / c["mean_s"] if c["mean_s"] else None
        print(f"  {name}: outside/mean {ratio:.3f} over {c['chunks']} chunks", flush=True)
        rows.append(
            {
                "workload": f"clock {w}x{h}",
                "name": name,
                "kind": kind,
                "status": "ok",
                "message": "",
                "iterations": c["iterations"],
                "median_s": c["median_s"],
                "mean_s": c["mean_s"],
                "outside_s": c["outside_s"],
                "outside_over_mean": ratio,
                "chunks": c["chunks"],
            }
        )
    return rows


def project_rows(quick: bool) -> list[dict[str, Any]]:
    """``som-studio project``'s search: rows x 50 from a .npy file onto a 256 x 256 map, in chunks."""
    import tempfile

    import numpy as np

    from som_studio.trained import SomRun

    n, side, d = (20_000 if quick else 1_000_000), 256, 50
    rng = np.random.default_rng(0)
    run = SomRun(Path("probe.somrun"), {"config": {"precision": "float32"}}, rng.random((side, side, d)), None)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rows.npy"
        np.save(path, rng.random((n, d)))
        t0 = time.perf_counter()
        done = sum(len(p.bmu_row) for p in run.project_chunks(path))
        wall = time.perf_counter() - t0
    print(f"  {done:,} rows in {wall:.2f} s", flush=True)
    return [
        {
            "workload": f"project {n:,} x {d} onto {side}x{side}",
            "name": "som-studio project (search)",
            "kind": "project",
            "status": "ok" if done == n else "failed",
            "message": "",
            "iterations": 1,
            "mean_s": wall,
            "total_s": wall,
            "pairs_per_s": n * side * side / wall,
        }
    ]


def stream_rows(quick: bool) -> list[dict[str, Any]]:
    """``jax-fused-batch`` read in batches from a folder of ``.npy`` files, and in memory (32x32, 50 features)."""
    import tempfile

    import numpy as np

    from som_studio.config import DataSpec, RunConfig

    n, epochs, files = (200_000, 2, 2) if quick else (4_000_000, 3, 4)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        rng = np.random.default_rng(0)
        for i in range(files):
            centres = rng.uniform(0, 4, size=(20, 50)).astype(np.float32)
            part = centres[rng.integers(0, 20, n // files)] + rng.lognormal(0, 0.3, (n // files, 50)).astype(np.float32)
            np.save(Path(tmp) / f"part{i}.npy", part)
        base = RunConfig(
            impl="jax-fused-batch", width=32, height=32, data=DataSpec(path=tmp), seed=0, epochs=epochs, init="random"
        ).replace(precision="float32")
        for name, cfg in (("jax-fused-batch streamed", base.replace(stream=True)), ("jax-fused-batch in memory", base)):
            print(f"  {name} ...", flush=True)
            r = _session_run(cfg)
            read = r.phases.get("read", 0.0)
            rows.append(
                _row(
                    name,
                    f"32x32 x {n:,} x 50, {files} .npy files",
                    r,
                    1024,
                    read_s=read,
                    read_share=read / r.total_s if r.total_s else None,
                )
            )
    return rows


def envelope_rows(quick: bool) -> list[dict[str, Any]]:
    """The envelope at a GPU-sized subset (``bench/envelope.py``): its tables printed, its measured rows.

    Rows skipped there (a refused or predictably slow rung, a peer not installed) stay in its tables and
    not in this check's, where every row is expected to have run.
    """
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import envelope

    if quick:
        shapes = envelope.grid_shapes((10_000,), (3, 50), ((40, 30),))
        args = ["--quick", "--cap", "0.5", "--peer-cap", "0.5"]
    else:
        shapes = envelope.grid_shapes((100_000,), (3, 50, 784), ((100, 100), (240, 135)))
        shapes.append(envelope.torchsom_shape())
        args = ["--cap", "2", "--peer-cap", "5", "--slow", "30"]
    opts = envelope.options(envelope.parse_args(args))

    def show(doc: dict[str, Any]) -> None:
        if doc.get("status") == "failed":
            print(f"  {doc['label']}: failed: {doc['message']}", flush=True)
            return
        print(envelope.format_shape(doc), flush=True)
        for line in envelope.torchsom_lines([doc]):
            print(line, flush=True)

    docs = envelope.run_envelope(shapes, opts, on_shape=show)
    rows = []
    for doc in docs:
        if doc.get("status") == "failed":
            rows.append({"workload": f"envelope {doc['label']}", "name": "(shape)", "kind": "-", **doc})
            continue
        for r in doc["rows"]:
            if r["status"] in ("skipped", envelope.NOT_INSTALLED):
                continue
            rows.append(
                {
                    "workload": f"envelope {doc['label']}",
                    "name": r["name"],
                    "kind": r["kind"],
                    "status": r["status"],
                    "message": r["note"],
                    "iterations": r["iterations"],
                    "compile_s": r["compile_s"],
                    "median_s": r["per_iteration_s"],
                    "p95_s": r["p95_s"],
                    "mean_s": r["mean_s"],
                    "total_s": r["total_s"],
                    "pairs_per_s": r.get("pairs_per_s"),
                    "kernel_plan": r.get("kernel_plan"),
                    "per_epoch_s": r["per_epoch_s"],
                    "x_floor": r.get("x_floor"),
                    "vs_xpysom_numpy": r.get("vs_xpysom"),
                    "peak_rss_bytes": doc.get("peak_rss_bytes"),
                }
            )
    return rows


# -- the table -----------------------------------------------------------------------------------------
def with_ratios(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add ``vs_numpy`` (the NumPy reference's mean over the row's, same workload and kind) and
    ``vs_xpysom`` (XPySom's mean over the row's, same workload, batch rows)."""
    for r in rows:
        ref = next(
            (
                x
                for x in rows
                if x["workload"] == r["workload"] and x["kind"] == r["kind"] and x["name"].startswith("numpy-")
            ),
            None,
        )
        xp = next((x for x in rows if x["workload"] == r["workload"] and x["name"] == "XPySom (CuPy)"), None)
        r["vs_numpy"] = ref["mean_s"] / r["mean_s"] if ref and ref.get("mean_s") and r.get("mean_s") else None
        ok = xp and xp.get("mean_s") and r.get("mean_s") and r["kind"] == "batch"
        r["vs_xpysom"] = xp["mean_s"] / r["mean_s"] if ok else None
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _common import fmt_s, table

    def ratio(v: float | None) -> str:
        return "-" if v is None else (f"{v:.3g}x" if v < 10 else f"{v:,.0f}x")

    head = ["workload", "implementation", "kind", "status", "median/it", "p95/it", "mean/it", "pairs/s"]
    head += ["vs numpy", "vs XPySom", "outside/mean", "compile", "QE", "TE", "kernel plan"]
    out = []
    for r in rows:
        out.append(
            [
                r["workload"],
                r["name"],
                r["kind"],
                r["status"],
                fmt_s(r.get("median_s")),
                fmt_s(r.get("p95_s")),
                fmt_s(r.get("mean_s")),
                f"{r['pairs_per_s']:.3g}" if r.get("pairs_per_s") else "-",
                ratio(r.get("vs_numpy")),
                ratio(r.get("vs_xpysom")),
                f"{r['outside_over_mean']:.3f}" if r.get("outside_over_mean") else "-",
                fmt_s(r.get("compile_s")),
                f"{r['qe']:.4g}" if r.get("qe") is not None else "-",
                f"{r['te']:.3f}" if r.get("te") is not None else "-",
                r.get("kernel_plan") or "-",
            ]
        )
    return table(head, out)


def write_doc(out: str, doc: dict[str, Any], rows: list[dict[str, Any]], t_start: float, *, done: bool) -> None:
    """The JSON as measured so far; ``complete`` says whether every asked part ran."""
    doc["rows"] = with_ratios(rows)
    doc["wall_s"] = time.perf_counter() - t_start
    doc["complete"] = done
    tmp = Path(out).with_name(Path(out).name + ".part")
    tmp.write_text(json.dumps(doc, indent=2, default=str))
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)  # --help ends here, before JAX or anything else starts
    sys.path.insert(0, str(ROOT))
    parts = set((args.only or ",".join(PARTS)).split(","))
    unknown = parts - set(PARTS)
    if unknown:
        print(f"--only: unknown part(s) {', '.join(sorted(unknown))}; choose from {','.join(PARTS)}", file=sys.stderr)
        return 2
    t_start = time.perf_counter()
    facts = device_facts()
    print_device(facts)
    doc: dict[str, Any] = {"device": facts, "quick": args.quick, "tests": None, "rows": []}
    if not args.skip_tests:
        doc["tests"] = run_tests(args.tests)
    rows: list[dict[str, Any]] = []
    write_doc(args.out, doc, rows, t_start, done=False)
    steps = (
        ("ladder", "ladder: every implementation, playbook workload", ladder),
        ("scale", "scale: 1024 x 1024 map, 100,000 examples", scale),
        ("features50", "50 features", features50),
        ("xpysom", "XPySom on CuPy", xpysom_rows),
        ("clock", "outside clock against mean_s", clock_rows),
        ("project", "projection of new rows", project_rows),
        ("stream", "streaming from a folder against memory", stream_rows),
        ("envelope", "the envelope: ours, the floor and installed peers, one process a shape", envelope_rows),
    )
    for key, title, fn in steps:
        if key not in parts:
            continue
        print(f"{title} ...", flush=True)
        t0 = time.perf_counter()
        rows += fn(args.quick)
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
        # Written after every part, so a check stopped at a machine's time limit keeps what it measured.
        write_doc(args.out, doc, rows, t_start, done=False)
    write_doc(args.out, doc, rows, t_start, done=True)
    print()
    if rows:
        print(format_table(doc["rows"]))
    print(f"\nwrote {args.out} ({doc['wall_s']:.0f} s in all)")
    tests_ok = doc["tests"] is None or doc["tests"]["returncode"] in (0, 5)
    runs_ok = all(r["status"] == "ok" for r in rows)
    return 0 if tests_ok and runs_ok else 1


if __name__ == "__main__":
    sys.exit(main())
