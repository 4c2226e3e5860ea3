"""Training from a stream: batch epochs and online steps whose rows are read in batches, never held whole.

:class:`StreamedTrainer` meets the :class:`~som_studio.core.impls.protocol.Trainer` contract for any
trainer that meets :class:`~som_studio.core.impls.protocol.EpochSums`: each epoch is one pass over the
problem's source (:class:`~som_studio.core.som.problem.Streamed`), every batch scaled as the run's
data (on the reader's thread) and added to the epoch's per-unit sums, then one update. The sums of batches add up to the
sums of all rows, so the map is the in-memory run's (float64 sums: to float32 rounding, and bit
for bit where the trainer adds in the same order). While the trainer works on one batch (a JAX
trainer's dispatch returns at once) the reader decodes the next on its own thread;
:attr:`StreamedTrainer.read_s` is the time training waited for data. :meth:`StreamedTrainer.steps` is the
same training in steps, saying after each batch where the epoch stands (:class:`Where`), so a driver can
show an epoch of hours moving.

An online trainer that meets :class:`~som_studio.core.impls.protocol.StepRows` trains step ``t`` on the
stream's row ``t mod N``: one reader goes through the source across the session's chunks (wrapping
around at its end), each batch is handed to the trainer as it comes and its rows trained on as the
next steps. That is the problem's order (:attr:`~som_studio.core.som.problem.Problem.in_order`), so the
in-memory run of the same rows in order ends at the same map, and a run resumed at step ``t`` reads
on from row ``t mod N``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from som_studio.core.impls.protocol import EpochSums, Implementation, StepRows, Trainer
from som_studio.core.som.problem import Problem

if TYPE_CHECKING:
    from som_studio.core.data.batches import Batch
    from som_studio.core.data.stream import Reader


class Where(NamedTuple):
    """Where a streamed epoch stands after a batch.

    ``row`` of the epoch's ``rows`` rows (this process's share) are trained on; this pass over them began at row
    ``first`` (0, or where a resumed epoch was saved) ``seconds`` ago, ``wait_s`` of which training waited for
    the reader.
    """

    iteration: int
    row: int
    rows: int
    first: int
    seconds: float
    wait_s: float


class StreamedTrainer:
    """Epochs over a streamed problem's source, through a trainer's :class:`EpochSums` pieces; or
    online steps over it in order, through a trainer's :class:`StepRows`."""

    def __init__(self, inner: Any, problem: Problem) -> None:
        self.online = problem.kind == "online"
        if problem.stream is None or not isinstance(inner, StepRows if self.online else EpochSums):
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
        # An online run's place in the stream: the reader (open across chunks), the step the trainer's
        # next held row is for (-1: none), the rows of the batch it holds and how many it trained on.
        self._reader: Reader | None = None
        self._next_step = -1
        self._held = 0
        self._used = 0

    def warmup(self) -> None:
        self.inner.warmup()

    def resume_within(self, iteration: int, sums: dict[str, np.ndarray], reader: dict[str, int]) -> None:
        """Go on inside epoch ``iteration`` from a checkpoint: its partial sums and the reader's state."""
        self._within = (iteration, sums, dict(reader))

    def run(self, first: int, count: int) -> None:
        for _where in self.steps(first, count):
            pass

    def steps(self, first: int, count: int) -> Iterator[Where]:
        """:meth:`run` in steps: where the epoch stands after each batch (cheap: take what you need of them).

        An online run's chunk (steps of a fraction of a second, a batch's rows or fewer) runs whole, saying nothing.
        """
        if self.online:
            self._online_steps(first, count)
            return
        s, dtype = self.stream, self.p.dtype
        for t in range(first, first + count):
            self.inner.begin_epoch(t)
            state = None
            if self._within is not None and self._within[0] == t:
                _t, sums, state = self._within
                self._within = None
                self.inner.set_epoch_sums(sums)
            # Over several processes every process adds as many batches (each is a program they enter
            # together): one whose share ends sooner adds empty ones.
            lockstep: int | None = getattr(self.inner, "batches_per_pass", None) if s.share[1] > 1 else None
            added = -(-int(state["row"]) // s.batch_rows) if state else 0
            t0 = time.perf_counter()
            with s.reader(dtype, state) as reader:
                start = int(reader.get_state()["row"])
                try:
                    for batch in reader:
                        self.inner.add_rows(batch.values)
                        added += 1
                        ck = self.checkpoints
                        if ck is not None and ck.due():
                            at = reader.get_state()
                            arrays = {"map": self.inner.get_map(), **self.inner.epoch_sums()}
                            ck.save_within(t, arrays, int(at["row"]), at)
                        yield Where(
                            t, batch.first + batch.rows, reader.rows, start, time.perf_counter() - t0, reader.wait_s
                        )
                finally:  # a run stopped within the epoch (this generator closed) read these rows too
                    self.read_s += reader.wait_s
                    self.rows_read += reader.rows_read
                    self.bytes_read += reader.bytes_read
            for _ in range(added, lockstep or 0):
                self.inner.add_rows(np.empty((0, self.p.features), dtype))
            self.inner.end_epoch(t)
        block = getattr(getattr(self.inner, "w", None), "block_until_ready", None)
        if block is not None:
            block()

    # -- online steps in the stream's order -------------------------------------------------
    def _online_steps(self, first: int, count: int) -> None:
        """Steps ``first .. first + count - 1``, step ``t`` on row ``t mod N``, a batch's worth of rows at a time."""
        t, end = first, first + count
        while t < end:
            if t != self._next_step or self._used == self._held:
                self._take(t)
            n = min(end - t, self._held - self._used)
            self.inner.run_rows(t, n, self._used)
            self._used += n
            t = self._next_step = t + n

    def _take(self, step: int) -> None:
        """Hand the trainer the batch that holds step ``step``'s row first (the source again after its end)."""
        s = self.stream
        if step != self._next_step or self._reader is None:
            self._open(step % s.rows)  # the first step, or a resumed run: read from its row on
        batch = self._next_batch()
        if batch is None:  # a pass ended: the stream goes on from its first row
            self._open(0)
            batch = self._next_batch()
        assert batch is not None
        self.inner.take_rows(batch.values)
        self._held, self._used = batch.rows, 0

    def _open(self, row: int) -> None:
        if self._reader is not None:
            self._reader.close()
        s = self.stream
        self._reader = s.reader(self.p.dtype, {"row": row})

    def _next_batch(self) -> Batch | None:
        """The reader's next batch (``None`` at the end of its pass), its waiting and reading counted."""
        r = self._reader
        assert r is not None
        wait, rows, nbytes = r.wait_s, r.rows_read, r.bytes_read
        batch = next(r, None)
        self.read_s += r.wait_s - wait
        self.rows_read += r.rows_read - rows
        self.bytes_read += r.bytes_read - nbytes
        return batch

    def reader_state(self) -> dict[str, int] | None:
        """Where in the stream an online run goes on (a checkpoint between chunks); ``None`` for epochs,
        which start each pass at its first row."""
        if not self.online or self._next_step < 0:
            return None
        return {"row": self._next_step % self.stream.rows}

    def get_map(self) -> np.ndarray:
        got: np.ndarray = self.inner.get_map()
        return got

    def describe(self) -> dict[str, Any]:
        describe = getattr(self.inner, "describe", None)
        return dict(describe()) if describe is not None else {}

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None
        self.inner.close()


def create(impl: Implementation, problem: Problem) -> Trainer:
    """``impl``'s trainer for ``problem``; one fed a batch of rows at a time when the problem streams."""
    trainer = impl.create(problem)
    if problem.stream is None:
        return trainer
    made: Trainer = StreamedTrainer(trainer, problem)
    return made
