"""Squared distances and the first minimum, as the NumPy reference takes them, for every search.

The direct distance ``sum_d (w_d - x_d)^2`` summed in feature order, the first minimum of a row (the first
unit in row-major order on ties), and the map's mean about which every expanded-form product is taken:
what :mod:`som_studio.core.plans.kernels` and :mod:`som_studio.core.plans.screen` rank by.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from som_studio.core import jax_runtime
from som_studio.core.plans.fused_plan import UNROLLED_FEATURES

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def sq_distances(
    w: Array, x: Array, known: Array | None = None, loop: bool = True, unrolled: int = UNROLLED_FEATURES
) -> Array:
    """``sum_d (w_d - x_d)^2`` summed over features in order, as the NumPy reference does
    (unrolled up to ``unrolled`` features, by default :data:`UNROLLED_FEATURES`, in a loop past
    them; with ``loop`` false, one vectorised reduction past :data:`UNROLLED_FEATURES`: for one
    example, whose differences are no larger than the map, the fastest way).

    ``w`` is (D, ...) and ``x`` (D, ...) broadcastable against it. ``known``
    (like ``x``, boolean or 0/1) leaves the unknown features out: their terms
    are exactly zero, so the sum is the reference's sum over known features.
    """

    def term(k: Any) -> Array:
        at = lambda a: lax.dynamic_index_in_dim(a, k, 0, keepdims=False)
        diff = at(w) - at(x)
        if known is not None:
            diff = jnp.where(at(known) != 0, diff, jnp.zeros((), diff.dtype))
        return diff * diff

    if w.shape[0] > UNROLLED_FEATURES and not loop:
        diff = w - x
        if known is not None:
            diff = jnp.where(known != 0, diff, jnp.zeros((), diff.dtype))
        return jnp.sum(diff * diff, axis=0)
    acc = term(0)
    if w.shape[0] > unrolled:
        # A loop over features: the same order, one plane of distances in memory, a small program.
        return lax.fori_loop(1, w.shape[0], lambda k, a: a + term(k), acc)
    for k in range(1, w.shape[0]):
        acc = acc + term(k)
    return acc


def row_sq_distances(cand: Array, x: Array, known: Array | None = None) -> Array:
    """(n, k): ``sum_d (cand - x)^2`` of each example of ``x`` (n, D) and its ``k`` candidate units' rows
    ``cand`` (n, k, D), over its known features (``known`` (n, D) 0/1, or ``None``), in one vectorised
    reduction: for a few candidates of many features, what a loop over features on planes of a few
    candidates costs many times over."""
    diff = cand - x[:, None, :]
    if known is not None:
        diff = jnp.where(known[:, None, :] != 0, diff, jnp.zeros((), diff.dtype))
    return jnp.sum(diff * diff, axis=2)


def first_min(dist: Array, cols: Array | None = None) -> Array:
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


def square(w: Array) -> Array:
    """``w * w``, an overflow to inf held at the largest finite number.

    The masked products multiply it by 0 for unknown features: units moved far
    away (1e30, the sharded trainers' padding) must give a huge score, never
    ``0 * inf = NaN``.
    """
    return jnp.minimum(w * w, jnp.finfo(w.dtype).max)


def pick(dist: Array, units: Array, two: bool) -> Array | tuple[Array, Array]:
    """The unit of ``units`` (n, k; row-major order) at each row's first minimum of ``dist``; ``two``: and the next."""
    if not two:
        return first_min(dist, units)
    dist = lax.optimization_barrier(dist)
    col = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    i1 = first_min(dist)
    i2 = first_min(jnp.where(col == i1[:, None], jnp.asarray(jnp.inf, dist.dtype), dist))
    pick = lambda i: jnp.take_along_axis(units, i[:, None], axis=1, mode="clip")[:, 0]
    return pick(i1), pick(i2)


def take(a: Array, indices: Array, axis: int | None = None) -> Array:
    """``jnp.take`` of ``indices`` within range (clamped where one is not, as XLA's gather does).

    ``jnp.take``'s default fills the positions of out-of-range indices, which XLA's gather cannot: JAX traces
    a masked gather in its place for every one as it lowers the program, a third of the tiled epoch's
    lowering, which every run pays again, the compile cache's included (it keys on the lowered program).
    """
    return jnp.take(a, indices, axis=axis, mode="clip")


FAR = 1e20
"""Units this far from the origin in some feature are padding (moved 1e30 away), left out of the map's centre."""


def map_centre(wt: Array) -> Array:
    """(D, 1): the mean of the map's units (padding units left out), where the expanded form is taken.

    ``|w - c|^2 - 2 (x - c).(w - c)`` ranks units as ``|w|^2 - 2 x.w`` does, but rounds in proportion to
    the data's spread about ``c``, not to its distance from the origin: among examples 100 from the origin
    and 1 apart, the product about the origin chose another unit than the reference for most of them.
    """
    near = jnp.all(jnp.abs(wt) < FAR, axis=0)
    total = jnp.sum(jnp.where(near[None, :], wt, jnp.zeros((), wt.dtype)), axis=1, keepdims=True)
    return total / jnp.maximum(jnp.sum(near), 1).astype(wt.dtype)


def moved(x: Array, kn: Array | None, mean: Array) -> Array:
    """Examples ``x`` (n, D) moved by the map's centre (:func:`map_centre`), unknown features left at 0."""
    xc = x - mean[:, 0]
    return xc if kn is None else jnp.where(kn != 0, xc, jnp.zeros((), x.dtype))
