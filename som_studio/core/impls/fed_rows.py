"""Online steps fed their rows on the device, for the JAX online trainers of a streamed run.

A streamed online run (:class:`~som_studio.core.impls.protocol.StepRows`) hands its trainer one
batch of rows at a time. :class:`FedRows` keeps that batch on the device in the trainer's ``data``,
padded to the stream's batch rows so that one compiled program takes every batch, and runs the
trainer's own steps over it: step ``t`` of the placed schedule block takes held row ``t - shift``
(the programs take ``shift`` where in memory they take the sample order). A chunk of steps is then
one dispatch of a scanned trainer's program over the batch already there, as in memory.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.som.problem import Problem


class FedRows:
    """The :class:`~som_studio.core.impls.protocol.StepRows` half of a JAX online trainer.

    The trainer has ``p``, ``device``, ``data`` and ``sched`` (its placed schedule block), and
    ``_local_steps(first, count)``: train the placed block's iterations ``first .. first+count-1``
    and return with the map ready. :attr:`fed` says whether the problem streams; its programs then
    read ``data[t - shift]`` (:meth:`row_source`).
    """

    p: Problem
    device: Any
    data: Any
    sched: DeviceSchedule
    #: Held row of the placed block's iteration ``t``: ``t - shift``.
    shift = 0

    @property
    def fed(self) -> bool:
        return self.p.stream is not None

    def _place_fed(self) -> None:
        """A streamed problem's ``data``: a batch of zeros of the stream's shape, until rows are taken."""
        s = self.p.stream
        assert s is not None
        zeros = np.zeros((s.batch_rows, self.p.features), self.p.dtype)
        self.data = jax_runtime.jax().device_put(zeros, self.device)

    def row_source(self, order: Any) -> Any:
        """What the step programs take beside ``data``: the sample order in memory, ``shift`` when fed."""
        return np.int32(self.shift) if self.fed else order

    def take_rows(self, rows: np.ndarray) -> None:
        """Place a batch of rows (n <= batch rows, D), in the run's precision with NaN for missing values."""
        s = self.p.stream
        assert s is not None
        n = rows.shape[0]
        if n < s.batch_rows:  # the last batch of a pass: padding no step reads
            rows = np.concatenate([rows, np.zeros((s.batch_rows - n, rows.shape[1]), rows.dtype)])
        self.data = jax_runtime.jax().device_put(rows, self.device)

    def run_rows(self, first: int, count: int, offset: int) -> None:
        """Train steps ``first .. first + count - 1`` on held rows ``offset ..``, one dispatch per schedule block."""
        for local, n in self.sched.segments(first, count):
            self.shift = local - offset
            self._local_steps(local, n)
            offset += n

    def _local_steps(self, first: int, count: int) -> None:
        raise NotImplementedError
