"""One recorder for every run: the events a run yields, in, a :class:`StoredRun`, out.

The headless ``compare`` command feeds it a session's events as they come
(``Snapshot`` carries the raw map); the app feeds it what its worker process
sends (the same events, but pictures already drawn as
:class:`~som_studio.picture.MapFrame` and the last map as :class:`FinalMap`).
Both end in the same :class:`StoredRun`: the record, the final map and its
picture on the run's colour range, and at most ``frames`` pictures for the
animation, evenly spread, in bounded memory (:class:`FrameKeeper`).

Qt-free: the app's Qt side only connects signals to :meth:`RunRecorder.feed`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from som_studio.config import RunConfig
from som_studio.i18n import _
from som_studio.picture.mapviews import MapViews
from som_studio.picture.raster import frame_scale, report_scale
from som_studio.picture.views import ColourRange, MapFrame, as_rgb, colour_range, data_range, map_image
from som_studio.run_settings import Topology
from som_studio.session.events import ChunkTimed, Compiled, Event, Failed, Finished, QualityMeasured, Snapshot, Started
from som_studio.session.record import Chunk, RunRecord
from som_studio.storage.runfile import StoredRun

T = TypeVar("T")

DEFAULT_FRAMES = 64
"""Frames a recorder keeps by default (about 6 MB for a 240x135 map; 22 MB on a hex lattice)."""

KEPT_HEX_PIXELS = 150_000
"""A hex map's kept frames stay under about this many pixels (a quarter of a live frame's; 2 pixels per unit
at least, so hexagons still read as offset rows on a big map)."""


def kept_scale(height: int, width: int) -> int:
    """Pixels per unit of a hex map's kept frames (see :data:`KEPT_HEX_PIXELS`)."""
    return max(2, min(12, int((KEPT_HEX_PIXELS / max(height * width, 1)) ** 0.5)))


@dataclass(frozen=True, eq=False)
class FinalMap:
    """The run's last map, raw (H, W, D), as the app's worker sends it when the run ends."""

    map: np.ndarray


RecordedEvent = Event | MapFrame | FinalMap
"""What a recorder takes, and what :func:`~som_studio.storage.replay.replay` gives back."""


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


class RecordSoFar:
    """A run's record as its events told it so far: what is kept of a run that ends without its own.

    A session ends every run it starts with a record (``Finished`` or ``Failed``). A run
    interrupted from outside (Ctrl-C, *Stop* while its worker starts, a worker that dies) has
    only the events it sent: fed them (:meth:`feed`), :attr:`record` is that run's record,
    ``cancelled`` until its owner says otherwise, with what it reached (the kind, devices and
    layout from ``Started``, the compile time, every chunk, the quality history).
    """

    def __init__(self, config: RunConfig) -> None:
        from som_studio.core.impls import registry

        kind = registry.get(config.impl).kind if config.impl in registry.names() else "?"
        self.record = RunRecord(impl=config.impl, kind=kind, config=config.to_dict(), status="cancelled")
        self.started = False
        self.compiled = False

    def feed(self, event: object) -> None:
        rec = self.record
        if isinstance(event, Started):
            self.started = True
            rec.kind, rec.env, rec.layout = event.kind, dict(event.env), event.layout
            rec.samples, rec.estimate_bytes = event.samples, event.estimate_bytes
            if event.feature_names:  # as the session's own record names them
                rec.config["feature_names"] = list(event.feature_names)
        elif isinstance(event, Compiled):
            self.compiled = True
            rec.compile_s, rec.warmup_compiles = event.seconds, event.compiles
        elif isinstance(event, ChunkTimed):
            rec.chunks.append(Chunk(event.first, event.count, event.seconds))
            rec.total_s = event.elapsed_s
        elif isinstance(event, QualityMeasured):
            rec.history.append({"iteration": event.iteration, "qe": event.qe, "te": event.te})

    @property
    def iterations_done(self) -> int:
        return sum(c.count for c in self.record.chunks)


