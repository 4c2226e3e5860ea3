"""The CPU's screened search of the tiled plan: one product's best unit kept wherever no other can be as near.

:class:`Screen` ranks a tile of examples by the expanded form and accepts its best unit where the rounding
of both forms cannot reach another; the few examples nearer a tie are ranked again by the direct form,
against the units within their reach. :func:`epoch_sums` is the CPU's tiled epoch built on it
(:func:`som_studio.core.plans.kernels.tiled_sums`), which ranks those examples after every tile.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from som_studio.core import jax_runtime
from som_studio.core.plans import fused_plan
from som_studio.core.plans.distances import (
    first_min,
    map_centre,
    moved,
    pick,
    row_sq_distances,
    sq_distances,
    square,
    take,
)
from som_studio.core.plans.fused_plan import SCREEN_CANDIDATES, SCREEN_GATHERED, SCREEN_GROUP
from som_studio.core.plans.neighbourhood import HIGHEST

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

SCREEN_UNROLLED = 8
"""Features the screened search's direct rankings sum unrolled; past them, in a loop (a small program)."""

# The quality pass's best two units by blocks (:func:`best_two_blocked`) on maps of this many units or more,
# in blocks of the first of these sizes that divides the units; else by whole columns. The quality pass at
# 10^6 rows, whole columns against blocks: 16 features on 12x12 173 -> 164 ms, on 16x16 294 -> 269 ms; 30 on
# 20x20 512 -> 460 ms; 50 on 20x20 669 -> 630 ms; but 30 on 10x10 160 -> 165 ms, the blocks' gathers then
# dearer than the passes they save.
BEST_TWO_MIN_UNITS = 128
BEST_TWO_BLOCKS = (4, 8, 6, 5, 3)


_KEY_INTS = {4: "int32", 8: "int64"}


def _ordered(bits: Array) -> Array:
    # A float's bits as a signed integer ordered as the floats are (its own inverse): negative floats' magnitude
    # bits flipped.
    return jnp.where(bits < 0, bits ^ jnp.iinfo(bits.dtype).max, bits)


def keys(score: Array, bits: int) -> Array:
    """(M, T) integers ordered as ``score`` with its last ``bits`` bits the unit's index (the row); NaN least,
    its index kept."""
    ints = jnp.dtype(_KEY_INTS[score.dtype.itemsize])
    key = _ordered(lax.bitcast_convert_type(score, ints))
    row = lax.broadcasted_iota(ints, score.shape, 0)
    return jnp.where(jnp.isnan(score), jnp.iinfo(ints).min | row, (key & ~((1 << bits) - 1)) | row)


def key_floor(key: Array, bits: int, dtype: Any) -> Array:
    """The score ``key`` orders, its last ``bits`` bits cleared: no more than the score of its unit (NaN stays NaN)."""
    floor = lax.bitcast_convert_type(_ordered(key & ~((1 << bits) - 1)), dtype)
    # -inf's bits cleared are a NaN's: its floor is -inf.
    nan = key < jnp.iinfo(key.dtype).min + (1 << bits)
    return jnp.where(jnp.isnan(floor) & ~nan, jnp.asarray(-jnp.inf, dtype), floor)


def put(chosen: Any, at: Array, found: Any) -> Any:
    """``chosen`` (an array, or a tuple of them) with ``found`` set at positions ``at`` (those past its end dropped)."""
    if isinstance(chosen, tuple):
        return tuple(c.at[at].set(f, mode="drop") for c, f in zip(chosen, found, strict=True))
    return chosen.at[at].set(found, mode="drop")


