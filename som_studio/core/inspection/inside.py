"""The inside of a run: what JAX made of an implementation, how much work an iteration does, how close it comes
to the device's ceilings.

Everything here is read from the programs an implementation already exposes
(:class:`~som_studio.core.impls.protocol.Implementation`: a JAX trainer's
``traces()`` / ``programs()``), compiled once more ahead of time, never from
the timed iterations:

* **the program**: the jaxpr of one call, its StableHLO and XLA's optimized
  HLO (:func:`inspect`, ``keep_programs``);
* **counts per iteration** from the optimized HLO
  (:class:`~som_studio.core.inspection.hlo.ProgramCosts`): kernels launched, fusions,
  ``while`` trips, custom calls, collectives; host-device transfers counted by
  JAX's transfer guard over one call (:func:`count_transfers`);
* **FLOPs and bytes per iteration** from XLA's ``cost_analysis()``. XLA counts
  a ``while`` body once; the loops inside an iteration run many trips, so each
  such body's extra trips are added, counted from the HLO text by XLA's own
  rules (which reproduce ``cost_analysis`` within 0.1 % of FLOPs and 2 % of
  bytes on ``jax-fused-batch``). Checked against :func:`analytic`, the count
  of the SOM's own operations, which stands in (and says so) where XLA gives
  no figure, where the program branches (XLA counts each conditional as its
  largest branch; which runs depends on the data) and where XLA's count is
  more than the measured time could have done;
* **the ceilings** of the device (:func:`ceilings`): float32 matrix products
  at ``HIGHEST`` precision and memory bandwidth by a large copy, measured once
  per device and kept in the user's cache folder with how they were measured;
* **compile time split** into trace, lower and compile.

:func:`roofline` turns these and a measured time per iteration into achieved
FLOP/s and bytes/s, the fraction of the attainable ceiling reached and what
bounds the run. Nothing here imports Qt; JAX is imported only when a function
needs it, so NumPy runs and the report read these records without it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeGuard

from som_studio.core.inspection import hlo
from som_studio.core.jax_runtime import cache_dir

#: ``extra.inside`` keys every record carries (``null`` where a figure is unknown).
KEYS = (
    "flops_per_iteration",
    "bytes_per_iteration",
    "kernels_per_iteration",
    "achieved_flops_per_s",
    "achieved_bytes_per_s",
    "compile_phases_s",
    "ceilings",
)

#: Below this share of the attainable ceiling, with launched kernels this short on average, a run is bound by
#: launch overhead: many small kernels (or dispatches) with little work each.
LAUNCH_FRACTION = 0.1
LAUNCH_KERNEL_S = 20e-6

#: How the ceilings are measured, by backend: (matmul side n, bytes of the copied array, repeats).
CEILING_SIZES = {"cpu": (1024, 64 << 20, 10), "gpu": (8192, 1 << 30, 10), "tpu": (8192, 1 << 30, 10)}


# -- the SOM's own operations ---------------------------------------------------------------------------------

#: Operations per element of a first-argmin in one variadic reduction (``jnp.argmin``: value and index
#: together), as XLA counts its reducer: the values' comparison and NaN check, the tie's index
#: comparison, the two ors and the and that pick, and a select for each half. A minimum alone is one.
ARGMIN_OPS = 9


def _argmin_ops(plan: str, h: int, w: int) -> int:
    """Operations of one example's first minimum over ``h x w`` units under ``plan``: one variadic
    reduction over all (``argmin-all``), else the row minima and a first-argmin of a column and of a row
    (``argmin-rows``, the online CPU plan) or a minimum (NumPy, which names no plan)."""
    m = h * w
    if "argmin-all" in plan:
        return ARGMIN_OPS * m
    if "argmin-rows" in plan:
        return m + ARGMIN_OPS * (h + w)
    return m


def analytic(
    model: str,
    plan: str,
    *,
    height: int,
    width: int,
    features: int,
    samples: int,
    itemsize: int,
) -> dict[str, float]:
    """FLOPs and bytes one iteration of the SOM's own operations takes, counted by hand.

    ``model`` names the algorithm (:attr:`Implementation.work`): ``"online"``
    (one example per step: its distance to every unit, the first minimum, the
    Gaussian update of the full map), ``"batch-separable"`` (an epoch of
    winners, per-unit sums, the separable smoothing ``Hy S Hx^T`` per feature
    and counts, the ratio) or ``"batch-per-example"`` (an epoch that weighs
    every example's neighbourhood over the full map, as the playbook's loop
    and ``vmap`` do). ``plan`` is the run's kernel plan (``extra.kernel_plan``):
    the expanded form ``|w|^2 - 2 x.w`` of the ``matmul`` and ``blocked``
    searches costs ``2 (D + 1)`` per example and unit over whole blocks of
    units, plus the re-rank of two blocks per example by the direct form; the
    direct form costs ``3 D`` per pair, and its first-argmin over every unit
    (``argmin-all``) :data:`ARGMIN_OPS` per pair. A comparison or a minimum is one FLOP;
    ``exp`` is not counted (XLA counts it apart, as a transcendental).

    Bytes are the least traffic the iteration needs: the examples read once,
    the map read and written once (an online step: the map read and written).
    """
    h, w, d, n = height, width, features, samples
    m = h * w
    if model == "online":
        search = m * (3 * d - 1) + _argmin_ops(plan, h, w)  # distances, then the first minimum
        update = 2 * (h + w) + m + 3 * m * d  # profiles, their outer product, w - h (w - x)
        return {"flops": float(search + update), "bytes": float(2 * m * d * itemsize)}
    form, block = _plan_form(plan)
    if form in ("matmul", "blocked") and block:
        g = -(-m // block)
        mp = g * block
        cand = min(2 * block, mp)
        search = n * mp * 2 * (d + 1) + n * mp + n * cand * (3 * d) + n * cand
    else:
        search = n * (m * (3 * d - 1) + _argmin_ops(plan, h, w))
    if model == "batch-per-example":
        # Each example's (H, W) neighbourhood, its weighted copy of the example, both summed.
        rest = n * (2 * (h + w) + m) + n * m * d + n * m * (d + 1) + 2 * m * d
        return {"flops": float(search + rest), "bytes": float((n * d + 2 * m * d) * itemsize)}
    sums = n * (d + 1)
    smooth = 2 * (d + 1) * m * (h + w)
    ratio = 2 * m * d
    return {"flops": float(search + sums + smooth + ratio), "bytes": float((n * d + 2 * m * d) * itemsize)}


def _plan_form(plan: str) -> tuple[str, int]:
    form = plan.split("/", 1)[0] if plan else "direct"
    m = re.search(r"block=(\d+)", plan or "")
    return form, int(m.group(1)) if m else 0


# -- the ceilings ---------------------------------------------------------------------------------------------


#: Bumped when the way ceilings are measured changes: a cached figure measured another way is measured again.
CEILINGS_METHOD = 3


def _device_key(device: Any) -> str:
    return f"{device.platform}/{device.device_kind}/method={CEILINGS_METHOD}"


def measure_ceilings(device: Any, sizes: tuple[int, int, int] | None = None) -> dict[str, Any]:
    """Measure ``device``'s float32 matmul FLOP/s (``HIGHEST``) and memory bandwidth now; the best of a few runs."""
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    jnp = jax.numpy
    n, nbytes, repeats = sizes or CEILING_SIZES.get(device.platform, CEILING_SIZES["gpu"])
    key = jax.random.key(0)
    a = jax.device_put(jax.random.uniform(key, (n, n), jnp.float32), device)
    b = jax.device_put(jax.random.uniform(jax.random.fold_in(key, 1), (n, n), jnp.float32), device)
    dot = jax.jit(lambda x, y: jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST))
    best_dot = _best(lambda: dot(a, b).block_until_ready(), repeats)
    a.delete()
    b.delete()
    elems = nbytes // 4
    box = [jax.device_put(jnp.zeros((elems,), jnp.float32), device)]
    # The input's buffer is donated to the output: a fresh buffer each call would time the allocator's page
    # faults, not the memory.
    copy = jax.jit(lambda v: v + 1.0, donate_argnums=0)

    def step() -> None:
        box[0] = copy(box[0])
        box[0].block_until_ready()

    best_copy = _best(step, repeats)
    box[0].delete()
    mib = nbytes >> 20
    return {
        "matmul_flops_per_s": 2.0 * n**3 / best_dot,
        "bandwidth_bytes_per_s": 2.0 * elems * 4 / best_copy,
        "measured_with": {
            "matmul": f"jit(jnp.dot) of two float32 {n}x{n} matrices, precision HIGHEST, the best of {repeats} "
            f"runs or more (at least {CEILING_MIN_S:g} s)",
            "bandwidth": f"jit(x + 1) in place over a float32 array of {mib} MiB (reads and writes {2 * mib} MiB), "
            f"the best of {repeats} runs or more (at least {CEILING_MIN_S:g} s)",
        },
        "device": f"{device.platform}/{device.device_kind}",
    }


