"""A run's schedules on the device, one block at a time, for every JAX trainer.

The JAX programs take the schedules (``sx``, ``sy``, ``lr``) and the sample
order as arrays of one block's length (:attr:`Problem.block_length`), indexed
with the block's own iteration numbers, so one compiled program serves every
block and a 100-million-step run holds 65,536 steps of them, not 100 million.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from som_studio.core.som.problem import Block, Problem

NAMES = ("sx", "sy", "lr", "order")


class DeviceSchedule:
    """The placed block of a run's schedules; :meth:`segments` moves on block by block.

    ``put(name, host)`` places one host array (``name`` is one of :data:`NAMES`,
    for trainers that place each kind of array their own way); ``names`` are
    those the trainer's programs take (``order`` exists for online runs only).
    """

    def __init__(self, problem: Problem, put: Callable[[str, np.ndarray], Any], names: tuple[str, ...] = NAMES) -> None:
        self._schedule = problem.schedule()
        self._put = put
        self._names = names
        self.block: Block | None = None
        self.arrays: dict[str, Any] = {}
        self.use(0)

    def use(self, index: int) -> Block:
        """Block ``index``, placed (a transfer only when it is not the placed one)."""
        b = self._schedule.block(index)
        if b is not self.block:
            self._free()
            hosts = {"sx": b.sigma_x, "sy": b.sigma_y, "lr": b.lr, "order": b.order}
            self.arrays = {k: self._put(k, a) for k, a in hosts.items() if a is not None and k in self._names}
            self.block = b
        return b

    def segments(self, first: int, count: int) -> Iterator[tuple[int, int]]:
        """Iterations ``first .. first + count - 1`` as ``(local first, count)`` pieces, each one's block placed."""
        for b, local, n in self._schedule.segments(first, count):
            self.use(b.index)
            yield local, n

    @property
    def sx(self) -> Any:
        return self.arrays["sx"]

    @property
    def sy(self) -> Any:
        return self.arrays["sy"]

    @property
    def lr(self) -> Any:
        return self.arrays["lr"]

    @property
    def order(self) -> Any:
        return self.arrays.get("order")

    def _free(self) -> None:
        for a in self.arrays.values():
            if hasattr(a, "delete"):
                a.delete()
        self.arrays = {}

    def close(self) -> None:
        self._free()
        self.block = None
