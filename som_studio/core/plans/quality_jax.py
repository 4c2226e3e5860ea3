"""Map quality on the run's device: QE, TE and the U-matrix as compiled JAX programs.

The same measures as :mod:`som_studio.core.som.metrics` (the NumPy reference, which
stays the definition), computed where a JAX run's map already is, so a big run
does not wait on a host pass over examples x units:

* **best two units** of each example by the search training runs, the kernel
  plan of the device and sizes (:mod:`som_studio.core.plans.fused_plan`): every
  choice settled by the direct form ``sum_d (x_d - w_d)^2``, the first in
  row-major order on ties (:func:`som_studio.core.plans.kernels.best_two`);
* **QE** from the exact distance to the chosen unit, recomputed from the
  example and that unit (in float64 where JAX has it), averaged in float64;
* **TE**: the share of examples whose two best units are not adjacent, as
  :func:`som_studio.core.som.topology.adjacent` says (rect: the 8 surrounding
  units; hex: the 6 touching ones; wrapped on a toroid);
* **missing values** (NaN): each example's distances over its known features
  only, as in training (the program is compiled for data with or without them).

Examples are processed in whole chunks (``lax.map``, the last one ending at the last example) so the
working set stays within the plan's budget, never ``N x M``.
One program is compiled per map and data shape; :class:`DeviceQuality` keeps
the run's rows on the device across measurements (on the CPU, the memory the trainer trains on).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime, kept_programs
from som_studio.core.data.checks import any_missing
from som_studio.core.plans import fused_plan, kernels, screen
from som_studio.core.plans.distances import take
from som_studio.core.plans.fused_plan import SCREEN_DEFERRED, SCREEN_GATHERED, KernelPlan
from som_studio.core.som import topology as topo
from som_studio.run_settings import Topology

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
else:
    jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def plan(
    backend: str,
    samples: int,
    units: int,
    features: int,
    itemsize: int = 4,
    budget: int | None = None,
    ceilings: tuple[float, float] | None = None,
) -> KernelPlan:
    """The quality measures' search on ``backend``: the plan family training takes, chosen for a search alone.

    The best two units of each example come from the searches that find a
    batch epoch's best-matching units (:func:`som_studio.core.plans.kernels.best_two`),
    ranked by the same cost model (:func:`som_studio.core.plans.fused_plan.rank`, the
    search without per-unit sums), so measuring a map costs about one epoch's
    search. A chunk holds at most ``budget`` bytes, by default the plan's own, as training's chunks do
    (measured at 30,000 x 50 on 200x200: chunks of twice training's size, 64 MiB, made the pass 2.2x
    slower than a training epoch's search; the same chunks as training, 1.0x).
    """
    units, samples = max(units, 1), max(samples, 1)
    best = fused_plan.rank(backend, units, features, samples, itemsize, ceilings=ceilings, sums=False)[0][0]
    form = fused_plan.forced_form() or best.form
    chosen = fused_plan.choose(backend, units, features, samples, itemsize, budget=budget, form=form, sums=False)
    return dataclasses.replace(chosen, chunk=dividing(samples, chosen.chunk))


def dividing(samples: int, chunk: int) -> int:
    """The largest chunk of at most ``chunk`` examples and at least three quarters of it that divides
    ``samples``, else ``chunk``: the examples are then cut in place, where a last chunk overlapping the one
    before is a slice copied chunk by chunk (10^6 x 50 on 20x20: 514-531 ms a quality pass in chunks of
    2,000 against 566-583 in the plan's 2,370)."""
    if samples % chunk == 0:
        return chunk
    for count in range(-(-samples // chunk), samples // max(1, 3 * chunk // 4) + 1):
        if samples % count == 0:
            return samples // count
    return chunk


def _ceilings(device: Any) -> tuple[float, float] | None:
    """``device``'s ceilings as training's plan reads them (:func:`som_studio.core.impls.jax_fused.choose_plan`)."""
    from som_studio.core.inspection import inside

    return inside.cached_ceilings(device)


def _exact_d2(rows: jax.Array, x: jax.Array, first: jax.Array, known: jax.Array | None = None) -> jax.Array:
    """Squared distance of each example to its chosen unit of ``rows`` (M, D), over its known features, in
    float64 where JAX has it."""
    acc = _wide()
    w = take(rows, first, axis=0).astype(acc)  # (n, D): whole rows of the unit-major map
    diff = x.astype(acc) - w
    if known is not None:
        diff = jnp.where(known, diff, jnp.zeros((), acc))
    return jnp.sum(diff * diff, axis=1)


def _wide() -> Any:
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def best_two_program(
    wt: jax.Array, x: jax.Array, plan_: KernelPlan, missing: bool = False
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(first, second, d2)`` of each example of ``x`` (N, D), searched in whole chunks of the plan's.

    ``missing``: ``x`` may hold NaN (missing values), left out of each example's distances.
    """
    m = wt.shape[1]
    # The map's part of the search and its unit-major rows, made once, not in every chunk of the loop below.
    search = kernels.chunk_search(wt, plan_)
    rows = wt.T

    def split(x):
        if not missing:
            return x, None
        known = ~jnp.isnan(x)
        return jnp.where(known, x, 0), known

    def real(known):
        return None if known is None else known.astype(x.dtype)

    if isinstance(search, screen.Screen) and m >= 2 and x.shape[1] <= SCREEN_DEFERRED:
        # The CPU's screened search: the examples near a tie ranked after every chunk, together, as an epoch
        # ranks them (:func:`som_studio.core.plans.screen.epoch_sums`). Each example's distance comes with
        # its units, in the same pass: a settled example's from its chunk, one near a tie's from its group.
        def settled(xc):
            xc, known = split(xc)
            (first, second), near, limit = search.settled(xc, real(known), True)
            return first, second, near, limit, _exact_d2(rows, xc, first, known)

        first, second, near, limit, d2 = kernels.in_chunks(settled, x, plan_.chunk)

        def gathered(at):
            xc, known = split(take(x, at, axis=0))
            return xc, real(known)

        def put(chosen, at, found, xc, kn):
            d = _exact_d2(rows, xc, found[0], None if kn is None else kn != 0)
            return screen.put(chosen, at, (*found, d))

        group = min(plan_.chunk, SCREEN_GATHERED)  # a group's scores no larger than a chunk's
        return search.near_ties((first, second, d2), near, limit, gathered, put, group, True)

    def one(xc):
        xc, known = split(xc)
        if m < 2:
            first = second = jnp.zeros((xc.shape[0],), jnp.int32)
        else:
            first, second = search(xc, real(known), True)
        return first, second, _exact_d2(rows, xc, first, known)

    return kernels.in_chunks(one, x, plan_.chunk)


def adjacent(first: jax.Array, second: jax.Array, shape: tuple[int, int], lattice: tuple[str, bool]) -> jax.Array:
    """Whether units ``first`` and ``second`` (flat) are adjacent, as :func:`topology.adjacent` decides."""
    height, width = shape
    topology, wrap = lattice
    fy, fx = first // width, first % width
    sy, sx = second // width, second % width
    if topology != Topology.HEX:
        dy, dx = jnp.abs(fy - sy), jnp.abs(fx - sx)
        if wrap:
            dy, dx = jnp.minimum(dy, height - dy), jnp.minimum(dx, width - dx)
        return (dy <= 1) & (dx <= 1)
    # Plane distance at most 1 (the 6 touching units), wrapped on a toroid, in float64 where JAX has it.
    acc = _wide()
    px, py = topo.periods(height, width, topology)

    def xy(r, c):
        return c.astype(acc) + 0.5 * (r % 2).astype(acc), r.astype(acc) * topo.HEX_ROW

    (ax, ay), (bx, by) = xy(fy, fx), xy(sy, sx)
    dx, dy = ax - bx, ay - by
    if wrap:
        dx, dy = dx - px * jnp.round(dx / px), dy - py * jnp.round(dy / py)
    return jnp.sqrt(dx * dx + dy * dy) <= 1.0 + 1e-9


def quality_program(
    wt: jax.Array,
    x: jax.Array,
    rows: jax.Array,
    width: int,
    plan_: KernelPlan,
    lattice: tuple[str, bool] = (Topology.RECT, False),
    missing: bool = False,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """(sum of distances to the best unit, count of topographic errors, each example's best unit).

    The sums are over the first ``rows`` examples of ``x`` (N, D) (a streamed batch's padding left out); the
    best units of all of them (a run's hits and labels come from the same pass).
    """
    first, second, d2 = best_two_program(wt, x, plan_, missing)
    adj = adjacent(first, second, (wt.shape[1] // width, width), lattice)
    acc = d2.dtype
    valid = jnp.arange(x.shape[0]) < rows
    qe_sum = jnp.sum(jnp.where(valid, jnp.sqrt(d2), jnp.zeros((), acc)))
    te_count = jnp.sum(jnp.where(valid & ~adj, 1, 0))
    return qe_sum, te_count, first


def u_matrix_program(w: jax.Array) -> jax.Array:
    """Mean distance of each unit of ``w`` (H, W, D) to its 4-neighbours, as :func:`metrics.u_matrix`."""
    h, wd, _ = w.shape
    total = jnp.zeros((h, wd), w.dtype)
    count = jnp.zeros((h, wd), w.dtype)
    dy = jnp.sqrt(jnp.sum((w[1:] - w[:-1]) ** 2, axis=-1))
    dx = jnp.sqrt(jnp.sum((w[:, 1:] - w[:, :-1]) ** 2, axis=-1))
    total = total.at[1:].add(dy).at[:-1].add(dy).at[:, 1:].add(dx).at[:, :-1].add(dx)
    count = count.at[1:].add(1).at[:-1].add(1).at[:, 1:].add(1).at[:, :-1].add(1)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0)


def u_matrix_pairs_program(w: jax.Array, pairs: jax.Array) -> jax.Array:
    """Mean distance of each unit of ``w`` (H, W, D) to its neighbours, listed once per pair in ``pairs`` (P, 2).

    Any lattice (:func:`som_studio.core.som.topology.neighbour_pairs`: hex, toroid), as :func:`metrics.u_matrix`.
    """
    h, wd, d = w.shape
    flat = w.reshape(h * wd, d)
    dist = jnp.sqrt(jnp.sum((flat[pairs[:, 0]] - flat[pairs[:, 1]]) ** 2, axis=-1))
    ends = jnp.concatenate([pairs[:, 0], pairs[:, 1]])
    total = jax.ops.segment_sum(jnp.concatenate([dist, dist]), ends, num_segments=h * wd)
    count = jax.ops.segment_sum(jnp.ones(ends.shape, w.dtype), ends, num_segments=h * wd)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0).reshape(h, wd)


_quality = jax.jit(quality_program, static_argnums=(3, 4, 5, 6))
_best_two = jax.jit(best_two_program, static_argnums=(2, 3))
_u_matrix = jax.jit(u_matrix_program)
_u_matrix_pairs = jax.jit(u_matrix_pairs_program)


def _lower_quality(args: tuple[Any, ...], device: Any) -> Any:
    """``_quality.lower(*args)``, or the same program traced by an earlier process (:mod:`kept_programs`)."""
    return kept_programs.lower(_quality, args, name="quality", static_argnums=(3, 4, 5, 6), platform=device.platform)


class Compiling:
    """A program lowered now (``lower()``, on the caller's thread) and compiled on a thread of its own.

    XLA's compile lets go of the interpreter, so the session lowers and compiles the trainer's program
    meanwhile: a run's two compiles overlap instead of following each other (a first run of 1,000,000 x 16
    on 10x10 compiled the quality program for 1.7-1.9 s before its epoch's program: 3.3-3.5 s for both, 2.8-3.3 s
    overlapped). :meth:`wait` gives ``(compiled, XLA compilations on the thread)``, or raises what compiling
    raised.
    """

    def __init__(self, lower: Callable[[], Any], then: Callable[[Any], Any] | None = None) -> None:
        lowered = lower()
        self._done: dict[str, Any] = {}

        def compile_() -> None:
            before = jax_runtime.compile_count(this_thread=True)
            try:
                self._done["compiled"] = lowered.compile()
            except BaseException as exc:
                self._done["error"] = exc
            self._done["compiles"] = jax_runtime.compile_count(this_thread=True) - before
            if then is not None and "compiled" in self._done:
                t0 = time.perf_counter()
                try:
                    self._done["then"] = (then(self._done["compiled"]), time.perf_counter() - t0)
                except Exception:  # only ever a head start: asked again on the caller's thread
                    pass

        self._thread = threading.Thread(target=compile_, name="som-quality-compile", daemon=True)
        self._thread.start()

    def wait(self) -> tuple[Any, int]:
        self._thread.join()
        if "error" in self._done:
            raise self._done["error"]
        return self._done["compiled"], int(self._done["compiles"])

    def then(self) -> tuple[Any, float] | None:
        """What ``then`` gave, with the seconds it took on the thread (after :meth:`wait`; ``None`` if it failed)."""
        return self._done.get("then")


class _Measures:
    """What both quality programs share: one program, lowered and compiled once (:class:`Compiling`)."""

    _compiled: Any
    _compiling: Compiling | None
    compile_s: float

    def _lower(self) -> Any:
        raise NotImplementedError

    _early: tuple[Any, float] | None = None
    _warm_only = False

    def start_compile(self, first: np.ndarray | None = None, warm: bool = False) -> None:
        """Lower the program now and compile it on a thread of its own (see :class:`Compiling`); ``first``, a map
        to measure there as soon as it is compiled (:meth:`early` gives it): a small run's initial map,
        measured while the trainer's program compiles, its program's first run and its one-off costs with it.
        ``warm``: ``first`` is measured only for those costs, and :meth:`early` does not give it (XLA:CPU compiles
        the kernels of a loop's body when it first runs: 45 ms of the first pass at 10,000 x 50 on 40x30, whose
        later passes take 21 ms)."""
        if self._compiled is None and self._compiling is None:
            then = None if first is None else (lambda compiled: self._measure_with(compiled, first, False))
            self._warm_only = warm
            self._compiling = Compiling(self._lower, then)

    def _measure_with(self, compiled: Any, weights: np.ndarray, bmus: bool) -> tuple[float, float, Any]:
        raise NotImplementedError

    def early(self) -> tuple[tuple[float, float, Any], float] | None:
        """The measurement of :meth:`start_compile`'s ``first`` map and its seconds, once (after :meth:`compile`)."""
        got, self._early = self._early, None
        return got

    def compile(self) -> int:
        """Compile the program now (once), or wait for :meth:`start_compile`'s; :attr:`compile_s`: how long this
        call took (the lowering is the time of whoever called :meth:`start_compile`).

        Returns the XLA compilations it took (0 when read from the compile cache, or already done)."""
        if self._compiled is not None:
            return 0
        t0 = time.perf_counter()  # what this call waits: the lowering too where it starts the compile
        self.start_compile()
        assert self._compiling is not None
        self._compiled, compiles = self._compiling.wait()
        self._early = None if self._warm_only else self._compiling.then()
        self._compiling = None
        self.compile_s = time.perf_counter() - t0
        return compiles


class DeviceQuality(_Measures):
    """QE and TE of maps of one run, computed on ``device``; the examples are placed once.

    Thread: used from the session's thread only.

    Parameters
    ----------
    data : (N, D) examples.
    height, width : the map's grid.
    dtype : the run's precision; distances are ranked in it (as training ranks them).
    device : where to compute; default JAX's first device.
    budget : bytes one chunk of the search may hold (default: :func:`plan`'s).
    topology, toroid : the map's lattice (the topographic error's adjacency).
    missing : whether ``data`` holds NaN, where the caller knows (else looked for: a scan of every value).
    """

    def __init__(
        self,
        data: np.ndarray,
        height: int,
        width: int,
        dtype: Any,
        device: Any = None,
        budget: int | None = None,
        topology: str = Topology.RECT,
        toroid: bool = False,
        missing: bool | None = None,
    ) -> None:
        self.height, self.width = height, width
        self.lattice = (topology, bool(toroid))
        self.missing = any_missing(data) if missing is None else missing
        self.dtype = np.dtype(dtype)
        self.device = device if device is not None else jax.devices()[0]
        n, d = data.shape
        self.samples, self.features = n, d
        self.plan = plan(
            self.device.platform, n, height * width, d, self.dtype.itemsize, budget, _ceilings(self.device)
        )
        # The run's own rows where they are in its precision and placed as they are (JAX's CPU device takes
        # them without a copy): no copy of the table for the quality pass.
        self._x = jax.device_put(jax_runtime.placeable(data, self.dtype), self.device)
        self._compiled: Any = None
        self._compiling: Compiling | None = None
        #: Seconds the one compile took (0 until the first measurement).
        self.compile_s = 0.0

    def _wt(self, weights: np.ndarray) -> jax.Array:
        w = np.asarray(weights, dtype=self.dtype).reshape(self.height * self.width, self.features)
        return jax.device_put(np.ascontiguousarray(w.T), self.device)

    def _lower(self) -> Any:
        spec = jax.ShapeDtypeStruct((self.features, self.height * self.width), self.dtype)
        rows = jax.ShapeDtypeStruct((), np.int32)
        args = (spec, self._x, rows, self.width, self.plan, self.lattice, self.missing)
        return _lower_quality(args, self.device)

    def __call__(self, weights: np.ndarray) -> tuple[float, float]:
        """(QE, TE) of ``weights`` (H, W, D)."""
        qe, te, _ = self.measure(weights)
        return qe, te

    def measure(self, weights: np.ndarray, bmus: bool = False) -> tuple[float, float, np.ndarray | None]:
        """(QE, TE, each example's best unit, flat int64, when ``bmus``) of ``weights`` (H, W, D), one search."""
        self.compile()
        return self._measure_with(self._compiled, weights, bmus)

    def _measure_with(self, compiled: Any, weights: np.ndarray, bmus: bool) -> tuple[float, float, Any]:
        qe_sum, te_count, first = compiled(self._wt(weights), self._x, np.int32(self.samples))
        n = max(self.samples, 1)
        te = float(te_count) / n if self.height * self.width >= 2 else 0.0
        return float(qe_sum) / n, te, np.asarray(first)[: self.samples].astype(np.int64) if bmus else None

    def close(self) -> None:
        self._x.delete()


def best_two(
    weights: np.ndarray, data: np.ndarray, plan_: KernelPlan | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, squared distance to the first) per example, as :func:`metrics.best_two` gives them.

    On JAX's default device, with ``plan_`` or the one :func:`plan` picks.
    """
    h, w, d = weights.shape
    dtype = np.asarray(weights).dtype
    n = data.shape[0]
    p = plan_ or plan(jax.default_backend(), n, h * w, d, dtype.itemsize)
    wt = np.ascontiguousarray(np.asarray(weights).reshape(h * w, d).T)
    first, second, d2 = _best_two(wt, jax_runtime.placeable(data, dtype), p, any_missing(data))
    return np.asarray(first)[:n], np.asarray(second)[:n], np.asarray(d2)[:n]


def quality(
    weights: np.ndarray,
    data: np.ndarray,
    device: Any = None,
    budget: int | None = None,
    topology: str = Topology.RECT,
    toroid: bool = False,
):
    """(QE, TE) of ``weights`` (H, W, D) on ``data``, computed on ``device`` (one-off: compiles each call)."""
    h, w, _ = weights.shape
    q = DeviceQuality(data, h, w, np.asarray(weights).dtype, device, budget, topology, toroid)
    try:
        return q(weights)
    finally:
        q.close()


def u_matrix(
    weights: np.ndarray, device: Any = None, topology: str = Topology.RECT, toroid: bool = False
) -> np.ndarray:
    """:func:`metrics.u_matrix` of ``weights`` (H, W, D) on its lattice, computed on ``device``."""
    device = device if device is not None else jax.devices()[0]
    w = jax.device_put(np.asarray(weights), device)
    if topology == Topology.RECT and not toroid:
        return np.asarray(_u_matrix(w))
    h, wd, _ = w.shape
    pairs = topo.neighbour_pairs(h, wd, topology, toroid).astype(np.int32).reshape(-1, 2)
    return np.asarray(_u_matrix_pairs(w, jax.device_put(pairs, device)))


class UnitCounts:
    """Hits per unit (flat) and, for a table with labels, each label's hits per unit: counted batch by batch."""

    def __init__(self, hits: np.ndarray, labels: dict[str, np.ndarray] | None) -> None:
        self.hits = hits
        self.labels = labels

    def add(self, first: np.ndarray, labels: np.ndarray | None, units: int) -> None:
        """Count a batch's best units ``first`` (and its ``labels``)."""
        self.hits += np.bincount(first, minlength=units)
        if self.labels is None or labels is None:
            return
        names, codes = np.unique(np.asarray(labels, dtype=str), return_inverse=True)
        for k, name in enumerate(names):
            got = np.bincount(first[codes == k], minlength=units)
            have = self.labels.get(str(name))
            self.labels[str(name)] = got if have is None else have + got


def _gathered(counts: UnitCounts | None, qe_sum: float, te_count: int, rows: int) -> tuple[float, int, int]:
    """The sums of every process's share (in process order, the same on each), ``counts`` made theirs too."""

    mine: dict[str, Any] = {"qe": qe_sum, "te": te_count, "rows": rows}
    if counts is not None:
        labels = counts.labels
        mine["hits"] = counts.hits.tolist()
        mine["labels"] = None if labels is None else {k: v.tolist() for k, v in labels.items()}
    every = jax_runtime.gather_json(mine)
    if counts is not None:
        counts.hits = np.sum([np.asarray(e["hits"], np.int64) for e in every], axis=0)
        if counts.labels is not None:
            merged: dict[str, np.ndarray] = {}
            for e in every:
                for k, v in (e["labels"] or {}).items():
                    merged[k] = merged[k] + np.asarray(v, np.int64) if k in merged else np.asarray(v, np.int64)
            counts.labels = merged
    return float(sum(e["qe"] for e in every)), int(sum(e["te"] for e in every)), int(sum(e["rows"] for e in every))


class StreamQuality(_Measures):
    """QE and TE of maps of a streamed run: one pass over its source, a batch at a time, on ``device``.

    The program of :class:`DeviceQuality`, compiled once for one batch's shape; the sums of the
    batches add up to the sums over every row. Memory: one batch, whatever the rows.
    Thread: used from the session's thread only.

    Parameters
    ----------
    stream : the problem's :class:`~som_studio.core.som.problem.Streamed` (source, batch rows, scaling).
    height, width, dtype, device, topology, toroid : as :class:`DeviceQuality`.
    """

    def __init__(
        self,
        stream: Any,
        height: int,
        width: int,
        dtype: Any,
        device: Any = None,
        topology: str = Topology.RECT,
        toroid: bool = False,
    ) -> None:
        self.stream = stream
        self.height, self.width = height, width
        self.lattice = (topology, bool(toroid))
        self.missing = bool(stream.moments.missing)
        self.dtype = np.dtype(dtype)
        self.device = device if device is not None else jax.devices()[0]
        self.features = stream.source.features
        rows = max(1, min(stream.batch_rows, stream.rows))  # a process whose share holds no rows still measures
        self.plan = plan(
            self.device.platform, rows, height * width, self.features, self.dtype.itemsize, None, _ceilings(self.device)
        )
        self.size = rows  # every batch's rows: the last one padded to them
        self._compiled: Any = None
        self._compiling: Compiling | None = None
        self.compile_s = 0.0
        #: Seconds the last measurements waited for the reader, summed.
        self.read_s = 0.0

    def _lower(self) -> Any:
        spec = jax.ShapeDtypeStruct
        args = (
            spec((self.features, self.height * self.width), self.dtype),
            spec((self.size, self.features), self.dtype),
            spec((), np.int32),
            self.width,
            self.plan,
            self.lattice,
            self.missing,
        )
        return _lower_quality(args, self.device)

    def measure(self, weights: np.ndarray, bmus: bool = False) -> tuple[float, float, UnitCounts | None]:
        """(QE, TE, the hits per unit and of each label when ``bmus``) of ``weights`` (H, W, D): one pass.

        The rows' best units are counted as each batch is measured, never kept: memory holds
        the units' counts, whatever the rows.
        """
        self.compile()
        w = np.asarray(weights, dtype=self.dtype).reshape(self.height * self.width, self.features)
        wt = jax.device_put(np.ascontiguousarray(w.T), self.device)
        s = self.stream
        size = self.size
        qe_sum, te_count, rows = 0.0, 0, 0
        m = self.height * self.width
        counts = UnitCounts(np.zeros(m, np.int64), {} if s.source.label_column else None)
        with s.reader(self.dtype) as reader:
            for batch in reader:
                n = batch.rows
                xp = batch.values
                if n < size:
                    xp = np.zeros((size, self.features), self.dtype)
                    xp[:n] = batch.values
                q, t, first = self._compiled(wt, xp, np.int32(n))
                qe_sum += float(q)
                te_count += int(t)
                rows += n
                if bmus:
                    counts.add(np.asarray(first)[:n], batch.labels, m)
            self.read_s += reader.wait_s
        if s.gather is not None:  # each process measured its own share: the sums of every process's
            qe_sum, te_count, rows = _gathered(counts if bmus else None, qe_sum, te_count, rows)
        n = max(rows, 1)
        te = te_count / n if self.height * self.width >= 2 else 0.0
        return qe_sum / n, te, counts if bmus else None

    def close(self) -> None:
        self._compiled = None
