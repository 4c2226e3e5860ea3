"""SOM Studio against its peers across the shapes users have, side by side in one process per shape.

For each shape (examples x features, map width x height) a fresh process
makes the data (uniform in [0, 1), float32, seeded) and times, one after
another:

* every batch implementation SOM Studio registers (``jax-fused-batch``, the
  NumPy and vmap rungs, and the sharded ones on layout 1x1, one device), and
  ``jax-scan-online``, each through :class:`~som_studio.session.session.Session`
  as the app and ``som-studio bench`` run them: ``init`` random, float32, the
  data passed in as an array, no quality measurement and no snapshots while it
  trains. A rung the memory preflight refuses is skipped with its words. A rung
  that would take minutes an epoch is skipped too (``--slow``): the per-example
  rungs (``numpy-batch``, ``jax-vmap-batch``) first run one epoch on 50
  examples, which predicts theirs; the sharded rungs, on one device, are
  predicted by ``jax-fused-batch``'s epoch, which always runs;
* XPySom (NumPy backend, float32), MiniSom batch (``train_batch_offline``) and
  MiniSom online (``train(..., random_order=True)``, float64: it has no float32),
  set up as ``bench/peers.py`` sets them up (our start map, radii, Gaussian);
  where a peer is not installed its row says so and the rest goes on;
* the floor: a plain jitted ``argmin(|w|^2 - 2 x.w)`` over units, one
  ``jnp.matmul`` at ``precision=HIGHEST`` of the same examples x units x
  features (in pieces of examples when the N x M scores would pass 256 MiB).
  A batch epoch must at least find every example's best unit; this is what a
  bare matrix product takes to do so, with no neighbourhood and no update.

    pip install -e ".[bench]"                       # MiniSom and XPySom (optional)
    python bench/envelope.py --quick                # 8 shapes + torchsom's workload, about 5 minutes here
    python bench/envelope.py                        # every shape (hours on a 2-core CPU)
    python bench/envelope.py --samples 100000 --maps 240x135 --features 784 --cap 60
    python bench/envelope.py --shapes 16000:300:25x15,torchsom --no-peers --json out.json
    python bench/envelope.py --users --cap 5      # the shapes users have beyond the grid (USER_SHAPES)

Shapes: --samples x --features x --maps (default 10,000 and 100,000 examples;
3, 10, 50, 300, 784 features; 40x30, 100x100, 240x135 maps), then the shapes
users have beyond that grid (``USER_SHAPES``: a million rows on maps of at most
400 units with 10-50 features, 1,000 and more features, a map of 40,000 units;
``--users`` runs only these), plus torchsom's
published workload (16,000 x 300 float32 rows in 10 Gaussian blobs, a 25x15
map, 100 epochs: torchsom reports 11.6 s on a T4, 30.4 s on an 8-core CPU and
1,939 s for MiniSom). There ``jax-fused-batch`` trains all 100 epochs (with
``--quick`` too: its epochs cost more once the map's units crowd onto the blobs,
so its first ones would flatter it), so its full run compares with theirs; the
others are capped as everywhere and their 100 epochs projected from their
per-epoch figure (XPySom's and MiniSom's epochs cost the same whatever the map).

Caps. Each contender trains until --cap seconds (--peer-cap for peers) of
timed iterations have passed, at least one iteration, at most --epochs epochs
(--steps steps online, --peer-epochs for peers). A peer whose full epoch would
pass its cap is timed on a subset of the examples and its epoch extrapolated
by examples (MiniSom's batch epoch is a loop over examples, XPySom's a loop
over chunks of 1000); such figures carry a ``~``.

Figures. Per iteration: the median of the timed chunks, per epoch (batch) or
per step (online; the session's chunks are timed with results ready, compile
and warm-up apart). Online rows are also given per epoch-equivalent (per step
x examples, marked ``*``) so every row compares in one unit. Columns: the
per-epoch time; the speed-up over XPySom and over MiniSom batch (their epoch
over the row's); ``x floor`` (the row's epoch over the floor's search: how
many bare searches an epoch costs); example-unit pairs per second (examples x
units / seconds per epoch); the compile time; and the process's peak RSS
after the row (``resource.getrusage``, read around every session, which resets
the kernel's mark to measure its own run: the largest reading so far).

Beside the ratios each row gives its share of the device's float32 matmul
ceiling (2 x examples x units x features per second of an epoch, over the
Inside page's measured ceiling) and the kernel plan cost model's predicted
epoch. The ceiling is measured again in each shape's process, after its rows,
and the best of every measurement kept (as the Inside page keeps it): a
ceiling read in a busy hour is low, and every share over it high (a 2-core
VM read 96, 129 and 167 GFLOP/s within one hour). Per shape, unless --no-command, ``som-studio bench`` of
``jax-fused-batch`` runs twice as a user runs it (a fresh process, the examples
read from ``.npy``, one epoch with its final quality pass), its wall time
clocked outside the process beside the record's ``total_s`` and phases; the
second run's compile shows the compile cache.

It prints a table per shape and a summary (one row per shape), and writes
every measurement, the machine and the command line to --json. Absolute
times on a shared machine are noisy; ratios measured side by side in one
process less so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

from _common import ROOT, fmt_s, table  # noqa: E402  (bench/ on the path first)

#: The envelope's shapes: examples, features, maps (width x height).
SAMPLES = (10_000, 100_000)
FEATURES = (3, 10, 50, 300, 784)
MAPS = ((40, 30), (100, 100), (240, 135))
#: ``--quick``: a subset that takes about 5 minutes on a shared 2-core CPU.
QUICK_SAMPLES = (10_000,)
QUICK_FEATURES = (3, 50, 300, 784)
QUICK_MAPS = ((40, 30), (100, 100))

#: The shapes users have beyond the grid (examples, features, map): millions of rows on FlowSOM-sized maps
#: (at most 400 units, 10-50 features), very wide rows (1,000 features and more), maps of 40,000 units and
#: more (their quality pass timed by the command run), and the neighbours of the tuned shapes.
USER_SHAPES = (
    {"samples": 1_000_000, "features": 30, "width": 10, "height": 10},
    {"samples": 1_000_000, "features": 10, "width": 20, "height": 20},
    {"samples": 1_000_000, "features": 50, "width": 20, "height": 20},
    {"samples": 5_000, "features": 2048, "width": 20, "height": 20},
    {"samples": 20_000, "features": 1024, "width": 30, "height": 30},
    {"samples": 10_000, "features": 20, "width": 40, "height": 30},
    {"samples": 50_000, "features": 128, "width": 50, "height": 50},
    {"samples": 100_000, "features": 50, "width": 200, "height": 200},
)

#: torchsom's published workload (its benchmarks page, 16,000 samples x 300 features row).
TORCHSOM = {"samples": 16_000, "features": 300, "width": 25, "height": 15, "epochs": 100, "blobs": 10}
TORCHSOM_REPORTED = {"T4 GPU": 11.6, "8-core Xeon CPU": 30.4, "MiniSom": 1939.0}

#: Contender keys besides SOM Studio's implementation names.
PEERS = ("xpysom", "minisom-batch", "minisom-online")
FLOOR = "floor"
ONLINE_RUNG = "jax-scan-online"
#: Rungs whose epoch is a loop over examples (numpy-batch) or holds N x M x D (jax-vmap-batch): one epoch on a
#: few examples predicts a whole one, so they are probed before they are run.
PROBED_RUNGS = ("numpy-batch", "jax-vmap-batch")
PROBE_EXAMPLES = 50
#: The floor's N x M scores are made in pieces of examples beyond this many bytes.
FLOOR_SCORE_BYTES = 256 << 20

NOT_INSTALLED = "not installed"


# -- shapes -----------------------------------------------------------------------------------------
def shape_label(s: dict[str, Any]) -> str:
    """``10,000 x 784, 100x100`` (examples x features, map width x height)."""
    extra = " (torchsom)" if s.get("blobs") else ""
    return f"{s['samples']:,} x {s['features']}, {s['width']}x{s['height']}{extra}"


def grid_shapes(samples, features, maps) -> list[dict[str, Any]]:
    """Every (examples, features, map) of the three lists, smallest work first."""
    out = [{"samples": n, "features": d, "width": w, "height": h} for n in samples for (w, h) in maps for d in features]
    return sorted(out, key=lambda s: (s["samples"], s["width"] * s["height"], s["features"]))


def torchsom_shape() -> dict[str, Any]:
    return dict(TORCHSOM)


def parse_shape(text: str) -> dict[str, Any]:
    """``N:D:WxH`` or ``torchsom``."""
    text = text.strip()
    if text == "torchsom":
        return torchsom_shape()
    try:
        n, d, grid = text.split(":")
        w, h = grid.lower().split("x")
        return {"samples": int(n), "features": int(d), "width": int(w), "height": int(h)}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected N:D:WxH such as 10000:784:100x100, or torchsom; got {text!r}"
        ) from None


def _ints(text: str) -> list[int]:
    return [int(v.replace("_", "")) for v in text.split(",") if v.strip()]


def _maps(text: str) -> list[tuple[int, int]]:
    out = []
    for v in text.split(","):
        w, h = v.strip().lower().split("x")
        out.append((int(w), int(h)))
    return out


# -- data -------------------------------------------------------------------------------------------
def make_data(shape: dict[str, Any], seed: int = 0):
    """The shape's examples, float32: uniform in [0, 1), or Gaussian blobs as scikit-learn's ``make_blobs``
    makes them (centres uniform in [-10, 10], standard deviation 1, examples spread evenly over blobs)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n, d = shape["samples"], shape["features"]
    k = shape.get("blobs")
    if not k:
        return rng.random((n, d), dtype=np.float32)
    centres = rng.uniform(-10.0, 10.0, (k, d))
    which = np.arange(n) % k
    rng.shuffle(which)
    return (centres[which] + rng.standard_normal((n, d))).astype(np.float32)


