"""The batch epoch of the sharded implementations, written once as small pure pieces.

All three sharded implementations (:mod:`~som_studio.core.jax_pmap`,
:mod:`~som_studio.core.jax_jit_sharded`, :mod:`~som_studio.core.jax_shardmap`)
train the batch SOM of :mod:`som_studio.core.problem` (the smallest squared
distance picks the best-matching unit, first in row-major order on ties;
``W = sum_i h_i x_i / sum_i h_i`` where the total weight exceeds
``MIN_WEIGHT``) with these pieces:

1. the winner of each example (:func:`winners`): the device's kernel plan
   (:mod:`som_studio.core.fused_plan`, the same search ``jax-fused-batch``
   runs on one device), its first smallest direct distance;
2. per-unit sums (:func:`unit_sums`): each example's (weight x, weight) added
   to its winner's slot (a scatter-add, O(N D), instead of an N x M
   neighbourhood matrix);
3. separable smoothing ``Hy @ S @ Hx^T`` (:func:`smooth_x`, :func:`smooth_y`)
   with the 1-D Gaussians ``Hy[y, y'] = exp(-(y-y')^2 / sy^2)`` and ``Hx``
   likewise: the M x M neighbourhood is never formed;
4. the update where the smoothed weight exceeds ``MIN_WEIGHT`` (:func:`update`).

Every product passes ``precision=HIGHEST`` and the sums, weights and division
are the exact-everywhere ones of :mod:`som_studio.core.kernels`.
"""

from __future__ import annotations

import numpy as np

from som_studio.core import jax_runtime, kernels
from som_studio.core.fused_plan import KernelPlan
from som_studio.core.kernels import HIGHEST, sq_distances

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

NO_UNIT = np.iinfo(np.int32).max


def winners(w_flat, x, valid, offset, plan: KernelPlan | None):
    """(smallest squared distance, index of the first unit reaching it) per example.

    ``valid`` masks padded units (they are moved to 1e30 in every feature, as
    ``jax-fused-batch`` pads, so they never win); ``offset`` is the global index
    of the first local unit. The distance returned is the reference's direct
    form ``sum_d (w_d - x_d)^2`` (the expanded ``|w|^2 - 2 x.w`` loses the
    nearest unit in float32 late in training), so devices compare exactly what
    one device would.

    ``plan``: the device's kernel plan (:mod:`som_studio.core.fused_plan`; on
    the CPU ``jax-fused-batch``'s blocked search), then the winner's distance
    recomputed the direct way. ``None``: the whole N x M distance matrix at
    once, which the compiler's partitioner can split by rows (the blocked
    scan's dynamic slices it cannot: it would all-gather the map every epoch).
    """
    wt = jnp.where(valid[None, :], w_flat.T, jnp.asarray(1e30, w_flat.dtype))  # (D, M), feature-major
    if plan is not None:
        idx = kernels.bmus(wt, x, plan)
        dmin = sq_distances(jnp.take(wt, idx, axis=1), x.T)
        return dmin, idx + offset
    dist = sq_distances(wt[:, None, :], x.T[:, :, None])  # (N, M)
    dmin = jnp.min(dist, axis=1)
    # Minimum, then the first index equal to it: the row-major tie rule, and
    # cheaper on the CPU than argmin over wide rows.
    iota = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    idx = jnp.min(jnp.where(dist == dmin[:, None], iota, NO_UNIT), axis=1)
    return dmin, idx + offset


def unit_sums(x, weight, local_idx, units):
    """(units, D+1): per unit, the sum of weight * x and of weight; indices outside are dropped."""
    vals = jnp.concatenate([x * weight[:, None], weight[:, None]], axis=1)
    inside = (local_idx >= 0) & (local_idx < units)
    seg = jnp.where(inside, local_idx, units)
    return kernels.unit_sums(vals, seg, units + 1)[:units]


def gauss(a, b, sigma, extent):
    """The 1-D neighbourhood matrix ``exp(-(a_i - b_j)^2 / sigma^2)`` (coordinates under ``extent`` apart)."""
    return kernels.gaussian(a, b, sigma, extent)


def smooth_x(s, hx):
    """Contract the columns: ``(rows, W, K) x (W, W) -> (rows, W, K)``."""
    # Feature-major inside, as jax-fused-batch contracts: the same sums in the same order.
    t = jnp.einsum("kab,xb->kax", jnp.moveaxis(s, 2, 0), hx, precision=HIGHEST)
    return jnp.moveaxis(t, 0, 2)


def smooth_y(hy, t):
    """Contract the rows: ``(out_rows, rows) x (rows, W, K) -> (out_rows, W, K)``."""
    out = jnp.einsum("ya,kax->kyx", hy, jnp.moveaxis(t, 2, 0), precision=HIGHEST)
    return jnp.moveaxis(out, 0, 2)


def update(w, out):
    """``num / den`` where the total weight exceeds MIN_WEIGHT; elsewhere the old weights."""
    return kernels.ratio(out[..., :-1], out[..., -1:], w)


def full_epochs(w, first, count, x, weight, sx, sy, *, height: int, plan: KernelPlan | None):
    """Epochs on whole arrays (``w`` may have padded rows beyond ``height``): one device's program."""
    hp, wd, d = w.shape
    dt = w.dtype
    ys, xs = jnp.arange(hp, dtype=dt), jnp.arange(wd, dtype=dt)
    valid = jnp.repeat(jnp.arange(hp) < height, wd)

    def epoch(t, w):
        _, idx = winners(w.reshape(-1, d), x, valid, 0, plan)
        s = unit_sums(x, weight, idx, hp * wd).reshape(hp, wd, d + 1)
        out = smooth_y(gauss(ys, ys, sy[t], hp), smooth_x(s, gauss(xs, xs, sx[t], wd)))
        return update(w, out)

    return lax.fori_loop(first, first + count, epoch, w)
