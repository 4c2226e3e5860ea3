"""The worker's glibc malloc: a fixed mmap threshold, trimmed now and then.

Measured with ``bench/soak.py --minutes 30 --impl jax-jit-online``: the worker
held its level for minutes, then stepped up 10-16 MB within a minute, with no
new thread and no new Python objects (``tracemalloc`` flat in an in-process
replica); ``/proc/PID/smaps`` put the steps in glibc's heaps. Two settings,
made before JAX starts its threads, keep it flat (docs/benchmarks.md,
"Hours-long runs"):

- a fixed mmap threshold (``M_MMAP_THRESHOLD``, :func:`fix_mmap_threshold`):
  glibc's own moves up at irregular times, and each move shifts blocks of a
  new size into the arenas for good;
- ``malloc_trim`` every 30 s from the sender thread (a few ms).

The other step, ~8 MB when the quality program compiles at the run's first
quality point, is avoided: the session compiles it before training.

The number of arenas is glibc's own. Capped at two, the worker's threads (XLA's pools, the
frame sender) waited on each other's arena locks: watching ``jax-fused-batch`` on the playbook
workload cost +17-21 % per epoch against ``som-studio bench`` (+11 % with four arenas, +4-5 %
uncapped), for a level about 19 MB lower at minute 2 of a soak.

Elsewhere than glibc (macOS, musl) these are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024
TRIM_EVERY_S = 30.0


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc has both; others raise AttributeError
        return libc
    except (OSError, AttributeError):
        return None


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve blocks of ``threshold`` bytes or more by ``mmap``, and smaller ones from the arenas, for good.

    glibc starts at 128 KiB and raises its threshold to the size of each
    mmap-served block that is freed (up to 32 MiB). The worker frees such blocks
    at irregular times (a frame, a pickled message, a quality measurement), and
    each raise moves blocks of that size from ``mmap`` into the arenas, where
    they stay: a step of 10-16 MB minutes into a run. A fixed threshold turns the
    adjustment off. 32 MiB, the most glibc's own would reach, puts its level at
    once where glibc's would end: a step's buffers (1.5 MB for a 512x256 map in
    float32) and XLA's temporaries stay in the arenas. At 128 KiB each
    ``jax-jit-online`` step mapped and unmapped its buffers and ran 1.7x slower
    (``bench/malloc_threshold.py``); at 4 MiB each ``jax-fused-batch`` epoch
    mapped its temporaries afresh (650,000 page faults in a 300-epoch run of the
    playbook workload against 70,000 with glibc's own threshold) and ran 20-40 %
    slower than ``som-studio bench``, which was most of what watching it in the
    app seemed to cost. Returns ``True`` if applied.
    """
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.mallopt(M_MMAP_THRESHOLD, threshold) == 1 and libc.mallopt(M_TRIM_THRESHOLD, 2 * threshold) == 1)


def trimmer(every_s: float = TRIM_EVERY_S) -> Callable[[], bool]:
    """A function that gives freed heap memory back to the system, at most once every ``every_s`` seconds.

    It returns whether it trimmed this time (``False`` when too soon, or not glibc).
    """
    libc = _libc()
    last = [time.monotonic()]

    def trim() -> bool:
        now = time.monotonic()
        if libc is None or now - last[0] < every_s:
            return False
        last[0] = now
        libc.malloc_trim(0)
        return True

    return trim