_PEAK_RSS = [0]


def peak_rss_bytes() -> int:
    """This process's resident-memory high-water mark so far (Linux reports KiB, macOS bytes).

    Each session resets the kernel's mark as it starts (``/proc/self/clear_refs``, to measure its own
    run), and ``ru_maxrss`` follows that mark: the mark is read before every session and after every
    row, and the largest reading kept.
    """
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _PEAK_RSS[0] = max(_PEAK_RSS[0], int(peak if sys.platform == "darwin" else peak * 1024))
    return _PEAK_RSS[0]


# -- rows -------------------------------------------------------------------------------------------
def _row(name: str, key: str, kind: str, status: str = "ok", note: str = "", **fields: Any) -> dict[str, Any]:
    row = {
        "name": name,
        "key": key,
        "kind": kind,
        "status": status,
        "note": note,
        "unit": {"batch": "epoch", "online": "step", "floor": "search"}[kind],
        "iterations": None,
        "per_iteration_s": None,
        "per_epoch_s": None,
        "p95_s": None,
        "mean_s": None,
        "compile_s": None,
        "total_s": None,
        "wall_s": None,
        "extrapolated_from": None,
    }
    row.update(fields)
    row["rss_high_water_bytes"] = peak_rss_bytes()
    return row


def _per_epoch(row: dict[str, Any], samples: int) -> None:
    per = row.get("per_iteration_s")
    if per is not None:
        row["per_epoch_s"] = per * samples if row["kind"] == "online" else per


def _capped(times: list[float], started: float, cap_s: float, most: int) -> bool:
    return len(times) >= most or time.perf_counter() - started >= cap_s


def _median(values: list[float]) -> float:
    import numpy as np

    return float(np.median(values))