def best_two_blocked(score: Array, floor: Array, block: int) -> tuple[Array, Array, Array, Array, Array]:
    """``(low, first, low2, second, third)`` of each column of ``score`` (M, T): the best score and its unit, the
    second's, and the least ``floor`` of the other units; first in row-major order on ties, as the search by
    whole columns gives them.

    The units in blocks of ``block`` (dividing M): one pass over the scores and floors takes each block's
    minima, and the rest reads the blocks' minima and the few blocks that hold the best units, where the
    search by whole columns reads the scores five times (:data:`BEST_TWO_MIN_UNITS`). The first unit alone
    gains nothing so: an epoch's search keeps its whole columns.
    """
    m, t = score.shape
    g = m // block
    inf = jnp.asarray(jnp.inf, score.dtype)
    s3, f3 = score.reshape(g, block, t), floor.reshape(g, block, t)
    mins, floors = jnp.min(s3, axis=1), jnp.min(f3, axis=1)  # (G, T)
    brow = lax.broadcasted_iota(jnp.int32, mins.shape, 0)
    inrow = lax.broadcasted_iota(jnp.int32, (block, t), 0)

    def of(blocks: Array, at: Array) -> Array:  # (B, T): each column's block ``at``
        return jnp.take_along_axis(blocks, at[None, None, :], axis=0, mode="clip")[0]

    def lowest(values: Array, rows: Array, size: int) -> tuple[Array, Array]:
        low = jnp.min(values, axis=0)
        return low, jnp.min(jnp.where(values == low[None, :], rows, size), axis=0)

    low, fb = lowest(mins, brow, g)
    scores_fb, floors_fb = of(s3, fb), of(f3, fb)
    fi = lowest(scores_fb, inrow, block)[1]
    # The second: the best other unit of the first's block, or the best unit of the best other block.
    av, ai = lowest(jnp.where(inrow == fi[None, :], inf, scores_fb), inrow, block)
    bv, bb = lowest(jnp.where(brow == fb[None, :], inf, mins), brow, g)
    bi = lowest(of(s3, bb), inrow, block)[1]
    ai, bi = fb * block + ai, bb * block + bi
    a_first = (av < bv) | ((av == bv) & (ai < bi))
    low2, second = jnp.where(a_first, av, bv), jnp.where(a_first, ai, bi)
    sb, si = second // block, second % block
    # The third: the least floor of every block but theirs, and of theirs but the two.
    others = jnp.min(jnp.where((brow == fb[None, :]) | (brow == sb[None, :]), inf, floors), axis=0)
    in_first = jnp.where((inrow == fi[None, :]) | ((sb == fb)[None, :] & (inrow == si[None, :])), inf, floors_fb)
    in_second = jnp.where((inrow == si[None, :]) | (sb == fb)[None, :], inf, of(f3, sb))
    third = jnp.minimum(others, jnp.minimum(jnp.min(in_first, axis=0), jnp.min(in_second, axis=0)))
    # No unit at ``low`` (a NaN score): out of range, as the search by whole columns leaves it.
    return low, jnp.minimum(fb * block + fi, m), low2, jnp.minimum(second, m), third