#: Each ceiling is timed for at least this long (and ``repeats`` runs): on a busy machine the best of many short
#: runs is the one that had the machine to itself.
CEILING_MIN_S = 0.5


def _best(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # compile and touch the memory first
    best = float("inf")
    start = time.perf_counter()
    done = 0
    while done < repeats or (time.perf_counter() - start < CEILING_MIN_S and done < 100 * repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
        done += 1
    return best


def _read_table() -> dict[str, Any]:
    """The cached ceilings by device key (empty when the file is missing or damaged)."""
    try:
        table = json.loads((cache_dir() / "ceilings.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def _write_table(table: dict[str, Any]) -> None:
    """Replace the cache file in one step; a cache that cannot be written is gone without, never an error."""
    path = cache_dir() / "ceilings.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8") as f:
            json.dump(table, f, indent=1)
        os.replace(f.name, path)
    except OSError:
        pass


def _usable(found: Any) -> TypeGuard[dict[str, Any]]:
    return isinstance(found, dict) and all(
        isinstance(found.get(k), int | float) and found[k] > 0 for k in ("matmul_flops_per_s", "bandwidth_bytes_per_s")
    )


def _best_of(old: Any, fresh: dict[str, Any]) -> dict[str, Any]:
    """``fresh`` kept with the higher of its and ``old``'s figures, each with when it was measured.

    A figure measured on a busy machine is lower than the device can do (here: 38 against 212 GFLOP/s), never
    higher: the best measurement is the nearest to the ceiling.
    """
    out = {k: v for k, v in fresh.items() if k != "stale"}
    out["measurements"] = 1
    if not _usable(old):
        return out
    out["measurements"] = int(old.get("measurements") or 1) + 1
    for figure, when in (("matmul_flops_per_s", "measured_at"), ("bandwidth_bytes_per_s", "bandwidth_measured_at")):
        if float(old[figure]) > float(fresh[figure]):
            out[figure] = float(old[figure])
            out[when] = old.get(when) or old.get("measured_at")
    reached = float(old.get("achieved_flops_per_s") or 0.0)
    if reached > out["matmul_flops_per_s"]:  # measured again on a busy machine: a run did better still
        out["achieved_flops_per_s"] = reached
    return out


def ceilings(device: Any, *, refresh: bool = False) -> dict[str, Any]:
    """``device``'s ceilings: from the cache (``cache_dir()/ceilings.json``), else measured now and kept there.

    Each figure kept is the best of every measurement on this device, with when it was measured
    (``measured_at``, ``bandwidth_measured_at``: UTC, ISO 8601) and how many were made (``measurements``). A
    figure a run proved too low (:func:`note_achieved`: ``stale`` says how) is measured again, as is every figure
    with ``refresh``. A cache that cannot be read or written is measured past, never an error: the figures then
    hold for this process only.
    """
    key = _device_key(device)
    table = _read_table()
    found = table.get(key)
    if not refresh and _usable(found) and not found.get("stale"):
        return {**found, "cached": True}
    fresh = measure_ceilings(device)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    fresh["measured_at"] = fresh["bandwidth_measured_at"] = now
    kept = _best_of(found, fresh)
    table = _read_table()  # another process may have written it while this one measured
    table[key] = kept
    _write_table(table)
    return {**kept, "cached": False}


def note_achieved(device: Any, flops_per_s: float, what: str) -> bool:
    """Tell the cache a run reached ``flops_per_s`` of float32 products on ``device`` (``what`` did, in words).

    A rate above the cached matmul ceiling proves that figure too low (measured while the machine was busy): it is
    marked ``stale`` and measured again the next time :func:`ceilings` is asked; until then the cost model reads
    the rate reached (:func:`cached_ceilings`). Returns whether it was marked.
    """
    table = _read_table()
    found = table.get(_device_key(device))
    if not _usable(found) or not flops_per_s > float(found["matmul_flops_per_s"]):
        return False
    if flops_per_s > float(found.get("achieved_flops_per_s") or 0.0):
        found["achieved_flops_per_s"] = float(flops_per_s)
    found["stale"] = f"{what} reached {flops_per_s / 1e9:.3g} GFLOP/s"
    _write_table(table)
    return True


def cached_ceilings(device: Any) -> tuple[float, float] | None:
    """``device``'s (matmul FLOP/s, bytes/s) as :func:`ceilings` kept them, or ``None``: never measures.

    The kernel plans' cost model reads them (:func:`som_studio.core.plans.fused_plan.predict`); a run does not wait
    for a measurement it did not ask for. A figure a run proved too low reads as the rate that run reached.
    """
    found = _read_table().get(_device_key(device))
    if not _usable(found):
        return None
    try:
        peak = max(float(found["matmul_flops_per_s"]), float(found.get("achieved_flops_per_s") or 0.0))
        return peak, float(found["bandwidth_bytes_per_s"])
    except (TypeError, ValueError):
        return None


def kept_ceilings(device: str) -> dict[str, Any] | None:
    """The ceilings :func:`ceilings` kept for ``device`` (``"platform/kind"``, or ``"cpu"`` for whichever CPU the
    cache holds), or ``None``: never measures.

    A NumPy run is held to the host CPU's ceilings that a JAX run measured (it starts no JAX to measure them),
    a streamed run to its device's: neither has one compiled program to inspect.
    """
    method = f"/method={CEILINGS_METHOD}"
    for key, found in _read_table().items():
        name = key.removesuffix(method)
        # The device's own name, whole: "gpu/NVIDIA H100" is not "gpu/NVIDIA H100 NVL".
        if name != key and device in (name, name.split("/")[0]) and _usable(found):
            return {**found, "cached": True}
    return None


# -- the program and its counts ---------------------------------------------------------------------------------
@contextmanager
def cache_misses() -> Iterator[list[str]]:
    """Within the block, JAX explains each tracing cache miss (``jax_explain_cache_misses``); the list gets them.

    The explanations are logged when a function is traced again, that is when a run recompiles; turning the
    option on does not itself recompile anything.
    """
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    found: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            text = record.getMessage()
            if "CACHE MISS" in text:
                found.append(text[:2000])

    handler = _Keep(logging.WARNING)
    log = logging.getLogger("jax")
    before = bool(jax.config.jax_explain_cache_misses)
    log.addHandler(handler)
    jax.config.update("jax_explain_cache_misses", True)
    try:
        yield found
    finally:
        jax.config.update("jax_explain_cache_misses", before)
        log.removeHandler(handler)


def count_transfers(fn: Callable[[], Any]) -> int | None:
    """Implicit host-to-device and device-to-host transfers while ``fn()`` runs (JAX's transfer guard, ``log``).

    The guard logs from C++ to the process's standard error, so the count reads that stream for the call;
    ``None`` where it cannot be read.
    """
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        return None
    try:
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                with jax.transfer_guard("log"):
                    fn()
            finally:
                os.dup2(saved, 2)
            tmp.seek(0)
            text = tmp.read().decode("utf-8", "replace")
    finally:
        os.close(saved)
    return len(re.findall(r"(?:host-to-device|device-to-host) transfer", text))


def inspect(trainer: Any, *, keep_programs: bool = False) -> dict[str, Any]:
    """What ``trainer`` compiled, per iteration, traced, lowered and compiled once more here (after its warm-up).

    Returns the static part of ``extra.inside``: ``compile_phases_s``, the counts per iteration, XLA's and the
    text's FLOPs and bytes, and with ``keep_programs`` the texts (``programs``: ``{name: {jaxpr, stablehlo,
    hlo}}``). Figures not known are ``None``. The first program of ``programs()`` is the one each call of
    :meth:`run` executes.
    """
    from som_studio.core import jax_runtime

    # Traced, lowered and compiled programs are cached in the process: without this the phases would time
    # cache look-ups. The trainer's own compiled program is its own object and stays.
    jax_runtime.jax().clear_caches()
    traces = getattr(trainer, "traces", None)
    phases: dict[str, float | None] = {"trace": None, "lower": None, "compile": None}
    t = time.perf_counter()
    traced: dict[str, Any] = {}
    if traces is not None:
        traced = traces()
        phases["trace"] = time.perf_counter() - t
        t = time.perf_counter()
        lowered = {k: v.lower() for k, v in traced.items()}
    else:  # pmap's programs lower without a separate trace: the two together, trace unknown
        lowered = trainer.programs()
    phases["lower"] = time.perf_counter() - t
    name = next(iter(lowered))
    t = time.perf_counter()
    compiled = lowered[name].compile()
    phases["compile"] = time.perf_counter() - t
    text = compiled.as_text()
    costs = hlo.ProgramCosts(text)
    per_trip_iterations = max(1, int(getattr(trainer, "iterations_per_trip", 1) or 1))
    eager = bool(getattr(trainer, "eager", False))
    xla = _cost_analysis(compiled)
    once, trips = costs.whole(trips=False), costs.whole(trips=True)
    body = costs.per_trip
    per_call = costs.iteration_loop is None
    flops: float | None = None
    bytes_: float | None = None
    xla_flops, xla_bytes = xla.get("flops"), xla.get("bytes")
    if xla_flops is not None:
        # XLA's figure with each inner loop body's extra trips added, less what runs once per call.
        flops = (xla_flops - once["flops"] + body["flops"]) / per_trip_iterations
    if xla_bytes is not None:
        bytes_ = (xla_bytes - once["bytes"] + body["bytes"]) / per_trip_iterations
    kernels = body["kernels"] / per_trip_iterations
    jaxpr = traced[name].jaxpr if name in traced else None
    dispatches: float = 1.0 / per_trip_iterations if not per_call else 1.0
    if eager and jaxpr is not None:
        # Run eagerly, every operation is its own dispatch and kernel, and writes its result to memory.
        eqns = _eqns(jaxpr.jaxpr)
        kernels = float(len(eqns))
        dispatches = float(len(eqns))
        bytes_ = float(sum(_aval_bytes(v) for e in eqns for v in (*e.invars, *e.outvars)))
    out: dict[str, Any] = {
        "program": name,
        "compile_phases_s": phases,
        "xla_flops_per_iteration": flops,
        "xla_bytes_per_iteration": bytes_,
        "kernels_per_iteration": kernels,
        "counts": {
            "fusions_per_iteration": body["fusions"] / per_trip_iterations,
            "loop_trips_per_iteration": body["loop_trips"] / per_trip_iterations,
            "custom_calls_per_iteration": body["custom_calls"] / per_trip_iterations,
            "collectives_per_iteration": body["collectives"] / per_trip_iterations,
            "conditionals_per_iteration": body["conditionals"] / per_trip_iterations,
            "dispatches_per_iteration": dispatches,
            "kernels_per_call": trips["kernels"],
            "iterations_per_trip": per_trip_iterations,
            "eager": eager,
        },
        "cost_analysis": xla,
    }
    if keep_programs:
        out["programs"] = {
            name: {
                "jaxpr": str(jaxpr) if jaxpr is not None else None,
                "stablehlo": lowered[name].as_text(),
                "hlo": text,
            }
        }
    return out


def _eqns(jaxpr: Any) -> list[Any]:
    return list(jaxpr.eqns)


def _aval_bytes(v: Any) -> int:
    aval = getattr(v, "aval", None)
    size = getattr(aval, "size", None)
    dtype = getattr(aval, "dtype", None)
    if size is None or dtype is None:
        return 0
    return int(size) * int(dtype.itemsize)


def _cost_analysis(compiled: Any) -> dict[str, float | None]:
    """XLA's own figures for one call (every ``while`` body once), or ``None`` each where it gives none."""
    try:
        ca = compiled.cost_analysis()
    except Exception:  # not every backend implements it
        ca = None
    if isinstance(ca, list):
        ca = ca[0] if ca else None
    if not isinstance(ca, dict):
        return {"flops": None, "bytes": None, "transcendentals": None}

    def get(k: str) -> float | None:
        v = ca.get(k)
        return float(v) if v is not None and float(v) >= 0 else None

    return {"flops": get("flops"), "bytes": get("bytes accessed"), "transcendentals": get("transcendentals")}


# -- the record ---------------------------------------------------------------------------------------------------
def assemble(
    static: dict[str, Any] | None,
    counted: dict[str, float],
    *,
    ceiling: dict[str, Any] | None,
    seconds_per_iteration: float | None,
    devices: int = 1,
    shares_host: bool = True,
) -> dict[str, Any]:
    """``extra.inside`` from :func:`inspect`'s part (``None`` for a NumPy run), :func:`analytic`'s count, the
    device's ceilings and the measured median seconds per iteration.

    ``devices``: how many devices the program runs on; XLA's figures are one device's, so they are multiplied.
    ``shares_host``: simulated CPU devices share the host's cores, so the ceilings stay one device's.
    """
    static = static or {}
    xf, xb = static.get("xla_flops_per_iteration"), static.get("xla_bytes_per_iteration")
    flops = xf * devices if xf is not None else None
    bytes_ = xb * devices if xb is not None else None
    source = "xla"
    if flops is None:
        flops, source = counted["flops"], "analytic"
    if not static:
        bytes_ = counted["bytes"]
    ceil = None
    if ceiling is not None:
        scale = 1 if shares_host else devices
        ceil = {
            "matmul_flops_per_s": ceiling["matmul_flops_per_s"] * scale,
            "bandwidth_bytes_per_s": ceiling["bandwidth_bytes_per_s"] * scale,
            "measured_with": ceiling.get("measured_with"),
            "measured_at": ceiling.get("measured_at"),
            "measurements": ceiling.get("measurements"),
            "device": ceiling.get("device"),
            "devices": scale,
        }
    out: dict[str, Any] = {
        "flops_per_iteration": flops,
        "flops_source": source,
        "bytes_per_iteration": bytes_,
        "bytes_source": "analytic" if not static else ("xla" if bytes_ is not None else None),
        "kernels_per_iteration": static.get("kernels_per_iteration"),
        "achieved_flops_per_s": None,
        "achieved_bytes_per_s": None,
        "compile_phases_s": static.get("compile_phases_s") or {"trace": None, "lower": None, "compile": None},
        "ceilings": ceil,
        "analytic": {"flops_per_iteration": counted["flops"], "bytes_per_iteration": counted["bytes"]},
        "analytic_ratio": (xf * devices / counted["flops"]) if xf is not None and counted["flops"] else None,
    }
    for k in ("program", "counts", "cost_analysis", "programs"):
        if k in static:
            out[k] = static[k]
    # XLA counts each conditional as its largest branch, and which branch runs depends on the data: the
    # screened search ranks a tile whole only where its units crowd together, and most tiles keep the product's
    # units (its count was 1.9x the SOM's operations and 130 GB an epoch, 13x the memory's ceiling). A count the
    # measured time could not have done, beyond a ceiling by half again, is as wrong (loops over planes the
    # caches hold). The SOM's own operations stand in for both.
    branches = bool((static.get("counts") or {}).get("conditionals_per_iteration"))
    peak, bw = (ceil["matmul_flops_per_s"], ceil["bandwidth_bytes_per_s"]) if ceil is not None else (None, None)
    rate = seconds_per_iteration or None
    if bytes_ is not None and (branches or (rate and bw and bytes_ / rate > 1.5 * bw)):
        out["bytes_per_iteration"], out["bytes_source"] = counted["bytes"], "analytic"
    if branches or (rate and peak and flops / rate > 1.5 * peak):
        out["flops_per_iteration"], out["flops_source"] = counted["flops"], "analytic"
    if seconds_per_iteration:
        flops, bytes_ = out["flops_per_iteration"], out["bytes_per_iteration"]
        out["seconds_per_iteration"] = seconds_per_iteration
        out["achieved_flops_per_s"] = flops / seconds_per_iteration
        out["achieved_bytes_per_s"] = bytes_ / seconds_per_iteration if bytes_ is not None else None
    out.update(roofline(out))
    return out


def roofline(inside: dict[str, Any]) -> dict[str, Any]:
    """Where a run sits under its roofline: ``arithmetic_intensity`` (FLOPs per byte), ``attainable_flops_per_s``
    (the lower ceiling at that intensity), ``fraction_of_ceiling`` and ``bound`` (``"memory"``, ``"compute"`` or
    ``"launch overhead"``: below :data:`LAUNCH_FRACTION` of the ceiling with kernels shorter than
    :data:`LAUNCH_KERNEL_S` on average; ``"overhead"``: below it with no kernels counted, a NumPy run's
    interpreter and calls). ``None`` each where a figure is missing."""
    flops, nbytes = inside.get("flops_per_iteration"), inside.get("bytes_per_iteration")
    achieved = inside.get("achieved_flops_per_s")
    ceil = inside.get("ceilings") or {}
    peak, bw = ceil.get("matmul_flops_per_s"), ceil.get("bandwidth_bytes_per_s")
    out: dict[str, Any] = {
        "arithmetic_intensity": None,
        "attainable_flops_per_s": None,
        "fraction_of_ceiling": None,
        "bound": None,
    }
    if not flops or not nbytes:
        return out
    ai = flops / nbytes
    out["arithmetic_intensity"] = ai
    if not peak or not bw:
        return out
    attainable = min(peak, ai * bw)
    out["attainable_flops_per_s"] = attainable
    bound = "memory" if ai * bw < peak else "compute"
    if achieved:
        frac = achieved / attainable
        out["fraction_of_ceiling"] = frac
        seconds = inside.get("seconds_per_iteration")
        launched = (inside.get("counts") or {}).get("dispatches_per_iteration") or 0
        kernels = max(float(inside.get("kernels_per_iteration") or 0), float(launched))
        if seconds and kernels and frac < LAUNCH_FRACTION and seconds / kernels < LAUNCH_KERNEL_S:
            bound = "launch overhead"
        elif not kernels and frac < LAUNCH_FRACTION:
            # No program's kernels to count (a NumPy run, a Python loop): far below both ceilings, the time goes
            # to the interpreter and its calls, not to the hardware ("compute"-bound at 0.1 % read as a limit).
            bound = "overhead"
    out["bound"] = bound
    return out