# -- SOM Studio through its Session -------------------------------------------------------------------
def studio_row(
    name: str,
    shape: dict[str, Any],
    data,
    opts: dict[str, Any],
    *,
    complete: bool = False,
    like: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One of SOM Studio's implementations through a :class:`Session`, capped at ``opts['cap_s']`` of training.

    ``complete``: train every epoch asked for, cap or not (torchsom's workload, for its full-run time).
    ``like``: a row measured on this shape whose epoch predicts this one's (``jax-fused-batch``'s for the
    sharded rungs on one device); past ``opts['slow_s']`` the rung is skipped.
    """
    from som_studio.config import DataSpec, RunConfig
    from som_studio.core.impls import registry
    from som_studio.session.events import ChunkTimed, Failed, Finished
    from som_studio.session.preflight import Devices, preflight
    from som_studio.session.session import Session

    impl = registry.get(name)
    n = shape["samples"]
    count = opts["steps"] if impl.kind == "online" else shape.get("epochs") or opts["epochs"]
    cfg = RunConfig(
        impl=name,
        width=shape["width"],
        height=shape["height"],
        data=DataSpec(samples=n),
        seed=0,
        precision="float32",
        init="random",
        layout="1x1",
        steps=count if impl.kind == "online" else None,
        epochs=count if impl.kind == "batch" else None,
    )
    devices = Devices.from_jax() if impl.backend == "jax" else None
    refused = preflight(cfg, data_shape=data.shape, devices=devices)
    if refused:
        return _row(name, name, impl.kind, "skipped", f"preflight: {refused[0]}")

    def session(cfg: RunConfig, data, cap_s: float | None):
        s = Session(cfg, data=data, snapshot_interval_s=None, quality_points=0, final_quality=False)
        peak_rss_bytes()  # before the session resets the kernel's mark
        record, timed = None, 0.0
        for ev in s.run():
            if isinstance(ev, ChunkTimed):
                # The cap counts timed chunks only: the session's elapsed time includes the compile.
                timed += ev.seconds
                if cap_s is not None and timed >= cap_s:
                    s.cancel()  # between chunks: the chunks timed so far stand
            elif isinstance(ev, (Finished, Failed)):
                record = ev.record
        peak_rss_bytes()
        return record

    if like is not None and like.get("per_epoch_s") and like["per_epoch_s"] > opts["slow_s"]:
        return _row(
            name,
            name,
            impl.kind,
            "skipped",
            f"~{fmt_s(like['per_epoch_s'])} per epoch predicted by {like['name']}'s (over --slow {opts['slow_s']:g} s)",
            predicted_epoch_s=like["per_epoch_s"],
        )
    t0 = time.perf_counter()
    if name in PROBED_RUNGS and n > PROBE_EXAMPLES:
        probe = session(cfg.replace(epochs=1, data=DataSpec(samples=PROBE_EXAMPLES)), data[:PROBE_EXAMPLES], None)
        if probe.status != "ok" or not probe.median_s:
            return _row(name, name, impl.kind, "failed", f"probe: {probe.message}")
        predicted = probe.median_s * n / PROBE_EXAMPLES
        # Half the bound: a few examples sit in the caches and predict a whole epoch short (measured here:
        # jax-vmap-batch predicted under 4 s, ran 6.2 s).
        if predicted > opts["slow_s"] / 2:
            return _row(
                name,
                name,
                impl.kind,
                "skipped",
                f"~{fmt_s(predicted)} per epoch predicted from {PROBE_EXAMPLES} examples "
                f"(over half of --slow {opts['slow_s']:g} s)",
                predicted_epoch_s=predicted,
            )
    r = session(cfg, data, None if complete else opts["cap_s"])
    wall = time.perf_counter() - t0
    done = r.iterations_done
    unit = "steps" if impl.kind == "online" else "epochs"
    if r.status == "failed":
        return _row(name, name, impl.kind, "failed", r.message, wall_s=wall)
    note = f"capped at {done:,} of {count:,} {unit}" if r.status == "cancelled" else ""
    row = _row(
        name,
        name,
        impl.kind,
        "ok",
        note,
        iterations=done,
        per_iteration_s=r.median_s,
        p95_s=r.p95_s,
        mean_s=r.mean_s,
        compile_s=r.compile_s,
        total_s=r.total_s,
        wall_s=wall,
        kernel_plan=r.extra.get("kernel_plan"),
        model_epoch_s=(r.extra.get("plan_model") or {}).get("predicted_s_per_epoch"),
        model_runner_up=(r.extra.get("plan_model") or {}).get("runner_up"),
        model_runner_up_s=(r.extra.get("plan_model") or {}).get("runner_up_predicted_s"),
        estimate_bytes=r.estimate_bytes,
        peak_bytes=r.peak_bytes,
        complete=r.status == "ok",
    )
    _per_epoch(row, n)
    return row


# -- the whole command, timed from outside ------------------------------------------------------------------
def command_runs(shape: dict[str, Any], data, runs: int = 2) -> list[dict[str, Any]]:
    """``som-studio bench`` of ``jax-fused-batch`` for one epoch with its final quality pass, ``runs`` times.

    Each run is a fresh process reading the shape's examples from a ``.npy`` file, its wall time clocked
    outside it from start to exit, beside the record's ``total_s`` and phases (``train``, ``quality``,
    ``compile``, ``data``...). The second run finds the first one's programs in the compile cache.
    """
    import numpy as np

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "examples.npy"
        np.save(src, data)
        for i in range(runs):
            js = Path(tmp) / f"run{i}.json"
            cmd = [sys.executable, "-m", "som_studio", "bench", "-q", "--impl", "jax-fused-batch", "--data", str(src)]
            cmd += ["--grid", f"{shape['width']}x{shape['height']}", "--epochs", "1", "--init", "random"]
            cmd += ["--json", str(js), "--force"]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if proc.returncode != 0 or not js.exists():
                out.append({"status": "failed", "message": (proc.stderr or proc.stdout)[-500:], "wall_s": wall})
                continue
            t = json.loads(js.read_text())["runs"][0]["timings"]
            out.append(
                {
                    "status": "ok",
                    "wall_s": wall,
                    "total_s": t.get("total_s"),
                    "compile_s": t.get("compile_s"),
                    "phases": t.get("phases") or {},
                }
            )
    return out


def ceiling_share(row: dict[str, Any], shape: dict[str, Any], ceiling: float | None) -> float | None:
    """2 x examples x units x features over the row's epoch, over the device's matmul ceiling."""
    if not ceiling or not row.get("per_epoch_s") or row["kind"] == "online":
        return None
    work = 2.0 * shape["samples"] * shape["width"] * shape["height"] * shape["features"]
    return work / row["per_epoch_s"] / ceiling


# -- the floor ------------------------------------------------------------------------------------------
def floor_row(shape: dict[str, Any], data, init_map, opts: dict[str, Any]) -> dict[str, Any]:
    """A plain jitted ``argmin(|w|^2 - 2 x.w)``: one HIGHEST-precision matmul of the examples against the units."""
    import numpy as np

    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    jnp, lax = jax.numpy, jax.lax
    n, d = data.shape
    w = np.ascontiguousarray(init_map.reshape(-1, d), dtype=np.float32)
    m = w.shape[0]
    pieces = max(1, math.ceil(n * m * 4 / FLOOR_SCORE_BYTES))
    chunk = math.ceil(n / pieces)
    x = data if pieces * chunk == n else np.concatenate([data, np.zeros((pieces * chunk - n, d), data.dtype)])

    def search(x, w):
        ww = jnp.sum(w * w, axis=1)

        def one(xc):
            return jnp.argmin(ww - 2.0 * jnp.matmul(xc, w.T, precision=lax.Precision.HIGHEST), axis=1)

        if pieces == 1:
            return one(x)
        return lax.map(one, x.reshape(pieces, chunk, d)).reshape(-1)

    t0 = time.perf_counter()
    xd, wd = jax.device_put(x), jax.device_put(w)
    tc = time.perf_counter()
    compiled = jax.jit(search).lower(xd, wd).compile()
    compile_s = time.perf_counter() - tc
    tw = time.perf_counter()
    compiled(xd, wd).block_until_ready()  # the first call loads the program
    # Two timed searches, or one where a search alone takes the whole cap.
    least = 1 if time.perf_counter() - tw >= opts["cap_s"] else 2
    times: list[float] = []
    started = time.perf_counter()
    while not _capped(times, started, opts["cap_s"], opts["floor_repeats"]) or len(times) < least:
        ts = time.perf_counter()
        compiled(xd, wd).block_until_ready()
        times.append(time.perf_counter() - ts)
    note = f"in {pieces} pieces of {chunk:,} examples" if pieces > 1 else "one matmul"
    row = _row(
        "floor: argmin matmul",
        FLOOR,
        "floor",
        "ok",
        note,
        iterations=len(times),
        per_iteration_s=_median(times),
        p95_s=float(np.percentile(times, 95)),
        mean_s=float(np.mean(times)),
        compile_s=compile_s,
        total_s=sum(times),
        wall_s=time.perf_counter() - t0,
    )
    row["per_epoch_s"] = row["per_iteration_s"]
    del xd, wd
    return row


# -- the peers ----------------------------------------------------------------------------------------------
def _epochs_by_subset(
    run_epoch: Callable[[int, int], None], n: int, probe_n: int, cap_s: float, most: int, multiple: int = 1
) -> tuple[list[float], int, float]:
    """Time ``run_epoch(examples, epoch)``: whole epochs when one fits in half the cap, else on the first
    ``examples`` (a multiple of ``multiple``) sized for a third of the cap. Returns (times, examples, probe_s)."""
    n0 = min(n, probe_n)
    t0 = time.perf_counter()
    run_epoch(n0, 0)  # also the warm-up: first allocations, imports, caches
    probe = time.perf_counter() - t0
    per_example = probe / n0
    if per_example * n <= cap_s / 2:
        k = n
    else:
        k = int(cap_s / 3 / per_example) // multiple * multiple
        k = min(n, max(n0, k))
    times: list[float] = []
    started = time.perf_counter()
    while not _capped(times, started, cap_s, most):
        ts = time.perf_counter()
        run_epoch(k, len(times))
        times.append(time.perf_counter() - ts)
    return times, k, probe


def _peer_row(name: str, key: str, kind: str, times: list[float], k: int, n: int, note: str, **extra: Any):
    """A peer's row from its timed calls on ``k`` of ``n`` examples (batch: per epoch, scaled to ``n``)."""
    import numpy as np

    scale = n / k if kind == "batch" else 1.0
    per = [t * scale for t in times]
    row = _row(
        name,
        key,
        kind,
        "ok",
        note,
        iterations=len(times),
        per_iteration_s=_median(per),
        p95_s=float(np.percentile(per, 95)),
        mean_s=float(np.mean(per)),
        total_s=sum(times),
        extrapolated_from=k if k < n else None,
        **extra,
    )
    _per_epoch(row, n)
    return row


