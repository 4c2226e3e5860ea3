"""How the batch implementations search the best-matching units: the kernel plan, pure arithmetic, no JAX.

A *kernel plan* is the way one device finds each example's best-matching unit
(BMU) in a batch epoch. It is chosen per device from the backend, the map's
units, the features, the examples, the precision and a memory budget
(:func:`choose`), recorded by every JAX run as ``extra.kernel_plan`` (its short
string, e.g. ``"direct/argmin-all/chunk=4096"``), and shared by the
implementations (:mod:`som_studio.core.plans.kernels`), the quality measures, projection and their memory estimates
(:mod:`som_studio.core.impls.memory`, which must not import JAX). Three forms, all
exact (the first smallest direct distance ``sum (w - x)^2`` wins, first in
row-major order on ties):

``direct``
    ``sum (w - x)^2`` to *every* unit and one fused first-argmin over all of
    them, examples in chunks bounded by the budget. One reduction kernel per
    chunk; no cancellation at all. Measured on an H100 (``../shared/GPU.md``):
    the fastest exact form with few features (162 ms against 299 ms for the
    matmul form, 1024x1024 map, 100k x 3).
``matmul``
    ``|w|^2 - 2 x.w`` with one HIGHEST-precision product against all units,
    each block of a few consecutive units (:func:`matmul_block`) keeping its minimum,
    the two best blocks re-ranked by the direct form, so the product's
    rounding (~1e-7 x (|x|^2 + |w|^2), more than the distances between near
    units late in training) cannot pick a wrong unit. The arithmetic runs at
    the machine's matrix-product rate: 20x faster than direct at 50 features
    on the H100, and the CPU's form but for few features on a big map.
``blocked``
    ``jax-fused-batch``'s CPU search: a scan over blocks of :data:`UNIT_BLOCK`
    units ranked by the expanded form (the small product fused into the
    minimum), the two best blocks re-ranked by the direct form. Tuned for the
    CPU's caches (measured here: ~3x faster than the direct form); with few
    features on a big map only, since the re-rank gathers two blocks of 512
    units per example.

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

FORMS = ("direct", "matmul", "blocked")
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
# the rest of the epoch. On the CPU the blocked form's budget applies.
CHUNK_BUDGET = {"cpu": ARGMIN_ELEMENTS * 4, "gpu": 1 << 30, "tpu": 1 << 30}
# Up to this many features the direct form beats the exact matmul form on an
# accelerator (H100: direct 162 ms vs matmul 299 ms at 3 features; matmul 20x
# faster at 50). The crossing was not measured; 16 is a guess between the two.
DIRECT_MAX_FEATURES = 16
# The blocked form beats the matmul form on the CPU with few features on a big map
# only: up to this many features and from this many units. Measured side by side
# (whole epochs of jax-fused-batch, 2-core AVX-512 CPU; docs/benchmarks.md, "Kernel
# plans by shape"): matmul/blocked 0.36 at 10,000 x 3 on 40x30, 0.85 on 100x100,
# 1.38 on 240x135 (1.74 with the playbook's 1,000 examples); at 8 features 0.21,
# 0.73, 1.16; from 10 features matmul wins at every size. The edge sits below half
# the playbook's map, so its map sharded over two devices keeps the blocked search.
CPU_BLOCKED_MAX_FEATURES = 8
CPU_BLOCKED_MIN_UNITS = 12_000
# Units per block of the matmul form: each example re-ranks two blocks directly,
# gathering 2 x block x features numbers, a memory-bound step that outgrows the
# product's block minima as features grow. About MATMUL_BLOCK_FEATURES / features
# units (a power of two), within [MIN_MATMUL_BLOCK, MAX_MATMUL_BLOCK]; measured by
# bench/kernel_plans.py (10,000 examples, 40x30 map: best 32 at 10 features, 8-16
# at 50, 4 at 300 and 784). Never under 4: eight candidates, as many as the top-8
# re-rank this form was first written with.
MATMUL_BLOCK_FEATURES = 512
MIN_MATMUL_BLOCK, MAX_MATMUL_BLOCK = 4, 32

# Up to this many features a direct distance is an unrolled sum of squared differences, in
# feature order as the NumPy reference sums them, that XLA fuses into the argmin; past it, the
# same sum in a loop over features (an unrolled sum over hundreds of features compiles slowly),
# which holds one plane of distances, a chunk's worth, in memory. The matmul form's re-rank sums
# its few candidates' differences in one vectorised reduction past it.
UNROLLED_FEATURES = 64

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
    """Units per candidate block of the matmul form for ``features`` features."""
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
    if form == "matmul":
        b = min(matmul_block(features), units) if block is None else block
        # the scores row and its block minima, plus two candidate blocks: gathered units, differences, distances
        return units + -(-units // b) + 2 * b * (2 * features + 2)
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


def default_form(backend: str, features: int, units: int) -> str:
    """The form a device takes unless one is forced: on the CPU blocked for few features on a big map
    (:data:`CPU_BLOCKED_MAX_FEATURES`, :data:`CPU_BLOCKED_MIN_UNITS`), else matmul; on an accelerator
    direct, or matmul past :data:`DIRECT_MAX_FEATURES` features."""
    if backend == "cpu":
        blocked = features <= CPU_BLOCKED_MAX_FEATURES and units >= CPU_BLOCKED_MIN_UNITS
        return "blocked" if blocked else "matmul"
    return "direct" if features <= DIRECT_MAX_FEATURES else "matmul"


def choose(
    backend: str,
    units: int,
    features: int,
    samples: int,
    itemsize: int,
    budget: int | None = None,
    form: str | None = None,
) -> KernelPlan:
    """The BMU search for one device.

    Parameters
    ----------
    backend : ``"cpu"``, ``"gpu"`` or ``"tpu"`` (JAX's ``default_backend()``; ``"cuda"``/``"rocm"`` read as gpu).
    units, features, samples : what one device searches: its map units, features, its examples.
    itemsize : bytes per element of the run's precision.
    budget : bytes one chunk may hold (default: the one :func:`forced` sets, else :data:`CHUNK_BUDGET` for the
        backend; the blocked form's default is :data:`ARGMIN_ELEMENTS` elements).
    form : force a form (default: :func:`forced_form`, else chosen by backend and features).

    Returns
    -------
    KernelPlan
    """
    backend = "gpu" if backend in ("cuda", "rocm") else backend
    form = form or forced_form() or default_form(backend, features, units)
    budget = budget if budget is not None else _forced_budget.get()
    if form == "blocked":
        _, block = unit_blocks(units, UNIT_BLOCK)
        elements = ARGMIN_ELEMENTS if budget is None else max(1, budget // itemsize)
        return KernelPlan("blocked", sample_chunk(samples, features, block, elements), block=block)
    budget = CHUNK_BUDGET.get(backend, CHUNK_BUDGET["gpu"]) if budget is None else budget
    block = min(matmul_block(features), units) if form == "matmul" else 0
    per = max(1, budget // itemsize) // max(per_example_elements(form, units, features, block), 1)
    chunk = _balanced(samples, per)
    if form == "matmul":
        return KernelPlan("matmul", chunk, block=block)
    return KernelPlan("direct", chunk)
