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
# Bound on one sample chunk's working set in the argmin, in elements: 8 Mi
# elements, 32 MiB in float32, whatever N and M are (the playbook's 1000
# examples fit in one chunk).
ARGMIN_ELEMENTS = 1 << 23
# (the block minima add chunk x blocks elements, small next to these)


def unit_blocks(units: int, block: int = UNIT_BLOCK) -> tuple[int, int]:
    """(blocks, block size): the fewest blocks of at most ``block`` units, sized to a multiple of 16."""
    g = max(1, -(-units // block))
    b = -(-units // g)
    b = -(-b // 16) * 16
    return g, b


def chunk_elements(chunk: int, features: int, block: int) -> int:
    """Elements one sample chunk holds at once in the argmin.

    Products against one block in the scan, the block minima, then two
    candidate blocks per example with their distances and columns.
    """
    return chunk * block + chunk * 2 * block * (features + 2)


def sample_chunk(samples: int, features: int, block: int, budget: int | None = None) -> int:
    """Examples per argmin chunk: :func:`chunk_elements` within ``budget``, chunks of equal size.

    Equal chunks keep the padding of the last one (examples computed and
    dropped) under one example per chunk.
    """
    budget = ARGMIN_ELEMENTS if budget is None else budget
    per = max(1, budget // max(chunk_elements(1, features, block), 1))
    chunks = -(-samples // per)
    return max(1, -(-samples // max(chunks, 1)))