def _not_installed(name: str, key: str, kind: str, exc: ImportError) -> dict[str, Any]:
    return _row(name, key, kind, NOT_INSTALLED, f"{exc.name or exc}: pip install -e '.[bench]'")


def xpysom_row(problem, data, opts: dict[str, Any]) -> dict[str, Any]:
    """XPySom, NumPy backend, float32: epochs of ``train(x, T, iter_beg=e, iter_end=e + 1)``."""
    import numpy as np

    name = "XPySom batch"
    try:
        from peers import make_xpysom

        som = make_xpysom(problem, np)
    except ImportError as exc:
        return _not_installed(name, "xpysom", "batch", exc)
    x = np.ascontiguousarray(data, dtype=np.float32)
    n, total = x.shape[0], problem.iterations
    chunk = getattr(som, "_n_parallel", 1000)
    t0 = time.perf_counter()
    times, k, _ = _epochs_by_subset(
        lambda k, e: som.train(x[:k], total, iter_beg=e, iter_end=e + 1),
        n,
        chunk,
        opts["peer_cap_s"],
        opts["peer_epochs"],
        multiple=chunk,
    )
    row = _peer_row(name, "xpysom", "batch", times, k, n, f"float32, numpy, {chunk} examples a call")
    row["wall_s"] = time.perf_counter() - t0
    return row


def minisom_batch_row(problem, data, opts: dict[str, Any]) -> dict[str, Any]:
    """MiniSom's ``train_batch_offline``, one epoch a call, float64 (pure batch average: ``lr = 1``)."""
    import numpy as np

    name = "MiniSom batch"
    try:
        from peers import iso_sigma, make_minisom

        offset = [0]
        ones = np.ones(problem.iterations)
        som = make_minisom(problem, iso_sigma(problem) / math.sqrt(2.0), ones, offset)
        if not hasattr(som, "train_batch_offline"):
            return _row(name, "minisom-batch", "batch", "skipped", "this MiniSom has no train_batch_offline")
    except ImportError as exc:
        return _not_installed(name, "minisom-batch", "batch", exc)
    x = data.astype(np.float64)
    n = x.shape[0]

    def epoch(k: int, e: int) -> None:
        offset[0] = e
        som.train_batch_offline(x[:k], 1)

    t0 = time.perf_counter()
    times, k, _ = _epochs_by_subset(epoch, n, 10, opts["peer_cap_s"], opts["peer_epochs"])
    row = _peer_row(name, "minisom-batch", "batch", times, k, n, "float64")
    row["wall_s"] = time.perf_counter() - t0
    return row


