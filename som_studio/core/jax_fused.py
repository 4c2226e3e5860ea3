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

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.fused_plan import ARGMIN_ELEMENTS, UNIT_BLOCK, sample_chunk, unit_blocks
from som_studio.core.problem import MIN_WEIGHT, Problem

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
else:
    jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def sq_distances(w: jax.Array, x: jax.Array) -> jax.Array:
    """``sum_d (w_d - x_d)^2`` summed over features in order, as the NumPy reference does.

    ``w`` is (D, ...) and ``x`` (D, ...) broadcastable against it.
    """
    diff = w[0] - x[0]
    acc = diff * diff
    for k in range(1, w.shape[0]):
        diff = w[k] - x[k]
        acc = acc + diff * diff
    return acc


def bmus(wt: jax.Array, data: jax.Array, block: int = UNIT_BLOCK) -> jax.Array:
    """Flat index of each example's best-matching unit (first in row-major order on ties).

    Two passes per chunk of examples:

    1. a scan over blocks of ``B`` units takes each block's minimum of
       ``|w|^2 - 2 x.w`` (one small product that XLA fuses into the minimum,
       ~3x faster here than the direct form); each example keeps its two best
       blocks;
    2. the units of those two blocks are ranked again with the reference's
       direct form ``sum (w - x)^2`` and the first minimum in row-major order
       wins.

    The expanded form alone loses the nearest unit in float32 late in training
    (its rounding error, ~1e-7 x (|x|^2 + |w|^2), exceeds the squared distances
    to the nearest units, ~1e-7 at QE ~2e-4); measured on the playbook run it
    raised the final QE by 12 % over float64. Pass 2 settles every choice with
    the direct form; pass 1 only has to put the best unit among the two best
    blocks, which fails only if three blocks lie within that rounding error.

    Parameters
    ----------
    wt : (D, M) codebook, feature-major.
    data : (N, D) examples.
    block : units per block.

    Returns
    -------
    (N,) int32
    """
    d, m = wt.shape
    n = data.shape[0]
    g, b = unit_blocks(m, block)
    mp = g * b
    dtype = wt.dtype
    # Padding units sit at 1e30 in every feature: never a minimum in either form
    # (|w|^2 is set to inf for them; their direct distance overflows to inf in
    # float32 and is ~1e60 in float64).
    wp = jnp.pad(wt, ((0, 0), (0, mp - m)), constant_values=jnp.asarray(1e30, dtype))
    c = jnp.where(jnp.arange(mp, dtype=jnp.int32) < m, jnp.sum(wp * wp, axis=0), jnp.asarray(jnp.inf, dtype))
    # |w|^2 - 2 x.w as one product: [-2x, 1] @ [w; |w|^2] (D + 1 terms).
    wa = jnp.concatenate([wp, c[None, :]], axis=0)
    # Block-major (G, D, B): a gathered block is one contiguous run.
    blocks = wp.reshape(d, g, b).transpose(1, 0, 2)

    def chunk_bmus(x):  # (n_c, D) -> (n_c,)
        nc = x.shape[0]
        xa = jnp.concatenate([-2 * x, jnp.ones((nc, 1), dtype)], axis=1)

        def block_min(carry, gi):
            return carry, jnp.min(xa @ lax.dynamic_slice_in_dim(wa, gi * b, b, axis=1), axis=1)

        _, lo = lax.scan(block_min, 0, jnp.arange(g, dtype=jnp.int32))  # (G, n_c)
        # The two best blocks per example, the first on ties (two reductions
        # each, over the small (G, n_c) array of block minima).
        row = lax.broadcasted_iota(jnp.int32, lo.shape, 0)
        g1 = jnp.min(jnp.where(lo == jnp.min(lo, axis=0), row, g), axis=0)
        lo = jnp.where(row == g1[None, :], jnp.asarray(jnp.inf, dtype), lo)
        g2 = jnp.minimum(jnp.min(jnp.where(lo == jnp.min(lo, axis=0), row, g), axis=0), g - 1)
        # Candidates in row-major order (lower block first), so the first
        # minimum among them is the first in the map. With one block, g2 == g1.
        glo, ghi = jnp.minimum(g1, g2), jnp.maximum(g1, g2)
        cand = jnp.take(blocks, jnp.stack([glo, ghi], axis=1), axis=0)  # (n_c, 2, D, B)
        cand = cand.transpose(2, 0, 1, 3).reshape(d, nc, 2 * b)
        dist = sq_distances(cand, x.T[:, :, None])
        # Materialised once, so both reductions below read the very same values.
        dist = lax.optimization_barrier(dist)
        low = jnp.min(dist, axis=1, keepdims=True)
        # First column holding the minimum: two vectorised reductions, ~5x faster
        # here than jnp.argmin's variadic one.
        col = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
        first = jnp.min(jnp.where(dist == low, col, 2 * b), axis=1)
        return jnp.where(first < b, glo * b + first, ghi * b + first - b)

    nc = sample_chunk(n, d, b, ARGMIN_ELEMENTS)
    if nc >= n:
        return chunk_bmus(data)
    chunks = -(-n // nc)
    xp = jnp.pad(data, ((0, chunks * nc - n), (0, 0))).reshape(chunks, nc, d)
    return lax.map(chunk_bmus, xp).reshape(-1)[:n]


def gaussian_matrix(coords: jax.Array, sigma: jax.Array) -> jax.Array:
    """``exp(-(i - j)^2 / sigma^2)`` for every pair of grid coordinates on one axis."""
    diff = coords[:, None] - coords[None, :]
    return jnp.exp(-(diff * diff) / (sigma * sigma))


def batch_epoch(w: jax.Array, data: jax.Array, sx: jax.Array, sy: jax.Array, block: int = UNIT_BLOCK) -> jax.Array:
    """One batch epoch on a feature-major map ``w`` (D, H, W); returns the new map."""
    d, h, wd = w.shape
    m = h * wd
    dtype = w.dtype
    idx = bmus(w.reshape(d, m), data, block)
    # Per-unit sums of examples, and counts, as one (M, D+1) scatter-add.
    ones = jnp.ones((data.shape[0], 1), dtype)
    sums = jax.ops.segment_sum(jnp.concatenate([data, ones], axis=1), idx, num_segments=m)
    s = sums.T.reshape(d + 1, h, wd)
    hx = gaussian_matrix(jnp.arange(wd, dtype=dtype), sx)
    hy = gaussian_matrix(jnp.arange(h, dtype=dtype), sy)
    # Hy @ S @ Hx^T per plane (Gaussians are symmetric): O(M (H + W)) per plane.
    t = jnp.einsum("kab,xb->kax", s, hx)
    num = jnp.einsum("ya,kax->kyx", hy, t)
    den = num[d]
    ok = den > jnp.asarray(MIN_WEIGHT, dtype)
    return jnp.where(ok[None], num[:d] / jnp.where(ok, den, 1)[None], w)


class _FusedTrainer:
    """Device state shared by both trainers: problem arrays placed once, map feature-major."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.device = jax.devices()[0]
        put = lambda a: jax.device_put(a, self.device)
        self.w = put(np.ascontiguousarray(np.moveaxis(problem.init_map, 2, 0)))
        self.data = put(problem.data)
        self.sx, self.sy, self.lr = put(problem.sigma_x), put(problem.sigma_y), put(problem.lr)
        self._program: Callable[..., jax.Array] | None = None  # each trainer builds its own

    def _args(self) -> tuple:
        raise NotImplementedError

    def warmup(self) -> None:
        # A zero-iteration chunk through the very program run() uses: it compiles
        # (and loads) that program once and leaves the map as it was.
        self._call(0, 0)

    def _call(self, first: int, count: int) -> None:
        assert self._program is not None, "the trainer's __init__ builds its program"
        self.w = self._program(self.w, np.int32(first), np.int32(count), *self._args())
        self.w.block_until_ready()

    def run(self, first: int, count: int) -> None:
        self._call(first, count)

    def get_map(self) -> np.ndarray:
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w), 0, 2))

    def close(self) -> None:
        for name in ("w", "data", "sx", "sy", "lr", "order", "xs", "ys"):
            a = getattr(self, name, None)
            if a is not None:
                a.delete()
                setattr(self, name, None)


class FusedBatch(_FusedTrainer):
    """``jax-fused-batch``: whole chunks of batch epochs in one jitted ``fori_loop``."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)

        def chunk(w, first, count, data, sx, sy):
            def body(t, w):
                return batch_epoch(w, data, sx[t], sy[t])

            return lax.fori_loop(first, first + count, body, w)

        self._program = jax.jit(chunk, donate_argnums=0)

    def _args(self) -> tuple:
        return (self.data, self.sx, self.sy)
