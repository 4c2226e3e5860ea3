"""A kept run played back as the events the live view consumed while it trained.

Opening a ``.somrun`` (or picking a run in the run list) shows it through the
same path as a live run: ``Started``, ``Compiled``, a ``ChunkTimed`` per timed
chunk, a ``QualityMeasured`` per quality point, a
:class:`~som_studio.picture.MapFrame` per kept picture, the
:class:`~som_studio.storage.recorder.FinalMap` and ``Finished`` (or ``Failed``).
Fed to a :class:`~som_studio.storage.recorder.RunRecorder`, they give back the
same record. Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from som_studio.config import ConfigError, RunConfig
from som_studio.picture.views import RGB, MapFrame, ViewChoice
from som_studio.session.events import ChunkTimed, Compiled, Failed, Finished, QualityMeasured, Started
from som_studio.storage.recorder import FinalMap, RecordedEvent
from som_studio.storage.runfile import StoredRun


def started(run: StoredRun) -> Started | None:
    """The ``Started`` event of a kept run, or ``None`` when its configuration no longer parses."""
    r = run.record
    try:
        config = RunConfig.from_dict(r.config)
    except (ConfigError, KeyError, TypeError, ValueError):
        return None
    features = int(run.final_map.shape[-1]) if run.final_map is not None else 3
    return Started(
        config=config,
        kind=r.kind,
        iterations=run.iterations or r.iterations_done,
        samples=r.samples,
        features=features,
        env=r.env,
        layout=r.layout,
        estimate_bytes=int(r.estimate_bytes or 0),
        feature_names=tuple(str(n) for n in r.config.get("feature_names") or ()),
        scaling=_scaling(getattr(r, "model", None)),
        first=int((r.extra.get("resumed") or {}).get("iteration", 0)),
    )


def _scaling(model: object) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """A kept run's scaling as ``Started`` carries it (``None`` when its data was not scaled)."""
    s = getattr(model, "scaling", None)
    if s is None or s.method == "none":
        return None
    return tuple(float(v) for v in s.offset), tuple(float(v) for v in s.scale)


def replay(run: StoredRun) -> Iterator[RecordedEvent]:
    """The events of ``run`` in the order a live run yields them (see the module)."""
    r = run.record
    first = started(run)
    if first is not None:
        yield first
    if r.chunks or r.compile_s:
        yield Compiled(r.compile_s, r.compiles)
    elapsed = 0.0
    for c in r.chunks:
        elapsed += c.seconds
        yield ChunkTimed(c.first, c.count, c.seconds, elapsed)
    for h in r.history:
        yield QualityMeasured(int(h["iteration"]), float(h["qe"]), float(h["te"]))
    # The kept pictures are RGB (scalar views were kept in grey): frames of the RGB view. The
    # range they were drawn on is not kept, so they carry none (re-drawing uses the final map's).
    for iteration, image in run.frames:
        yield MapFrame(int(iteration), ViewChoice(RGB), np.asarray(image))
    if run.final_map is not None:
        yield FinalMap(np.asarray(run.final_map))
    yield (Failed if r.status == "failed" else Finished)(r)
