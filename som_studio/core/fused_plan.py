"""How ``jax-fused-batch`` cuts its argmin into blocks: pure arithmetic, no JAX.

Shared by the implementation (:mod:`som_studio.core.jax_fused`) and its memory
estimate (:mod:`som_studio.core.memory`), which must not import JAX.
"""

from __future__ import annotations

# Units per block of the blocked argmin. Measured on a 2-core AVX-512 CPU
# (playbook workload, 32,400 units): 256-1024 are within noise of each other;
# from 2048 the per-block product is no longer fused into the minimum and the
# epoch gets ~8x slower.
UNIT_BLOCK = 512
# Bound on one sample chunk's working set in the argmin, in elements: 4 Mi
# elements, 16 MiB in float32, whatever N and M are.
ARGMIN_ELEMENTS = 1 << 22


def unit_blocks(units: int, block: int = UNIT_BLOCK) -> tuple[int, int]:
    """(blocks, block size): the fewest blocks of at most ``block`` units, sized to a multiple of 16."""
    g = max(1, -(-units // block))
    b = -(-units // g)
    b = -(-b // 16) * 16
    return g, b


def chunk_elements(chunk: int, features: int, block: int) -> int:
    """Elements one sample chunk holds at once in the argmin.

    Distances against one block in the scan, then two candidate blocks per
    example with their distances, unit numbers and columns.
    """
    return chunk * block + chunk * 2 * block * (features + 3)


def sample_chunk(samples: int, features: int, block: int, budget: int | None = None) -> int:
    """Examples per argmin chunk, so that :func:`chunk_elements` stays within ``budget``."""
    budget = ARGMIN_ELEMENTS if budget is None else budget
    per = budget // max(chunk_elements(1, features, block), 1)
    return max(1, min(samples, per))
