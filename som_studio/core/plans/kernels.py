"""The pieces of every batch epoch: best-matching-unit searches (one per kernel plan form), sums, neighbourhoods.

Every form returns, per example, the flat index of the first unit (row-major)
at the smallest direct squared distance ``sum_d (w_d - x_d)^2``, the
reference's rule; :mod:`som_studio.core.plans.fused_plan` says which form a device
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
from som_studio.core.plans.fused_plan import FEATURE_SLAB, UNROLLED_FEATURES, WIDE_FEATURES, KernelPlan
from som_studio.core.som.problem import MIN_WEIGHT
from som_studio.core.som.topology import HEX_ROW
from som_studio.run_settings import Topology

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

HIGHEST = lax.Precision.HIGHEST


def sq_distances(w: Array, x: Array, known: Array | None = None, loop: bool = True) -> Array:
    """``sum_d (w_d - x_d)^2`` summed over features in order, as the NumPy reference does
    (unrolled up to :data:`UNROLLED_FEATURES` features, in a loop past them; with ``loop``
    false, one vectorised reduction past them: for one example, whose differences are no
    larger than the map, the fastest way).

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
    if w.shape[0] > UNROLLED_FEATURES:
        # A loop over features: the same order, one plane of distances in memory, a small program.
        return lax.fori_loop(1, w.shape[0], lambda k, a: a + term(k), acc)
    for k in range(1, w.shape[0]):
        acc = acc + term(k)
    return acc


def split_known(data: Array) -> tuple[Array, Array]:
    """``(x, known)`` of examples with missing values (NaN): NaN set to 0, and a 0/1 mask in the data's dtype."""
    known = ~jnp.isnan(data)
    return jnp.where(known, data, 0), known.astype(data.dtype)


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


