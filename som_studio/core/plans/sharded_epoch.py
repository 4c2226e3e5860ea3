"""The batch epoch of the sharded implementations, written once as small pure pieces.

All three sharded implementations (:mod:`~som_studio.core.impls.jax_pmap`,
:mod:`~som_studio.core.impls.jax_jit_sharded`, :mod:`~som_studio.core.impls.jax_shardmap`)
train the batch SOM of :mod:`som_studio.core.som.problem` (the smallest squared
distance picks the best-matching unit, first in row-major order on ties;
``W = sum_i h_i x_i / sum_i h_i`` where the total weight exceeds
``MIN_WEIGHT``) with these pieces:

1. the winner of each example (:func:`winners`): the device's kernel plan
   (:mod:`som_studio.core.plans.fused_plan`, the same search ``jax-fused-batch``
   runs on one device), its first smallest direct distance;
2. per-unit sums (:func:`unit_sums`): each example's (weight x, weight) added
   to its winner's slot (a scatter-add, O(N D), instead of an N x M
   neighbourhood matrix);
3. separable smoothing ``Hy @ S @ Hx^T`` (:func:`smooth_x`, :func:`smooth_y`)
   with the 1-D Gaussians ``Hy[y, y'] = exp(-(y-y')^2 / sy^2)`` and ``Hx``
   likewise: the M x M neighbourhood is never formed;
4. the update where the smoothed weight exceeds ``MIN_WEIGHT`` (:func:`update`).

Every product passes ``precision=HIGHEST`` and the sums, weights and division
are the exact-everywhere ones of :mod:`som_studio.core.plans.kernels`.
"""

from __future__ import annotations

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.plans import kernels, neighbourhood
from som_studio.core.plans.distances import sq_distances, take
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.neighbourhood import HIGHEST
from som_studio.core.som.topology import HEX_ROW
from som_studio.run_settings import Topology

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

NO_UNIT = np.iinfo(np.int32).max
RECT = (Topology.RECT, False)


def split_missing(x, missing: bool):
    """``(x, known)``: with missing values (NaN), NaN set to 0 and the 0/1 mask; else ``(x, None)``.

    The sharded programs keep NaN in their placed examples and split them once
    per chunk, so their arguments are the same with and without missing values.
    """
    return kernels.split_known(x) if missing else (x, None)


def winners(w_flat, x, valid, offset, plan: KernelPlan | None, known=None):
    """(smallest squared distance, index of the first unit reaching it) per example.

    ``valid`` masks padded units (they are moved to 1e30 in every feature, as
    ``jax-fused-batch`` pads, so they never win); ``offset`` is the global index
    of the first local unit. The distance returned is the reference's direct
    form ``sum_d (w_d - x_d)^2`` (the expanded ``|w|^2 - 2 x.w`` loses the
    nearest unit in float32 late in training), so devices compare exactly what
    one device would. ``known`` (N, D) 0/1: each example's known features (missing values).

    ``plan``: the device's kernel plan (:mod:`som_studio.core.plans.fused_plan`; on
    the CPU ``jax-fused-batch``'s blocked search), then the winner's distance
    recomputed the direct way. ``None``: the whole N x M distance matrix at
    once, which the compiler's partitioner can split by rows (the blocked
    scan's dynamic slices it cannot: it would all-gather the map every epoch).
    """
    wt = jnp.where(valid[None, :], w_flat.T, jnp.asarray(1e30, w_flat.dtype))  # (D, M), feature-major
    kt = None if known is None else known.T
    if plan is not None:
        idx = kernels.bmus(wt, x, plan, known)
        dmin = sq_distances(take(wt, idx, axis=1), x.T, kt)
        return dmin, idx + offset
    dist = sq_distances(wt[:, None, :], x.T[:, :, None], None if kt is None else kt[:, :, None])  # (N, M)
    dmin = jnp.min(dist, axis=1)
    # Minimum, then the first index equal to it: the row-major tie rule, and
    # cheaper on the CPU than argmin over wide rows.
    iota = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    idx = jnp.min(jnp.where(dist == dmin[:, None], iota, NO_UNIT), axis=1)
    return dmin, idx + offset


