"""The worker's glibc malloc arenas: capped and trimmed.

Measured with ``bench/soak.py --minutes 30 --impl jax-jit-online``: the worker
held ~266 MB for ten minutes, then gained 13-16 MB within 20 s, with no new
thread and no new Python objects (``tracemalloc`` flat in an in-process
replica). ``/proc/PID/smaps`` put the step in a new 64 MB-aligned anonymous
heap: one more glibc malloc arena, 16 MB of it resident. glibc opens another
arena whenever a thread finds the arenas locked (up to 8 per core), and the
worker's threads (training, the frame sender, XLA's pools) contend. So the
worker allows two arenas (``M_ARENA_MAX``, set before JAX starts its threads)
and gives freed memory back now and then (``malloc_trim``, a few ms): its level
at minute 2 fell from ~266 to ~247 MB. Steps of 10-16 MB still come, now in
the second arena, which ``malloc_trim`` does not shrink (live allocations of a
thread other than the main one): see docs/benchmarks.md, "Hours-long runs".

Elsewhere than glibc (macOS, musl) both are no-ops.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import time
from collections.abc import Callable

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameters (malloc.h)
M_ARENA_MAX = -8
ARENAS = 2
MMAP_THRESHOLD = 128 * 1024  # glibc's initial value, kept fixed
TRIM_EVERY_S = 30.0


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018 - glibc has both; others raise AttributeError
        return libc
    except (OSError, AttributeError):
        return None


def cap_arenas(arenas: int = ARENAS) -> bool:
    """Allow at most ``arenas`` malloc arenas from now on (call before threads start); ``True`` if applied."""
    libc = _libc()
    return bool(libc is not None and libc.mallopt(M_ARENA_MAX, arenas) == 1)


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Serve blocks of ``threshold`` bytes or more by ``mmap`` for good; ``True`` if applied.

    glibc raises its threshold to the size of each mmap-served block that is
    freed (up to 32 MB), so after a while the worker's large short-lived
    blocks (copied maps, rendered frames, pickled messages) come from the
    arenas, where mixed sizes fragment them. Setting the threshold turns that
    adjustment off: a large block goes back to the system when it is freed.
    """
    libc = _libc()
    return bool(libc is not None and libc.mallopt(M_MMAP_THRESHOLD, threshold) == 1)


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
