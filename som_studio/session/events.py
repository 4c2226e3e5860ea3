"""The events a training session yields, in order.

``Started`` → ``Snapshot`` (iteration 0) → ``QualityMeasured`` (iteration 0, unless
quality is measured only at the end) → ``Compiled`` → (``ChunkTimed`` | ``Snapshot`` |
``QualityMeasured`` | ``EpochProgress``)* → ``Finished`` (status ``ok`` or ``cancelled``) or ``Failed``.
A streamed run says where a long epoch stands (``EpochProgress``) between its batches, at most a
few times a second.
A sweep (a session given combinations) yields one ``CombinationTrained`` per combination, in
order, just before its ``Finished`` (none when it was cancelled).
A run refused before it starts (bad configuration or data, too big) yields only ``Failed``.

``Snapshot`` events always include iteration 0 (the initial map) and the final
map. Events are frozen; arrays in them are host copies owned by the event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.config import RunConfig
from som_studio.session.record import RunRecord


@dataclass(frozen=True)
class Started:
    config: RunConfig
    kind: str
    iterations: int
    samples: int
    features: int
    env: dict[str, Any]
    layout: str
    estimate_bytes: int
    #: Per-feature (min, max) of the training data (missing values ignored): the colour range of
    #: the run's pictures (:func:`som_studio.picture.data_range`). ``None`` from older senders.
    data_range: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    #: The data's feature names, one per feature (``()``: unnamed, generated data or an older sender),
    #: so live views name their planes.
    feature_names: tuple[str, ...] = ()
    #: The data's scaling as ``(offset, scale)`` per feature (``x = trained * scale + offset`` in the
    #: file's units), or ``None`` (not scaled, or an older sender): live colour bars in original units.
    scaling: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    #: The iteration training starts at: a resumed run's checkpoint's (0 from older senders).
    first: int = 0


@dataclass(frozen=True)
class Compiled:
    """Compile and warm-up before the first timed chunk finished."""

    seconds: float
    compiles: int


@dataclass(frozen=True)
class ChunkTimed:
    """Iterations ``first .. first+count-1`` took ``seconds`` of wall time, results ready."""

    first: int
    count: int
    seconds: float
    elapsed_s: float

    @property
    def end(self) -> int:
        return self.first + self.count

    @property
    def iteration_s(self) -> float:
        return self.seconds / self.count


@dataclass(frozen=True)
class EpochProgress:
    """Inside streamed epoch ``iteration``: ``row`` of its ``rows`` rows trained on.

    This pass over the epoch began at row ``first`` (0, or where a resumed epoch was saved) ``seconds``
    ago; training waited ``wait_s`` of them for the disk. ``rows`` is this process's share.
    """

    iteration: int
    row: int
    rows: int
    first: int
    seconds: float
    wait_s: float

    @property
    def rows_per_s(self) -> float:
        """Rows trained on per second in this pass (0 before any time has passed)."""
        return (self.row - self.first) / self.seconds if self.seconds > 0 else 0.0

    @property
    def epoch_left_s(self) -> float | None:
        """Seconds left of this epoch at this pass's rate; ``None`` before a row was trained on."""
        rate = self.rows_per_s
        return (self.rows - self.row) / rate if rate > 0 else None

    @property
    def wait_share(self) -> float:
        """The share of this pass's time spent waiting for the disk."""
        return min(1.0, self.wait_s / self.seconds) if self.seconds > 0 else 0.0


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The map after ``iteration`` iterations (host copy, (H, W, D))."""

    iteration: int
    map: np.ndarray


@dataclass(frozen=True)
class QualityMeasured:
    iteration: int
    qe: float
    te: float


@dataclass(frozen=True, eq=False)
class CombinationTrained:
    """One map of a sweep, trained and measured: the ``index``-th combination's record and its final map.

    The record is what a ``jax-fused-batch`` run of the combination keeps (its quality, hits and
    labels, the sweep's timings), its settings in ``extra["sweep"]["settings"]``; ``map`` is (H, W, D).
    """

    index: int
    record: RunRecord
    map: np.ndarray


@dataclass(frozen=True)
class Finished:
    """The run ended, completely (``record.status == "ok"``) or by cancel."""

    record: RunRecord


@dataclass(frozen=True)
class Failed:
    """The run failed; ``record.message`` says why. Never raised, always yielded."""

    record: RunRecord


Event = (
    Started
    | Compiled
    | ChunkTimed
    | EpochProgress
    | Snapshot
    | QualityMeasured
    | CombinationTrained
    | Finished
    | Failed
)
