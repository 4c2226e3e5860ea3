"""How the batch implementations search the best-matching units: the kernel plan, pure arithmetic, no JAX.

A *kernel plan* is the way one device finds each example's best-matching unit
(BMU) in a batch epoch. It is chosen per device from the backend, the map's
units, the features, the examples, the precision and a memory budget
(:func:`choose`), recorded by every JAX run as ``extra.kernel_plan`` (its short
string, e.g. ``"direct/argmin-all/chunk=4096"``), and shared by the
implementations (:mod:`som_studio.core.bmu`) and their memory estimates
(:mod:`som_studio.core.memory`, which must not import JAX). Three forms, all
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
    the :data:`RERANK` smallest kept per example, then re-ranked by the direct
    form, so the product's rounding (~1e-7 x (|x|^2 + |w|^2), more than the
    distances between near units late in training) cannot pick a wrong unit.
    20x faster than direct at 50 features on the H100.
``blocked``
    ``jax-fused-batch``'s CPU search: a scan over blocks of :data:`UNIT_BLOCK`
    units ranked by the expanded form (the small product fused into the
    minimum), the two best blocks re-ranked by the direct form. Tuned for the
    CPU's caches (measured here: ~3x faster than the direct form).

Tests and benchmarks force a form with the ``SOM_STUDIO_KERNEL_PLAN``
environment variable or :func:`forced`; the chunk sizes still follow the budget.
"""

from __future__ import annotations

import contextlib
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
# Candidates of the matmul form re-ranked by the direct distance: the true BMU is
# lost only if this many units lie within the product's rounding of it.
RERANK = 8

_forced: ContextVar[str | None] = ContextVar("som_studio_kernel_plan", default=None)
_forced_budget: ContextVar[int | None] = ContextVar("som_studio_kernel_budget", default=None)


@dataclass(frozen=True)
class KernelPlan:
    """One device's BMU search: the form, examples per chunk, and the form's own size."""

    form: str
    chunk: int
    block: int = 0  # units per block (blocked)
    candidates: int = 0  # units re-ranked per example (matmul)

    def __str__(self) -> str:
        if self.form == "direct":
            return f"direct/argmin-all/chunk={self.chunk}"
        if self.form == "matmul":
            return f"matmul/rerank={self.candidates}/chunk={self.chunk}"
        return f"blocked/block={self.block}/chunk={self.chunk}"


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


def per_example_elements(form: str, units: int, features: int, block: int = UNIT_BLOCK) -> int:
    """Elements one example adds to a chunk's working set in ``form``."""
    if form == "direct":
        return units  # one row of distances (XLA usually fuses it away; counted as if not)
    if form == "matmul":
        # the scores row, plus candidates: indices, gathered units and their distances
        return units + RERANK * (features + 2)
    return chunk_elements(1, features, unit_blocks(units, block)[1])


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


def default_form(backend: str, features: int) -> str:
    """The form a device takes unless one is forced: blocked on the CPU; direct, or matmul past
    :data:`DIRECT_MAX_FEATURES` features, on an accelerator."""
    if backend == "cpu":
        return "blocked"
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
    form = form or forced_form() or default_form(backend, features)
    budget = budget if budget is not None else _forced_budget.get()
    if form == "blocked":
        _, block = unit_blocks(units, UNIT_BLOCK)
        elements = ARGMIN_ELEMENTS if budget is None else max(1, budget // itemsize)
        return KernelPlan("blocked", sample_chunk(samples, features, block, elements), block=block)
    budget = CHUNK_BUDGET.get(backend, CHUNK_BUDGET["gpu"]) if budget is None else budget
    per = max(1, budget // itemsize) // max(per_example_elements(form, units, features), 1)
    chunk = _balanced(samples, per)
    if form == "matmul":
        return KernelPlan("matmul", chunk, candidates=min(RERANK, units))
    return KernelPlan("direct", chunk)