def minisom_online_row(problem, data, opts: dict[str, Any]) -> dict[str, Any]:
    """MiniSom's ``train(x, k, random_order=True)`` in calls of ``k`` steps, float64; per step."""
    import numpy as np

    name = "MiniSom online"
    try:
        from peers import iso_sigma, make_minisom

        offset = [0]
        som = make_minisom(problem, iso_sigma(problem) / math.sqrt(2.0), problem.whole().lr.astype(np.float64), offset)
    except ImportError as exc:
        return _not_installed(name, "minisom-online", "online", exc)
    x = data.astype(np.float64)
    most = problem.iterations
    t0 = time.perf_counter()
    offset[0] = 0
    som.train(x, 5, random_order=True)  # the warm-up, and the probe of a step's cost
    per_step = (time.perf_counter() - t0) / 5
    k = max(1, min(most, int(opts["peer_cap_s"] / 5 / per_step)))
    times: list[float] = []
    started, done = time.perf_counter(), 0
    while done < most and not _capped(times, started, opts["peer_cap_s"], most):
        step = min(k, most - done)
        offset[0] = done
        ts = time.perf_counter()
        som.train(x, step, random_order=True)
        times.append((time.perf_counter() - ts) / step)
        done += step
    row = _peer_row(name, "minisom-online", "online", times, 1, 1, f"float64, own order, {k:,} steps a call")
    row["iterations"] = done
    row["per_epoch_s"] = row["per_iteration_s"] * data.shape[0]
    row["wall_s"] = time.perf_counter() - t0
    return row


# -- one shape ---------------------------------------------------------------------------------------------
def contenders(opts: dict[str, Any]) -> list[str]:
    """The contenders of a shape, in the order they run: SOM Studio's batch rungs, its online rung, the
    peers, the floor; less ``opts['skip']``, or only ``opts['only']`` where given."""
    from som_studio.core.impls import registry

    batch = [i.name for i in registry.all_implementations() if i.kind == "batch"]
    out = [*batch, ONLINE_RUNG, *PEERS, FLOOR]
    if opts.get("only"):
        out = [c for c in out if c in opts["only"]]
    return [c for c in out if c not in set(opts.get("skip") or ())]


def measure_shape(shape: dict[str, Any], opts: dict[str, Any], log=print) -> dict[str, Any]:
    """Every contender on one shape, one after another in this process; the shape's document."""
    import numpy as np

    from som_studio.config import DataSpec, RunConfig
    from som_studio.core import jax_runtime
    from som_studio.core.som.problem import make_problem
    from som_studio.session import env

    t_shape = time.perf_counter()
    jax = jax_runtime.jax()
    data = make_data(shape)
    n = shape["samples"]
    base = RunConfig(
        width=shape["width"], height=shape["height"], data=DataSpec(samples=n), seed=0, precision="float32"
    ).replace(init="random")
    batch_problem = make_problem(base.replace(epochs=opts["peer_epochs"]), "batch", data)
    rows: list[dict[str, Any]] = []
    for c in contenders(opts):
        log(f"  {c} ...")
        t0 = time.perf_counter()
        try:
            if c == FLOOR:
                row = floor_row(shape, data, batch_problem.init_map, opts)
            elif c == "xpysom":
                row = xpysom_row(batch_problem, data, opts)
            elif c == "minisom-batch":
                row = minisom_batch_row(batch_problem, data, opts)
            elif c == "minisom-online":
                online = make_problem(base.replace(steps=opts["peer_steps"]), "online", data)
                row = minisom_online_row(online, data, opts)
            else:
                # Its whole run, --quick too: its epoch's cost follows the map (halfway through, units crowd onto
                # the blobs and nearly every example lies near a tie), so its first epochs do not predict the rest.
                complete = bool(shape.get("epochs")) and c == "jax-fused-batch"
                like = next((r for r in rows if r["key"] == "jax-fused-batch"), None) if _shards(c) else None
                row = studio_row(c, shape, data, opts, complete=complete, like=like)
        except Exception as exc:  # one contender failing does not stop the shape
            kind = "online" if c in (ONLINE_RUNG, "minisom-online") else ("floor" if c == FLOOR else "batch")
            row = _row(c, c, kind, "failed", f"{type(exc).__name__}: {exc}")
        rows.append(row)
        shown = f"{_epoch_text(row)} per epoch" if row["status"] == "ok" else row["status"]
        log(f"    {shown} ({time.perf_counter() - t0:.1f} s) {row['note']}".rstrip())
    with_ratios(rows, shape)
    from som_studio.core.inspection import inside

    ceil = inside.ceilings(jax.devices()[0], refresh=True)  # the best of this measurement and those kept
    for r in rows:
        r["ceiling_share"] = ceiling_share(r, shape, ceil.get("matmul_flops_per_s"))
    commands: list[dict[str, Any]] = []
    if opts.get("command_runs") and "jax-fused-batch" in contenders(opts):
        log("  som-studio bench, 1 epoch with its quality pass, twice ...")
        commands = command_runs(shape, data, opts["command_runs"])
    return {
        "shape": shape,
        "ceilings": {k: ceil.get(k) for k in ("matmul_flops_per_s", "bandwidth_bytes_per_s", "cached")},
        "command_runs": commands,
        "label": shape_label(shape),
        "units": shape["width"] * shape["height"],
        "rows": rows,
        "peak_rss_bytes": peak_rss_bytes(),
        "wall_s": time.perf_counter() - t_shape,
        "backend": jax.default_backend(),
        "devices": [env.device_info(d) for d in jax.devices()],
        "jax": env._version("jax"),
        "jaxlib": env._version("jaxlib"),
        "numpy": np.__version__,
        "minisom": env._version("minisom") or env._version("MiniSom"),
        "xpysom": env._version("xpysom"),
        "loadavg_end": os.getloadavg(),
    }


