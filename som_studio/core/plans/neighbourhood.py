"""The steps of a batch epoch after its search: per-unit sums, neighbourhood weights, smoothing, the update.

Exact float32 on every backend: besides TF32 (the searches' products pass
``precision=HIGHEST``, :mod:`som_studio.core.plans.kernels`), a float32 program on a
GPU differs from the CPU's in ways that all land in these few steps, so they are
written to give the same float32 numbers everywhere:

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
  approximate).

What was *not* run on a GPU: these steps are verified on the CPU only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from som_studio.core import jax_runtime
from som_studio.core.plans.distances import take
from som_studio.core.som.problem import MIN_WEIGHT
from som_studio.core.som.topology import HEX_ROW
from som_studio.run_settings import Topology

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

HIGHEST = lax.Precision.HIGHEST


def accumulator(dtype: Any) -> Any:
    """The dtype float32 steps accumulate in: float64 (float64 runs stay float64)."""
    return jnp.float64 if jnp.dtype(dtype).itemsize < 8 else dtype


def gaussian(a: Array, b: Array, sigma: Array, extent: int) -> Array:
    """``exp(-(a_i - b_j)^2 / sigma^2)`` for integer-valued grid coordinates ``a``, ``b`` (< ``extent`` apart).

    The 1-D profile ``exp(-k^2 / sigma^2)``, ``k = 0 .. extent-1``, is computed
    in float64 and rounded once; values below the run precision's smallest
    normal number are exactly zero (what a GPU's FTZ would make of them, on
    every backend alike). The matrix gathers the profile at ``|a_i - b_j|``.
    """
    dtype = a.dtype
    wide = accumulator(dtype)
    k = jnp.arange(extent, dtype=wide)
    s = sigma.astype(wide)
    g = jnp.exp(-(k * k) / (s * s))
    g = jnp.where(g < jnp.finfo(dtype).tiny, 0, g).astype(dtype)
    dist = jnp.abs(a[:, None] - b[None, :]).astype(jnp.int32)
    return take(g, jnp.minimum(dist, extent - 1), axis=0)


def unit_sums(vals: Array, idx: Array, units: int) -> Array:
    """Per unit (``units`` slots, indices outside dropped), the sum of its rows of ``vals``; order-independent.

    Float32 rows are added in float64 and rounded once, so the scatter-add's
    order (atomics on a GPU) changes the float32 result only in the rare case
    where a sum lies within ~1e-16 of a rounding boundary.
    """
    dtype = vals.dtype
    out = jax.ops.segment_sum(vals.astype(accumulator(dtype)), idx, num_segments=units)
    return out.astype(dtype)


SUMS_PIECE_BYTES = 4 << 20
"""Most bytes of widened rows :func:`row_sums` makes at a time (a piece stays in the cache)."""


def row_sums(data: Array, weights: Array, idx: Array, units: int) -> Array:
    """Per unit (``units`` slots, indices outside dropped), the sums of its rows of ``[data, weights]`` (N, D + E).

    The same sums as :func:`unit_sums` of the joined rows, added in the same order (row by row), but
    widened to the accumulator's type a piece of rows at a time, at most :data:`SUMS_PIECE_BYTES`:
    widening all rows at once writes an array twice the data's size through memory. At 5,000 x 2,048
    float32 that array took 29-44 ms of an epoch's sums, and the scatter-add of it 6 ms; in pieces of
    256 rows, 11-14 ms in all, the same sums to the bit.
    """
    dtype = data.dtype
    acc = accumulator(dtype)
    n = data.shape[0]
    width = data.shape[1] + weights.shape[1]
    rows = max(1, SUMS_PIECE_BYTES // (width * jnp.dtype(acc).itemsize))

    def piece(start: Any, size: int, total: Array) -> Array:
        vals = jnp.concatenate(
            [lax.dynamic_slice_in_dim(data, start, size), lax.dynamic_slice_in_dim(weights, start, size)], axis=1
        )
        return total.at[lax.dynamic_slice_in_dim(idx, start, size)].add(vals.astype(acc), mode="drop")

    total = jnp.zeros((units, width), acc)
    whole = n // rows
    if whole > 1:
        total = lax.fori_loop(0, whole, lambda i, t: piece(i * rows, rows, t), total)
    elif whole == 1:
        total = piece(0, rows, total)
    if n % rows:
        total = piece(whole * rows, n % rows, total)
    return total


def ratio(num: Array, den: Array, old: Array) -> Array:
    """``num / den`` where ``den > MIN_WEIGHT``, else ``old``; divided in float64, rounded once.

    ``den`` broadcasts against ``num`` and ``old`` (a size-1 feature axis).
    """
    dtype = num.dtype
    wide = accumulator(dtype)
    ok = den > jnp.asarray(MIN_WEIGHT, dtype)
    q = num.astype(wide) / jnp.where(ok, den, 1).astype(wide)
    return jnp.where(ok, q.astype(dtype), old)


# -- topology: neighbourhood weights of hex and toroid maps (formulas of core/som/topology.py) ------------


def _twice_weights(k2: Array, step: float, sigma: Array, dtype: Any, wide: bool = True) -> Array:
    """``exp(-((k2 / 2) * step)^2 / sigma^2)`` for integer ``k2`` (twice an offset in grid steps).

    Computed in float64 and rounded once, below the smallest normal number set
    to zero, as :func:`gaussian` does: with ``step = 1`` and even ``k2`` these are
    exactly :func:`gaussian`'s numbers. ``wide=False``: in ``dtype`` throughout,
    as the online steps compute their rect neighbourhood (and the reference its
    own): a float64 ``exp`` per unit row and column is not vectorised on the CPU
    and tripled the cost of an online step on the playbook map.
    """
    if not wide:
        d = k2.astype(dtype) * jnp.asarray(0.5 * step, dtype)
        return jnp.exp(-(d * d) / (sigma * sigma))
    acc = accumulator(dtype)
    d = k2.astype(acc) * 0.5 * step
    s = sigma.astype(acc)
    g = jnp.exp(-(d * d) / (s * s))
    return jnp.where(g < jnp.finfo(dtype).tiny, 0, g).astype(dtype)


def _fold(k2: Array, n: int, wrap: bool) -> Array:
    """``|k2|``, wrapped to the nearest image on a ring of ``n`` grid steps (``2 n`` in twice-units)."""
    k2 = jnp.abs(k2)
    return jnp.minimum(k2, 2 * n - k2) if wrap else k2


def axis_weights(n: int, sigma: Array, dtype: Any, step: float = 1.0, shift2: int = 0, wrap: bool = False) -> Array:
    """(n, n) neighbourhood matrix of one axis: ``[a, b] = exp(-(((a - b) + shift2 / 2) * step)^2 / sigma^2)``.

    ``a`` is the target's index, ``b`` the source's; ``shift2 / 2`` the half-unit
    shift of hex rows of different parity; ``wrap`` a toroid (period ``n``). The
    2n + 1 distinct values are computed once (a float64 profile) and gathered.
    """
    i = jnp.arange(n, dtype=jnp.int32)
    k2 = _fold(2 * (i[:, None] - i[None, :]) + shift2, n, wrap)
    prof = _twice_weights(jnp.arange(2 * n + 1, dtype=jnp.int32), step, sigma, dtype)
    return take(prof, k2, axis=0)


def grid_weights(
    by: Array,
    bx: Array,
    sx: Array,
    sy: Array,
    shape: tuple[int, int],
    lattice: tuple[str, bool],
    dtype: Any,
    wide: bool = False,
) -> Array:
    """(H, W) neighbourhood around unit (``by``, ``bx``) on a hex and/or toroid map (``lattice``: topology, toroid).

    ``hy[r] * hx[r mod 2][c]`` as :func:`som_studio.core.som.topology.neighbourhood`
    writes it: separable once the rows are split by parity. In the run's
    precision, as the reference computes it (``wide``: float64 rounded once, see :func:`_twice_weights`).
    """
    h, w = shape
    topology, wrap = lattice
    hexa = topology == Topology.HEX
    rows = _fold(2 * (jnp.arange(h, dtype=jnp.int32) - by), h, wrap)
    hy = _twice_weights(rows, HEX_ROW if hexa else 1.0, sy, dtype, wide)
    cols = 2 * (jnp.arange(w, dtype=jnp.int32) - bx)
    if not hexa:
        return hy[:, None] * _twice_weights(_fold(cols, w, wrap), 1.0, sx, dtype, wide)[None, :]
    pb = by % 2
    hx0 = _twice_weights(_fold(cols - pb, w, wrap), 1.0, sx, dtype, wide)
    hx1 = _twice_weights(_fold(cols + 1 - pb, w, wrap), 1.0, sx, dtype, wide)
    odd = (jnp.arange(h) % 2 == 1)[:, None]
    return hy[:, None] * jnp.where(odd, hx1[None, :], hx0[None, :])


def smooth(s: Array, sx: Array, sy: Array, lattice: tuple[str, bool] = (Topology.RECT, False)) -> Array:
    """``sum_v h(u, v) s_v`` for per-unit sums ``s`` (K, H, W) on any lattice, never forming M x M.

    Rect: ``Hy @ S @ Hx^T`` (a toroid only wraps the 1-D matrices). Hex: a
    unit's x offset depends on its column and on both rows' parities, so with
    ``Hx0`` (same parity), ``Hx+`` (target odd, source even: +1/2) and ``Hx-``
    (-1/2), even target rows get ``Hy[e, e] S_e Hx0 + Hy[e, o] S_o Hx-`` and odd
    ones ``Hy[o, e] S_e Hx+ + Hy[o, o] S_o Hx0``: 2x the column products of a
    rect map, the same row products.
    """
    topology, wrap = lattice
    _, h, w = s.shape
    dtype = s.dtype
    if topology != Topology.HEX:
        hx = axis_weights(w, sx, dtype, wrap=wrap)
        hy = axis_weights(h, sy, dtype, wrap=wrap)
        t = jnp.einsum("kab,xb->kax", s, hx, precision=HIGHEST)
        return jnp.einsum("ya,kax->kyx", hy, t, precision=HIGHEST)
    hy = axis_weights(h, sy, dtype, step=HEX_ROW, wrap=wrap)
    se, so = s[:, 0::2], s[:, 1::2]
    a0 = jnp.einsum("kab,xb->kax", s, axis_weights(w, sx, dtype, wrap=wrap), precision=HIGHEST)
    ap = jnp.einsum("kab,xb->kax", se, axis_weights(w, sx, dtype, shift2=1, wrap=wrap), precision=HIGHEST)
    am = jnp.einsum("kab,xb->kax", so, axis_weights(w, sx, dtype, shift2=-1, wrap=wrap), precision=HIGHEST)
    # Source rows in their map order (even then odd), the matching columns of Hy.
    he = jnp.concatenate([hy[0::2, 0::2], hy[0::2, 1::2]], axis=1)
    ho = jnp.concatenate([hy[1::2, 0::2], hy[1::2, 1::2]], axis=1)
    ne = jnp.einsum("ya,kax->kyx", he, jnp.concatenate([a0[:, 0::2], am], axis=1), precision=HIGHEST)
    no = jnp.einsum("ya,kax->kyx", ho, jnp.concatenate([ap, a0[:, 1::2]], axis=1), precision=HIGHEST)
    # Interleave the even and odd rows back (an odd height has one even row more).
    no = jnp.pad(no, ((0, 0), (0, ne.shape[1] - no.shape[1]), (0, 0)))
    return jnp.stack([ne, no], axis=2).reshape(s.shape[0], 2 * ne.shape[1], w)[:, :h]