def unit_sums(x, weight, local_idx, units, known=None):
    """(units, D+1): per unit, the sum of weight * x and of weight; indices outside are dropped.

    With ``known`` (missing values), (units, 2D): each feature's own total weight, of the examples that know it.
    """
    wcol = weight[:, None] if known is None else known * weight[:, None]
    vals = jnp.concatenate([x * weight[:, None], wcol], axis=1)
    inside = (local_idx >= 0) & (local_idx < units)
    seg = jnp.where(inside, local_idx, units)
    return neighbourhood.unit_sums(vals, seg, units + 1)[:units]


def gauss(a, b, sigma, extent):
    """The 1-D neighbourhood matrix ``exp(-(a_i - b_j)^2 / sigma^2)`` (coordinates under ``extent`` apart)."""
    return neighbourhood.gaussian(a, b, sigma, extent)


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
    """``num / den`` where the total weight exceeds MIN_WEIGHT; elsewhere the old weights.

    ``out`` holds D numerators then one total weight, or D (missing values: one per feature).
    """
    d = w.shape[-1]
    return neighbourhood.ratio(out[..., :d], out[..., d:], w)


# -- hex and toroid maps: the rows' smoothing split into pieces a device can do on its own rows ---------
#
# A hex unit's x offset depends on its column and both rows' parities (topology.py), so the column
# stage computes, for each source row, the sums as an even target row sees them (``T_0``) and as an
# odd one does (``T_1``), side by side on the last axis; the row stage contracts both with ``Hy`` and
# each target row keeps the half of its own parity (:func:`pick`). A toroid wraps ``Hy`` at the real
# height (padded rows hold no sums) and ``Hx`` at the width.


def lattice_x(s, rows, sx, lattice):
    """Contract the columns of ``s`` (rows, W, K), whose global row indices are ``rows``: (rows, W, K or 2K)."""
    topology, wrap = lattice
    wd, dt = s.shape[1], s.dtype
    hx0 = neighbourhood.axis_weights(wd, sx, dt, wrap=wrap)
    if topology != Topology.HEX:
        return smooth_x(s, hx0)
    odd = (rows % 2 == 1)[:, None, None]
    same = smooth_x(s, hx0)
    t0 = jnp.where(odd, smooth_x(s, neighbourhood.axis_weights(wd, sx, dt, shift2=-1, wrap=wrap)), same)
    t1 = jnp.where(odd, same, smooth_x(s, neighbourhood.axis_weights(wd, sx, dt, shift2=1, wrap=wrap)))
    return jnp.concatenate([t0, t1], axis=2)


def lattice_hy(targets, sources, sy, height: int, lattice, dtype):
    """``Hy[target, source]`` for global row indices (int32), wrapped at ``height`` on a toroid."""
    topology, wrap = lattice
    k2 = 2 * (targets[:, None] - sources[None, :])
    if wrap:
        k2 = jnp.abs(k2)
        k2 = jnp.abs(jnp.minimum(k2, 2 * height - k2))  # padded rows (past height) weigh nothing anyway
    return neighbourhood._twice_weights(k2, HEX_ROW if topology == Topology.HEX else 1.0, sy, dtype)


def pick(out, targets, lattice):
    """The row stage's result for each target row: on a hex map, the half of its own parity."""
    if lattice[0] != Topology.HEX:
        return out
    k = out.shape[-1] // 2
    return jnp.where((targets % 2 == 1)[:, None, None], out[..., k:], out[..., :k])


def full_epochs(
    w,
    first,
    count,
    x,
    weight,
    sx,
    sy,
    *,
    height: int,
    plan: KernelPlan | None,
    lattice=RECT,
    missing: bool = False,
    reduce=None,
):
    """Epochs on whole arrays (``w`` may have padded rows beyond ``height``): one device's program.

    ``reduce``: applied to the per-unit sums before the smoothing (``jax-pmap-batch`` adds them across
    its ``data`` axis with ``psum`` there); ``None`` keeps them as they are.
    """
    hp, wd, d = w.shape
    valid = jnp.repeat(jnp.arange(hp) < height, wd)
    x, known = split_missing(x, missing)

    def epoch(t, w):
        _, idx = winners(w.reshape(-1, d), x, valid, 0, plan, known)
        s = unit_sums(x, weight, idx, hp * wd, known).reshape(hp, wd, -1)
        if reduce is not None:
            s = reduce(s)
        return smoothed_update(w, s, sx[t], sy[t], height, lattice)

    return lax.fori_loop(first, first + count, epoch, w)