class Screen:
    """The CPU's tiled search of one tile of examples: ``screen(x, kn, two)``, each example's best unit (and
    second, the quality pass's search).

    One product ranks every unit by the expanded form ``|w'|^2 - 2 x'.w'`` of examples and units moved by
    the map's mean ``c`` (``x' = x - c``, ``w' = w - c``: distances do not change, and the rounding shrinks
    from the data's magnitude to its spread), scores laid out units x examples (each reduction over units
    then runs along whole vectors of examples). Where an example's second-best score lies further from its
    best than the rounding of both forms can reach, its best unit is the reference's: the direct distance
    ``sum (w - x)^2`` in float32 is then strictly smallest there. Only the examples nearer a tie than that
    are gathered, in groups (:data:`SCREEN_GROUP` of a tile, or after every tile: :meth:`near_ties`), and
    ranked again by the direct form against their candidates, the units whose bound from below lies within
    that reach (no other can be the reference's), first in row-major order on ties; an example among more
    than :data:`SCREEN_CANDIDATES` candidates (units nearly on top of each other), against every unit.
    Measured near a tie: 0.3-0.6 % of the examples at 10-30 features on 100-400 units, 4 % at 50 features
    on 400 units among tight clusters, 9 % (16 % for two units) on a map laid out by PCA over 50 uniform
    features, whose plane every example lies far from; 2-5 candidates each. With a
    second unit, both are the product's where every third unit's bound lies beyond the second's reach and
    the second's beyond the first's, and the candidates are those within the second's reach. The matmul
    form re-ranks every example's two
    best blocks, which cost as much as the product, and trusts the product to find those blocks: among
    examples 1,000 from the origin and 0.01 apart its product is all rounding, and it chose another unit
    than the reference for 45 % of them, where this search, finding every one of them near, agrees.

    The margin, with ``u`` the unit roundoff: a sum of ``n`` terms in any order is off by at most ``n u``
    times the sum of its terms' magnitudes. A score's terms are ``-2 x'_i w'_i``, at most ``2 |x'| |w'|``
    together (Cauchy-Schwarz), and ``|w'|^2``, itself a sum of ``D``; the moves round each ``x'_i`` and
    ``w'_i`` within ``u`` of itself, which shifts a unit against another by at most ``4 u |x'| |w'| + 2 u
    |w'|^2``. So a score is off by at most ``(2 D + 6) u |x'| |w'| + (2 D + 3) u |w'|^2``, within
    ``k (2 |x'| |w'| + |w'|^2)``, ``k = 4 (D + 2) u``; the direct form by ``(D + 3) u`` of the distance.
    Each unit's score less its rounding bounds it from below; the best unit is accepted when every other's
    bound exceeds the best's score plus its rounding by ``3 (D + 4) u`` of its distance (the direct form's
    rounding of both distances, ``2 (D + 3) u`` of the smaller, with room). The rounding grows with
    ``|x'| |w'|``, not ``|x'|^2``: on a map drawn together early in training (``|w'|`` small against the
    data's spread) few examples are near a tie.
    """

    def __init__(self, wt: Array) -> None:
        d, m = wt.shape
        dtype = wt.dtype
        self.wt, self.m, self.d, self.dtype = wt, m, d, dtype
        self.rows = wt.T  # unit-major: a candidate's weights are one contiguous row
        self.u = float(jnp.finfo(dtype).eps) / 2
        self.k = 4 * (d + 2) * self.u
        self.centre = map_centre(wt)
        wc = wt - self.centre
        self.wsq = jnp.sum(wc * wc, axis=0)
        self.wa_full = jnp.concatenate([wc, self.wsq[None, :]], axis=0)
        self.wa_known = jnp.concatenate([wc, square(wc), jnp.zeros((1, m), dtype)], axis=0)
        # Per unit, its score's rounding is at most ``slack + cross |x'|`` (a unit moved 1e30 away, padding,
        # scores +inf in float32 and needs none).
        finite = jnp.isfinite(self.wsq)
        self.slack = jnp.where(finite, self.k * self.wsq, 0)[:, None]
        self.cross = jnp.where(finite, 2 * self.k * jnp.sqrt(jnp.where(finite, self.wsq, 0)), 0)[:, None]
        self.keyed = fused_plan.keyed_bits(m, jnp.dtype(dtype).itemsize)
        self.slack_max, self.cross_max = jnp.max(self.slack), jnp.max(self.cross)

    def _scores(self, x: Array, kn: Array | None) -> tuple[Array, Array]:
        """``(score, xsq)``: the (M, T) scores of the examples ``x`` and their ``|x'|^2``."""
        xc = moved(x, kn, self.centre)
        ones = jnp.ones((x.shape[0], 1), self.dtype)
        xa = jnp.concatenate([-2 * xc, ones] if kn is None else [-2 * xc, kn, ones], axis=1)
        wa = self.wa_full if kn is None else self.wa_known
        score = lax.dot_general(wa, xa, (((0,), (1,)), ((), ())), precision=HIGHEST)
        return lax.optimization_barrier(score), jnp.sum(xc * xc, axis=1)

    def _direct(self, x: Array, kn: Array | None, two: bool = False) -> Any:
        """The reference's ranking against every unit. Materialised, then two reductions: 7x faster here
        than the direct form's variadic argmin. Summed in a loop past :data:`SCREEN_UNROLLED` features:
        unrolled, such rankings in the search's branches were most of its trace."""
        kt = None if kn is None else kn.T[:, :, None]
        dist = sq_distances(self.wt[:, None, :], x.T[:, :, None], kt, unrolled=SCREEN_UNROLLED)
        return pick(dist, lax.broadcasted_iota(jnp.int32, dist.shape, 1), True) if two else first_min(dist)

    @staticmethod
    def _positions(mask: Array, size: int) -> Array:
        """(size,) the positions of ``mask``'s examples in order, then ``len(mask)`` (dropped) past them."""
        t = mask.shape[0]
        slot = jnp.where(mask, lax.cumsum(mask.astype(jnp.int32)) - 1, size)
        return jnp.full((size,), t, jnp.int32).at[slot].set(jnp.arange(t, dtype=jnp.int32), mode="drop")

    def _rank(self, xr: Array, kr: Array | None, floor: Array, limit: Array, real: Array, two: bool) -> Any:
        """The examples ``xr`` (g, D) near a tie (``real``: those that are examples, not padding) ranked again
        by the direct form against their candidates: the units whose bound from below (``floor``, (M, g)) lies
        within the example's reach (``limit``), at most :data:`SCREEN_CANDIDATES` in row-major order; where an
        example has more, the group against every unit. Each example's best unit (and second, with ``two``)."""
        m, most = self.m, min(SCREEN_CANDIDATES, self.m)
        # Each unit within reach by its index, ``m`` beyond, in narrow integers; then the first ``most`` of them,
        # one reduction each: an example has a few (2-5 measured on maps laid out by PCA and on maps drawn
        # together by a wide first epoch), and sorting the column cost more than the screen itself.
        index = jnp.int16 if m < jnp.iinfo(jnp.int16).max else jnp.int32
        row = lax.broadcasted_iota(index, floor.shape, 0)
        inside = lax.optimization_barrier(jnp.where(floor > limit[None, :], m, row).astype(index))
        picked, last = [], jnp.full(limit.shape, -1, index)
        for _ in range(most):
            last = jnp.min(jnp.where(inside > last[None, :], inside, m), axis=0)
            picked.append(last.astype(jnp.int32))
        cand = jnp.stack(picked, axis=1)  # (g, most), ascending, ``m`` past an example's last
        # Every unit within reach a candidate, and the best (and second) among them: a NaN reach has none.
        fits = ~jnp.any(inside > last[None, :], axis=0) & (cand[:, min(2 if two else 1, m) - 1] < m)

        def among(_: Any) -> Any:
            units = jnp.minimum(cand, m - 1)
            if self.d > SCREEN_UNROLLED:
                # The candidates' rows gathered whole and their squares summed in one vectorised reduction: a
                # loop over features on planes of a few candidates cost more than ranking against every unit
                # (300 features, 8 candidates of 375 units: 11.9 ms a group of 1,024 against 8.1, and 0.45 so).
                dist = row_sq_distances(take(self.rows, units, axis=0), xr, kr)
            else:
                kt = None if kr is None else kr.T[:, :, None]
                dist = sq_distances(take(self.wt, units, axis=1), xr.T[:, :, None], kt, unrolled=SCREEN_UNROLLED)
            return pick(jnp.where(cand < m, dist, jnp.asarray(jnp.inf, dist.dtype)), units, two)

        # An example among more candidates (units nearly on top of each other) is ranked against every unit,
        # in small groups of such examples: one of them does not send its whole group to the direct form; where
        # they are more than an eighth of the group (a map drawn together early in training), the whole group
        # is ranked so at once (in groups of one or two examples they were twice as slow as the blocks before).
        g = limit.shape[0]
        s = max(1, g // 8)
        crowd = ~fits & real
        crowded = self._positions(crowd, -(-g // s) * s)

        def direct(i: Any, found: Any) -> Any:
            at = lax.dynamic_slice_in_dim(crowded, i * s, s)
            rows = jnp.minimum(at, g - 1)
            got = self._direct(take(xr, rows, axis=0), None if kr is None else take(kr, rows, axis=0), two)
            return put(found, at, got)

        count = jnp.sum(crowd)
        few = lambda _: lax.fori_loop(0, (count + s - 1) // s, direct, among(None))
        return lax.cond(count > s, lambda _: self._direct(xr, kr, two), few, None)

    def _group(self, x: Array, kn: Array | None, at: Array, scores: tuple[Array, Array, Array], two: bool) -> Any:
        """A function of the chosen units: those of the examples at ``at`` (``len(x)`` past the last) ranked
        again (:meth:`_rank`; ``scores``: the tile's scores, its examples' ``|x'|`` and reaches)."""
        score, xn, limit = scores
        t = x.shape[0]
        rows = jnp.minimum(at, t - 1)
        xr = take(x, rows, axis=0)
        kr = None if kn is None else take(kn, rows, axis=0)
        floor = self._floor(take(score, rows, axis=1), take(xn, rows))
        found = self._rank(xr, kr, floor, take(limit, rows), at < t, two)
        return lambda chosen: put(chosen, at, found)

    def settled(self, x: Array, kn: Array | None, two: bool = False) -> tuple[Any, Array, Array]:
        """``(units, near, limit)``: each example's best unit by the product (with ``two``, a tuple of its best
        and second), whether it lies near a tie (its units then the reference's only after :meth:`again`),
        and its reach."""
        score, xsq = self._scores(x, kn)
        units, near, limit = self._screen(score, xsq, two)
        return (units if two else units[0]), near, limit

    def again(self, x: Array, kn: Array | None, limit: Array, real: Array, two: bool = False) -> Any:
        """The best units (and second) of examples near a tie, gathered from many tiles (``real``: not
        padding), their scores computed again (within the same bound) and ranked against their candidates
        (:meth:`_rank`)."""
        score, xsq = self._scores(x, kn)
        return self._rank(x, kn, self._floor(score, jnp.sqrt(xsq)), limit, real, two)

    def near_ties(
        self, carry: Any, near: Array, limit: Array, rows: Any, put: Any, group: int, two: bool = False
    ) -> Any:
        """The examples ``near`` a tie among many tiles (N,) ranked again (:meth:`again`; ``limit``: their
        reaches), gathered in groups of ``group``: ``rows(at)`` gives ``(x, known)`` of the examples ``at``, and
        ``put(carry, at, found, x, known)`` takes their units (a tuple of two with ``two``; ``at`` past the
        last example, N, for a group's padding). Returns the last ``carry``."""
        n = near.shape[0]
        if n == 0:
            return carry
        g = max(1, min(n, group))
        # Each group's positions found in the running count of the marks (the k-th mark is the first position
        # where the count reaches k): a few searches a group, where laying every position out at once scattered
        # all N examples (at 10^6 examples, 2.8 ms of a 47 ms epoch, against 1.5).
        count = lax.cumsum(near.astype(jnp.int32))

        def ranked(i: Any, carry: Any) -> Any:
            marks = i * g + jnp.arange(1, g + 1, dtype=jnp.int32)
            where = jnp.searchsorted(count, marks, side="left").astype(jnp.int32)
            x, kn = rows(jnp.minimum(where, n - 1))
            found = self.again(x, kn, take(limit, jnp.minimum(where, n - 1)), where < n, two)
            return put(carry, where, found, x, kn)

        return lax.fori_loop(0, (count[-1] + g - 1) // g, ranked, carry)

    def _floor(self, score: Array, xn: Array) -> Array:
        """(M, T): each unit's score less its rounding, a bound from below (``xn``: the examples' ``|x'|``)."""
        return score - self.slack - self.cross * xn[None, :]

    def _error(self, unit: Array, xn: Array) -> Array:
        """(T,): the rounding of each example's score of ``unit``."""
        unit = jnp.minimum(unit, self.m - 1)
        return take(self.slack[:, 0], unit) + take(self.cross[:, 0], unit) * xn

    def _direct_rounding(self, dist: Array) -> Array:
        """What the reference's rounding of two direct distances, the smaller ``dist``, can reach (with room)."""
        return 3 * (self.d + 4) * self.u * jnp.abs(dist)

    def _screen(self, score: Array, xsq: Array, two: bool) -> tuple[tuple[Array, ...], Array, Array]:
        """``(units, near, limit)``: each example's best unit (and second) by ``score`` (M, T), whether another
        unit's bound from below comes within reach of it (the best's score plus its rounding, plus the
        reference's rounding of the direct distances), and that reach: a unit whose bound lies beyond it
        is not the reference's best (nor, with ``two``, its second)."""
        inf = jnp.asarray(jnp.inf, score.dtype)
        row = lax.broadcasted_iota(jnp.int32, score.shape, 0)
        xn = jnp.sqrt(xsq)

        def best(s: Array) -> tuple[Array, Array]:
            low = jnp.min(s, axis=0)
            return low, jnp.min(jnp.where(s == low[None, :], row, self.m), axis=0)

        def reach(unit: Array, low: Array) -> Array:
            return self._error(unit, xn) + self._direct_rounding(low + xsq)

        if self.keyed:
            return self._keyed(score, xn, reach, two)
        floor = self._floor(score, xn)
        block = 0
        if two and self.m >= BEST_TWO_MIN_UNITS:
            block = next((b for b in BEST_TWO_BLOCKS if self.m % b == 0), 0)
        if block:
            low, first, low2, second, third = best_two_blocked(score, floor, block)
        else:
            low, first = best(score)
            if not two:
                second = jnp.min(jnp.where(row == first[None, :], inf, floor), axis=0)
                limit = low + reach(first, low)
                return (first,), ~(second > limit), limit  # NaN counts as near
            low2, second = best(jnp.where(row == first[None, :], inf, score))
            third = jnp.min(jnp.where((row == first[None, :]) | (row == second[None, :]), inf, floor), axis=0)
        return self._two(first, low, second, low2, third, xn, reach)

    def _two(
        self, first: Array, low: Array, second: Array, low2: Array, third: Array, xn: Array, reach: Any
    ) -> tuple[tuple[Array, Array], Array, Array]:
        """:meth:`_screen`'s best two from their scores ``low``, ``low2`` and ``third``, every other unit's bound
        from below: near a tie unless the second's bound and ``third`` lie beyond the first's reach and ``third``
        beyond the second's."""
        limit, limit2 = low + reach(first, low), low2 + reach(second, low2)
        near = ~(jnp.minimum(low2 - self._error(second, xn), third) > limit) | ~(third > limit2)
        return (first, second), near, jnp.maximum(limit, limit2)

    def _keyed(self, score: Array, xn: Array, reach: Any, two: bool) -> tuple[tuple[Array, ...], Array, Array]:
        """:meth:`_screen` by reductions of keys (:func:`keys`): two for the best unit where it made three
        passes over the scores (a min, the first unit at it, the others' least bound), three for the best two
        where it made five. The tiled search of 1,000,000 x 16 on 10x10 55 -> 46 ms, x 30 72 -> 62 ms, x 16 on
        32x32 823 -> 706 ms.

        A key orders a unit by its score with the score's last bits replaced by the unit's index: the least
        key's unit is the best unit, or one scoring within those bits of it. Its own score, read back, sets the
        reach; the next least key bounds every other unit's score from below (its bits cleared), and less
        the largest rounding of any unit, every other unit's bound. So an example is near a tie as
        :meth:`_screen` finds it, or within those bits of one: the bits are few beside a float's (at most
        :data:`~som_studio.core.plans.fused_plan.KEYED_MAX_BITS`), and the examples near a tie a few more
        (ranked again all the same). With ``two`` the second least key is the second unit, the third least
        bounds the rest.
        """
        bits = self.keyed
        index = (1 << bits) - 1
        key = keys(score, bits)
        # No other unit (a map of one or two): the next key that of +inf.
        top = _ordered(lax.bitcast_convert_type(jnp.asarray(jnp.inf, score.dtype), key.dtype))
        k1 = jnp.min(key, axis=0)
        k2 = jnp.min(jnp.where(key == k1[None, :], top, key), axis=0)

        def unit(k: Array) -> tuple[Array, Array]:
            at = (k & index).astype(jnp.int32)
            return at, jnp.take_along_axis(score, jnp.minimum(at, self.m - 1)[None, :], axis=0, mode="clip")[0]

        def bound(k: Array) -> Array:
            return key_floor(k, bits, score.dtype) - self.slack_max - self.cross_max * xn

        # A NaN score is the least key: its unit is taken first, its score NaN, and the example near.
        first, low = unit(k1)
        if not two:
            limit = low + reach(first, low)
            return (first,), ~(bound(k2) > limit), limit
        k3 = jnp.min(jnp.where((key == k1[None, :]) | (key == k2[None, :]), top, key), axis=0)
        second, low2 = unit(k2)
        # A map of one unit has no second: out of range, as the search by whole columns leaves it.
        second = jnp.where(k2 == top, self.m, second)
        return self._two(first, low, second, low2, bound(k3), xn, reach)

    def __call__(self, x: Array, kn: Array | None, two: bool = False) -> Any:
        """Each example's best unit (and its second-best, the quality pass's search)."""
        score, xsq = self._scores(x, kn)
        units, near, limit = self._screen(score, xsq, two)
        return self.ranked(x, kn, (score, jnp.sqrt(xsq), limit), units if two else units[0], near, two)

    def ranked(
        self,
        x: Array,
        kn: Array | None,
        scores: tuple[Array, Array, Array],
        chosen: Any,
        near: Array,
        two: bool = False,
    ) -> Any:
        """``chosen`` with the tile's examples ``near`` a tie ranked again (:meth:`_group`), in groups of a
        :data:`SCREEN_GROUP`-th of the tile, as many as they fill: the cost follows their number."""
        t = x.shape[0]
        g = max(1, t // SCREEN_GROUP)
        at = self._positions(near, -(-t // g) * g)

        def group(i: Any, chosen: Any) -> Any:
            return self._group(x, kn, lax.dynamic_slice_in_dim(at, i * g, g), scores, two)(chosen)

        # However many lie near a tie: with their candidates' rows summed in one reduction, groups of them cost
        # less than the whole tile against every unit even when most of the tile is near (100,000 x 1,000 on
        # 10x10, 3 epochs from a random map: 2.18 s with the tile ranked whole past a quarter, 1.60 s so).
        count = jnp.sum(near)
        return lax.fori_loop(0, (count + g - 1) // g, group, chosen)


class Tiling(NamedTuple):
    """An epoch's examples in tiles, as :func:`som_studio.core.plans.kernels.tiled_sums` lays them out.

    ``rows`` (N, D) or (N, 2 D), the examples and their known masks side by side; ``split(rows)`` gives
    ``(x, known)``; ``values(x, known)`` the rows the totals add; ``kept(first_row, fresh, size)`` which of a
    tile's rows count; ``loop(body, init)`` runs ``body(x, known, first_row, fresh, carry)`` over the tiles.
    """

    rows: Array
    split: Any
    values: Any
    kept: Any
    loop: Any
    n: int
    tile: int


def epoch_sums(screen: Screen, tiling: Tiling, zeros: Array, in_tile: bool = False) -> Array:
    """The per-unit totals (``zeros``' shape and dtype) of every example by its best unit, the CPU's way.

    Each tile's examples the product settles are scattered into the totals at once; those near a tie are
    marked, and ranked again after every tile, together, in groups of :data:`SCREEN_GATHERED` (at most a
    tile's), their scores computed again: ranked tile by tile, a group's fixed cost was a third of an epoch
    at 10x10. ``in_tile`` (many features: most examples lie near a tie, and their scores cost as much
    again): each tile's ranked in the tile, from the scores it has.
    """
    rows, split, values, kept, loop, n, tile = tiling
    m = screen.m
    if in_tile:

        def ranked(x: Array, kn: Array | None, first_row: Any, fresh: Any, acc: Array) -> Array:
            first = jnp.where(kept(first_row, fresh, x.shape[0]), screen(x, kn), m)
            return acc.at[first].add(values(x, kn), mode="drop")

        return loop(ranked, zeros)

    def scattered(x: Array, kn: Array | None, first_row: Any, fresh: Any, carry: Any) -> Any:
        acc, near_all, limit_all = carry
        first, near, limit = screen.settled(x, kn)
        keep = kept(first_row, fresh, x.shape[0])
        acc = acc.at[jnp.where(keep & ~near, first, m)].add(values(x, kn), mode="drop")
        # The rows the tile before marked stay marked (the last tile overlaps it); any tile's reach of a row is
        # one the row's candidates can be found within.
        was = lax.dynamic_slice_in_dim(near_all, first_row, x.shape[0])
        near_all = lax.dynamic_update_slice_in_dim(near_all, was | (keep & near), first_row, 0)
        return acc, near_all, lax.dynamic_update_slice_in_dim(limit_all, limit, first_row, 0)

    acc, near_all, limit_all = loop(scattered, (zeros, jnp.zeros((n,), bool), jnp.zeros((n,), screen.dtype)))

    def summed(acc: Array, at: Array, first: Array, x: Array, kn: Array | None) -> Array:
        return acc.at[jnp.where(at < n, first, m)].add(values(x, kn), mode="drop")

    # A group's scores no larger than a tile's.
    gathered = lambda at: split(take(rows, at, axis=0))
    return screen.near_ties(acc, near_all, limit_all, gathered, summed, min(tile, SCREEN_GATHERED))