class RunRecorder:
    """Feed it one run's events (:meth:`feed`); :meth:`stored` gives the run as kept.

    A ``Started`` event begins a new run (the app reuses one recorder). Pictures
    are (H, W, 3) uint8: a raw ``Snapshot`` is drawn with
    :func:`~som_studio.picture.map_image` on the run's colour range, fixed at
    the first map seen; a ``MapFrame`` is kept as drawn (a scalar view in grey; a hex frame thinned
    to about :func:`kept_scale` pixels per unit) and lends its range. The run's
    lattice comes from ``Started`` (:attr:`views`): a hex map's pictures are hexagons.

    Attributes
    ----------
    name : the run's display name (the implementation by default).
    record : the run's record, once it finished or failed.
    iterations : the iterations the run was to do (from ``Started``).
    final_map : the last map as a host array, or ``None`` (failed before training).
    range : the run's colour range, once a map or frame was seen.
    views : the run's lattice and feature names (from ``Started``), with hits, labels
        and clusters once the run's record brings its model.
    """

    def __init__(self, name: str = "", frames: int = DEFAULT_FRAMES) -> None:
        self._name = name
        self._capacity = frames
        self._reset()

    @classmethod
    def new(cls, name: str = "", frames: int = DEFAULT_FRAMES) -> RunRecorder:
        return cls(name, frames)

    def _reset(self) -> None:
        self.name = self._name
        self.record: RunRecord | None = None
        self.iterations = 0
        self.final_map: np.ndarray | None = None
        self.range: ColourRange | None = None
        self.views = MapViews()
        self.keeper: FrameKeeper[np.ndarray] = FrameKeeper(self._capacity)

    # -- in -------------------------------------------------------------------------------
    def feed(self, event: RecordedEvent) -> None:
        if isinstance(event, Started):
            self._reset()
            self.iterations = event.iterations
            # A run resumed from a checkpoint says so in the list beside the stopped run it goes on from.
            resumed = _("{impl}, resumed at {n:,}").format(impl=event.config.impl, n=event.first)
            self.name = self.name or (resumed if event.first else event.config.impl)
            self.range = data_range(event)
            self.views = MapViews.from_started(event)
        elif isinstance(event, Snapshot):
            if self.range is None:
                self.range = colour_range(event.map)
            self.final_map = event.map
            self.keeper.offer(event.iteration, map_image(event.map, *self.range, self.views, self._kept_scale()))
        elif isinstance(event, MapFrame):
            if self.range is None and event.range is not None:
                self.range = event.range
            image = as_rgb(event.image)
            if event.topology == Topology.HEX and event.grid is not None and not event.tiles:
                step = event.scale // kept_scale(*event.grid)
                if step > 1:  # thinned to about the kept scale: bounded memory for a long run's frames
                    image = np.ascontiguousarray(image[::step, ::step])
            self.keeper.offer(int(event.iteration), image)
        elif isinstance(event, FinalMap):
            self.final_map = np.asarray(event.map)
        elif isinstance(event, (Finished, Failed)):
            self.record = event.record
            self.name = self.name or event.record.impl
            self.views = self.views.with_model(getattr(event.record, "model", None), event.record)

    def _kept_scale(self) -> int | None:
        if self.views.topology != Topology.HEX or self.final_map is None:
            return None
        return kept_scale(*self.final_map.shape[:2])

    def _final_scale(self) -> int | None:
        """A hex map's final picture: hexagons large enough for a report (its longer side ~480 pixels)."""
        if self.views.topology != Topology.HEX or self.final_map is None:
            return None
        h, w = self.final_map.shape[:2]
        return max(frame_scale(h, w, Topology.HEX), report_scale(h, w))

    def feed_all(self, events: Iterable[RecordedEvent]) -> RunRecorder:
        for ev in events:
            self.feed(ev)
        return self

    # -- out ------------------------------------------------------------------------------
    @property
    def lo(self) -> np.ndarray | None:
        return self.range.lo if self.range is not None else None

    @property
    def hi(self) -> np.ndarray | None:
        return self.range.hi if self.range is not None else None

    @property
    def frames(self) -> list[tuple[int, np.ndarray]]:
        return self.keeper.frames

    @property
    def final_image(self) -> np.ndarray | None:
        """The final map's picture, on the run's colour range."""
        if self.final_map is None:
            return None
        return map_image(self.final_map, *(self.range or colour_range(self.final_map)), self.views, self._final_scale())

    def stored(self) -> StoredRun:
        """The run as kept (a new id); raises ``ValueError`` before the run ended."""
        if self.record is None:
            raise ValueError(_("the run has not finished: nothing to store"))
        return StoredRun(
            record=self.record,
            name=self.name or self.record.impl,
            iterations=self.iterations or self.record.iterations_done,
            final_map=self.final_map,
            final_image=self.final_image,
            frames=list(self.frames),
        )