def smoothed_update(w, s, sx_t, sy_t, height: int, lattice=RECT):
    """The map (``hp`` rows, padded beyond ``height``) after an epoch whose per-unit sums are ``s`` (hp, W, K):
    the sums smoothed by the epoch's radii ``sx_t``, ``sy_t``, then the update."""
    hp, wd, _d = w.shape
    dt = w.dtype
    if lattice == RECT:
        ys, xs = jnp.arange(hp, dtype=dt), jnp.arange(wd, dtype=dt)
        out = smooth_y(gauss(ys, ys, sy_t, hp), smooth_x(s, gauss(xs, xs, sx_t, wd)))
    else:
        rows = jnp.arange(hp, dtype=jnp.int32)
        hy = lattice_hy(rows, rows, sy_t, height, lattice, dt)
        out = pick(smooth_y(hy, lattice_x(s, rows, sx_t, lattice)), rows, lattice)
    return update(w, out)


def epochs_program(height: int, plan: KernelPlan | None, lattice=RECT, missing: bool = False, reduce=None):
    """The pure chunk program ``(w, first, count, x, weight, sx, sy) -> w`` of :func:`full_epochs`."""

    def epochs(w, first, count, x, weight, sx, sy):
        return full_epochs(
            w,
            first,
            count,
            x,
            weight,
            sx,
            sy,
            height=height,
            plan=plan,
            lattice=lattice,
            missing=missing,
            reduce=reduce,
        )

    return epochs


# -- a streamed epoch: each batch's sums added on the devices, one update at the end ----------------------


def stream_add_program(height: int, hl: int, nmap: int, plan: KernelPlan | None, missing: bool = False):
    """The per-device program (for ``shard_map`` on the ``data x map`` mesh) that adds a batch to the sums.

    ``(w, sums, x, weight) -> sums``: device ``(i, j)`` holds map rows block ``j`` (``hl`` rows of ``w``),
    batch block ``i`` (``x``, ``weight``: 0 for padding rows) and the sums of its own map rows over its own
    examples (``sums`` (1, hl, W, K), float64 for float32 runs). The winner of each example is global (the
    smallest distance across ``map``, then the smallest index, as every sharded epoch finds it); the sums
    stay where they were made, so a batch moves nothing but the winners' reduction across ``map``.
    """

    def add(w, sums, x, weight):
        _, wd, d = w.shape
        row0 = lax.axis_index("map") * hl
        valid = jnp.repeat(row0 + jnp.arange(hl, dtype=jnp.int32) < height, wd)
        x, known = split_missing(x, missing)
        dmin_l, idx_l = winners(w.reshape(-1, d), x, valid, row0 * wd, plan, known)
        idx = idx_l
        if nmap > 1:
            dmin = lax.pmin(dmin_l, "map")
            idx = lax.pmin(jnp.where(dmin_l == dmin, idx_l, NO_UNIT), "map")
        wcol = weight[:, None] if known is None else known * weight[:, None]
        vals = jnp.concatenate([x * weight[:, None], wcol], axis=1).astype(sums.dtype)
        local = idx - row0 * wd
        units = hl * wd
        seg = jnp.where((local >= 0) & (local < units), local, units)
        s = jax.ops.segment_sum(vals, seg, num_segments=units + 1)[:units]
        return sums + s.reshape(sums.shape)

    return add


def stream_update_program(height: int, lattice=RECT):
    """``(w, sums, sx, sy, t) -> w``: the sums of every device (``sums`` (data, hp, W, K)) added up, rounded
    once to the map's precision, smoothed by iteration ``t``'s radii (of the block ``sx``, ``sy``), the update."""

    def end(w, sums, sx, sy, t):
        s = jnp.sum(sums, axis=0).astype(w.dtype)
        return smoothed_update(w, s, sx[t], sy[t], height, lattice)

    return end
