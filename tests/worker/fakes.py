"""Implementations for tests, registered through the registry (``registry.registered``), in any process.

The app ships an implementation registered at run time to its worker process
with the run, so these reach the worker without patching anything.
"""

from __future__ import annotations

import time

from som_studio.core.impls import memory
from som_studio.core.impls.numpy_som import NumpyBatch
from som_studio.core.impls.protocol import Implementation


class SlowWarmupBatch(NumpyBatch):
    """NumPy batch whose warm-up blocks like a long compile: deaf to the session's cancel flag."""

    WARMUP_S = 60.0

    def warmup(self) -> None:
        time.sleep(self.WARMUP_S)
        super().warmup()


def slow_warmup_impl(name: str = "test-slow-warmup") -> Implementation:
    # A module-level estimate: the implementation is pickled to the worker with the run.
    return Implementation(
        name=name,
        kind="batch",
        backend="numpy",
        description="NumPy batch whose warm-up blocks for a minute (a test's stand-in for a long compile)",
        factory=f"{__name__}:SlowWarmupBatch",
        estimate=memory.numpy_batch,
    )


class BrokenRun(NumpyBatch):
    """NumPy batch whose first chunk fails: the run's record says so."""

    def run(self, first: int, count: int) -> None:
        raise RuntimeError("the test's engine broke at its first chunk")


def broken_impl(name: str = "test-broken-run") -> Implementation:
    return Implementation(
        name=name,
        kind="batch",
        backend="numpy",
        description="NumPy batch that fails at its first chunk (a test's stand-in for a broken engine)",
        factory=f"{__name__}:BrokenRun",
        estimate=memory.numpy_batch,
    )
