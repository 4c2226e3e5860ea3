"""The fused batch implementation, ``jax-fused-batch``, and the trainer base it shares with ``jax-scan-online``
(:mod:`som_studio.core.impls.jax_scan_online`).

Both run a whole chunk of iterations (the session's ``run(first, count)``) as
*one* dispatch of one compiled program: ``first`` and ``count`` are traced
scalars and the loop is a ``lax.fori_loop`` with dynamic bounds, so changing
the chunk size or crossing chunk boundaries never recompiles, and the map's
buffer is donated so each chunk updates it in place.

The map is kept on the device feature-major, ``(D, H, W)``: every per-unit
operation then runs along the contiguous unit axis, and the neighbourhood is a
pair of ordinary matrix products per feature.

Batch epoch (:func:`batch_epoch`), with ``M = H * W`` units:

* **best-matching units** by an exhaustive blocked argmin (:func:`bmus`):
  the units are cut into blocks of ``B``; a scan over the blocks takes each
  block's minimum of ``|w|^2 - 2 x.w`` (``|x|^2`` is constant per example; XLA
  fuses that small product into the minimum) and each example keeps its two
  best blocks; their units are ranked again with the direct distance and the
  first minimum in row-major order wins. Examples are processed in chunks, so
  the working memory is ``O(chunk * B)``, never ``N x M``.
* **per-unit sums** of examples and counts with ``segment_sum`` (a scatter-add:
  ``O(N * D)``; measured ~40 us on the playbook workload against ~125 ms for a
  one-hot matmul, which builds an ``N x M`` matrix).
* **neighbourhood** as the separable product it is: for each feature plane
  ``S`` (and the counts), ``Hy @ S @ Hx^T`` with ``Hy`` ``(H, H)`` and ``Hx``
  ``(W, W)`` — never ``M x M``, never ``N x M x D``.

How the best-matching units are searched depends on the device and size: the kernel plan
(:mod:`som_studio.core.plans.fused_plan`; the blocked search above is the CPU's, the direct form over all
units a GPU's with few features, an exact matmul form with many), recorded as ``extra.kernel_plan``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime, kept_programs
from som_studio.core.plans import fused_plan, kernels, neighbourhood
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.neighbourhood import HIGHEST
from som_studio.core.som.problem import Problem
from som_studio.run_settings import Topology

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
    from jax import Array
else:
    jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def bmus(wt: Array, data: Array, plan: KernelPlan | None = None, known: Array | None = None) -> Array:
    """Flat index of each example's best-matching unit (first in row-major order on ties).

    ``plan`` defaults to the one chosen for the default backend and these sizes
    (:func:`som_studio.core.plans.fused_plan.choose`); see :mod:`som_studio.core.plans.kernels`.
    """
    if plan is None:
        d, m = wt.shape
        plan = fused_plan.choose(jax.default_backend(), m, d, data.shape[0], wt.dtype.itemsize)
    return kernels.bmus(wt, data, plan, known)


def batch_epoch(
    w: Array,
    data: Array,
    sx: Array,
    sy: Array,
    plan: KernelPlan | None = None,
    lattice: tuple[str, bool] = (Topology.RECT, False),
    known: Array | None = None,
) -> Array:
    """One batch epoch on a feature-major map ``w`` (D, H, W); returns the new map (``plan`` as for :func:`bmus`).

    ``lattice`` is (topology, toroid); ``known`` (N, D) 0/1 marks each example's
    known features when some are missing (``data`` then holds 0 at the others):
    the search ranks by known features only and each feature is averaged over
    the examples that know it, as the NumPy reference does.

    The epoch is :func:`epoch_sums` then :func:`epoch_update`: a streamed run adds the sums of
    its batches between the two, so it ends at the same map.
    """
    return epoch_update(w, epoch_sums(w, data, plan, known), sx, sy, lattice)


def epoch_sums(
    w: Array, data: Array, plan: KernelPlan | None, known: Array | None = None, rows: Array | None = None
) -> Array:
    """Per unit, the sums of its examples and their counts, in float64 for float32 runs: (M, D + 1), or
    (M, 2D) with ``known`` (each feature's own count of the examples that know it).

    Sums of several sets of examples add up to those of their union. ``rows``: only the first
    ``rows`` examples count (a streamed batch's padding is dropped).
    """
    d, h, wd = w.shape
    m = h * wd
    if plan is None:
        plan = fused_plan.choose(jax.default_backend(), m, d, data.shape[0], w.dtype.itemsize)
    if plan.form == "tiled":  # searched and summed tile by tile
        return kernels.tiled_sums(w.reshape(d, m), data, plan.chunk, plan.block, known, rows)
    idx = bmus(w.reshape(d, m), data, plan, known)
    if rows is not None:
        idx = jnp.where(jnp.arange(data.shape[0]) < rows, idx, m)  # outside every unit: dropped
    weights = jnp.ones((data.shape[0], 1), w.dtype) if known is None else known
    return neighbourhood.row_sums(data, weights, idx, m)


def epoch_update(
    w: Array, sums: Array, sx: Array, sy: Array, lattice: tuple[str, bool] = (Topology.RECT, False)
) -> Array:
    """The map after an epoch whose :func:`epoch_sums` are ``sums``: each unit's neighbourhood-weighted mean."""
    d, h, wd = w.shape
    dtype = w.dtype
    sums = sums.astype(dtype)  # rounded once, as neighbourhood.unit_sums does
    if lattice != (Topology.RECT, False) or sums.shape[1] != d + 1:
        num = neighbourhood.smooth(sums.T.reshape(-1, h, wd), sx, sy, lattice)
        return neighbourhood.ratio(num[:d], num[d:], w)
    s = sums.T.reshape(d + 1, h, wd)
    hx = neighbourhood.gaussian(jnp.arange(wd, dtype=dtype), jnp.arange(wd, dtype=dtype), sx, wd)
    hy = neighbourhood.gaussian(jnp.arange(h, dtype=dtype), jnp.arange(h, dtype=dtype), sy, h)
    # Hy @ S @ Hx^T per plane (Gaussians are symmetric): O(M (H + W)) per plane.
    t = jnp.einsum("kab,xb->kax", s, hx, precision=HIGHEST)
    num = jnp.einsum("ya,kax->kyx", hy, t, precision=HIGHEST)
    return neighbourhood.ratio(num[:d], num[d][None], w)


def choose_plan(device: Any, units: int, features: int, samples: int, itemsize: int) -> tuple[KernelPlan, dict]:
    """``device``'s kernel plan for a batch epoch, and the cost model's account of the choice (``extra.plan_model``).

    The plans are ranked by :func:`fused_plan.rank` with the device's ceilings where the Inside page measured
    and kept them (:func:`som_studio.core.inspection.inside.cached_ceilings`), else the backend's defaults. The account:
    ``plan`` and ``predicted_s_per_epoch``, ``runner_up`` and its ``runner_up_predicted_s``, ``forced`` (a plan
    forced by ``SOM_STUDIO_KERNEL_PLAN`` or for a test), ``ceilings`` used and whether they were ``measured``;
    the session adds ``measured_s_per_epoch``.
    """
    from som_studio.core.inspection import inside

    ceil = inside.cached_ceilings(device)
    ranked = fused_plan.rank(device.platform, units, features, samples, itemsize, ceilings=ceil)
    forced = fused_plan.forced_form()
    plan = fused_plan.choose(device.platform, units, features, samples, itemsize, ceilings=ceil)
    predicted = fused_plan.predict(plan, units, features, samples, itemsize, device.platform, ceil)
    others = [(p, t) for p, t in ranked if p.form != plan.form]
    peak, bw = ceil or fused_plan.DEFAULT_CEILINGS.get(device.platform, fused_plan.DEFAULT_CEILINGS["gpu"])
    return plan, {
        "plan": str(plan),
        "predicted_s_per_epoch": predicted,
        "runner_up": str(others[0][0]) if others else None,
        "runner_up_predicted_s": others[0][1] if others else None,
        "forced": forced is not None,
        "ceilings": {"matmul_flops_per_s": peak, "bandwidth_bytes_per_s": bw, "measured": ceil is not None},
    }


class _FusedTrainer:
    """Device state shared by both trainers: problem arrays placed once, map feature-major.

    :meth:`warmup` compiles the chunk program ahead of time (:meth:`programs`
    lowers it), so :meth:`describe` can report what XLA compiled and
    :meth:`run` never compiles.
    """

    # Each trainer sets its kernel plan (fused_plan.KernelPlan, online_plan.OnlinePlan); describe() names it.
    plan: Any = None

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.device = jax.devices()[0]
        put = lambda a: jax.device_put(a, self.device)
        self.w = put(np.ascontiguousarray(np.moveaxis(problem.init_map, 2, 0)))
        self.data = put(problem.data)
        # One block of the schedules (and the online order) at a time: see device_schedule.
        self.sched = DeviceSchedule(problem, lambda _name, a: put(a))
        self._program: Any = None
        self._compiled: Any = None

    def _args(self) -> tuple:
        raise NotImplementedError

    def traces(self) -> dict:
        """The chunk program, traced for this trainer's arguments (nothing lowered or compiled)."""
        return {"chunk": self._program.trace(self.w, np.int32(0), np.int32(0), *self._args())}

    def programs(self) -> dict:
        """The chunk program, lowered for this trainer's arguments (nothing compiled)."""
        return {k: t.lower() for k, t in self.traces().items()}

    #: What the chunk program closes over, as plain values (:func:`kept_programs.lower`'s ``key``); ``None``:
    #: the program is traced in every process.
    kept_key: tuple[Any, ...] | None = None

    def warmup(self) -> None:
        # Ahead of time: the one compilation run() uses and describe() reads. A
        # zero-iteration chunk then loads it and leaves the map as it was.
        self._compiled = self.chunk_lowered().compile()
        self._call(0, 0)

    def chunk_lowered(self) -> Any:
        """The chunk program :meth:`warmup` compiles: :meth:`programs`'s, or with a :attr:`kept_key` the same
        program read back where an earlier process traced it (:func:`kept_programs.lower`)."""
        if self.kept_key is None:
            return self.programs()["chunk"]
        args = (self.w, np.int32(0), np.int32(0), *self._args())
        name = type(self).__name__.lower()
        return kept_programs.lower(
            self._program, args, name=name, key=self.kept_key, donate_argnums=(0,), platform=self.device.platform
        )

    def _call(self, first: int, count: int) -> None:
        program = self._compiled if self._compiled is not None else self._program
        self.w = program(self.w, np.int32(first), np.int32(count), *self._args())
        self.w.block_until_ready()

    def run(self, first: int, count: int) -> None:
        for local, n in self.sched.segments(first, count):
            self._call(local, n)

    def describe(self) -> dict:
        """The kernel plan, the cost model's choice (``plan_model``, where the trainer has one) and XLA's own
        account of the compiled program's memory (after :meth:`warmup`)."""
        out: dict[str, Any] = {
            "kernel_plan": str(self.plan),
            "memory_compiled_bytes": jax_runtime.compiled_bytes(self._compiled),
        }
        model = getattr(self, "plan_model", None)
        if model is not None:
            out["plan_model"] = dict(model)
        return out

    def get_map(self) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w), 0, 2))

    def copy_map_async(self) -> Callable[[], np.ndarray]:
        """Start the map's copy to the host; the function returned finishes it (before the next :meth:`run`)."""
        w = self.w  # this chunk's map: the next run() donates its buffer, so the copy is finished before then
        w.copy_to_host_async()
        return lambda: np.ascontiguousarray(np.moveaxis(np.asarray(w), 0, 2))

    def close(self) -> None:
        self.sched.close()
        for name in ("w", "data", "xs", "ys", "known"):
            a = getattr(self, name, None)
            if a is not None:
                a.delete()
                setattr(self, name, None)
        self._compiled = None


