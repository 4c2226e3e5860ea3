"""The app's window gives way to the training it watches.

The app's own work while a run trains (the pipe reader, the event loop, Qt's paints and its flushes to the
display: 4-6 % of a core) took its slices from the worker's threads as they woke, on a machine whose cores
the run fills. The rung that dispatches every operation from Python (``jax-naive-online``: its dispatch
thread and XLA's use both cores of a 2-core machine) took 5-7 % longer a step watched than headless
(medians of 25-30 runs a side); with the app's threads at a lower priority, 2.6-3.5 % (docs/benchmarks.md,
"The window gives way to the worker").

Linux gives each thread its own nice value, and a process started from a thread inherits that thread's.
So :func:`give_way`, called once in the GUI thread before Qt starts, first starts one thread that keeps the
priority the app was started with, then lowers its own, which every thread it starts later inherits (Qt's
display connection, the pipe readers). :func:`unlowered` runs what starts a worker process in the kept
thread: the worker trains at the priority the user gave the app. Elsewhere (nice is per process on macOS,
absent on Windows) nothing is lowered and :func:`unlowered` runs where it is called.

Threads: :func:`give_way` in the thread that starts everything else (the GUI thread); :func:`unlowered` from
any.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

GIVE_WAY_NICE = 10
"""How far below its start the app's own threads run: under full contention a thread at +10 gets about a
tenth of a core against one at +0 (Linux weighs nice levels 1.25x apart), twice what the window uses while
it watches, so its paints are late by a few milliseconds, not frames."""

_kept: ThreadPoolExecutor | None = None


def give_way(nice: int = GIVE_WAY_NICE) -> bool:
    """Lower the calling thread's priority by ``nice``, after starting the thread :func:`unlowered` uses; whether
    it did (not where threads share one nice value, nor twice)."""
    global _kept
    if _kept is not None or not sys.platform.startswith("linux"):
        return False
    kept = ThreadPoolExecutor(max_workers=1, thread_name_prefix="som-studio-starter")
    kept.submit(lambda: None).result()  # its one thread started now, at the priority the app has
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError:  # a sandbox that forbids it: the app runs as it did
        kept.shutdown(wait=False)
        return False
    _kept = kept
    return True


def unlowered[T](fn: Callable[..., T], *args: object) -> T:
    """``fn(*args)`` in the thread at the app's own priority where :func:`give_way` lowered the others' (a
    process started there inherits that priority), else here; its exceptions raised here."""
    if _kept is None:
        return fn(*args)
    return _kept.submit(fn, *args).result()
