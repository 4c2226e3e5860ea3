"""The best-matching-unit searches of every batch epoch, one per kernel plan form, and the tiled form's sums.

Every form returns, per example, the flat index of the first unit (row-major)
at the smallest direct squared distance ``sum_d (w_d - x_d)^2``, the
reference's rule; :mod:`som_studio.core.plans.fused_plan` says which form a device
uses and how many examples each chunk takes. Every product passes
``precision=HIGHEST``: on a GPU a float32 product is otherwise TF32 (10-bit
mantissa), which picked the exact unit for only 62 % of the playbook's examples.

Exact float32 on every backend: the BMU search takes the direct form on a GPU
(no ``|w|^2 - 2 x.w`` cancellation at all); every expanded-form pass is taken
about the map's mean (:func:`~som_studio.core.plans.distances.map_centre`) and followed by a re-rank by the direct
form, or, in the CPU's tiled search, by a bound showing that no other unit can
be as near (:mod:`som_studio.core.plans.screen`). The epoch's other steps (the per-unit sums, the
neighbourhood weights and the update) are :mod:`som_studio.core.plans.neighbourhood`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from som_studio.core import jax_runtime
from som_studio.core.plans import screen
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
from som_studio.core.plans.fused_plan import (
    FEATURE_SLAB,
    SCREEN_DEFERRED,
    UNROLLED_FEATURES,
    WIDE_FEATURES,
    KernelPlan,
)
from som_studio.core.plans.neighbourhood import HIGHEST, accumulator

if TYPE_CHECKING:
    from jax import Array

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def split_known(data: Array) -> tuple[Array, Array]:
    """``(x, known)`` of examples with missing values (NaN): NaN set to 0, and a 0/1 mask in the data's dtype."""
    known = ~jnp.isnan(data)
    return jnp.where(known, data, 0), known.astype(data.dtype)