def _in_chunks(fn, data: Array, chunk: int) -> Any:
    """``fn`` over examples in chunks of ``chunk`` (the last padded), results (an array or a tuple) concatenated."""
    n, d = data.shape
    if chunk >= n:
        return fn(data)
    chunks = -(-n // chunk)
    xp = jnp.pad(data, ((0, chunks * chunk - n), (0, 0))).reshape(chunks, chunk, d)
    return jax.tree.map(lambda r: r.reshape(-1)[:n], lax.map(fn, xp))


def _with_known(fn: Any, data: Array, known: Array | None) -> tuple[Any, Array]:
    """``fn(x, known)`` over rows of ``data`` (and ``known``) as one array, for :func:`_in_chunks`."""
    if known is None:
        return (lambda xk: fn(xk, None)), data
    d = data.shape[1]
    return (lambda xk: fn(xk[:, :d], xk[:, d:])), jnp.concatenate([data, known], axis=1)


def _square(w: Array) -> Array:
    """``w * w``, an overflow to inf held at the largest finite number.

    The masked products multiply it by 0 for unknown features: units moved far
    away (1e30, the sharded trainers' padding) must give a huge score, never
    ``0 * inf = NaN``.
    """
    return jnp.minimum(w * w, jnp.finfo(w.dtype).max)


def direct(wt: Array, data: Array, chunk: int, known: Array | None = None, two: bool = False) -> Any:
    """Direct distances to all units, one first-argmin over them per example (``direct`` plan).

    ``known`` (N, D) 0/1: each example's known features (``data`` holds 0 at the others).
    ``two`` also gives the second-best unit (the distances are then materialised once).
    """

    search = _direct_search(wt)
    return _in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


def _direct_search(wt: Array) -> Any:
    """The direct form's search of one chunk of examples: ``search(x, kn, two)`` (see :func:`direct`)."""

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:
        kt = None if kn is None else kn.T[:, :, None]
        dist = sq_distances(wt[:, None, :], x.T[:, :, None], kt)  # (n_c, M)
        if two:
            units = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
            return _pick(dist, units, True)
        # jnp.argmin is one variadic reduction (value and index together) whose ties
        # go to the first index: XLA fuses the distances into it, so the n_c x M
        # matrix need not exist, and both halves read the very same values.
        return jnp.argmin(dist, axis=1).astype(jnp.int32)

    return search


def _candidates_best(cand: Array, x: Array, kn: Array | None, units: Array, two: bool) -> Array | tuple[Array, Array]:
    """The first (and second) smallest direct distance among each example's candidate units.

    ``cand`` (n, k, D) holds the candidates' weights in row-major order of their
    units ``units`` (n, k); ``x`` (n, D); ``kn`` (n, D) 0/1 or ``None``. Few
    features are summed one by one in order, as the reference sums them; many
    in one vectorised reduction (the candidates are few, the features many).
    """
    diff = cand - x[:, None, :]
    if kn is not None:
        diff = jnp.where(kn[:, None, :] != 0, diff, jnp.zeros((), diff.dtype))
    if cand.shape[2] <= UNROLLED_FEATURES:
        dist = diff[:, :, 0] * diff[:, :, 0]
        for k in range(1, cand.shape[2]):
            dist = dist + diff[:, :, k] * diff[:, :, k]
    else:
        dist = jnp.sum(diff * diff, axis=2)
    return _pick(dist, units, two)


def _pick(dist: Array, units: Array, two: bool) -> Array | tuple[Array, Array]:
    """The unit of ``units`` (n, k; row-major order) at each row's first minimum of ``dist``; ``two``: and the next."""
    if not two:
        return _first_min(dist, units)
    dist = lax.optimization_barrier(dist)
    col = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    i1 = _first_min(dist)
    i2 = _first_min(jnp.where(col == i1[:, None], jnp.asarray(jnp.inf, dist.dtype), dist))
    pick = lambda i: jnp.take_along_axis(units, i[:, None], axis=1)[:, 0]
    return pick(i1), pick(i2)


def _two_best_blocks(lo: Array) -> tuple[Array, Array]:
    """Per row of block minima ``lo`` (n, G): the two best blocks in row-major order (lower index first)."""
    g = lo.shape[1]
    col = lax.broadcasted_iota(jnp.int32, lo.shape, 1)
    g1 = _first_min(lo)
    g2 = jnp.minimum(_first_min(jnp.where(col == g1[:, None], jnp.asarray(jnp.inf, lo.dtype), lo)), g - 1)
    return jnp.minimum(g1, g2), jnp.maximum(g1, g2)


def _block_units(glo: Array, ghi: Array, block: int) -> Array:
    """(n, 2 block) flat unit indices of blocks ``glo`` then ``ghi``, in row-major order."""
    offs = jnp.arange(block, dtype=jnp.int32)[None, :]
    return jnp.concatenate([glo[:, None] * block + offs, ghi[:, None] * block + offs], axis=1)


def _two_best_blocks_t(lo: Array) -> tuple[Array, Array]:
    """:func:`_two_best_blocks` of block minima laid out (G, n): each reduction runs along the examples."""
    g = lo.shape[0]
    lo = lax.optimization_barrier(lo)
    row = lax.broadcasted_iota(jnp.int32, lo.shape, 0)
    big = jnp.iinfo(jnp.int32).max

    def first(v: Array) -> Array:
        return jnp.min(jnp.where(v == jnp.min(v, axis=0, keepdims=True), row, big), axis=0)

    g1 = first(lo)
    g2 = jnp.minimum(first(jnp.where(row == g1[None, :], jnp.asarray(jnp.inf, lo.dtype), lo)), g - 1)
    return jnp.minimum(g1, g2), jnp.maximum(g1, g2)


def _matmul_search(wt: Array, block: int, transposed: bool = False) -> Any:
    """The matmul form's search of one chunk of examples: ``search(x, kn, two)`` (see :func:`matmul`).

    ``transposed``: on the CPU, the scores laid out units x examples, so the block minima and the choice
    of the two best blocks reduce across rows of a few hundred examples, whole vectors at a time, where
    the examples x units layout reduces along each example's short row. The same numbers are compared,
    so the same units are chosen; measured on a tile of 174 examples at 30 features on 10x10 (one core,
    1,000,000 examples): the search 347 ms of process CPU time against 447 ms, the scores with their
    two best blocks 190 ms against 269 ms. An accelerator keeps the examples x units layout (the one
    measured there).
    """
    d, m = wt.shape
    g = max(1, -(-m // block))
    mp = g * block
    dtype = wt.dtype
    real = jnp.arange(mp, dtype=jnp.int32) < m
    wz = jnp.pad(wt, ((0, 0), (0, mp - m)))
    # Padding units rank last in the product (+inf) and in the re-rank (1e30 away).
    pad = jnp.where(real, jnp.zeros((), dtype), jnp.asarray(jnp.inf, dtype))
    wa_full = jnp.concatenate([wz, (jnp.sum(wz * wz, axis=0) + pad)[None, :]], axis=0)
    wa_known = jnp.concatenate([wz, _square(wz), pad[None, :]], axis=0)
    # Unit-major blocks (G, B, D): a candidate block is one contiguous run.
    far = jnp.where(real[None, :], wz, jnp.asarray(1e30, dtype))
    blocks = far.T.reshape(g, block, d)
    slabs = -(-d // FEATURE_SLAB) if d >= WIDE_FEATURES and g > 1 else 0
    if slabs:  # features padded with zeros to whole slabs: a zero difference adds nothing
        blocks = jnp.pad(blocks, ((0, 0), (0, 0), (0, slabs * FEATURE_SLAB - d)))

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:
        nc = x.shape[0]
        ones = jnp.ones((nc, 1), dtype)
        xa = jnp.concatenate([-2 * x, ones] if kn is None else [-2 * x, kn, ones], axis=1)
        wa = wa_full if kn is None else wa_known
        if g == 1:  # every unit is a candidate
            units = jnp.broadcast_to(jnp.arange(block, dtype=jnp.int32), (nc, block))
            return _candidates_best(jnp.broadcast_to(blocks, (nc, block, d)), x, kn, units, two)

        def rows_first(xa: Array, wa: Array) -> tuple[Array, Array]:
            score = jnp.matmul(xa, wa, precision=HIGHEST)  # (n_c, M)
            return _two_best_blocks(jnp.min(score.reshape(nc, g, block), axis=2))

        def units_first(xa: Array, wa: Array) -> tuple[Array, Array]:
            score_t = lax.dot_general(wa, xa, (((0,), (1,)), ((), ())), precision=HIGHEST)  # (M, n_c)
            return _two_best_blocks_t(jnp.min(score_t.reshape(g, block, nc), axis=1))

        if transposed:  # the CPU's; an accelerator keeps the layout measured there
            glo, ghi = lax.platform_dependent(xa, wa, cpu=units_first, default=rows_first)
        else:
            glo, ghi = rows_first(xa, wa)
        units = _block_units(glo, ghi, block)
        if slabs:
            return _pick(_slab_distances(blocks, jnp.stack([glo, ghi], axis=1), x, kn, slabs), units, two)
        cand = jnp.take(blocks, jnp.stack([glo, ghi], axis=1), axis=0).reshape(nc, 2 * block, d)
        return _candidates_best(cand, x, kn, units, two)

    return search


def _slab_distances(blocks: Array, pick: Array, x: Array, kn: Array | None, slabs: int) -> Array:
    """Direct squared distances of each example of ``x`` (n, D) to the units of its two candidate blocks
    ``pick`` (n, 2) of ``blocks`` (G, B, slabs x FEATURE_SLAB, zero-padded), summed slab by slab of features.

    One slab's candidates, differences and squares are a few hundred kilobytes that stay in the cache; the
    whole rows' would be tens of megabytes through memory for a chunk of very wide examples. Returns (n, 2 B).
    """
    n, d = x.shape
    width = slabs * FEATURE_SLAB
    xp = jnp.pad(x, ((0, 0), (0, width - d)))
    kp = None if kn is None else jnp.pad(kn, ((0, 0), (0, width - d)))
    k = 2 * blocks.shape[1]

    def slab(i: Any, total: Array) -> Array:
        cols = lax.dynamic_slice_in_dim(blocks, i * FEATURE_SLAB, FEATURE_SLAB, axis=2)
        diff = (
            jnp.take(cols, pick, axis=0).reshape(n, k, FEATURE_SLAB)
            - lax.dynamic_slice_in_dim(xp, i * FEATURE_SLAB, FEATURE_SLAB, axis=1)[:, None, :]
        )
        if kp is not None:
            known = lax.dynamic_slice_in_dim(kp, i * FEATURE_SLAB, FEATURE_SLAB, axis=1)
            diff = jnp.where(known[:, None, :] != 0, diff, jnp.zeros((), diff.dtype))
        return total + jnp.sum(diff * diff, axis=2)

    return lax.fori_loop(0, slabs, slab, jnp.zeros((n, k), x.dtype))


def matmul(
    wt: Array,
    data: Array,
    chunk: int,
    block: int,
    known: Array | None = None,
    two: bool = False,
    transposed: bool = False,
) -> Any:
    """``|w|^2 - 2 x.w`` (HIGHEST) to all units in one product, then the best two blocks re-ranked (``matmul`` plan).

    1. one matrix product per chunk of examples ranks every unit by the
       expanded form (the arithmetic runs at the machine's matmul rate; nothing
       per feature is unrolled); each block of ``block`` consecutive units
       keeps its minimum and each example its two best blocks;
    2. the units of those two blocks are ranked again by the direct distance
       ``sum (w - x)^2``, the first minimum in row-major order wins.

    The product's rounding (~1e-7 x (|x|^2 + |w|^2)) can only lose the best
    unit if three blocks lie within it; the re-rank settles every choice
    exactly. With ``known``, ``|w|^2`` counts each example's known features
    only: one product ``[-2x, known, 1] @ [w; w*w; pad]``, then the masked
    direct form. ``two`` also gives each example's second-best unit (it lies in
    the best block or is the least unit of the second best). ``transposed``: the
    scores laid out units x examples (the tiled form's; see :func:`_matmul_search`).
    """
    search = _matmul_search(wt, block, transposed)
    return _in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


def tiled_sums(
    wt: Array,
    data: Array,
    tile: int,
    block: int,
    known: Array | None = None,
    count: Array | None = None,
    scatter: bool | None = None,
) -> Array:
    """Per-unit sums of an epoch's examples by their best units, searched and summed tile by tile (``tiled`` plan).

    A loop over tiles of ``tile`` examples: each tile's best units by the
    matmul form's exact search (:func:`matmul`), then the tile's rows
    ``[x, 1]`` (``[x, known]`` with missing values) added to their units'
    float64 totals (the run's dtype if wider), as :func:`unit_sums` adds them.
    The examples x units scores and the candidates of a tile stay in the
    cache: nothing of size examples x units reaches memory. On the CPU the
    tile's rows are scattered into the totals; on an accelerator they are
    summed by one product ``onehot(bmus)^T @ [x, 1]``, which runs at its
    matmul rate where a scatter-add contends on a few units' totals. The CPU's
    float64 product is the slower there: at 1,000,000 x 30 on 10x10 the
    one-hot sums cost 0.34 s of an epoch and the scatter 0.08 s.
    The two ways differ only in the order of the float64 additions (~1e-16
    relative, below float32's rounding of the update but at a boundary).
    ``count``: only the first ``count`` examples count (a streamed batch's padding is dropped).
    ``scatter``: force one way (default: the CPU's on the CPU, the product elsewhere).

    Returns
    -------
    (M, D + 1) sums of examples and counts, or (M, 2 D) of known values and known counts, in
    :func:`accumulator`'s dtype, as :func:`unit_sums` adds them before rounding.
    """
    d, m = wt.shape
    n = data.shape[0]
    dtype = data.dtype
    wide = accumulator(dtype)
    search = _matmul_search(wt, block, transposed=True)
    units = jnp.arange(m, dtype=jnp.int32)

    def scattered(first: Array, vals: Array, acc: Array) -> Array:
        return acc.at[first].add(vals, mode="drop")

    def multiplied(first: Array, vals: Array, acc: Array) -> Array:
        hot = (first[:, None] == units[None, :]).astype(wide)  # (T, M)
        return acc + lax.dot_general(hot, vals, (((0,), (0,)), ((), ())), precision=HIGHEST)

    def tile_sums(x: Array, kn: Array | None, first_row: Any, acc: Array) -> Array:
        first = search(x, kn)
        if count is not None:  # rows past the count belong to no unit
            first = jnp.where(first_row + jnp.arange(x.shape[0]) < count, first, m)
        # In the accumulator's precision: the sums are the scatter-add's to ~1e-16, whatever the tiling
        # (a streamed run's batches then end at the in-memory run's map).
        vals = jnp.concatenate([x, jnp.ones((x.shape[0], 1), dtype) if kn is None else kn], axis=1).astype(wide)
        if scatter is not None:
            return (scattered if scatter else multiplied)(first, vals, acc)
        return lax.platform_dependent(first, vals, acc, cpu=scattered, default=multiplied)

    rows = data if known is None else jnp.concatenate([data, known], axis=1)

    def split(r: Array) -> tuple[Array, Array | None]:
        return (r, None) if known is None else (r[:, :d], r[:, d:])

    k = d + 1 if known is None else 2 * d
    tile = max(1, min(tile, n))
    full = n // tile

    def body(t: Any, acc: Array) -> Array:
        r = lax.dynamic_slice_in_dim(rows, t * tile, tile, axis=0)
        return tile_sums(*split(r), t * tile, acc)

    acc = lax.fori_loop(0, full, body, jnp.zeros((m, k), wide))
    if n > full * tile:  # the last, shorter tile
        acc = tile_sums(*split(rows[full * tile :]), full * tile, acc)
    return acc


def blocked(wt: Array, data: Array, chunk: int, block: int, known: Array | None = None, two: bool = False) -> Any:
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

    With ``known`` (missing values), pass 1's product is ``[-2x, known, 1] @
    [w; w*w; pad]`` (``|w|^2`` over each example's known features; ``pad`` is
    +inf for padding units, 0 for real ones, and padding units are 0 in the
    other rows so no ``0 * inf`` arises) and pass 2 the masked direct form.
    """
    search = _blocked_search(wt, block)
    return _in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


def _blocked_search(wt: Array, block: int) -> Any:
    """The blocked form's search of one chunk of examples: ``search(x, kn, two)`` (see :func:`blocked`)."""
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

    real = jnp.arange(mp, dtype=jnp.int32) < m
    wz = jnp.where(real[None, :], wp, jnp.zeros((), dtype))
    pad = jnp.where(real, jnp.zeros((), dtype), jnp.asarray(jnp.inf, dtype))
    wa_known = jnp.concatenate([wz, _square(wz), pad[None, :]], axis=0)

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:  # (n_c, D) -> (n_c,)
        nc = x.shape[0]
        wa_ = wa if kn is None else wa_known
        ones = jnp.ones((nc, 1), dtype)
        xa = jnp.concatenate([-2 * x, ones] if kn is None else [-2 * x, kn, ones], axis=1)

        def block_min(carry, gi):
            wb = lax.dynamic_slice_in_dim(wa_, gi * b, b, axis=1)
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
        kt = None if kn is None else kn.T[:, :, None]
        dist = sq_distances(cand, x.T[:, :, None], kt)
        units = _block_units(glo, ghi, b)
        if g == 1:  # both candidate blocks are the one block
            dist, units = dist[:, :b], units[:, :b]
        return _pick(dist, units, two)

    return search


def chunk_search(wt: Array, plan: KernelPlan) -> Any:
    """``plan``'s search of one chunk of examples, the map's part made once: ``search(x, known, two)``.

    ``x`` (n, D), ``known`` (n, D) 0/1 or ``None``; ``two`` also gives each example's second-best unit.
    What the search needs of the map alone (its padded, unit-major blocks, ``|w|^2``) is made here,
    outside any loop over chunks that calls ``search``: the compiler does not always hoist it (a
    transpose of the whole map in every chunk of a quality pass at 2,048 features).
    """
    if plan.form == "direct":
        return _direct_search(wt)
    if plan.form in ("matmul", "tiled"):
        return _matmul_search(wt, plan.block, transposed=plan.form == "tiled")
    return _blocked_search(wt, plan.block)


def bmus(wt: Array, data: Array, plan: KernelPlan, known: Array | None = None) -> Array:
    """Flat index of each example's best-matching unit by ``plan`` (first in row-major order on ties).

    Parameters
    ----------
    wt : (D, M) codebook, feature-major.
    data : (N, D) examples.
    plan : the device's kernel plan (:func:`som_studio.core.plans.fused_plan.choose`).
    known : (N, D) 0/1, each example's known features (missing values; ``data`` is 0 at the others), or
        ``None`` when every feature is known.

    Returns
    -------
    (N,) int32
    """
    if plan.form == "direct":
        return direct(wt, data, plan.chunk, known)
    if plan.form in ("matmul", "tiled"):
        return matmul(wt, data, plan.chunk, plan.block, known, transposed=plan.form == "tiled")
    return blocked(wt, data, plan.chunk, plan.block, known)


def best_two(wt: Array, data: Array, plan: KernelPlan, known: Array | None = None) -> tuple[Array, Array]:
    """Each example's best and second-best unit by ``plan``'s search (first in row-major order on ties).

    The quality measures' search (QE, TE, hits and labels), the very one training
    runs: one pass over the data gives both units. Arguments as :func:`bmus`.
    """
    if plan.form == "direct":
        return direct(wt, data, plan.chunk, known, two=True)
    if plan.form in ("matmul", "tiled"):
        return matmul(wt, data, plan.chunk, plan.block, known, two=True, transposed=plan.form == "tiled")
    return blocked(wt, data, plan.chunk, plan.block, known, two=True)


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
    return jnp.take(g, jnp.minimum(dist, extent - 1), axis=0)


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
    return jnp.take(prof, k2, axis=0)


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
