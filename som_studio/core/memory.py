"""Memory: what a problem needs (per implementation) and what the machine has.

Estimates count the arrays an implementation holds plus its working buffers,
and a fixed overhead for what the runtime allocates (measured on the playbook
workload by ``bench/memory.py``, which prints estimate against measured peak).
"""

from __future__ import annotations

import os

from som_studio.core.protocol import ProblemSize

MiB = 1 << 20

# Runtime overhead beyond the arrays, measured (bench/memory.py): NumPy's
# temporaries and allocator slack; XLA's compiled executables and buffers.
NUMPY_OVERHEAD = 2 * MiB
JAX_OVERHEAD = 56 * MiB


def _base(s: ProblemSize) -> int:
    """Data, map and schedules, in the run's precision."""
    return (s.samples * s.features + s.units * s.features + 3 * s.iterations) * s.itemsize


def numpy_online(s: ProblemSize) -> int:
    # map copy + diff + h temporaries, order indices
    return _base(s) + 3 * s.units * s.features * s.itemsize + 4 * s.iterations + NUMPY_OVERHEAD


def numpy_batch(s: ProblemSize) -> int:
    from som_studio.core.numpy_som import NEIGHBOURHOOD_CACHE_BYTES

    m = s.units * s.itemsize
    cache = min(s.samples, s.units, NEIGHBOURHOOD_CACHE_BYTES // max(m, 1)) * m
    # num, den, diff, products, and the new map
    work = 5 * s.units * s.features * s.itemsize
    return _base(s) + cache + work + NUMPY_OVERHEAD


def jax_online(s: ProblemSize) -> int:
    # donated map, diff and update temporaries on the device, host copies of inputs
    return 2 * _base(s) + 4 * s.units * s.features * s.itemsize + 4 * s.iterations + JAX_OVERHEAD


def jax_vmap_batch(s: ProblemSize) -> int:
    # per-example neighbourhoods (N x M) and weighted examples (N x M x D)
    per_example = s.samples * s.units * (s.features + 1) * s.itemsize
    return 2 * _base(s) + per_example + 4 * s.units * s.features * s.itemsize + JAX_OVERHEAD


# -- issue 3: the fast implementations -------------------------------------------------
def jax_fused_batch(s: ProblemSize) -> int:
    """Map, per-unit sums and neighbourhood products on the device, plus one argmin chunk.

    The argmin works on sample chunks whose working set is bounded by
    ``fused_plan.ARGMIN_ELEMENTS``, so no term grows as N x M.
    """
    from som_studio.core.fused_plan import UNIT_BLOCK, chunk_elements, sample_chunk, unit_blocks

    blocks, block = unit_blocks(s.units, UNIT_BLOCK)
    padded = blocks * block
    chunk = sample_chunk(s.samples, s.features, block)
    # donated map in and out, padded codebook, |w|^2, sums (D+1 planes), the two
    # neighbourhood products, the new map; Hx and Hy
    maps = (
        2 * s.units * s.features + padded * (s.features + 1) + 3 * s.units * (s.features + 1) + s.units * s.features
    ) * s.itemsize
    grids = (s.height * s.height + s.width * s.width) * s.itemsize
    argmin = chunk_elements(chunk, s.features, block) * s.itemsize
    # BMU indices, the data with a ones column
    per_example = s.samples * (4 + (s.features + 1) * s.itemsize)
    return 2 * _base(s) + maps + grids + argmin + per_example + JAX_OVERHEAD


def jax_scan_online(s: ProblemSize) -> int:
    """Like :func:`jax_online`: the donated map and one step's temporaries, order on the device."""
    return jax_online(s)


# -- issue 4: the sharded implementations ----------------------------------------------
def jax_shardmap_batch(s: ProblemSize) -> int:
    """Per device, at most: the whole map's size for the map, its sums and the gathered rows
    (the layout's split is not known here, so no division by the map axis), the device's block of
    examples, and ``jax-fused-batch``'s bounded argmin working set."""
    from som_studio.core.fused_plan import ARGMIN_ELEMENTS
    from som_studio.core.sharding import ceil_div

    n_local = ceil_div(s.samples, s.devices)
    maps = (2 * s.units * s.features + 3 * s.units * (s.features + 1)) * s.itemsize
    data = n_local * (s.features + 2) * s.itemsize + 3 * s.iterations * s.itemsize
    argmin = min(ARGMIN_ELEMENTS, n_local * s.units) * s.itemsize
    return maps + data + argmin + JAX_OVERHEAD


def jax_pmap_batch(s: ProblemSize) -> int:
    """Per device: the whole map replicated, as :func:`jax_shardmap_batch` counts it."""
    return jax_shardmap_batch(s)


def jax_jit_sharded_batch(s: ProblemSize) -> int:
    """As :func:`jax_shardmap_batch`, plus the whole distance block a split map uses (N/d x M)."""
    from som_studio.core.sharding import ceil_div

    return jax_shardmap_batch(s) + ceil_div(s.samples, s.devices) * s.units * s.itemsize * 2


def host_available() -> int:
    """Bytes the OS can still give this process (MemAvailable, else free pages)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 1 << 62


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
