"""One record: the CLI's path (raw snapshots) and the app's (drawn frames) record the same run, and a kept
run replays as the events the live view consumed, which record it again unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio import picture
from som_studio.config import DataSpec, RunConfig
from som_studio.session.events import ChunkTimed, Compiled, Finished, QualityMeasured, Snapshot, Started
from som_studio.session.session import Session
from som_studio.storage import FinalMap, RunRecorder, StoredRun, replay


@pytest.fixture(scope="module", params=["random", "file"])
def events(request, tmp_path_factory) -> list:
    data = DataSpec(samples=60)
    if request.param == "file":  # data far from [0, 1]: the colour range is the data's, not the unit range
        path = tmp_path_factory.mktemp("data") / "d.npy"
        np.save(path, np.random.default_rng(3).normal(50.0, 20.0, (60, 3)))
        data = DataSpec(path=str(path))
    cfg = RunConfig(impl="numpy-online", width=7, height=5, data=data, steps=300, seed=2)
    return list(Session(cfg, snapshot_interval_s=0.0, chunk_target_s=0.0005, quality_points=3).run())


def as_the_worker_sends(events: list) -> list:
    """The app's path: each snapshot drawn in the worker (on the range Started announces), the last map sent raw."""
    out, rng, last = [], None, None
    for ev in events:
        if isinstance(ev, Started):
            rng = picture.data_range(ev)
        if isinstance(ev, Snapshot):
            rng = rng or picture.colour_range(ev.map)
            out.append(picture.make_frame(ev.iteration, ev.map, picture.ViewChoice(), *rng))
            last = ev.map
        else:
            if isinstance(ev, Finished):
                out.append(FinalMap(last))
            out.append(ev)
    return out


def test_the_cli_and_the_app_record_the_same_run(events) -> None:
    cli = RunRecorder(frames=8).feed_all(events).stored()
    app = RunRecorder(frames=8).feed_all(as_the_worker_sends(events)).stored()
    assert cli.record is app.record and cli.name == app.name == "numpy-online"
    assert cli.iterations == app.iterations == 300
    np.testing.assert_array_equal(cli.final_map, app.final_map)
    # One colour-range rule: the same final picture and the same frames, whichever path drew them.
    np.testing.assert_array_equal(cli.final_image, app.final_image)
    assert [it for it, _ in cli.frames] == [it for it, _ in app.frames]
    for (_, a), (_, b) in zip(cli.frames, app.frames):
        np.testing.assert_array_equal(a, b)
    # The range is the data's, announced when the run starts: the map, however it was initialised, lies within it.
    started = next(ev for ev in events if isinstance(ev, Started))
    lo, hi = picture.data_range(started)
    assert (cli.final_map.min(axis=(0, 1)) >= lo).all() and (cli.final_map.max(axis=(0, 1)) <= hi).all()
    np.testing.assert_array_equal(cli.final_image, picture.map_image(cli.final_map, lo, hi))


def test_a_kept_run_replays_as_the_live_events(events, tmp_path) -> None:
    run = RunRecorder(frames=8).feed_all(as_the_worker_sends(events)).stored()
    kept = StoredRun.load(run.save(tmp_path / "r.somrun"))
    replayed = list(replay(kept))
    # The live order: started, compiled, chunks, quality, frames, the final map, finished.
    assert isinstance(replayed[0], Started) and isinstance(replayed[1], Compiled)
    assert isinstance(replayed[-2], FinalMap) and isinstance(replayed[-1], Finished)
    live_started = events[0]
    assert replayed[0].config.to_dict() == live_started.config.to_dict()
    assert replayed[0].iterations == live_started.iterations
    assert (replayed[0].kind, replayed[0].samples, replayed[0].features) == ("online", 60, 3)
    # Its data's names (and scaling, none here) as the live one announced them: the views name planes alike.
    assert replayed[0].feature_names == live_started.feature_names != ()
    assert replayed[0].scaling == live_started.scaling
    chunks = [ev for ev in replayed if isinstance(ev, ChunkTimed)]
    assert [(c.first, c.count, c.seconds) for c in chunks] == [
        (c.first, c.count, c.seconds) for c in kept.record.chunks
    ]
    assert chunks[-1].elapsed_s == pytest.approx(sum(c.seconds for c in kept.record.chunks))
    live_quality = [(q.iteration, q.qe, q.te) for q in events if isinstance(q, QualityMeasured)]
    assert [(q.iteration, q.qe, q.te) for q in replayed if isinstance(q, QualityMeasured)] == live_quality
    # Recorded again, the replay is the same run.
    # (with room for every kept frame: a full keeper would thin them again)
    again = RunRecorder(frames=len(run.frames) + 1).feed_all(replayed).stored()
    assert again.record.to_dict() == run.record.to_dict() and again.name == run.name
    assert again.iterations == run.iterations
    np.testing.assert_array_equal(again.final_map, run.final_map)
    assert [it for it, _ in again.frames] == [it for it, _ in run.frames]
    for (_, a), (_, b) in zip(again.frames, run.frames):
        np.testing.assert_array_equal(a, b)


def test_a_run_refused_before_it_started_replays_as_one_failure(tmp_path) -> None:
    cfg = RunConfig(impl="numpy-online", width=7, height=5, data=DataSpec(samples=60), steps=300, precision="int8")
    events = list(Session(cfg).run())
    run = RunRecorder().feed_all(events).stored()
    assert run.record.status == "failed" and run.final_map is None and run.final_image is None
    replayed = list(replay(StoredRun.load(run.save(tmp_path / "f.somrun"))))
    assert [type(ev).__name__ for ev in replayed][-1] == "Failed"
    assert not any(isinstance(ev, (ChunkTimed, FinalMap)) for ev in replayed)


def test_the_recorder_starts_afresh_with_each_run(events) -> None:
    rec = RunRecorder(frames=4).feed_all(events)
    first = rec.stored()
    rec.feed_all(events[:1])  # a new Started: nothing kept but the new run's announced colour range
    assert rec.record is None and rec.final_map is None and rec.frames == []
    assert rec.range is not None and np.array_equal(rec.range.lo, picture.data_range(events[0]).lo)
    with pytest.raises(ValueError, match="has not finished"):
        rec.stored()
    assert first.record.status == "ok"
