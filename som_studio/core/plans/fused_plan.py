"""How the batch implementations search the best-matching units: the kernel plan, pure arithmetic, no JAX.

A *kernel plan* is the way one device finds each example's best-matching unit
(BMU) in a batch epoch. It is chosen per device from the backend, the map's
units, the features, the examples, the precision and a memory budget
(:func:`choose`), recorded by every JAX run as ``extra.kernel_plan`` (its short
string, e.g. ``"direct/argmin-all/chunk=4096"``), and shared by the
implementations (:mod:`som_studio.core.plans.kernels`), the quality measures, projection and their memory estimates
(:mod:`som_studio.core.impls.memory`, which must not import JAX). A cost model
(:func:`predict`, :func:`rank`) predicts each plan's seconds per epoch from the
sizes and the device's measured ceilings (matmul FLOP/s and memory bandwidth)
with a few constants per device family (:data:`COSTS`); the plan predicted
fastest runs. Four forms, each finding a unit at the smallest direct distance ``sum (w - x)^2``: among units
exactly as near (integer data has them), the direct form and the CPU's screened tiled search take the first
in row-major order, as NumPy does; the product forms rank their candidate blocks by the product, whose
rounding may put a later tied unit's block first:

``direct``
    ``sum (w - x)^2`` to *every* unit and one fused first-argmin over all of
    them, examples in chunks bounded by the budget. One reduction kernel per
    chunk; no cancellation at all. Measured on an H100 (``../shared/GPU.md``):
    the fastest exact form with few features (162 ms against 299 ms for the
    matmul form, 1024x1024 map, 100k x 3).
``matmul``
    ``|w|^2 - 2 x.w`` with one HIGHEST-precision product against all units,
    each block of a few consecutive units (on the CPU as the cost model picks them, else
    :func:`matmul_block`) keeping its minimum,
    the two best blocks re-ranked by the direct form, so the product's
    rounding (~1e-7 x (|x|^2 + |w|^2), more than the distances between near
    units late in training) picks no farther unit unless two other blocks' minima
    lie within that rounding of the best unit's; with very wide rows
    (:data:`WIDE_FEATURES`) the re-rank runs slab by slab of features. The arithmetic runs at
    the machine's matrix-product rate: 20x faster than direct at 50 features
    on the H100, and the CPU's form but for few features on a big map.
``blocked``
    ``jax-fused-batch``'s CPU search: a scan over blocks of :data:`UNIT_BLOCK`
    units ranked by the expanded form (the small product fused into the
    minimum), the two best blocks re-ranked by the direct form. Tuned for the
    CPU's caches (measured here: ~3x faster than the direct form); with few
    features on a big map only, since the re-rank gathers two blocks of 512
    units per example.
``tiled``
    many examples on a small map: a loop over tiles of examples, each searched and summed per unit
    in the same trip (:func:`som_studio.core.plans.kernels.tiled_sums`), so the examples x units
    scores never reach memory whole. On the CPU the search is screened: one product's best unit is
    kept wherever no other unit can be as near within the rounding, the few examples nearer a tie
    ranked directly against the few units within reach (:data:`SCREEN_GROUP`), and the rows scattered
    into the sums; tiles of thousands of examples, whose products run on every core. On an accelerator
    each tile takes the matmul form's search (blocks of :data:`MIN_MATMUL_BLOCK` units) and one
    product ``onehot^T @ [x, 1]`` for its sums. A search alone (quality, projection) takes the same
    search in tiles, on small maps only: a big map's tile holds a few examples, and each few read the
    whole map (the cost model's
    map term).

Tests and benchmarks force a form with the ``SOM_STUDIO_KERNEL_PLAN``
environment variable or :func:`forced`; the chunk sizes still follow the budget.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from som_studio.i18n import _

FORMS = ("direct", "matmul", "blocked", "tiled")
ENV_VAR = "SOM_STUDIO_KERNEL_PLAN"

# Units per block of the blocked argmin. Measured on a 2-core AVX-512 CPU
# (playbook workload, 32,400 units): 256-1024 are within noise of each other;
# from 2048 the per-block product is no longer fused into the minimum and the
# epoch gets ~8x slower.
UNIT_BLOCK = 512
# Bound on one sample chunk's working set in the blocked argmin, in elements:
# 8 Mi elements, 32 MiB in float32, whatever N and M are (the playbook's 1000
# examples fit in one chunk).
ARGMIN_ELEMENTS = 1 << 23
# (the block minima add chunk x blocks elements, small next to these)

# Bytes one chunk of the direct or matmul search may hold, by backend. On an
# accelerator a chunk is one kernel over examples x units: the larger, the fewer
# loop trips (~22 us each on the H100); 1 GiB of a device's tens leaves room for
# the rest of the epoch. On the CPU a chunk is half the L3 of the machine measured
# (2-core EPYC, 32 MiB): wide rows on small maps, whose chunks this bounds (their
# candidate rows), whole epochs alternated with 32 MiB, four rounds, medians:
# 5,000 x 2,048 on 20x20 44.3 -> 35.8 ms, 10,000 x 784 on 40x30 67.6 -> 57.0,
# 200,000 x 1,000 on 10x10 318 -> 286, 100,000 x 784 on 10x10 125 -> 118, 50,000 x
# 128 on 50x50 171 -> 158; torchsom's shape and 10,000 x 300 on 40x30 unchanged.
CHUNK_BUDGET = {"cpu": 16 << 20, "gpu": 1 << 30, "tpu": 1 << 30}
# Bytes of scores one chunk of the CPU's matmul (and direct) search may hold: they stay in the cache from the
# product that writes them to the minima that read them. The matmul search alone, 10,000 examples, chunks whose
# scores hold 8 MiB against 32: 3 features on 100x100 33.9 -> 15.0 ms, 8 on 100x100 25.2 -> 16.5, 20 on 100x100
# 31-110 -> 28.3, 3 on 240x135 81.6 -> 40.9; 4 MiB and less, more trips, no faster. Whole epochs, alternated
# with the tree before: 10,000 x 5 on 100x100 30-42 -> 19 ms, x 8 32-35 -> 17, x 20 32-69 -> 25-30. Wide rows
# on small maps hold few scores: an 8 MiB budget in all read 1.35x slower in half their epochs, 16 faster.
CPU_SCORES_BYTES = 8 << 20
# Both sizes hold where the map stays in the cache between trips. A map larger than the CPU's budget is
# streamed whole every trip, and chunks then take this budget, their scores uncapped: 10,000 x 784 on 100x100
# (a 31 MB map) read 590-632 ms an epoch with chunks of 167 examples against 551-577 ms with 334.
CPU_STREAMED_BUDGET = 32 << 20
# Units per block of the matmul form: each example re-ranks two blocks directly,
# gathering 2 x block x features numbers, a memory-bound step that outgrows the
# product's block minima as features grow, while each block is one more minimum to
# rank. On an accelerator, about MATMUL_BLOCK_FEATURES / features units (a power of
# two) within [MIN_MATMUL_BLOCK, MAX_MATMUL_BLOCK] (bench/kernel_plans.py, 10,000
# examples, 40x30 map: best 32 at 10 features, 8-16 at 50, 4 at 300 and 784; smaller
# blocks not tried there). On the CPU the cost model picks among CPU_MATMUL_BLOCKS:
# measured with --blocks 1,2,4,8,16,32 (50,000-100,000 examples), one unit from 50
# features on 10x10 and from 100 on 40x30, 16 with 10-50 features on 100x100; at wide
# rows on small maps its searches 1.6-2.1x faster than the rule's blocks of 4. The
# guarantee is the same kind for any block: the product's best two blocks hold the
# nearest unit unless a third lies within its rounding (no other unit than the exact
# nearest in 300,000 examples of 1,000 features, uniform, clustered and after two
# mean steps, with blocks of 1, 2 and 4).
MATMUL_BLOCK_FEATURES = 512
MIN_MATMUL_BLOCK, MAX_MATMUL_BLOCK = 4, 32
CPU_MATMUL_BLOCKS = (1, 2, 4, 8, 16, 32)

# Bytes one tile of the tiled form holds, as per_example_elements counts them (scores, candidates, one-hot rows
# and values of its examples; the CPU's screened search holds its scores and a few rows of them). On the CPU a
# tile is large enough for XLA to run its product on every core: measured with the screened search, 1,000,000 x
# 30 on 10x10 best at 5,500-8,200 examples (145 ms against 176 at 2,048), 1,000,000 x 10 on 20x20 at 2,000-4,000
# (232-253 ms against 320 at 8,192), 1,000,000 x 50 on 20x20 at 2,000-4,000; 16 MiB gives 5,556, 3,847 and 2,370.
# On an accelerator a tile is one kernel, as large as a chunk.
TILE_BYTES = {"cpu": 1 << 24, "gpu": 1 << 30, "tpu": 1 << 30}

SCREEN_GROUP = 32
"""The CPU's tiled epoch (:func:`som_studio.core.plans.kernels.tiled_sums`) screens each tile's examples and
ranks again those near a tie, in groups of a 32nd of the tile, as many groups as they fill: each against the
few units within its reach (at most :data:`SCREEN_CANDIDATES`), a group with an example among more against
every unit."""

SCREEN_GATHERED = 256
"""The CPU's tiled epoch ranks its examples near a tie after every tile, gathered in groups of this many (at
most a tile's), up to :data:`SCREEN_DEFERRED` features. A group's candidates are found by passes over its
units x examples bounds, which in groups of 1,024 outgrew a core's cache on maps of a thousand units and
more; and a run with few examples near a tie pays for one whole group. Tiled epochs (least of 7, clustered
data, the maps of 3- and 10-epoch runs) in groups of 1,024 against 256: 10,000 x 50 on 40x30 68 and 44 ms
against 42 and 27; on 50x50 66 and 77 against 62 and 64; 30,000 x 30 on 30x30 75 and 51 against 65 and 39;
100,000 x 16 on 20x20 62 and 43 against 52 and 47; 1,000,000 x 30 on 10x10 218 and 165 against 192 and 160
(64 to 512 within a few per cent of each other)."""

SCREEN_DEFERRED = 512
"""Past this many features the CPU's tiled epoch ranks its examples near a tie in each tile, from the tile's
scores: most lie near one there (18 % at 784 features, 91 % at 2,048), and their scores computed again
after every tile cost as much as the tile (5,000 x 2,048 on 20x20: 356 ms an epoch against 251-265)."""

KEYED_MAX_BITS = 10
"""The screened search finds each example's best unit by keys (:meth:`~som_studio.core.plans.screen.Screen._keyed`)
on maps of at most ``2 ** KEYED_MAX_BITS`` units: a key gives up as many of its score's last bits to the unit's
index, and the examples within those bits of a tie are ranked again. Measured near a tie, three passes against
keys: 0.015 -> 0.018 % of uniform examples on 10x10 at 16 features, 0.042 -> 0.059 % on 400 units at 30, 0.030
-> 0.057 % on 1,024 units at 16; 0.29 -> 0.36 % about a map drawn together."""


def keyed_bits(units: int, itemsize: int) -> int:
    """Bits of a key that hold the unit's index on a map of ``units`` units whose scores take ``itemsize`` bytes
    (float32 or float64: keys of the same width); 0: the search takes no keys."""
    bits = max(1, (units - 1).bit_length())
    return bits if bits <= KEYED_MAX_BITS and itemsize in (4, 8) else 0


SCREEN_CANDIDATES = 16
"""Units the CPU's screened search ranks again by the direct form for an example near a tie, at most; an example
with more is ranked against every unit. Eight left a third of the examples to every unit halfway through
torchsom's workload (16,000 x 300 in 10 blobs on 25x15, units crowded together with 9-21 within reach):
100 epochs 11.5 -> 8.5 s with 16 (24: no better), the other envelope shapes unchanged."""

# Up to this many features a direct distance is an unrolled sum of squared differences, in
# feature order as the NumPy reference sums them, that XLA fuses into the argmin; past it, the
# same sum in a loop over features (an unrolled sum over hundreds of features compiles slowly),
# which holds one plane of distances, a chunk's worth, in memory. The matmul form's re-rank sums
# its few candidates' differences in one vectorised reduction past it.
UNROLLED_FEATURES = 64
# From this many features the matmul form's re-rank is blocked over features as well: its candidates'
# differences are summed slab by slab of FEATURE_SLAB features, so a slab's candidates stay in the cache where
# whole rows' would not. Measured at 5,000 x 2,048 on 20x20 (process CPU time, loaded machine): the matmul
# search 155 ms with whole rows, 136-139 ms in slabs of 128-256, the product and block minima alone 95 ms.
WIDE_FEATURES = 1024
FEATURE_SLAB = 256

# Bytes of the map that stay in the cache from one chunk's product to the next: one core's L2 on this 2-core
# CPU (1 MiB); on an accelerator an H100's L2 (50 MiB, its data sheet: reasoned, not measured). The rest is
# read from memory every trip.
CACHE_BYTES = {"cpu": 1 << 20, "gpu": 50 << 20}

_forced: ContextVar[str | None] = ContextVar("som_studio_kernel_plan", default=None)
_forced_budget: ContextVar[int | None] = ContextVar("som_studio_kernel_budget", default=None)


@dataclass(frozen=True)
class KernelPlan:
    """One device's BMU search: the form, examples per chunk, and the form's own size."""

    form: str
    chunk: int
    block: int = 0  # units per block (blocked, matmul)

    def __str__(self) -> str:
        if self.form == "direct":
            return f"direct/argmin-all/chunk={self.chunk}"
        return f"{self.form}/block={self.block}/chunk={self.chunk}"


def matmul_block(features: int) -> int:
    """Units per candidate block of the matmul form for ``features`` features on an accelerator (CPU: choose)."""
    want = MATMUL_BLOCK_FEATURES / max(features, 1)
    b = 1 << max(0, round(math.log2(want))) if want >= 1 else 1
    return min(MAX_MATMUL_BLOCK, max(MIN_MATMUL_BLOCK, b))


def unit_blocks(units: int, block: int = UNIT_BLOCK) -> tuple[int, int]:
    """(blocks, block size): the fewest blocks of at most ``block`` units, sized to a multiple of 16."""
    g = max(1, -(-units // block))
    b = -(-units // g)
    b = -(-b // 16) * 16
    return g, b


def chunk_elements(chunk: int, features: int, block: int) -> int:
    """Elements one sample chunk holds at once in the blocked argmin.

    Products against one block in the scan, the block minima, then two
    candidate blocks per example with their distances and columns.
    """
    return chunk * block + chunk * 2 * block * (features + 2)


def _balanced(samples: int, per: int) -> int:
    """Examples per chunk: at most ``per``, chunks of equal size (padding under one example per chunk)."""
    per = max(1, per)
    chunks = -(-samples // per)
    return max(1, -(-samples // max(chunks, 1)))


def sample_chunk(samples: int, features: int, block: int, budget: int | None = None) -> int:
    """Examples per blocked-argmin chunk: :func:`chunk_elements` within ``budget`` elements, chunks of equal size."""
    budget = ARGMIN_ELEMENTS if budget is None else budget
    return _balanced(samples, budget // max(chunk_elements(1, features, block), 1))


def per_example_elements(form: str, units: int, features: int, block: int | None = None) -> int:
    """Elements one example adds to a chunk's working set in ``form`` (``block``: the plan's, by default the form's)."""
    if form == "direct":
        return units  # one row of distances (XLA usually fuses it away; counted as if not)
    if form in ("matmul", "tiled"):
        b = min(matmul_block(features), units) if block is None else block
        # the scores row and its block minima, plus two candidate blocks: gathered units, differences, distances
        row = units + -(-units // b) + 2 * b * (2 * features + 2)
        if form == "matmul" and features >= WIDE_FEATURES and -(-units // b) > 1:
            # Wide rows re-rank one slab of features at a time: the candidates are a slab's, and the example's
            # own row with its moved and padded copies is what remains. Counting whole rows gave 250 examples a
            # chunk at 5,000 x 2,048 on 20x20 where the re-rank holds 715.
            row = units + -(-units // b) + 2 * b * (2 * FEATURE_SLAB + 2) + 3 * features + 1
        # a tile's one-hot row and its values for the per-unit sums
        return row + (units + features + 1 if form == "tiled" else 0)
    return chunk_elements(1, features, unit_blocks(units, UNIT_BLOCK if block is None else block)[1])


def forced_form() -> str | None:
    """The form forced by :func:`forced` or, outside it, by ``SOM_STUDIO_KERNEL_PLAN``; None when free.

    Raises
    ------
    ValueError
        When the environment variable names no form.
    """
    form = _forced.get()
    if form is None:
        form = os.environ.get(ENV_VAR, "").strip().lower() or None
    if form is not None and form not in FORMS:
        raise ValueError(
            f"{ENV_VAR}: "
            + _("unknown kernel plan {form!r}; choose from {forms}").format(form=form, forms=", ".join(FORMS))
        )
    return form


@contextlib.contextmanager
def forced(form: str | None, budget: int | None = None) -> Iterator[None]:
    """Force every plan chosen inside the block to ``form`` (``None``: choose freely); for tests and benchmarks.

    ``budget`` (bytes per chunk) also replaces the backend's, e.g. to get several
    example chunks from a small problem.
    """
    if form is not None and form not in FORMS:
        raise ValueError(f"unknown kernel plan {form!r}; choose from {', '.join(FORMS)}")
    token, token_b = _forced.set(form), _forced_budget.set(budget)
    try:
        yield
    finally:
        _forced.reset(token)
        _forced_budget.reset(token_b)


# -- the cost model ---------------------------------------------------------------------------------------------
#: Ceilings assumed where the device's own were not measured (matmul FLOP/s at ``HIGHEST``, memory bytes/s):
#: the CPU's as the Inside page measured them on a quiet 2-core AVX-512 machine; an accelerator's from the H100's
#: data sheet (float32 without TF32, HBM3). Only their ratio moves a choice.
DEFAULT_CEILINGS = {"cpu": (212e9, 40e9), "gpu": (60e12, 3.3e12), "tpu": (60e12, 3.3e12)}


@dataclass(frozen=True)
class PlanCosts:
    """A device family's constants of the cost model (:func:`predict`), each measured or reasoned as it says.

    ``matmul_half``: a product over ``k`` terms runs at ``matmul_share * k / (k + matmul_half)`` of the
    ceiling (few terms, little reuse). ``blocked_share``: the blocked form's small products fused into their
    minima, as a share of the ceiling. ``direct_share``: the direct form's fused ``sum (w - x)^2``, 3 FLOPs a
    term. ``gather_s``, ``select_s``, ``scatter_s``: seconds per element re-ranked (gathered, differenced,
    squared, summed), per block minimum ranked, per element added by the scatter of the per-unit sums, and
    ``onehot_s`` per example and unit of an accelerator's tiled one-hot sums (made and multiplied in a tile;
    the CPU scatters a tile's rows instead), on a device with :data:`DEFAULT_CEILINGS` (scaled by the device's
    own). ``trip_s``: one trip of a loop over chunks or tiles. ``tile_unit_s``: per unit and trip of the tiled
    form, what a tile's pass over every unit costs however few examples it holds (its scores, block minima and
    candidate blocks laid out units x examples, in vectors as short as the tile).
    ``feature_loop_bytes``: bytes through memory per example, unit and feature of the direct form's loop over
    features (past :data:`UNROLLED_FEATURES`), which reads and writes its plane of distances every feature; 0
    where the plane stays in the cache (the CPU's chunks are sized for it). ``scatter_row_s``: per example
    of the scatter of the per-unit sums, beside ``scatter_s`` per element. ``slab_gather_s``: ``gather_s``
    of the matmul form's re-rank in slabs of features (past :data:`WIDE_FEATURES`). ``gathered_s``,
    ``gathered_unit_s``: ``group_s`` and ``group_unit_s`` of the CPU's groups gathered from every tile.
    ``near_units``, ``near_units_power``: the share near a tie, up to :data:`SCREEN_DEFERRED` features, times
    ``(units / near_units) ** near_units_power`` on maps of more units (0: not).
    """

    matmul_share: float
    matmul_half: float
    blocked_share: float
    direct_share: float
    gather_s: float
    select_s: float
    scatter_s: float
    onehot_s: float
    trip_s: float
    feature_loop_bytes: float = 0.0
    tile_unit_s: float = 0.0
    screen_s: float = 0.0
    tile_scatter_s: float = 0.0
    near_per_feature: float = 0.0
    near_doubling: float = float("inf")
    near_units: float = 0.0
    near_units_power: float = 0.0
    crowded_share: float = 0.0
    feature_trip_s: float = 0.0
    screen_trip_s: float = 0.0
    group_s: float = 0.0
    group_unit_s: float = 0.0
    group_row_s: float = 0.0
    gathered_s: float = 0.0
    gathered_unit_s: float = 0.0
    scatter_row_s: float = 0.0
    slab_gather_s: float = 0.0
    keyed_screen_s: float = 0.0
    blocked_gather_s: float = 0.0


#: Measured with jax 0.12.0.1 on a 2-core AVX-512 machine, the blocked form beat the matmul form's picks by
#: 1.8-2.6x on 100x100 maps with 3-5 features: its own ``blocked_gather_s`` (its candidate blocks are gathered
#: whole, block-major, where the matmul form gathers rows unit by unit) and ``blocked_share`` fitted to 71
#: whole epochs, each form forced at 33 shapes
#: (20 epochs from a random map, the median epoch, least of two runs), and 130 searches of the matmul form
#: with blocks of 1-32 units and the blocked form at 24 shapes (docs/benchmarks.md, "The CPU's cost model
#: refitted"); the examples near a tie of the tiled form's groups (``group_s``, ``group_unit_s``) fitted to the
#: same epochs. The rest as before,
#: from forced forms on a 2-core AVX-512 machine (process CPU time, the machine loaded):
#: 1,000,000 x 30 on 10x10 (scores alone 52 ms, the matmul search with blocks of 4 units 213 ms, the scatter
#: 88 ms) and 5,000 x 2,048 on 20x20 (scores 52 ms, the re-rank of 8 candidates 41 ms); the scatter's per
#: example and per element parts, and the re-rank in slabs, from the epoch, the search and the product with its
#: block minima alone (medians of 7, wall time): 5,000 x 2,048 on 20x20 77, 69 and 44 ms, 20,000 x 1,024 on
#: 30x30 276, 259 and 218 ms (the scatter 88 ms at 31 numbers a row, 6-8 ms at 2,049; the re-rank 25 and 41
#: ms, 0.31 and 0.13 ns an element: 0.2 taken); ``tile_unit_s``
#: fitted to tiled epochs against matmul's where tiles hold few examples: 10,000 x 20 on 40x30 (29.5 ms
#: against 25.9, tiles of 42), 10,000 x 50 on 40x30 (48.7 against 37.2, tiles of 36), 50,000 x 128 on 50x50
#: (1,273 against 570, tiles of 16), and where they hold many: 100,000 x 50 on 20x20 (91 against 134, tiles
#: of 74), 1,000,000 x 10 on 20x20 (472 against 610, tiles of 120); the blocked form's share from
#: docs/benchmarks.md's crossovers against the matmul form. An
#: accelerator's are fitted (least squares of the relative error) to 52 whole epochs on an NVIDIA H200 (jax
#: 0.11.2, HIGHEST products, its ceilings measured at 50 TFLOP/s and 3.5 TB/s): each form forced at 1,000 to
#: 1,000,000 examples, 3 to 2,048 features and 100 to 1,048,576 units (docs/benchmarks.md, "The accelerator's
#: cost model, fitted"). There the re-rank's gathers and the one-hot sums cost a few picoseconds an element,
#: the scatter of the per-unit sums more (``scatter_row_s``, ``scatter_s``), and a trip ~0.1 ms; the direct
#: form's loop past the unrolled features moves about 8 bytes per example, unit and feature.
#: The CPU's screened tiled search (``screen_s`` per example and unit: its three passes over the scores,
#: ``keyed_screen_s`` its two by keys on small maps, from the tiled search alone at 1,000,000 x 16 and x 30 on
#: 10x10 and x 16 on 32x32, 0.07-0.12 ns less an example and unit at a ceiling twice the reference's;
#: ``tile_scatter_s`` per element scattered into the sums; ``near_per_feature``, the share of examples near a
#: tie per feature, which doubles at ``near_doubling`` features and grows on; ``crowded_share``, the share of
#: those a map early in training crowds past SCREEN_CANDIDATES candidates, ranked against every unit (fitted
#: to `bench/envelope.py --quick`'s 10,000 x 300 and x 784 on 40x30, 20 epochs from a random map, where the
#: tiled form took 101 and 382 ms an epoch against the matmul form's 69 and 184, and to 100,000 x 1,000 on
#: 10x10, two epochs from a sampled map, 1.15 s against 0.94); ``screen_trip_s``, a tile's fixed share):
#: fitted to whole epochs with each form forced, least of 5, clustered data (the table in docs/benchmarks.md,
#: "Many rows on small maps: the screened search").
#: Its examples near a tie go in groups (:data:`SCREEN_GROUP`), each ``group_s``, plus ``group_unit_s`` per
#: example and unit (the candidates' scores gathered and searched), ``feature_trip_s`` per feature (the direct
#: form's loop over them) and ``group_row_s`` per example of the tile: fitted to the time the groups added to
#: whole epochs (the epoch with none near against the real one) at 6 shapes from 30 to 2,048 features and from
#: 100 to 2,500 units (docs/benchmarks.md, "Candidates of the examples near a tie"). Up to
#: :data:`SCREEN_DEFERRED` features they are gathered from every tile into groups of :data:`SCREEN_GATHERED`,
#: each ``gathered_s`` plus ``gathered_unit_s`` per example and unit, measured the same way (the tiled search
#: with its near-tie ranking left out, least of 7, the maps of 3- and 10-epoch runs over clustered data): 0.7-1.2
#: ms a group on 10x10, 0.2-1.5 on 20x20, 2.1-2.8 on 30x30 and 40x30, 5.8-9.7 on 50x50; the constants of the
#: groups ranked tile by tile made them 0.03-0.6 ms, and the model chose the tiled form where the matmul form
#: was 1.3-1.9x faster (10,000 x 16 on 40x30, x 50 on 50x50, x 128 on 40x30). There the share near a tie
#: also grows with the map past ``near_units`` units, as ``(units / near_units) ** near_units_power``: measured
#: epoch by epoch through 10-epoch runs over clustered data, its mean was 0.16 % at 30 features on 10x10, 0.79
#: % at 16 on 20x20, 1.0 % at 16 and 7.1 % at 50 on 40x30 (the model without it: 0.37, 0.20, 0.20, 0.64 %),
#: highest in the epochs that draw the map together. The power is the largest that keeps every crossover
#: measured between the tiled and matmul forms (tests/core/test_kernel_plan.py), 200,000 x 100 on 20x20 the
#: nearest: the shares alone would make it about 1.
COSTS = {
    "cpu": PlanCosts(
        0.75,
        8.0,
        0.17,
        0.04,
        0.49e-9,
        1.7e-9,
        0.58e-9,
        0.0,
        4e-6,
        tile_unit_s=50e-9,
        screen_s=0.45e-9,
        tile_scatter_s=0.8e-9,
        near_per_feature=1.2e-4,
        near_doubling=750.0,
        near_units=100.0,
        near_units_power=0.5,
        crowded_share=1.0,
        feature_trip_s=9e-9,
        screen_trip_s=50e-6,
        group_s=8e-6,
        group_unit_s=0.9e-9,
        group_row_s=22e-9,
        gathered_s=0.5e-3,
        gathered_unit_s=8e-9,
        scatter_row_s=70e-9,
        slab_gather_s=0.2e-9,
        keyed_screen_s=0.25e-9,
        blocked_gather_s=0.11e-9,
    ),
    "gpu": PlanCosts(
        0.75,
        8.0,
        0.01,
        0.20,
        0.15e-12,
        0.0,
        16.5e-12,
        7.6e-12,
        110e-6,
        feature_loop_bytes=8.2,
        scatter_row_s=0.47e-9,
    ),
}


def _costs(backend: str) -> PlanCosts:
    return COSTS["cpu" if backend == "cpu" else "gpu"]


#: The longest predicted epoch a trainer's warm-up runs once, on a copy of its map. XLA:CPU compiles a loop's
#: body and a conditional's branches when they first run, not with the program: a warm-up of zero epochs left
#: the fused epoch's to the first timed chunk (10-65 ms measured, against epochs of 0.3 ms, which then set the
#: run's p95 and its "noisy iterations" warning). Past this, the warm epoch would cost the start more than the
#: first chunk's compile it moves (and a cached program's start, its compile and warm-up, stays under 0.2 s).
WARM_EPOCH_MAX_S = 0.05


def _near_share(c: PlanCosts, units: int, features: int, sums: bool) -> float:
    """The share of examples the CPU's screened search finds near a tie, as measured: 3 % at 100 features, 18 % at
    784, 91 % at 2,048. A search of two units (``sums`` false) has about twice as many, the second's and the
    third's bounds as well. Up to :data:`SCREEN_DEFERRED` features more units lie near each example on a larger
    map, most of all while training draws it together."""
    d = float(features)
    near = d * c.near_per_feature * (1 + d / c.near_doubling) * (1 if sums else 2)
    if c.near_units and features <= SCREEN_DEFERRED:
        near *= max(1.0, units / c.near_units) ** c.near_units_power
    return min(near, 1.0)


def predict(
    plan: KernelPlan,
    units: int,
    features: int,
    samples: int,
    itemsize: int,
    backend: str = "cpu",
    ceilings: tuple[float, float] | None = None,
    sums: bool = True,
) -> float:
    """Predicted seconds of one batch epoch under ``plan`` (search, per-unit sums, smoothing, update).

    ``ceilings`` (matmul FLOP/s, bytes/s): the device's as the Inside page measures them
    (:func:`som_studio.core.inspection.inside.ceilings`); default :data:`DEFAULT_CEILINGS`. ``sums`` false: the search
    alone (the quality pass, projection, a sharded epoch's search, whose sums are its own).
    """
    backend = "gpu" if backend in ("cuda", "rocm") else backend
    peak, bw = ceilings or DEFAULT_CEILINGS.get(backend, DEFAULT_CEILINGS["gpu"])
    ref_peak, ref_bw = DEFAULT_CEILINGS["cpu" if backend == "cpu" else "gpu"]
    if backend == "cpu":
        # The same few cores run the products, the gathers, selections and scatter-adds, and the copies
        # through memory: every term scales with their measured matmul rate. A busy machine measures its
        # matmul rate far lower and its copy hardly lower (here: 38 against 212 GFLOP/s, 41.5 GB/s against
        # 40): taking the copy's figure as it stands would rank the plans by how busy the machine was
        # when measured (the playbook's map then took the matmul form, 2.4x slower than blocked).
        bw = ref_bw * peak / ref_peak
    # The per-element constants were measured at the reference ceilings: on an accelerator they stream
    # through memory and scale with its bandwidth.
    slow = ref_bw / bw
    c = _costs(backend)
    n, m, d = float(samples), float(units), float(features)
    k = d + 1

    def product(flops: float, terms: float) -> float:
        return flops / (peak * c.matmul_share * terms / (terms + c.matmul_half))

    trips = -(-samples // max(plan.chunk, 1))
    t = trips * c.trip_s
    scatter = n * (c.scatter_row_s + k * c.scatter_s) * slow if sums else 0.0
    if plan.form == "direct":
        t += 3 * n * m * d / (peak * c.direct_share) + scatter
        if features > UNROLLED_FEATURES:
            t += n * m * d * c.feature_loop_bytes / bw
    elif plan.form == "blocked":
        g = -(-units // max(plan.block, 1))
        mp = g * plan.block
        t += 2 * n * mp * k / (peak * c.blocked_share)
        gather = c.blocked_gather_s or c.gather_s
        t += n * (2 * min(g, 2) * plan.block * (d + 2) * gather + g * c.select_s) * slow + scatter
    elif plan.form == "tiled" and backend == "cpu":
        # The screened search: one product over every unit, its scores reduced three times (fewer by keys on
        # small maps), and only the examples near a tie re-ranked directly (a share growing with the
        # features), then the scatter.
        screen_s = c.keyed_screen_s if c.keyed_screen_s and keyed_bits(units, itemsize) else c.screen_s
        t += product(2 * n * m * k, k) + n * (m * screen_s + (k * c.tile_scatter_s if sums else 0.0)) * slow
        near = _near_share(c, units, features, sums)
        # Early in training units crowd together: those examples have more candidates than SCREEN_CANDIDATES
        # and are ranked against every unit.
        t += trips * c.screen_trip_s + n * near * c.crowded_share * 3 * m * d / (peak * c.direct_share)
        if d <= SCREEN_DEFERRED:  # ranked after every tile (a search: every chunk), their scores computed again
            g = max(min(plan.chunk, SCREEN_GATHERED), 1)
            groups = math.ceil(n * near / g)
            t += groups * (c.gathered_s + g * m * c.gathered_unit_s + d * c.feature_trip_s)
            t += product(2 * n * near * m * k, k)
        else:  # many features: ranked tile by tile, at least one group a tile
            g = max(plan.chunk // SCREEN_GROUP, 1)
            groups = trips * max(1, math.ceil(near * SCREEN_GROUP))
            t += groups * (c.group_s + g * m * c.group_unit_s + d * c.feature_trip_s + plan.chunk * c.group_row_s)
    else:  # matmul, tiled: one product ranks every unit, two blocks of candidates re-ranked
        b = max(plan.block, 1)
        g = -(-units // b)
        t += product(2 * n * g * b * k, k)
        slabs = plan.form == "matmul" and features >= WIDE_FEATURES and g > 1
        gather = c.slab_gather_s if slabs and c.slab_gather_s else c.gather_s
        t += n * (2 * min(g, 2) * b * d * gather + g * c.select_s) * slow
        if plan.form == "matmul" or backend != "cpu":
            # the scores written and read once (an accelerator's tile is the matmul form's search in a big chunk)
            t += 2 * n * g * b * itemsize / bw
        if plan.form == "matmul":
            t += scatter
        else:
            t += trips * m * c.tile_unit_s * slow
            if sums and backend == "cpu":
                t += scatter  # each tile's rows scattered into the totals
            elif sums:
                # the tile's one-hot rows, made, then multiplied: a product over the tile's few examples
                t += n * m * c.onehot_s * slow + product(2 * n * m * k, plan.chunk)
    t += n * d * itemsize / bw  # the examples read
    # The map read once a trip: a chunk's product streams every unit's weights, the part past the cache
    # through memory. A big map leaves a tile room for a few examples only, and the product of so few rows
    # reads the whole map for each few (measured at 10,000 x 784 on 100x100, a search alone: tiles of 3
    # examples 4.9x the matmul form's chunks of 334 in process CPU time, 300 features on 240x135 5.9x).
    cache = CACHE_BYTES.get(backend, CACHE_BYTES["gpu"])
    t += trips * max(0.0, m * k * itemsize - cache) / bw
    if sums:  # the separable smoothing of every feature plane, and the update
        side = math.sqrt(m)
        t += product(4 * k * m * side, side) + 3 * m * d * itemsize / bw
    return t


def rank(
    backend: str,
    units: int,
    features: int,
    samples: int,
    itemsize: int,
    budget: int | None = None,
    ceilings: tuple[float, float] | None = None,
    sums: bool = True,
) -> list[tuple[KernelPlan, float]]:
    """Every form's plan for these sizes with its predicted seconds per epoch (:func:`predict`), fastest first."""
    out = []
    for form in FORMS:
        plan = choose(backend, units, features, samples, itemsize, budget, form, ceilings, sums)
        out.append((plan, predict(plan, units, features, samples, itemsize, backend, ceilings, sums)))
    return sorted(out, key=lambda pt: pt[1])


def choose(
    backend: str,
    units: int,
    features: int,
    samples: int,
    itemsize: int,
    budget: int | None = None,
    form: str | None = None,
    ceilings: tuple[float, float] | None = None,
    sums: bool = True,
) -> KernelPlan:
    """The BMU search for one device.

    Parameters
    ----------
    backend : ``"cpu"``, ``"gpu"`` or ``"tpu"`` (JAX's ``default_backend()``; ``"cuda"``/``"rocm"`` read as gpu).
    units, features, samples : what one device searches: its map units, features, its examples.
    itemsize : bytes per element of the run's precision.
    budget : bytes one chunk may hold (default: the one :func:`forced` sets, else :data:`CHUNK_BUDGET` for the
        backend, :data:`TILE_BYTES` for a tile; the blocked form's default is :data:`ARGMIN_ELEMENTS` elements). On
        the CPU the matmul and direct forms' scores also fit :data:`CPU_SCORES_BYTES`, whatever the budget, where the
        map fits the budget; a larger map's chunks take :data:`CPU_STREAMED_BUDGET`.
    form : force a form (default: :func:`forced_form`, else the one the cost model predicts fastest, :func:`rank`).
    ceilings : the device's (matmul FLOP/s, bytes/s) for the cost model (default :data:`DEFAULT_CEILINGS`).
    sums : whether the plan also makes the epoch's per-unit sums (a batch epoch on one device) or searches
        alone (the quality pass, projection, a sharded search): the cost model counts what it does.

    Returns
    -------
    KernelPlan
    """
    backend = "gpu" if backend in ("cuda", "rocm") else backend
    form = form or forced_form()
    if form is None:
        return rank(backend, units, features, samples, itemsize, budget, ceilings, sums)[0][0]
    budget = budget if budget is not None else _forced_budget.get()
    if form == "blocked":
        _, block = unit_blocks(units, UNIT_BLOCK)
        elements = ARGMIN_ELEMENTS if budget is None else max(1, budget // itemsize)
        return KernelPlan("blocked", sample_chunk(samples, features, block, elements), block=block)
    if form == "tiled":
        budget = TILE_BYTES.get(backend, TILE_BYTES["gpu"]) if budget is None else budget
    cached = backend == "cpu" and units * (features + 1) * itemsize <= CHUNK_BUDGET["cpu"]
    if budget is None and backend == "cpu" and not cached:
        budget = CPU_STREAMED_BUDGET
    budget = CHUNK_BUDGET.get(backend, CHUNK_BUDGET["gpu"]) if budget is None else budget
    block = 0
    scores = CPU_SCORES_BYTES if cached and form in ("matmul", "direct") else None
    if form == "matmul" and backend == "cpu":
        # The block the model predicts fastest: two blocks' units re-ranked per example against one block
        # minimum per block to rank (measured with bench/kernel_plans.py --blocks 1,2,4,8,16,32: blocks of one
        # unit from 50 features on small maps, 16 with 10-50 features on 100x100).
        blocks = [b for b in CPU_MATMUL_BLOCKS if b <= units]
        plans = [_sized(form, b, units, features, samples, itemsize, budget, scores) for b in blocks]
        plans = plans or [_sized(form, units, units, features, samples, itemsize, budget, scores)]
        return min(plans, key=lambda p: predict(p, units, features, samples, itemsize, backend, ceilings, sums))
    if form == "matmul":
        block = min(matmul_block(features), units)
    elif form == "tiled":
        block = min(MIN_MATMUL_BLOCK, units)
    return _sized(form, block, units, features, samples, itemsize, budget, scores)


def _sized(
    form: str, block: int, units: int, features: int, samples: int, itemsize: int, budget: int, scores: int | None
) -> KernelPlan:
    """``form``'s plan with ``block`` units a block, its chunk of examples as many as ``budget`` bytes hold, their
    scores no more than ``scores`` bytes (None: any)."""
    per = max(1, budget // itemsize) // max(per_example_elements(form, units, features, block), 1)
    if scores is not None:
        per = min(per, scores // (units * itemsize))
    chunk = _balanced(samples, per)
    if form in ("matmul", "tiled"):
        return KernelPlan(form, chunk, block=block)
    return KernelPlan("direct", chunk)
