"""The pieces of every batch epoch: best-matching-unit searches (one per kernel plan form), sums, neighbourhoods.

Every form returns, per example, the flat index of the first unit (row-major)
at the smallest direct squared distance ``sum_d (w_d - x_d)^2``, the
reference's rule; :mod:`som_studio.core.fused_plan` says which form a device
uses and how many examples each chunk takes. Every product passes
``precision=HIGHEST``: on a GPU a float32 product is otherwise TF32 (10-bit
mantissa), which picked the exact unit for only 62 % of the playbook's examples.

Exact float32 on every backend: besides TF32, a float32 program on a GPU differs
from the CPU's in ways that all land in the epoch's few non-search steps, so
those steps are written to give the same float32 numbers everywhere:

* the neighbourhood weights ``exp(-k^2 / sigma^2)``: a GPU's float32 ``exp``
  (``ex2.approx``-based, a few ulp) and its flush of denormals to zero (FTZ)
  differ from the CPU's; :func:`gaussian` computes the 1-D profile in float64
  (a few hundred values), rounds it once to the run's precision and sets
  weights below the smallest normal number to exactly zero on every backend;
* the per-unit sums: a GPU scatter-add accumulates with atomics in an order
  that changes from run to run; :func:`unit_sums` accumulates float32 examples
  in float64 (to ~1e-16 relative) and rounds once, so the order changes the
  float32 sum only when it lies that close to a rounding boundary;
* the update ``num / den``: :func:`ratio` divides in float64 and rounds once
  (the correctly rounded float32 quotient; a GPU's float32 division may be
  approximate);
* the BMU search: the direct form on a GPU (no ``|w|^2 - 2 x.w`` cancellation
  at all), and a re-rank by the direct form after any expanded-form pass.

What was *not* run on a GPU: these steps are verified on the CPU only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from som_studio.core import jax_runtime
from som_studio.core.fused_plan import KernelPlan
from som_studio.core.problem import MIN_WEIGHT

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

HIGHEST = lax.Precision.HIGHEST


def sq_distances(w: Array, x: Array) -> Array:
    """``sum_d (w_d - x_d)^2`` summed over features in order, as the NumPy reference does.

    ``w`` is (D, ...) and ``x`` (D, ...) broadcastable against it.
    """
    diff = w[0] - x[0]
    acc = diff * diff
    for k in range(1, w.shape[0]):
        diff = w[k] - x[k]
        acc = acc + diff * diff
    return acc


def _first_min(dist: Array, cols: Array | None = None) -> Array:
    """Per row of ``dist`` (n, k): the first column holding the row's minimum, or ``cols`` at it.

    Two vectorised reductions (~5x faster on the CPU than ``jnp.argmin``'s
    variadic one) over values materialised once, so both read the same numbers.
    """
    dist = lax.optimization_barrier(dist)
    low = jnp.min(dist, axis=1, keepdims=True)
    k = dist.shape[1]
    if cols is None:
        cols = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    big = jnp.iinfo(jnp.int32).max
    first = jnp.min(jnp.where(dist == low, cols, big), axis=1)
    return jnp.minimum(first, k - 1) if cols is None else first


def _in_chunks(fn, data: Array, chunk: int) -> Array:
    """``fn`` over examples in chunks of ``chunk`` (the last padded), results concatenated."""
    n, d = data.shape
    if chunk >= n:
        return fn(data)
    chunks = -(-n // chunk)
    xp = jnp.pad(data, ((0, chunks * chunk - n), (0, 0))).reshape(chunks, chunk, d)
    return lax.map(fn, xp).reshape(-1)[:n]


def direct(wt: Array, data: Array, chunk: int) -> Array:
    """Direct distances to all units, one first-argmin over them per example (``direct`` plan)."""

    def chunk_bmus(x):
        dist = sq_distances(wt[:, None, :], x.T[:, :, None])  # (n_c, M)
        # jnp.argmin is one variadic reduction (value and index together) whose ties
        # go to the first index: XLA fuses the distances into it, so the n_c x M
        # matrix need not exist, and both halves read the very same values.
        return jnp.argmin(dist, axis=1).astype(jnp.int32)

    return _in_chunks(chunk_bmus, data, chunk)


def matmul(wt: Array, data: Array, chunk: int, candidates: int) -> Array:
    """``|w|^2 - 2 x.w`` (HIGHEST) to all units, the best ``candidates`` re-ranked directly (``matmul`` plan)."""
    m = wt.shape[1]
    k = max(1, min(candidates, m))
    c = jnp.sum(wt * wt, axis=0)

    def chunk_bmus(x):
        score = c[None, :] - 2 * jnp.matmul(x, wt, precision=HIGHEST)  # (n_c, M)
        _, cand = lax.top_k(-score, k)  # (n_c, k) unit indices
        cand = cand.astype(jnp.int32)
        dist = sq_distances(jnp.take(wt, cand, axis=1), x.T[:, :, None])  # (n_c, k)
        return _first_min(dist, cand)

    return _in_chunks(chunk_bmus, data, chunk)


def blocked(wt: Array, data: Array, chunk: int, block: int) -> Array:
    """``jax-fused-batch``'s CPU search (``blocked`` plan).

    1. a scan over blocks of ``block`` units takes each block's minimum of
       ``|w|^2 - 2 x.w`` (one small product that XLA fuses into the minimum,
       ~3x faster here than the direct form); each example keeps its two best
       blocks;
    2. the units of those two blocks are ranked again with the direct form and
       the first minimum in row-major order wins.

    The expanded form alone loses the nearest unit in float32 late in training
    (its rounding error, ~1e-7 x (|x|^2 + |w|^2), exceeds the squared distances
    to the nearest units, ~1e-7 at QE ~2e-4); measured on the playbook run it
    raised the final QE by 12 % over float64. Pass 2 settles every choice with
    the direct form; pass 1 only has to put the best unit among the two best
    blocks, which fails only if three blocks lie within that rounding error.
    """
    d, m = wt.shape
    g = max(1, -(-m // block))
    b = block
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
            wb = lax.dynamic_slice_in_dim(wa, gi * b, b, axis=1)
            return carry, jnp.min(jnp.matmul(xa, wb, precision=HIGHEST), axis=1)

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
        first = _first_min(sq_distances(cand, x.T[:, :, None]))
        return jnp.where(first < b, glo * b + first, ghi * b + first - b)

    return _in_chunks(chunk_bmus, data, chunk)


def bmus(wt: Array, data: Array, plan: KernelPlan) -> Array:
    """Flat index of each example's best-matching unit by ``plan`` (first in row-major order on ties).

    Parameters
    ----------
    wt : (D, M) codebook, feature-major.
    data : (N, D) examples.
    plan : the device's kernel plan (:func:`som_studio.core.fused_plan.choose`).

    Returns
    -------
    (N,) int32
    """
    if plan.form == "direct":
        return direct(wt, data, plan.chunk)
    if plan.form == "matmul":
        return matmul(wt, data, plan.chunk, plan.candidates)
    return blocked(wt, data, plan.chunk, plan.block)


def _wide(dtype: Any) -> Any:
    """The dtype float32 steps accumulate in: float64 (float64 runs stay float64)."""
    return jnp.float64 if jnp.dtype(dtype).itemsize < 8 else dtype


def gaussian(a: Array, b: Array, sigma: Array, extent: int) -> Array:
    """``exp(-(a_i - b_j)^2 / sigma^2)`` for integer-valued grid coordinates ``a``, ``b`` (< ``extent`` apart).

    The 1-D profile ``exp(-k^2 / sigma^2)``, ``k = 0 .. extent-1``, is computed
    in float64 and rounded once; values below the run precision's smallest
    normal number are exactly zero (what a GPU's FTZ would make of them, now
    on every backend). The matrix gathers the profile at ``|a_i - b_j|``.
    """
    dtype = a.dtype
    wide = _wide(dtype)
    k = jnp.arange(extent, dtype=wide)
    s = sigma.astype(wide)
    g = jnp.exp(-(k * k) / (s * s))
    g = jnp.where(g < jnp.finfo(dtype).tiny, 0, g).astype(dtype)
    dist = jnp.abs(a[:, None] - b[None, :]).astype(jnp.int32)
    return jnp.take(g, jnp.minimum(dist, extent - 1), axis=0)


def unit_sums(vals: Array, idx: Array, units: int) -> Array:
    """Per unit (``units`` slots, indices outside dropped), the sum of its rows of ``vals``; order-independent.

    Float32 rows are added in float64 and rounded once, so the scatter-add's
    order (atomics on a GPU) changes the float32 result only in the rare case
    where a sum lies within ~1e-16 of a rounding boundary.
    """
    dtype = vals.dtype
    out = jax.ops.segment_sum(vals.astype(_wide(dtype)), idx, num_segments=units)
    return out.astype(dtype)


def ratio(num: Array, den: Array, old: Array) -> Array:
    """``num / den`` where ``den > MIN_WEIGHT``, else ``old``; divided in float64, rounded once.

    ``den`` broadcasts against ``num`` and ``old`` (a size-1 feature axis).
    """
    dtype = num.dtype
    wide = _wide(dtype)
    ok = den > jnp.asarray(MIN_WEIGHT, dtype)
    q = num.astype(wide) / jnp.where(ok, den, 1).astype(wide)
    return jnp.where(ok, q.astype(dtype), old)