class FusedBatch(_FusedTrainer):
    """``jax-fused-batch``: whole chunks of batch epochs in one jitted ``fori_loop``.

    The BMU search follows the device's kernel plan (:func:`fused_plan.choose`):
    the blocked search on the CPU, the direct or matmul form on an accelerator.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        p = problem
        # A streamed run searches one batch at a time: the plan is chosen for a batch.
        searched = min(p.samples, p.stream.batch_rows) if p.stream is not None else p.samples
        self.plan, self.plan_model = choose_plan(
            self.device, p.height * p.width, p.features, searched, p.dtype.itemsize
        )
        plan = self.plan
        lattice = (p.config.topology, bool(p.config.toroid))
        self.known = None
        if p.missing:
            # NaN become 0 with a 0/1 mask beside them, placed once (the search and the sums read both).
            known = ~np.isnan(p.data)
            self.data.delete()
            self.data = jax.device_put(np.where(known, p.data, 0).astype(p.dtype), self.device)
            self.known = jax.device_put(known.astype(p.dtype), self.device)

        def chunk(w, first, count, data, sx, sy, known=None):
            def body(t, w):
                return batch_epoch(w, data, sx[t], sy[t], plan, lattice, known)

            return lax.fori_loop(first, first + count, body, w)

        self._program = jax.jit(chunk, donate_argnums=0)
        self.kept_key = (repr(plan), lattice)
        self._stream_programs: Any = None
        self._lower_add: Any = None
        self._tails: dict[int, Any] = {}
        self._sums: Any = None

    def warmup(self) -> None:
        if self.p.stream is not None:  # a streamed run runs the batch programs only
            self._streamed()
            return
        super().warmup()
        if self.plan_model["predicted_s_per_epoch"] <= fused_plan.WARM_EPOCH_MAX_S:
            # One epoch on a copy (run() donates the map it is given), for the loop's kernels XLA compiles
            # when they first run (fused_plan.WARM_EPOCH_MAX_S); the map is put back as it was.
            # A copy, not a view: on the CPU a view would hold the donated buffer (and the map put back would
            # alias it) after the run, alive past close().
            kept = np.array(self.w)
            self.run(0, 1)
            self.w = jax.device_put(kept, self.device)

    def describe(self) -> dict:
        if self.p.stream is None:
            return super().describe()
        add, update, _shape = self._streamed()
        need = [jax_runtime.compiled_bytes(add), jax_runtime.compiled_bytes(update)]
        known = [n for n in need if n is not None]
        return {"kernel_plan": str(self.plan), "memory_compiled_bytes": max(known) if len(known) == 2 else None}

    # -- an epoch in pieces (protocol.EpochSums): a streamed run's batches -----------------
    def _streamed(self) -> Any:
        """The two programs of a streamed epoch, compiled for the batch's shape: add a batch's sums, update."""
        if self._stream_programs is None:
            p = self.p
            assert p.stream is not None
            plan, lattice, missing = self.plan, (p.config.topology, bool(p.config.toroid)), p.missing
            d, m, b = p.features, p.height * p.width, p.stream.batch_rows

            def add(w, sums, x, rows):
                # NaN split on the device when the data have missing values (padding rows count nothing).
                known = None
                if missing:
                    x, known = kernels.split_known(x)
                return sums + epoch_sums(w, x, plan, known, rows)

            def update(w, sums, sx, sy):
                return epoch_update(w, sums, sx, sy, lattice)

            width = 2 * d if missing else d + 1
            spec = jax.ShapeDtypeStruct
            w_spec = spec(self.w.shape, p.dtype)
            sums_spec = spec((m, width), neighbourhood.accumulator(p.dtype))
            scalar = spec((), p.dtype)

            def compiled(program: Any, args: tuple[Any, ...], name: str, donate: int) -> Any:
                # Read back where an earlier process traced the same program (kept_programs).
                return kept_programs.lower(
                    program,
                    args,
                    name=name,
                    key=(repr(plan), lattice, bool(missing)),
                    donate_argnums=(donate,),
                    platform=self.device.platform,
                ).compile()

            adder = jax.jit(add, donate_argnums=1)
            self._lower_add = lambda rows: compiled(
                adder, (w_spec, sums_spec, spec((rows, d), p.dtype), spec((), jnp.int32)), "fusedbatch-add", 1
            )
            updater = jax.jit(update, donate_argnums=0)
            self._stream_programs = (
                self._lower_add(b),
                compiled(updater, (w_spec, sums_spec, scalar, scalar), "fusedbatch-update", 0),
                (m, width),
            )
            tail = p.stream.rows % b
            if tail:  # a pass's last batch, compiled now rather than inside the first epoch
                self._adder(tail)
        return self._stream_programs

    def _adder(self, n: int) -> tuple[Any, int]:
        """The program that adds a batch of ``n`` rows, and the rows it takes (``n`` or more, padded).

        A full batch takes the batch's program; a shorter one (a pass's last) one compiled for ``n``
        rounded up to the plan's chunk, so it does not search a full batch of padding (at 10^6 rows in
        batches of 65,536 that padding was 4.8 % of an epoch's search).
        """
        add, _update, _shape = self._streamed()
        b = self.p.stream.batch_rows if self.p.stream is not None else n
        chunk = max(1, int(getattr(self.plan, "chunk", 1) or 1))
        rows = min(b, -(-n // chunk) * chunk)
        if rows == b or n == 0:
            return add, b
        if rows not in self._tails:
            self._tails[rows] = self._lower_add(rows)
        return self._tails[rows], rows

    def begin_epoch(self, iteration: int) -> None:
        """Start an epoch's sums (zeros on the device, float64 for float32 runs)."""
        shape = self._streamed()[2]
        self._sums = jax.device_put(np.zeros(shape, neighbourhood.accumulator(self.p.dtype)), self.device)

    def add_rows(self, rows: np.ndarray) -> None:
        """Add a batch (n <= batch rows, D) in the run's precision (NaN: missing) to the epoch's sums."""
        n = rows.shape[0]
        add, b = self._adder(n)
        if n < b:
            rows = np.concatenate([rows, np.zeros((b - n, rows.shape[1]), rows.dtype)])
        x = jax.device_put(rows, self.device)
        # One batch in flight: without this wait the dispatches run ahead of the device and hold
        # every batch of an epoch in memory (10^7 rows x 50: 1.8 GB); with it, this batch's
        # preparation still overlaps the previous one's sums, and the reader reads ahead meanwhile.
        self._sums.block_until_ready()
        self._sums = add(self.w, self._sums, x, np.int32(n))

    def epoch_sums(self) -> dict[str, np.ndarray]:
        return {"sums": np.asarray(self._sums)}

    def set_epoch_sums(self, sums: dict[str, np.ndarray]) -> None:
        self._sums = jax.device_put(np.asarray(sums["sums"], dtype=self._sums.dtype), self.device)

    def end_epoch(self, iteration: int) -> None:
        """The map after the epoch: the batches' sums smoothed by iteration ``iteration``'s neighbourhood."""
        update = self._streamed()[1]
        index, t = divmod(iteration, self.p.block_length)
        b = self.sched.use(index)
        dt = self.p.dtype
        self.w = update(self.w, self._sums, dt.type(b.sigma_x[t]), dt.type(b.sigma_y[t]))
        self._sums = None

    def _args(self) -> tuple:
        if self.known is not None:
            return (self.data, self.sched.sx, self.sched.sy, self.known)
        return (self.data, self.sched.sx, self.sched.sy)
