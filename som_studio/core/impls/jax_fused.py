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

from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.plans import fused_plan, kernels
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.kernels import HIGHEST  # sq_distances: re-exported for the online trainers
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
    """
    d, h, wd = w.shape
    m = h * wd
    dtype = w.dtype
    idx = bmus(w.reshape(d, m), data, plan, known)
    if known is not None or lattice != (Topology.RECT, False):
        # Per-unit sums of known values and of known counts, as one (M, 2D) scatter-add.
        weights = jnp.ones((data.shape[0], 1), dtype) if known is None else known
        sums = kernels.unit_sums(jnp.concatenate([data, weights], axis=1), idx, m)
        num = kernels.smooth(sums.T.reshape(-1, h, wd), sx, sy, lattice)
        return kernels.ratio(num[:d], num[d:], w)
    # Per-unit sums of examples, and counts, as one (M, D+1) scatter-add.
    ones = jnp.ones((data.shape[0], 1), dtype)
    sums = kernels.unit_sums(jnp.concatenate([data, ones], axis=1), idx, m)
    s = sums.T.reshape(d + 1, h, wd)
    hx = kernels.gaussian(jnp.arange(wd, dtype=dtype), jnp.arange(wd, dtype=dtype), sx, wd)
    hy = kernels.gaussian(jnp.arange(h, dtype=dtype), jnp.arange(h, dtype=dtype), sy, h)
    # Hy @ S @ Hx^T per plane (Gaussians are symmetric): O(M (H + W)) per plane.
    t = jnp.einsum("kab,xb->kax", s, hx, precision=HIGHEST)
    num = jnp.einsum("ya,kax->kyx", hy, t, precision=HIGHEST)
    return kernels.ratio(num[:d], num[d][None], w)


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

    def warmup(self) -> None:
        # Ahead of time: the one compilation run() uses and describe() reads. A
        # zero-iteration chunk then loads it and leaves the map as it was.
        self._compiled = self.programs()["chunk"].compile()
        self._call(0, 0)

    def _call(self, first: int, count: int) -> None:
        program = self._compiled if self._compiled is not None else self._program
        self.w = program(self.w, np.int32(first), np.int32(count), *self._args())
        self.w.block_until_ready()

    def run(self, first: int, count: int) -> None:
        for local, n in self.sched.segments(first, count):
            self._call(local, n)

    def describe(self) -> dict:
        """The kernel plan and XLA's own account of the compiled program's memory (after :meth:`warmup`)."""
        return {"kernel_plan": str(self.plan), "memory_compiled_bytes": jax_runtime.compiled_bytes(self._compiled)}

    def get_map(self) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w), 0, 2))

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
        self.plan = fused_plan.choose(self.device.platform, p.height * p.width, p.features, p.samples, p.dtype.itemsize)
        plan = self.plan
        lattice = (p.config.topology, bool(p.config.toroid))
        self.known = None
        if np.isnan(p.data).any():
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

    def _args(self) -> tuple:
        if self.known is not None:
            return (self.data, self.sched.sx, self.sched.sy, self.known)
        return (self.data, self.sched.sx, self.sched.sy)
