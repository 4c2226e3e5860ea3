"""Training from a stream: batch epochs whose rows are read in batches, never held whole.

:class:`StreamedTrainer` meets the :class:`~som_studio.core.impls.protocol.Trainer` contract for any
trainer that meets :class:`~som_studio.core.impls.protocol.EpochSums`: each epoch is one pass over the
problem's source (:class:`~som_studio.core.som.problem.Streamed`), every batch scaled as the run's
data (on the reader's thread) and added to the epoch's per-unit sums, then one update. The sums of batches add up to the
sums of all rows, so the map is the in-memory run's (float64 sums: to float32 rounding, and bit
for bit where the trainer adds in the same order). While the trainer works on one batch (a JAX
trainer's dispatch returns at once) the reader decodes the next on its own thread;
:attr:`StreamedTrainer.read_s` is the time training waited for data.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core.impls.protocol import EpochSums, Implementation, Trainer
from som_studio.core.som.problem import Problem


class StreamedTrainer:
    """Epochs over a streamed problem's source, through a trainer's :class:`EpochSums` pieces."""

    def __init__(self, inner: Any, problem: Problem) -> None:
        if problem.stream is None or not isinstance(inner, EpochSums):
            raise TypeError(f"{type(inner).__name__} does not train from a stream")
        self.inner: Any = inner
        self.p = problem
        self.stream = problem.stream
        #: Seconds training waited for the reader; rows and bytes read (every pass).
        self.read_s = 0.0
        self.rows_read = 0
        self.bytes_read = 0
        #: The session's checkpoints (``due()``, ``save_within(...)``), asked between batches: an epoch of
        #: hours is saved inside, its partial sums and the reader's position with it.
        self.checkpoints: Any = None
        self._within: tuple[int, dict[str, np.ndarray], dict[str, int]] | None = None

    def warmup(self) -> None:
        self.inner.warmup()

    def resume_within(self, iteration: int, sums: dict[str, np.ndarray], reader: dict[str, int]) -> None:
        """Go on inside epoch ``iteration`` from a checkpoint: its partial sums and the reader's state."""
        self._within = (iteration, sums, dict(reader))

    def run(self, first: int, count: int) -> None:
        s, dtype = self.stream, self.p.dtype
        for t in range(first, first + count):
            self.inner.begin_epoch(t)
            state = None
            if self._within is not None and self._within[0] == t:
                _t, sums, state = self._within
                self._within = None
                self.inner.set_epoch_sums(sums)
            with s.reader(dtype, state) as reader:
                for batch in reader:
                    self.inner.add_rows(batch.values)
                    ck = self.checkpoints
                    if ck is not None and ck.due():
                        at = reader.get_state()
                        arrays = {"map": self.inner.get_map(), **self.inner.epoch_sums()}
                        ck.save_within(t, arrays, int(at["row"]), at)
                self.read_s += reader.wait_s
                self.rows_read += reader.rows_read
                self.bytes_read += reader.bytes_read
            self.inner.end_epoch(t)
        block = getattr(getattr(self.inner, "w", None), "block_until_ready", None)
        if block is not None:
            block()

    def get_map(self) -> np.ndarray:
        got: np.ndarray = self.inner.get_map()
        return got

    def describe(self) -> dict[str, Any]:
        describe = getattr(self.inner, "describe", None)
        return dict(describe()) if describe is not None else {}

    def close(self) -> None:
        self.inner.close()


def create(impl: Implementation, problem: Problem) -> Trainer:
    """``impl``'s trainer for ``problem``; one fed a batch of rows at a time when the problem streams."""
    trainer = impl.create(problem)
    if problem.stream is None:
        return trainer
    made: Trainer = StreamedTrainer(trainer, problem)
    return made
