"""Memory: what a problem needs (per implementation) and what the machine has.

Estimates count the arrays an implementation holds plus its working buffers,
and a fixed overhead for what the runtime allocates (measured on the playbook
workload by ``bench/memory.py``, which prints estimate against measured peak).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from som_studio.core.impls.protocol import ProblemSize

if TYPE_CHECKING:
    from som_studio.core.plans.fused_plan import KernelPlan

MiB = 1 << 20

# Runtime overhead beyond the arrays, measured (bench/memory.py): NumPy's
# temporaries and allocator slack; XLA's compiled executables and buffers.
NUMPY_OVERHEAD = 2 * MiB
JAX_OVERHEAD = 56 * MiB
# What compiling a batch epoch program with a kernel plan adds on top (XLA and LLVM at work; the
# host's resident memory, not the program's): measured by bench/memory.py on the playbook workload,
# jax-fused-batch grew 108-114 MiB for an 11 MiB program, against ~65 MiB for the one-step programs.
BATCH_COMPILE_OVERHEAD = 40 * MiB
# The workspace XLA gives cuBLAS beside a program's matrix products on an NVIDIA GPU of the Hopper
# generation or newer (4 MiB on older ones): measured on an H200 as the ~32 MiB every batch program's
# temporaries held beyond the CPU's (the neighbourhood products are GEMMs there).
GPU_GEMM_WORKSPACE = 32 * MiB


def _block(s: ProblemSize) -> int:
    """Iterations of schedules and order held at once: one block (:class:`~som_studio.core.som.problem.Schedule`)."""
    from som_studio.core.som.problem import BLOCK

    return max(1, min(s.iterations, BLOCK))


def _base(s: ProblemSize) -> int:
    """Data, map and one block of schedules, in the run's precision."""
    return (s.samples * s.features + s.units * s.features + 3 * _block(s)) * s.itemsize


def _host_mask(s: ProblemSize) -> int:
    """With missing values, the host's mask of known features and the examples with NaN set to 0."""
    return s.samples * s.features * (1 + s.itemsize) if s.missing else 0


def numpy_online(s: ProblemSize) -> int:
    # map copy + diff + h temporaries, order indices
    return _base(s) + _host_mask(s) + 3 * s.units * s.features * s.itemsize + 4 * _block(s) + NUMPY_OVERHEAD


