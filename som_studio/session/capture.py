"""What a run leaves behind for reports and the app: its record, final map and frames.

:class:`FrameKeeper` keeps at most a fixed number of map frames, evenly spread
over however many snapshots a run yields, in bounded memory while the run goes
(it does not know in advance how many will come). :class:`RunCapture` feeds on
a session's events and keeps what a comparison needs: the record, the initial
and final maps, and the kept frames as uint8 RGB images (a quarter of the
memory of a float32 map, and already what a picture needs).

Qt-free: the headless ``compare`` command and the app's run history share it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from som_studio.core.metrics import to_rgb, u_matrix
from som_studio.session.events import Event, Failed, Finished, Snapshot, Started
from som_studio.session.record import RunRecord

T = TypeVar("T")

DEFAULT_FRAMES = 64
"""Frames a :class:`RunCapture` keeps by default (about 6 MB for a 240x135 map)."""


class FrameKeeper(Generic[T]):
    """Keep at most ``capacity`` of the items offered, evenly spread, plus always the latest.

    Items are kept when their arrival index is a multiple of a stride; when
    the kept list fills up, every other item is dropped and the stride
    doubles. So memory stays bounded by ``capacity`` items however long the
    run, the kept items are evenly spaced in arrival order (snapshots arrive
    evenly in time, being throttled), and the latest item — the final map
    once the run ends — is always among :attr:`frames`.

    Parameters
    ----------
    capacity : at most this many items are held (at least 2).
    """

    def __init__(self, capacity: int = DEFAULT_FRAMES) -> None:
        if capacity < 2:
            raise ValueError(f"a frame keeper holds at least 2 frames, not {capacity}")
        self.capacity = capacity
        self._kept: list[tuple[int, T]] = []
        self._latest: tuple[int, T] | None = None  # the newest item when the stride skipped it
        self._stride = 1
        self._offered = 0

    def offer(self, iteration: int, item: T) -> None:
        index = self._offered
        self._offered += 1
        if index % self._stride:
            self._latest = (iteration, item)
            return
        self._latest = None
        self._kept.append((iteration, item))
        # Full (one place stays free for the latest item): thin out to every other.
        if len(self._kept) >= self.capacity:
            dropped_last = len(self._kept) % 2 == 0
            self._kept = self._kept[::2]
            self._stride *= 2
            if dropped_last:  # thinned away, but it is still the latest
                self._latest = (iteration, item)

    @property
    def offered(self) -> int:
        """How many items were offered so far."""
        return self._offered

    @property
    def frames(self) -> list[tuple[int, T]]:
        """The kept ``(iteration, item)`` pairs in arrival order, the latest last."""
        return self._kept + ([self._latest] if self._latest is not None else [])

    def __len__(self) -> int:
        return len(self._kept) + (self._latest is not None)


def map_image(weights: np.ndarray, lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """The (H, W, 3) uint8 picture of a map: RGB for 3 features, the U-matrix in grey otherwise.

    ``lo``/``hi`` are per-feature colour limits (the initial map's range, so
    every frame of a run is drawn on the same scale).
    """
    w = np.asarray(weights)
    if w.shape[-1] == 3:
        return np.ascontiguousarray(to_rgb(w, lo, hi))
    um = u_matrix(w)
    top = float(um.max()) if um.size else 0.0
    grey = np.clip(um / (top if top > 0 else 1.0) * 255.0 + 0.5, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(np.repeat(grey[..., None], 3, axis=-1))


def feature_range(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (lo, hi) of a map; the initial map spans the data's range."""
    flat = np.asarray(weights, dtype=np.float64).reshape(-1, weights.shape[-1])
    return flat.min(axis=0), flat.max(axis=0)


@dataclass
class RunCapture:
    """Feed it a session's events (:meth:`feed`); it keeps what a report needs.

    Attributes
    ----------
    name : the run's display name (the implementation by default; the app may rename).
    record : the run's record, once it finished or failed.
    iterations : the iterations the run was to do (from ``Started``).
    final_map : the last map as a host array, or ``None`` (failed before training).
    keeper : the kept frames, uint8 RGB images, coloured on the initial map's range.
    """

    name: str = ""
    record: RunRecord | None = None
    iterations: int = 0
    final_map: np.ndarray | None = None
    keeper: FrameKeeper[np.ndarray] | None = None
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None

    @classmethod
    def new(cls, name: str = "", frames: int = DEFAULT_FRAMES) -> RunCapture:
        return cls(name=name, keeper=FrameKeeper(frames))

    def feed(self, event: Event) -> None:
        if isinstance(event, Started):
            self.iterations = event.iterations
            if not self.name:
                self.name = event.config.impl
        elif isinstance(event, Snapshot):
            if self.lo is None:
                self.lo, self.hi = feature_range(event.map)
            self.final_map = event.map
            if self.keeper is not None:
                self.keeper.offer(event.iteration, map_image(event.map, self.lo, self.hi))
        elif isinstance(event, (Finished, Failed)):
            self.record = event.record
            if not self.name:
                self.name = event.record.impl

    def feed_all(self, events: Iterable[Event]) -> RunCapture:
        for ev in events:
            self.feed(ev)
        return self

    @property
    def frames(self) -> list[tuple[int, np.ndarray]]:
        return self.keeper.frames if self.keeper is not None else []

    @property
    def final_image(self) -> np.ndarray | None:
        """The final map's picture (on the initial map's colour range)."""
        if self.final_map is None:
            return None
        return map_image(self.final_map, self.lo, self.hi)
