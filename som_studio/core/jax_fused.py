"""The fast JAX implementations: ``jax-fused-batch`` and ``jax-scan-online``.

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

Online step (:func:`online_step`): distances of one example to every unit in
the reference's form ``sum_d (w - x)^2``, the first minimum found by rows (row
minima, the first row holding the least, then the first column of that row),
then the full-map update ``W += lr * hy hx^T * (x - W)``. A window of +/- k
sigma around the BMU was considered and not kept: see :class:`ScanOnline`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import fused_plan, jax_runtime, kernels
from som_studio.core.fused_plan import KernelPlan
from som_studio.core.kernels import HIGHEST, sq_distances  # sq_distances: re-exported for the online trainers
from som_studio.core.problem import Problem

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def bmus(wt: Array, data: Array, plan: KernelPlan | None = None) -> Array:
    """Flat index of each example's best-matching unit (first in row-major order on ties).

    ``plan`` defaults to the one chosen for the default backend and these sizes
    (:func:`som_studio.core.fused_plan.choose`); see :mod:`som_studio.core.kernels`.
    """
    if plan is None:
        d, m = wt.shape
        plan = fused_plan.choose(jax.default_backend(), m, d, data.shape[0], wt.dtype.itemsize)
    return kernels.bmus(wt, data, plan)


def batch_epoch(w: Array, data: Array, sx: Array, sy: Array, plan: KernelPlan | None = None) -> Array:
    """One batch epoch on a feature-major map ``w`` (D, H, W); returns the new map (``plan`` as for :func:`bmus`)."""
    d, h, wd = w.shape
    m = h * wd
    dtype = w.dtype
    idx = bmus(w.reshape(d, m), data, plan)
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


def first_argmin_2d(values: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(row, column) of the first minimum of a 2-D array in row-major order (int32).

    Row minima, the first row holding the least of them, then the first
    column of that row holding it: exact, and on the CPU several times faster
    than ``jnp.argmin``'s variadic reduction over the flattened array
    (measured on the playbook map: ~35 us against ~440 us per step).
    """
    row_min = jnp.min(values, axis=1)
    r = jnp.argmin(row_min).astype(jnp.int32)
    c = jnp.argmin(lax.dynamic_index_in_dim(values, r, 0, keepdims=False)).astype(jnp.int32)
    return r, c


def online_step(w: jax.Array, x: jax.Array, sx, sy, lr, xs: jax.Array, ys: jax.Array) -> jax.Array:
    """One online step on a feature-major map ``w`` (D, H, W) with example ``x`` (D,)."""
    diff = w - x[:, None, None]
    dist = sq_distances(w, x[:, None, None])
    r, c = first_argmin_2d(dist)
    by, bx = r.astype(w.dtype), c.astype(w.dtype)
    hy = jnp.exp(-((ys - by) ** 2) / (sy * sy)) * lr
    hx = jnp.exp(-((xs - bx) ** 2) / (sx * sx))
    return w - (hy[:, None] * hx[None, :])[None] * diff


class _FusedTrainer:
    """Device state shared by both trainers: problem arrays placed once, map feature-major.

    :meth:`warmup` compiles the chunk program ahead of time (:meth:`programs`
    lowers it), so :meth:`describe` can report what XLA compiled and
    :meth:`run` never compiles.
    """

    # The online step's BMU search: one example against every unit, first minimum.
    plan: object = "direct/first-argmin/step"

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.device = jax.devices()[0]
        put = lambda a: jax.device_put(a, self.device)
        self.w = put(np.ascontiguousarray(np.moveaxis(problem.init_map, 2, 0)))
        self.data = put(problem.data)
        self.sx, self.sy, self.lr = put(problem.sigma_x), put(problem.sigma_y), put(problem.lr)
        self._program: Any = None
        self._compiled: Any = None

    def _args(self) -> tuple:
        raise NotImplementedError

    def programs(self) -> dict:
        """The chunk program, lowered for this trainer's arguments (nothing compiled)."""
        return {"chunk": self._program.lower(self.w, np.int32(0), np.int32(0), *self._args())}

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
        self._call(first, count)

    def describe(self) -> dict:
        """The kernel plan and XLA's own account of the compiled program's memory (after :meth:`warmup`)."""
        return {"kernel_plan": str(self.plan), "memory_compiled_bytes": jax_runtime.compiled_bytes(self._compiled)}

    def get_map(self) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w), 0, 2))

    def close(self) -> None:
        for name in ("w", "data", "sx", "sy", "lr", "order", "xs", "ys"):
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

        def chunk(w, first, count, data, sx, sy):
            def body(t, w):
                return batch_epoch(w, data, sx[t], sy[t], plan)

            return lax.fori_loop(first, first + count, body, w)

        self._program = jax.jit(chunk, donate_argnums=0)

    def _args(self) -> tuple:
        return (self.data, self.sx, self.sy)


class ScanOnline(_FusedTrainer):
    """``jax-scan-online``: whole chunks of online steps in one jitted ``fori_loop``.

    Every step updates the full map; no +/- k sigma window. Measured on the
    playbook workload here, the full-map update is ~5 us of a ~40 us step; the
    rest is the exhaustive BMU search over all 32,400 units, which a window
    cannot shorten. For a window to be indistinguishable from the full update,
    ``k`` must make ``exp(-k^2)`` vanish next to float32 rounding (``k >= 4.2``:
    ``exp(-k^2) < 2^-24``); with the playbook's radii (60 x 34 units at the
    start) a +/- 4.2 sigma window spans the whole map for the first ~25 % of
    the steps and would save at most ~3 us of ~40 us over the run. A window
    also needs a static size, so following the decaying radius means several
    compiled programs or a ``lax.switch`` per step. Not worth it here; the full
    update is exact by construction.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        put = lambda a: jax.device_put(a, self.device)
        dt = problem.dtype
        self.order = put(problem.order)
        self.xs = put(np.arange(problem.width, dtype=dt))
        self.ys = put(np.arange(problem.height, dtype=dt))

        def chunk(w, first, count, data, order, sx, sy, lr, xs, ys):
            def body(t, w):
                return online_step(w, data[order[t]], sx[t], sy[t], lr[t], xs, ys)

            return lax.fori_loop(first, first + count, body, w)

        self._program = jax.jit(chunk, donate_argnums=0)

    def _args(self) -> tuple:
        return (self.data, self.order, self.sx, self.sy, self.lr, self.xs, self.ys)