def with_ratios(rows: list[dict[str, Any]], shape: dict[str, Any]) -> list[dict[str, Any]]:
    """Add ``vs_xpysom``, ``vs_minisom_batch`` (their epoch over the row's), ``x_floor`` (the row's epoch over
    the floor's search) and ``pairs_per_s`` (examples x units per second of an epoch) to every measured row."""
    by = {r["key"]: r for r in rows if r["status"] == "ok" and r.get("per_epoch_s")}
    units = shape["width"] * shape["height"]

    def over(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
        return a["per_epoch_s"] / b["per_epoch_s"] if a and b else None

    for r in rows:
        mine = by.get(r["key"])
        r["vs_xpysom"] = over(by.get("xpysom"), mine)
        r["vs_minisom_batch"] = over(by.get("minisom-batch"), mine)
        r["x_floor"] = over(mine, by.get(FLOOR))
        r["pairs_per_s"] = shape["samples"] * units / mine["per_epoch_s"] if mine else None
    return rows


# -- tables ----------------------------------------------------------------------------------------------
def _ratio(v: float | None, approx: bool = False) -> str:
    if v is None:
        return "-"
    s = f"{v:.3g}x" if v < 100 else f"{v:,.0f}x"
    return "~" + s if approx else s


def _bytes(n: int | None) -> str:
    from som_studio.i18n import format_bytes

    return format_bytes(n) if n else "-"


def _epoch_text(r: dict[str, Any]) -> str:
    if r["status"] != "ok":
        return r["status"]
    mark = "~" if r.get("extrapolated_from") else ""
    star = " *" if r["kind"] == "online" else ""
    return f"{mark}{fmt_s(r['per_epoch_s'])}{star}"


def format_shape(doc: dict[str, Any]) -> str:
    """The shape's table: one row per contender."""
    rows = doc["rows"]
    by = {r["key"]: r for r in rows}
    approx_x = bool(by.get("xpysom", {}).get("extrapolated_from"))
    approx_m = bool(by.get("minisom-batch", {}).get("extrapolated_from"))
    out = []
    for r in rows:
        approx = bool(r.get("extrapolated_from"))
        if r["kind"] == "online":
            it = f"{fmt_s(r['per_iteration_s'])}/step" if r["status"] == "ok" else "-"
        else:
            it = f"{r['iterations']} x" if r.get("iterations") else "-"
        out.append(
            [
                r["name"],
                _epoch_text(r),
                it,
                _ratio(r.get("vs_xpysom"), approx or approx_x),
                _ratio(r.get("vs_minisom_batch"), approx or approx_m),
                f"{r['x_floor']:.3g}" if r.get("x_floor") else "-",
                f"{r['pairs_per_s']:.3g}" if r.get("pairs_per_s") else "-",
                _share(r.get("ceiling_share")),
                fmt_s(r.get("model_epoch_s")) if r.get("model_epoch_s") else "-",
                fmt_s(r.get("compile_s")),
                _bytes(r.get("rss_high_water_bytes")),
                (r.get("kernel_plan") or "") + ("; " if r.get("kernel_plan") and r["note"] else "") + r["note"],
            ]
        )
    head = ["contender", "per epoch", "timed", "vs XPySom", "vs MiniSom b.", "x floor", "pairs/s", "of ceiling"]
    head += ["predicted", "compile", "RSS after", "note"]
    title = (
        f"{doc['label']} ({doc['units']:,} units): peak RSS {_bytes(doc.get('peak_rss_bytes'))}, "
        f"{doc.get('wall_s', 0):.0f} s"
    )
    lines = [title, table(head, out)]
    for i, c in enumerate(doc.get("command_runs") or [], 1):
        lines.append(f"som-studio bench, 1 epoch, run {i}: {_command_text(c)}")
    return "\n".join(lines)


def _share(v: float | None) -> str:
    return f"{v:.0%}" if v is not None else "-"


def _command_text(c: dict[str, Any]) -> str:
    """``wall 3.1 s (total_s 1.2 s + quality 0.4 s + model 0.0 s); train 0.5 s, compile 0.1 s, data 0.2 s``."""
    if c.get("status") != "ok":
        return f"failed: {c.get('message', '')}".strip()
    ph = c.get("phases") or {}
    return (
        f"wall {fmt_s(c['wall_s'])} (total_s {fmt_s(c.get('total_s'))} + quality {fmt_s(ph.get('quality'))} + "
        f"model {fmt_s(ph.get('model'))}); train {fmt_s(ph.get('train'))}, compile {fmt_s(ph.get('compile'))}, "
        f"data {fmt_s(ph.get('data'))}, init {fmt_s(ph.get('init'))}"
    )


LEGEND = """\
per epoch: median seconds per epoch; * online rows: median per step x examples (an epoch-equivalent);
  ~ timed on a subset of the examples, scaled by examples to a whole epoch;
timed: epochs (or floor searches) timed after compile and warm-up; online rows give the step;
vs XPySom / vs MiniSom b.: their epoch over the row's (above 1x: the row is faster);
x floor: the row's epoch over the floor's search (a bare argmin matmul: how many searches an epoch costs);
pairs/s: examples x units per second of an epoch; RSS after: the shape process's peak RSS after the row;
of ceiling: 2 x examples x units x features per second of an epoch over the device's float32 matmul ceiling
  (the Inside page's measure: a jitted HIGHEST product of two 1024x1024 matrices, best of repeated runs);
predicted: the kernel plan's cost model's seconds per epoch (extra.plan_model), beside the measured;
som-studio bench, 1 epoch: the whole command (a fresh process reading the examples from .npy, its final
  quality pass included), its wall time clocked outside it, beside the record's total_s and phases."""


def format_summary(docs: list[dict[str, Any]]) -> str:
    """One row per shape: ``jax-fused-batch``, XPySom, MiniSom batch, the floor, their ratios, peak RSS."""
    out = []
    for doc in docs:
        by = {r["key"]: r for r in doc.get("rows", [])}
        fused = by.get("jax-fused-batch", {})
        best = min(
            (r for r in doc.get("rows", []) if r["status"] == "ok" and r["kind"] == "batch" and r["key"] in _studio()),
            key=lambda r: r["per_epoch_s"],
            default=None,
        )
        out.append(
            [
                doc["label"],
                _epoch_text(fused) if fused else doc.get("status", "-"),
                _epoch_text(by["xpysom"]) if "xpysom" in by else "-",
                _epoch_text(by["minisom-batch"]) if "minisom-batch" in by else "-",
                _epoch_text(by[FLOOR]) if FLOOR in by else "-",
                _ratio(fused.get("vs_xpysom"), bool(by.get("xpysom", {}).get("extrapolated_from"))),
                _ratio(fused.get("vs_minisom_batch"), bool(by.get("minisom-batch", {}).get("extrapolated_from"))),
                f"{fused['x_floor']:.3g}" if fused.get("x_floor") else "-",
                _share(fused.get("ceiling_share")),
                fmt_s(fused.get("model_epoch_s")) if fused.get("model_epoch_s") else "-",
                _command_summary(doc.get("command_runs") or []),
                best["name"] if best else "-",
                _bytes(doc.get("peak_rss_bytes")),
                f"{doc.get('wall_s', 0):.0f} s",
            ]
        )
    head = ["shape (examples x features, map)", "fused/epoch", "XPySom", "MiniSom b.", "floor", "fused vs XPySom"]
    head += ["fused vs MiniSom b.", "fused x floor", "fused of ceiling", "fused predicted"]
    head += ["1-epoch command: wall / total_s / train / quality / 2nd compile"]
    head += ["fastest batch rung", "peak RSS", "wall"]
    return table(head, out)


def _command_summary(runs: list[dict[str, Any]]) -> str:
    ok = [c for c in runs if c.get("status") == "ok"]
    if not ok:
        return "-"
    c = ok[0]
    ph = c.get("phases") or {}
    again = fmt_s(ok[-1].get("compile_s")) if len(ok) > 1 else "-"
    parts = [c["wall_s"], c.get("total_s"), ph.get("train"), ph.get("quality")]
    return " / ".join(fmt_s(v) for v in parts) + f" / {again}"


def torchsom_lines(docs: list[dict[str, Any]]) -> list[str]:
    """torchsom's workload: our 100-epoch run beside the figures torchsom published, peers projected to 100."""
    lines = []
    for doc in docs:
        if not doc["shape"].get("blobs"):
            continue
        epochs = doc["shape"]["epochs"]
        reported = ", ".join(f"{k} {v:,.1f} s" for k, v in TORCHSOM_REPORTED.items())
        lines.append(f"torchsom's workload, {epochs} epochs (torchsom reports: {reported}):")
        for r in doc["rows"]:
            if r["status"] != "ok":
                continue
            if r.get("complete") and r["kind"] == "batch":
                lines.append(
                    # The session's total runs from the start of training: the compile is in it.
                    f"  {r['name']}: {r['total_s']:.2f} s for {r['iterations']} epochs, its "
                    f"{fmt_s(r['compile_s'])} compile included ({fmt_s(r['mean_s'] * r['iterations'])} "
                    f"of epochs; {fmt_s(r['wall_s'])} wall)"
                )
            else:
                how = "per step x examples" if r["kind"] == "online" else "per epoch"
                lines.append(f"  {r['name']}: ~{fmt_s(r['per_epoch_s'] * epochs)} projected ({how} x {epochs})")
    return lines


def _shards(name: str) -> bool:
    from som_studio.core.impls import registry

    return name in registry.names() and registry.get(name).shards


def _studio() -> set[str]:
    from som_studio.core.impls import registry

    return set(registry.names())


# -- processes ----------------------------------------------------------------------------------------------
def run_shape_process(shape: dict[str, Any], opts: dict[str, Any], timeout_s: float | None = None) -> dict[str, Any]:
    """Measure one shape in a fresh process (its memory and compiled programs die with it); its document."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "shape.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child", json.dumps({"shape": shape, "opts": opts})]
        cmd += ["--child-out", str(out)]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(cmd, cwd=ROOT, env=env, timeout=timeout_s, stdout=subprocess.PIPE, text=True)
            code, why = proc.returncode, ""
        except subprocess.TimeoutExpired:
            code, why = None, f"timed out after {timeout_s:g} s"
        if out.exists():
            return json.loads(out.read_text())
        why = why or f"the shape's process ended with status {code}"
        return {
            "shape": shape,
            "label": shape_label(shape),
            "units": shape["width"] * shape["height"],
            "status": "failed",
            "message": why,
            "rows": [],
            "wall_s": time.perf_counter() - t0,
        }


def child_main(spec: str, out: str) -> int:
    d = json.loads(spec)
    doc = measure_shape(d["shape"], d["opts"], log=lambda s: print(s, file=sys.stderr, flush=True))
    doc["status"] = "ok"
    Path(out).write_text(json.dumps(doc, default=float))
    return 0


def machine_facts(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """This machine as the shapes' processes saw it."""
    from som_studio.session import env

    first = next((d for d in docs if d.get("backend")), {})
    return {
        "cpu": env.cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "platform": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        **{k: first.get(k) for k in ("backend", "devices", "jax", "jaxlib", "numpy", "minisom", "xpysom")},
    }


def options(args: argparse.Namespace) -> dict[str, Any]:
    """The per-shape settings every child gets."""
    skip = set(args.skip)
    if args.no_peers:
        skip |= set(PEERS)
    return {
        "cap_s": args.cap,
        "peer_cap_s": args.peer_cap,
        "epochs": args.epochs,
        "steps": args.steps,
        "peer_epochs": args.peer_epochs,
        "peer_steps": args.peer_steps,
        "floor_repeats": args.floor_repeats,
        "slow_s": args.slow,
        "command_runs": 0 if args.no_command else 2,
        "skip": sorted(skip),
        "only": args.only,
    }


def shapes_from_args(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.shapes:
        return args.shapes
    if args.users:
        return [dict(s) for s in USER_SHAPES]
    quick = args.quick
    shapes = grid_shapes(
        args.samples or (QUICK_SAMPLES if quick else SAMPLES),
        args.features or (QUICK_FEATURES if quick else FEATURES),
        args.maps or (QUICK_MAPS if quick else MAPS),
    )
    if not quick and not (args.samples or args.features or args.maps):
        shapes += [dict(s) for s in USER_SHAPES]
    return shapes if args.no_torchsom else [*shapes, torchsom_shape()]


def run_envelope(
    shapes: list[dict[str, Any]], opts: dict[str, Any], *, timeout_s: float | None = None, on_shape=None
) -> list[dict[str, Any]]:
    """Each shape in its own process, one after another; ``on_shape(doc)`` sees each as it ends."""
    docs = []
    for i, shape in enumerate(shapes, 1):
        print(f"[{i}/{len(shapes)}] {shape_label(shape)} ...", file=sys.stderr, flush=True)
        doc = run_shape_process(shape, opts, timeout_s)
        docs.append(doc)
        if on_shape is not None:
            on_shape(doc)
    return docs


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="bench/envelope.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="10,000 examples, maps 40x30 and 100x100, features "
        "3/50/300/784, torchsom's workload; caps of 2 s, 1 s for peers (about 5 minutes on a shared 2-core CPU)",
    )
    ap.add_argument("--samples", type=_ints, metavar="N,...", help="examples per shape (default 10000,100000)")
    ap.add_argument("--features", type=_ints, metavar="D,...", help="features per shape (default 3,10,50,300,784)")
    ap.add_argument("--maps", type=_maps, metavar="WxH,...", help="maps (default 40x30,100x100,240x135)")
    ap.add_argument(
        "--shapes",
        type=lambda t: [parse_shape(s) for s in t.split(",") if s.strip()],
        metavar="N:D:WxH,...",
        help="exactly these shapes instead of the grid; 'torchsom' names torchsom's workload",
    )
    ap.add_argument("--no-torchsom", action="store_true", help="leave torchsom's workload out of the grid")
    ap.add_argument(
        "--users",
        action="store_true",
        help="only the shapes users have beyond the grid (USER_SHAPES: 10^6 rows on small maps, 1,000+ "
        "features, a 40,000-unit map)",
    )
    ap.add_argument(
        "--no-command",
        action="store_true",
        help="leave out the whole-command runs (som-studio bench, 1 epoch with its quality pass, twice per shape)",
    )
    ap.add_argument(
        "--cap",
        type=float,
        help="seconds of timed training per SOM Studio contender and for the floor (default 20; --quick 2)",
    )
    ap.add_argument("--peer-cap", type=float, help="seconds of timed training per peer (default 20; --quick 1)")
    ap.add_argument("--epochs", type=int, help="most epochs per batch rung (default 50; --quick 20)")
    ap.add_argument("--steps", type=int, help="most steps of jax-scan-online (default 100000; --quick 20000)")
    ap.add_argument(
        "--slow",
        type=float,
        help="skip a rung whose epoch is predicted past S seconds: numpy-batch and jax-vmap-batch by one epoch on "
        "50 examples (past S/2: a few examples predict short), the sharded rungs by jax-fused-batch's epoch "
        "(default 300; --quick 2)",
        metavar="S",
    )
    ap.add_argument("--peer-epochs", type=int, default=3, help="most epochs per batch peer (default %(default)s)")
    ap.add_argument("--peer-steps", type=int, default=5000, help="most MiniSom online steps (default %(default)s)")
    ap.add_argument("--floor-repeats", type=int, default=10, help="most timed floor searches (default %(default)s)")
    ap.add_argument("--no-peers", action="store_true", help="leave MiniSom and XPySom out")
    ap.add_argument(
        "--skip",
        type=lambda t: [s.strip() for s in t.split(",") if s.strip()],
        default=[],
        metavar="NAMES",
        help=f"contenders to leave out: implementation names, {', '.join(PEERS)}, {FLOOR}",
    )
    ap.add_argument(
        "--only",
        type=lambda t: [s.strip() for s in t.split(",") if s.strip()],
        metavar="NAMES",
        help="run only these contenders (names as for --skip)",
    )
    ap.add_argument(
        "--shape-timeout",
        type=float,
        default=None,
        metavar="S",
        help="give up on a shape's process after S seconds (default: none)",
    )
    ap.add_argument("--json", default="envelope.json", metavar="FILE", help="the JSON written (default: %(default)s)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    quick = args.quick
    args.cap = args.cap if args.cap is not None else (2.0 if quick else 20.0)
    args.peer_cap = args.peer_cap if args.peer_cap is not None else (1.0 if quick else 20.0)
    args.slow = args.slow if args.slow is not None else (2.0 if quick else 300.0)
    args.epochs = args.epochs or (20 if quick else 50)
    args.steps = args.steps or (20_000 if quick else 100_000)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args.child, args.child_out)
    t_start = time.perf_counter()
    shapes = shapes_from_args(args)
    opts = options(args)
    doc: dict[str, Any] = {
        "command": [sys.executable, *sys.argv] if argv is None else ["bench/envelope.py", *argv],
        "options": opts,
        "quick": args.quick,
        "loadavg_start": os.getloadavg(),
        "machine": {},
        "shapes": [],
    }

    def write() -> None:
        doc["machine"] = machine_facts(doc["shapes"])
        doc["wall_s"] = time.perf_counter() - t_start
        Path(args.json).write_text(json.dumps(doc, indent=1, default=float))

    def on_shape(shape_doc: dict[str, Any]) -> None:
        doc["shapes"].append(shape_doc)
        print()
        if shape_doc.get("status") == "failed":
            print(f"{shape_doc['label']}: failed: {shape_doc['message']}")
        else:
            print(format_shape(shape_doc))
        print(flush=True)
        write()  # a long envelope keeps what it measured so far

    run_envelope(shapes, opts, timeout_s=args.shape_timeout, on_shape=on_shape)
    print(LEGEND)
    print()
    print("summary (fused: jax-fused-batch; ratios: their epoch over fused's, fused's over the floor's):")
    print(format_summary(doc["shapes"]))
    for line in torchsom_lines(doc["shapes"]):
        print(line)
    write()
    m = doc["machine"]
    print(
        f"\nmachine: {m['cpu']} ({m['cpus_usable']} usable CPUs), {m['backend']} backend, jax {m['jax']}; "
        f"load average {doc['loadavg_start'][0]:.1f} at the start"
    )
    print(f"wrote {args.json} ({doc['wall_s']:.0f} s in all)")
    return 0 if all(d.get("status") == "ok" for d in doc["shapes"]) else 1


if __name__ == "__main__":
    sys.exit(main())