def in_chunks(fn, data: Any, chunk: int) -> Any:
    """``fn`` over examples in chunks of ``chunk``, results (one value per example: an array or a tuple)
    concatenated. ``data``: an (N, ...) array, or a tuple of them cut alike.

    Every chunk is whole, the last one ending at the last example (its first results, which the chunk
    before gave already, are dropped): padding the examples to whole chunks copied the whole table at
    every call, 15 % of an epoch at 5,000 x 2,048 on 20x20.
    """
    n = jax.tree.leaves(data)[0].shape[0]
    if chunk >= n:
        return fn(data)
    chunks = -(-n // chunk)
    if chunks * chunk == n:
        cut = jax.tree.map(lambda a: a.reshape(chunks, chunk, *a.shape[1:]), data)
        return jax.tree.map(lambda r: r.reshape(-1), lax.map(fn, cut))
    starts = jnp.minimum(jnp.arange(chunks, dtype=jnp.int32) * chunk, n - chunk)
    at = lambda start: jax.tree.map(lambda a: lax.dynamic_slice_in_dim(a, start, chunk, axis=0), data)
    out = lax.map(lambda start: fn(at(start)), starts)
    last = n - (chunks - 1) * chunk
    return jax.tree.map(lambda r: jnp.concatenate([r[:-1].reshape(-1), r[-1, chunk - last :]]), out)


def _with_known(fn: Any, data: Array, known: Array | None) -> tuple[Any, Any]:
    """``fn(x, known)`` over rows of ``data`` (and ``known``), cut alike, for :func:`in_chunks`."""
    if known is None:
        return (lambda x: fn(x, None)), data
    return (lambda xk: fn(*xk)), (data, known)


def direct(wt: Array, data: Array, chunk: int, known: Array | None = None, two: bool = False) -> Any:
    """Direct distances to all units, one first-argmin over them per example (``direct`` plan).

    ``known`` (N, D) 0/1: each example's known features (``data`` holds 0 at the others).
    ``two`` also gives the second-best unit (the distances are then materialised once).
    """

    search = _direct_search(wt)
    return in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


def _direct_search(wt: Array) -> Any:
    """The direct form's search of one chunk of examples: ``search(x, kn, two)`` (see :func:`direct`)."""

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:
        kt = None if kn is None else kn.T[:, :, None]
        dist = sq_distances(wt[:, None, :], x.T[:, :, None], kt)  # (n_c, M)
        if two:
            units = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
            return pick(dist, units, True)
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
    if cand.shape[2] > UNROLLED_FEATURES:
        return pick(row_sq_distances(cand, x, kn), units, two)
    diff = cand - x[:, None, :]
    if kn is not None:
        diff = jnp.where(kn[:, None, :] != 0, diff, jnp.zeros((), diff.dtype))
    dist = diff[:, :, 0] * diff[:, :, 0]
    for k in range(1, cand.shape[2]):
        dist = dist + diff[:, :, k] * diff[:, :, k]
    return pick(dist, units, two)


def _two_best_blocks(lo: Array) -> tuple[Array, Array]:
    """Per row of block minima ``lo`` (n, G): the two best blocks in row-major order (lower index first)."""
    g = lo.shape[1]
    col = lax.broadcasted_iota(jnp.int32, lo.shape, 1)
    g1 = first_min(lo)
    g2 = jnp.minimum(first_min(jnp.where(col == g1[:, None], jnp.asarray(jnp.inf, lo.dtype), lo)), g - 1)
    return jnp.minimum(g1, g2), jnp.maximum(g1, g2)


def _block_units(glo: Array, ghi: Array, block: int) -> Array:
    """(n, 2 block) flat unit indices of blocks ``glo`` then ``ghi``, in row-major order."""
    offs = jnp.arange(block, dtype=jnp.int32)[None, :]
    return jnp.concatenate([glo[:, None] * block + offs, ghi[:, None] * block + offs], axis=1)


def _block_padding(wt: Array, block: int) -> tuple[Array, Array]:
    """``(wz, pad)``: the map's units padded with zeros to whole blocks of ``block``, and per padded unit
    its score's padding (+inf for a padding unit, 0 for a real one)."""
    m = wt.shape[1]
    mp = max(1, -(-m // block)) * block
    real = jnp.arange(mp, dtype=jnp.int32) < m
    wz = jnp.pad(wt, ((0, 0), (0, mp - m)))
    return wz, jnp.where(real, jnp.zeros((), wt.dtype), jnp.asarray(jnp.inf, wt.dtype))


def _block_rerank(wt: Array, block: int) -> Any:
    """The matmul form's second pass: ``rerank(glo, ghi, x, kn, two)``, each example's best unit (and
    second) among the units of its two candidate blocks ``glo`` < ``ghi``, by the direct distance."""
    d, m = wt.shape
    g = max(1, -(-m // block))
    real = jnp.arange(g * block, dtype=jnp.int32) < m
    # Unit-major blocks (G, B, D): a candidate block is one contiguous run; padding units sit 1e30 away.
    far = jnp.where(real[None, :], _block_padding(wt, block)[0], jnp.asarray(1e30, wt.dtype))
    blocks = far.T.reshape(g, block, d)
    slabs = -(-d // FEATURE_SLAB) if d >= WIDE_FEATURES and g > 1 else 0
    if slabs:  # features padded with zeros to whole slabs: a zero difference adds nothing
        blocks = jnp.pad(blocks, ((0, 0), (0, 0), (0, slabs * FEATURE_SLAB - d)))

    def rerank(glo: Array, ghi: Array, x: Array, kn: Array | None, two: bool) -> Any:
        nc = x.shape[0]
        if g == 1:  # one block: its units are every example's candidates
            units = jnp.broadcast_to(jnp.arange(block, dtype=jnp.int32), (nc, block))
            return _candidates_best(jnp.broadcast_to(blocks, (nc, block, d)), x, kn, units, two)
        units = _block_units(glo, ghi, block)
        if slabs:
            return pick(_slab_distances(blocks, jnp.stack([glo, ghi], axis=1), x, kn, slabs), units, two)
        cand = take(blocks, jnp.stack([glo, ghi], axis=1), axis=0).reshape(nc, 2 * block, d)
        return _candidates_best(cand, x, kn, units, two)

    return rerank


def _matmul_search(wt: Array, block: int) -> Any:
    """The matmul form's search of one chunk of examples: ``search(x, kn, two)`` (see :func:`matmul`)."""
    m = wt.shape[1]
    g = max(1, -(-m // block))
    dtype = wt.dtype
    centre = map_centre(wt)
    wz, pad = _block_padding(wt - centre, block)
    # Padding units rank last in the product (+inf) and in the re-rank (1e30 away).
    wa_full = jnp.concatenate([wz, (jnp.sum(wz * wz, axis=0) + pad)[None, :]], axis=0)
    wa_known = jnp.concatenate([wz, square(wz), pad[None, :]], axis=0)
    rerank = _block_rerank(wt, block)

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:
        nc = x.shape[0]
        ones = jnp.ones((nc, 1), dtype)
        xc = moved(x, kn, centre)
        xa = jnp.concatenate([-2 * xc, ones] if kn is None else [-2 * xc, kn, ones], axis=1)
        wa = wa_full if kn is None else wa_known
        if g == 1:  # every unit is a candidate
            only = jnp.zeros((nc,), jnp.int32)
            return rerank(only, only, x, kn, two)

        score = jnp.matmul(xa, wa, precision=HIGHEST)  # (n_c, M)
        glo, ghi = _two_best_blocks(jnp.min(score.reshape(nc, g, block), axis=2))
        return rerank(glo, ghi, x, kn, two)

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
            take(cols, pick, axis=0).reshape(n, k, FEATURE_SLAB)
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
    the best block or is the least unit of the second best).
    """
    search = _matmul_search(wt, block)
    return in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


def tiled_sums(
    wt: Array,
    data: Array,
    tile: int,
    block: int,
    known: Array | None = None,
    count: Array | None = None,
    cpu: bool | None = None,
) -> Array:
    """Per-unit sums of an epoch's examples by their best units, searched and summed tile by tile (``tiled`` plan).

    A loop over tiles of ``tile`` examples: each tile's best units (on the CPU
    the screened search, :class:`~som_studio.core.plans.screen.Screen`; elsewhere the matmul form's,
    :func:`matmul`), then the tile's rows ``[x, 1]`` (``[x, known]`` with
    missing values) added to their units' float64 totals (the run's dtype if
    wider), as :func:`~som_studio.core.plans.neighbourhood.unit_sums` adds them.
    Nothing of size examples x units reaches memory whole. On the CPU the
    tile's rows are scattered into the totals; on an accelerator they are
    summed by one product ``onehot(bmus)^T @ [x, 1]``, which runs at its
    matmul rate where a scatter-add contends on a few units' totals. The CPU's
    float64 product is the slower there: at 1,000,000 x 30 on 10x10 the
    one-hot sums cost 0.34 s of an epoch and the scatter 0.08 s.
    The two ways differ only in the order of the float64 additions (~1e-16
    relative, below float32's rounding of the update but at a boundary).
    ``count``: only the first ``count`` examples count (a streamed batch's padding is dropped).
    ``cpu``: force the CPU's way (screened search, scatter) or an accelerator's (the matmul form's search,
    the product); default: the backend programs are traced for.

    Returns
    -------
    (M, D + 1) sums of examples and counts, or (M, 2 D) of known values and known counts, in
    :func:`~som_studio.core.plans.neighbourhood.accumulator`'s dtype, as ``unit_sums`` adds them before rounding.
    """
    d, m = wt.shape
    n = data.shape[0]
    dtype = data.dtype
    wide = accumulator(dtype)
    cpu = _on_cpu() if cpu is None else cpu
    units = jnp.arange(m, dtype=jnp.int32)
    rows = data if known is None else jnp.concatenate([data, known], axis=1)
    k = d + 1 if known is None else 2 * d
    tile = max(1, min(tile, n))

    def split(r: Array) -> tuple[Array, Array | None]:
        return (r, None) if known is None else (r[:, :d], r[:, d:])

    def values(x: Array, kn: Array | None) -> Array:
        # In the accumulator's precision: the sums are the scatter-add's to ~1e-16, whatever the tiling
        # (a streamed run's batches then end at the in-memory run's map).
        return jnp.concatenate([x, jnp.ones((x.shape[0], 1), dtype) if kn is None else kn], axis=1).astype(wide)

    def kept(first_row: Any, fresh: Any, size: int) -> Array:
        # Rows before ``fresh`` were summed by the tile before (the last tile ends at the last row), rows
        # past the count belong to no unit.
        row = first_row + jnp.arange(size)
        return row >= fresh if count is None else (row >= fresh) & (row < count)

    def tiles(body: Any, init: Any) -> Any:
        def step(t: Any, carry: Any) -> Any:
            # Every tile whole, the last one ending at the last row: one program for all of them (a shorter
            # last tile traced the screened search twice, and its trace is most of a run's start).
            start = jnp.minimum(t * tile, n - tile)
            return body(*split(lax.dynamic_slice_in_dim(rows, start, tile, axis=0)), start, t * tile, carry)

        return lax.fori_loop(0, -(-n // tile), step, init)

    if not cpu:
        search = _tiled_search(wt, block, False)

        def multiplied(x: Array, kn: Array | None, first_row: Any, fresh: Any, acc: Array) -> Array:
            first = jnp.where(kept(first_row, fresh, x.shape[0]), search(x, kn), m)
            hot = (first[:, None] == units[None, :]).astype(wide)  # (T, M)
            return acc + lax.dot_general(hot, values(x, kn), (((0,), (0,)), ((), ())), precision=HIGHEST)

        return tiles(multiplied, jnp.zeros((m, k), wide))

    # The CPU: the screened search, its rows scattered (:func:`som_studio.core.plans.screen.epoch_sums`).
    tiling = screen.Tiling(rows, split, values, kept, tiles, n, tile)
    return screen.epoch_sums(screen.Screen(wt), tiling, jnp.zeros((m, k), wide), in_tile=d > SCREEN_DEFERRED)


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
    return in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), chunk)


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
    real = jnp.arange(mp, dtype=jnp.int32) < m
    centre = map_centre(wt)
    wm = jnp.where(
        real[None, :], wp - centre, wp
    )  # about the map's centre (:func:`~som_studio.core.plans.distances.map_centre`)
    c = jnp.where(real, jnp.sum(wm * wm, axis=0), jnp.asarray(jnp.inf, dtype))
    # |w|^2 - 2 x.w as one product: [-2x, 1] @ [w; |w|^2] (D + 1 terms).
    wa = jnp.concatenate([wm, c[None, :]], axis=0)
    # Block-major (G, D, B): a gathered block is one contiguous run.
    blocks = wp.reshape(d, g, b).transpose(1, 0, 2)

    wz = jnp.where(real[None, :], wm, jnp.zeros((), dtype))
    pad = jnp.where(real, jnp.zeros((), dtype), jnp.asarray(jnp.inf, dtype))
    wa_known = jnp.concatenate([wz, square(wz), pad[None, :]], axis=0)

    def search(x: Array, kn: Array | None, two: bool = False) -> Any:  # (n_c, D) -> (n_c,)
        nc = x.shape[0]
        wa_ = wa if kn is None else wa_known
        ones = jnp.ones((nc, 1), dtype)
        xc = moved(x, kn, centre)
        xa = jnp.concatenate([-2 * xc, ones] if kn is None else [-2 * xc, kn, ones], axis=1)

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
        cand = take(blocks, jnp.stack([glo, ghi], axis=1), axis=0)  # (n_c, 2, D, B)
        cand = cand.transpose(2, 0, 1, 3).reshape(d, nc, 2 * b)
        kt = None if kn is None else kn.T[:, :, None]
        dist = sq_distances(cand, x.T[:, :, None], kt)
        units = _block_units(glo, ghi, b)
        if g == 1:  # both candidate blocks are the one block
            dist, units = dist[:, :b], units[:, :b]
        return pick(dist, units, two)

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
    if plan.form == "tiled":
        return _tiled_search(wt, plan.block)
    if plan.form == "matmul":
        return _matmul_search(wt, plan.block)
    return _blocked_search(wt, plan.block)


def _tiled_search(wt: Array, block: int, cpu: bool | None = None) -> Any:
    """The tiled form's search: on the CPU screened (:class:`~som_studio.core.plans.screen.Screen`), elsewhere
    the matmul form's in tiles (``cpu``: force one, for tests; default: the backend programs are traced for).
    ``search(x, kn, two)``.

    Chosen while tracing, not by ``lax.platform_dependent``: that traces both searches into every program,
    and the screened one's branches with them tripled the trace of a run's programs (0.57 s against 0.10)."""
    if cpu is None:
        cpu = _on_cpu()
    if not cpu:
        return _matmul_search(wt, block)
    return screen.Screen(wt)


def _on_cpu() -> bool:
    """Whether the programs traced now run on the CPU: the default backend's, where every trainer places them."""
    return jax.default_backend() == "cpu"


def bmus(wt: Array, data: Array, plan: KernelPlan, known: Array | None = None) -> Array:
    """Flat index of each example's best-matching unit by ``plan``: a unit at the smallest distance.

    Among units exactly as near (integer data has them), the direct form and the CPU's screened search take the
    first in row-major order, as NumPy does; the product forms (``matmul``, ``blocked``, the accelerator's
    ``tiled``) rank their candidate blocks by the product, whose rounding may put a later tied unit first.

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
    if plan.form == "tiled":
        return _tiled(wt, data, plan, known)
    if plan.form == "matmul":
        return matmul(wt, data, plan.chunk, plan.block, known)
    return blocked(wt, data, plan.chunk, plan.block, known)


def best_two(wt: Array, data: Array, plan: KernelPlan, known: Array | None = None) -> tuple[Array, Array]:
    """Each example's best and second-best unit by ``plan``'s search (on ties as :func:`bmus`).

    The quality measures' search (QE, TE, hits and labels), the very one training
    runs: one pass over the data gives both units. Arguments as :func:`bmus`.
    """
    if plan.form == "direct":
        return direct(wt, data, plan.chunk, known, two=True)
    if plan.form == "tiled":
        return _tiled(wt, data, plan, known, two=True)
    if plan.form == "matmul":
        return matmul(wt, data, plan.chunk, plan.block, known, two=True)
    return blocked(wt, data, plan.chunk, plan.block, known, two=True)


def _tiled(wt: Array, data: Array, plan: KernelPlan, known: Array | None = None, two: bool = False) -> Any:
    """The tiled form's search alone over ``data`` in tiles (:func:`_tiled_search`)."""
    search = _tiled_search(wt, plan.block)
    return in_chunks(*_with_known(lambda x, kn: search(x, kn, two), data, known), plan.chunk)