def numpy_batch(s: ProblemSize) -> int:
    from som_studio.core.impls.numpy_som import NEIGHBOURHOOD_CACHE_BYTES

    m = s.units * s.itemsize
    cache = min(s.samples, s.units, NEIGHBOURHOOD_CACHE_BYTES // max(m, 1)) * m
    # num, den, diff, products, and the new map (with missing values, den per feature too)
    work = (5 + s.missing) * s.units * s.features * s.itemsize
    return _base(s) + _host_mask(s) + cache + work + NUMPY_OVERHEAD


def jax_online(s: ProblemSize) -> int:
    # donated map, diff and update temporaries on the device, host copies of inputs
    return 2 * _base(s) + 4 * s.units * s.features * s.itemsize + 4 * _block(s) + JAX_OVERHEAD


def jax_vmap_batch(s: ProblemSize) -> int:
    # per-example neighbourhoods (N x M) and weighted examples (N x M x D); with missing values the
    # neighbourhoods are weighed per known feature too (N x M x D more)
    per_example = s.samples * s.units * (s.features * (1 + s.missing) + 1) * s.itemsize
    return 2 * _base(s) + per_example + 4 * s.units * s.features * s.itemsize + JAX_OVERHEAD


# -- the batch programs with a kernel plan: what XLA's memory_analysis() counts ---------
# Each estimate below is the host's copy of the problem, JAX_OVERHEAD, and the
# compiled program's own figure on one device (arguments + outputs + temporaries,
# the donated map once), :func:`batch_device_bytes`; tests/core/test_memory.py
# holds that figure to XLA's, plan by plan and layout by layout.


def _plan(s: ProblemSize, units: int, samples: int, sums: bool) -> KernelPlan:
    from som_studio.core.plans import fused_plan

    try:
        form = fused_plan.forced_form()
    except ValueError:  # a bad SOM_STUDIO_KERNEL_PLAN: the run refuses it with its message; estimate the default
        form = None
    if form is None:
        return fused_plan.rank(s.backend, units, s.features, samples, s.itemsize, sums=sums)[0][0]
    return fused_plan.choose(s.backend, units, s.features, samples, s.itemsize, form=form)


def search_bytes(plan: KernelPlan, units: int, features: int, itemsize: int, backend: str = "cpu") -> int:
    """The BMU search's working set on one device under ``plan`` (a ``fused_plan.KernelPlan``).

    On an accelerator, the whole working set the plan's chunk was sized to hold
    (:func:`~som_studio.core.plans.fused_plan.per_example_elements`, a row of
    scores an example): what XLA's GPU compiler fuses away changes with the size
    (on an H200, jax 0.11.2: the direct form's distances fused at 1000 x 32,400, a
    1.57 GB peak at 100,000 x 1024 x 1024 where fusion would leave 217 MB), and
    the chunk budget bounds the overcount (1 GiB). On the CPU, as measured there:

    ``direct``: XLA fuses the distances into the argmin (none materialised),
    a few numbers per example (past ``UNROLLED_FEATURES`` features, a row of
    distances); ``matmul``: the chunk's block minima and its two candidate blocks;
    ``blocked``: per example a few block-wide rows when the candidate
    gather fuses into the distances (up to 12 features, measured with XLA on
    the CPU), ~2.5 per feature when it does not.
    """
    from som_studio.core.plans.fused_plan import UNROLLED_FEATURES, per_example_elements

    c = int(plan.chunk)
    if backend != "cpu":
        return c * per_example_elements(plan.form, units, features, int(plan.block) or None) * itemsize
    if plan.form == "direct":
        return c * (units * itemsize if features > UNROLLED_FEATURES else 16)
    if plan.form == "tiled":
        # a tile's scores, block minima, candidates and rows to add; the per-unit sums are epoch_bytes'
        b = int(plan.block)
        return c * (2 * units + -(-units // b) + 2 * b * (features + 1) + features + 1) * itemsize
    if plan.form == "matmul":
        # XLA fuses the product into the block minima (measured on the CPU: the chunk's scores
        # never appear in memory_analysis); the minima and the two gathered blocks remain.
        b = int(plan.block)
        return c * (-(-units // b) + 2 * b * (features + 1)) * itemsize
    rows = 4 + features // 4 if features <= 12 else (5 * features) // 2
    return c * int(plan.block) * rows * itemsize


def epoch_bytes(units: int, features: int, samples: int, itemsize: int, missing: bool = False) -> int:
    """An epoch's buffers beside the search: per-unit sums (float32 ones accumulated in float64),
    the two neighbourhood products, and the examples with their weight column.

    With ``missing`` values each feature has its own total weight: ``2 D`` columns instead of ``D + 1``.
    """
    wide = 8 if itemsize < 8 else 0
    cols = 2 * features if missing else features + 1
    return units * cols * (3 * itemsize + wide) + samples * cols * (itemsize + wide)


def batch_device_bytes(s: ProblemSize, *, layout: str = "fused") -> int:
    """XLA's figure for the batch chunk program on one device, estimated.

    ``layout``: ``"fused"`` (one device), ``"replicated"`` (``jax-pmap-batch``:
    the whole map per device), ``"rows"`` (``jax-shardmap-batch``: the device's
    rows of the map, the whole map's sums gathered for the row contraction),
    ``"partitioned"`` (``jax-jit-sharded-batch``: the whole-matrix program
    when the map is split, N/d x M distances; else as replicated).
    """
    from som_studio.core.plans.sharding import ceil_div

    d, it = s.features, s.itemsize
    n_local = ceil_div(s.samples, s.data_devices)
    # Missing values: one device holds its examples with NaN set to 0 and the mask beside them (an
    # argument of jax-fused-batch; the sharded programs split their placed examples into the two).
    mask = n_local * d * it if s.missing else 0
    m_local = s.units if layout in ("fused", "replicated") else ceil_div(s.height, s.map_devices) * s.width
    args = (m_local * d + n_local * (d + (0 if layout == "fused" else 1)) + 2 * _block(s)) * it
    if layout == "partitioned" and s.map_devices > 1:
        m_local = ceil_div(s.height, s.map_devices) * s.width
        args = (m_local * d + n_local * (d + 1) + 2 * _block(s)) * it
        # the distance block and the winner mask beside it, split by rows: (N/d) x (M/m) each
        return args + mask + 2 * n_local * m_local * it + epoch_bytes(s.units, d, n_local, it, s.missing)
    plan = _plan(
        s,
        m_local if layout == "rows" else s.units,
        n_local if layout != "partitioned" else s.samples,
        layout == "fused",
    )
    if layout == "partitioned" and plan.chunk >= s.samples:
        # A global program: the partitioner splits one whole chunk across the data axis; chunks of a lax.map it
        # leaves whole on every device (measured with XLA on the CPU).
        plan = dataclasses.replace(plan, chunk=ceil_div(plan.chunk, s.data_devices))
    search = search_bytes(plan, m_local, d, it, s.backend)
    gathered = s.units if layout == "rows" and s.map_devices > 1 else m_local
    return args + mask + search + epoch_bytes(gathered, d, n_local, it, s.missing) + _workspace(s)


def _workspace(s: ProblemSize) -> int:
    """The GEMM workspace a program holds on ``s``'s backend (one, whatever the maps it trains)."""
    return GPU_GEMM_WORKSPACE if s.backend == "gpu" else 0


def jax_fused_batch(s: ProblemSize) -> int:
    """The host's problem, and on the device the program's arguments, epoch buffers and one search chunk.

    The search works on example chunks bounded by the kernel plan's budget
    (:mod:`som_studio.core.plans.fused_plan`), so no term grows as N x M. Several maps trained
    together (a sweep, :attr:`ProblemSize.maps`) share the examples: each further map on a device
    adds its own map, schedules, search chunk and epoch buffers, and the host keeps every
    combination's problem (its initial map and schedules).
    """
    if s.maps <= 1:
        return _base(s) + batch_device_bytes(s, layout="fused") + JAX_OVERHEAD + BATCH_COMPILE_OVERHEAD
    one = batch_device_bytes(dataclasses.replace(s, maps=1, devices=1, map_devices=1), layout="fused")
    examples = s.samples * s.features * s.itemsize * (2 if s.missing else 1)
    per_device = -(-s.maps // max(s.devices, 1))
    host = _base(s) + (s.maps - 1) * (s.units * s.features + 2 * s.iterations) * s.itemsize
    return host + one + (per_device - 1) * (one - examples - _workspace(s)) + JAX_OVERHEAD + BATCH_COMPILE_OVERHEAD


def jax_scan_online(s: ProblemSize) -> int:
    """Like :func:`jax_online`: the donated map and one step's temporaries, order on the device."""
    return jax_online(s)


# -- the sharded implementations: per device ---------------------------------------------
def jax_shardmap_batch(s: ProblemSize) -> int:
    """Per device: its rows of the map, the whole map's sums it gathers, its examples and its search chunk."""
    return _base(s) + batch_device_bytes(s, layout="rows") + JAX_OVERHEAD + BATCH_COMPILE_OVERHEAD


def jax_pmap_batch(s: ProblemSize) -> int:
    """Per device: the whole map replicated, its block of examples and its search chunk."""
    return _base(s) + batch_device_bytes(s, layout="replicated") + JAX_OVERHEAD + BATCH_COMPILE_OVERHEAD


def jax_jit_sharded_batch(s: ProblemSize) -> int:
    """Per device: as pmap when the map is whole; with the map split, the N/d x M distance block."""
    return _base(s) + batch_device_bytes(s, layout="partitioned") + JAX_OVERHEAD + BATCH_COMPILE_OVERHEAD


def device_estimate(estimate: Callable[[ProblemSize], int], s: ProblemSize) -> int:
    """The part of ``estimate(s)`` that is the compiled program on one device (the host's copy and the
    runtime's and compiler's overheads taken off): what XLA's ``memory_analysis()`` is compared with."""
    out = estimate(s) - _base(s) - JAX_OVERHEAD
    if estimate in (jax_fused_batch, jax_shardmap_batch, jax_pmap_batch, jax_jit_sharded_batch):
        out -= BATCH_COMPILE_OVERHEAD
    return out


def host_available() -> int:
    """Bytes the OS can still give this process: MemAvailable (else free pages), or less where a memory cgroup
    (a container's, a batch job's: Docker, Kubernetes, Slurm) leaves less under its limit: a run judged against the
    host's memory there would be killed for going past the job's."""
    have = _mem_available()
    room = cgroup_room()
    return have if room is None else min(have, room)


def _mem_available() -> int:
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


CGROUP_ROOT = "/sys/fs/cgroup"
"""Where the cgroup file systems are mounted (v2 at the root, v1's memory controller in ``memory/``)."""
PROC_CGROUP = "/proc/self/cgroup"

_NO_LIMIT = 1 << 60  # cgroup v1 writes "no limit" as the largest page-aligned int64, v2 as "max"


def cgroup_room() -> int | None:
    """Bytes left under the tightest memory limit of this process's cgroup and the cgroups above it (its limit less
    its use, the page cache it can drop counted as free), or ``None`` where no limit applies."""
    root = Path(CGROUP_ROOT)
    try:
        lines = Path(PROC_CGROUP).read_text().splitlines()
    except OSError:
        return None
    places: list[tuple[Path, str, str, str]] = []  # (folder, limit file, usage file, reclaimable page cache key)
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2: the limits of the cgroup and every one above it apply
            folder = root / path.strip("/")
            for above in (folder, *folder.parents):
                places.append((above, "memory.max", "memory.current", "inactive_file"))
                if above == root:
                    break
        elif "memory" in controllers.split(","):  # v1: its memory.stat gives the limit the hierarchy sets
            for folder in (root / "memory" / path.strip("/"), root / "memory"):  # a namespaced mount shows its own
                places.append((folder, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"))
    rooms = [r for r in (_room(*place) for place in places) if r is not None]
    return min(rooms) if rooms else None


def _room(f: Path, limit_file: str, usage_file: str, cache_key: str) -> int | None:
    try:
        limit_text = (f / limit_file).read_text().strip()
        stat = dict(line.split() for line in (f / "memory.stat").read_text().splitlines() if " " in line)
        limit = _NO_LIMIT if limit_text == "max" else int(limit_text)
        limit = min(limit, int(stat.get("hierarchical_memory_limit", limit)))
        if limit >= _NO_LIMIT:
            return None
        used = int((f / usage_file).read_text().strip())
        return max(0, limit - used + int(stat.get(cache_key, 0)))
    except (OSError, ValueError):
        return None
