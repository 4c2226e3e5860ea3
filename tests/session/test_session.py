from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.session.events import (
    ChunkTimed,
    Compiled,
    Failed,
    Finished,
    QualityMeasured,
    Snapshot,
    Started,
)
from som_studio.session.session import Session, run_to_completion


def _events(cfg, **kw):
    return list(Session(cfg, **kw).run())


@pytest.fixture
def online(small_config):
    return small_config.replace(impl="numpy-online", steps=600)


def test_event_order_and_record(online):
    evs = _events(online, snapshot_interval_s=None, quality_points=3, quality_share=None)
    kinds = [type(e) for e in evs]
    assert kinds[0] is Started and kinds[-1] is Finished
    assert kinds.index(Compiled) < kinds.index(ChunkTimed)
    # Snapshots: exactly the initial and the final map when not throttled in.
    snaps = [e for e in evs if isinstance(e, Snapshot)]
    assert [s.iteration for s in snaps] == [0, 600]
    assert not np.array_equal(snaps[0].map, snaps[1].map)
    # Chunks cover every iteration once, in order.
    chunks = [e for e in evs if isinstance(e, ChunkTimed)]
    assert chunks[0].first == 0 and chunks[-1].end == 600
    assert all(a.end == b.first for a, b in zip(chunks, chunks[1:]))
    q = [e.iteration for e in evs if isinstance(e, QualityMeasured)]
    assert q == [0, 200, 400, 600]
    rec = evs[-1].record
    assert rec.status == "ok" and rec.iterations_done == 600
    assert rec.median_s > 0 and rec.p95_s >= rec.median_s
    assert rec.qe == evs[-2].qe if isinstance(evs[-2], QualityMeasured) else rec.qe is not None
    assert rec.compile_s >= 0 and rec.total_s >= sum(c.seconds for c in rec.chunks)
    d = rec.to_dict()
    assert set(d) >= {"impl", "kind", "status", "message", "config", "layout", "env", "timings", "quality", "memory"}
    assert set(d["env"]) >= {"python", "numpy", "jax", "jaxlib", "backend", "devices"}
    assert d["layout"] == "1x1"
    assert d["timings"]["iteration_s"] == [c.seconds / c.count for c in rec.chunks]


def test_snapshots_are_throttled_but_keep_first_and_last(small_config):
    cfg = small_config.replace(impl="numpy-online", steps=3000)
    evs = _events(cfg, snapshot_interval_s=0.0, quality_points=0, chunk_target_s=0.001)
    snaps = [e.iteration for e in evs if isinstance(e, Snapshot)]
    chunks = [e for e in evs if isinstance(e, ChunkTimed)]
    assert snaps[0] == 0 and snaps[-1] == 3000
    assert len(snaps) >= 3 and len(snaps) <= len(chunks) + 1
    evs = _events(cfg, snapshot_interval_s=3600.0, quality_points=0)
    assert [e.iteration for e in evs if isinstance(e, Snapshot)] == [0, 3000]


def test_a_watcher_asks_for_fewer_frames_never_for_more(small_config):
    # The app says how often it draws frames (from any thread, here before the run): the session gives no more,
    # and still the first and the last map; asking for more than the session's own rate gives no more either.
    cfg = small_config.replace(impl="numpy-online", steps=3000)
    fewer = Session(cfg, snapshot_interval_s=0.0, quality_points=0, chunk_target_s=0.001)
    fewer.frame_interval(3600.0)
    evs = list(fewer.run())
    assert [e.iteration for e in evs if isinstance(e, Snapshot)] == [0, 3000]
    assert len([e for e in evs if isinstance(e, ChunkTimed)]) > 2  # not for want of chunks
    more = Session(cfg, snapshot_interval_s=3600.0, quality_points=0, chunk_target_s=0.001)
    more.frame_interval(0.0)
    assert [e.iteration for e in more.run() if isinstance(e, Snapshot)] == [0, 3000]


def test_chunks_grow_to_the_target(small_config):
    cfg = small_config.replace(impl="numpy-online", steps=5000)
    rec = run_to_completion(Session(cfg, snapshot_interval_s=None, quality_points=0, chunk_target_s=0.02))
    counts = [c.count for c in rec.chunks]
    assert counts[0] == 1 and max(counts) > 16


def test_cancel_stops_within_a_chunk(small_config):
    cfg = small_config.replace(impl="numpy-online", steps=200_000)
    session = Session(cfg, snapshot_interval_s=None, quality_points=0)
    evs = []
    for ev in session.run():
        evs.append(ev)
        if isinstance(ev, ChunkTimed) and ev.end > 50:
            session.cancel()
            stop_at = ev.end
    rec = evs[-1].record
    assert isinstance(evs[-1], Finished) and rec.status == "cancelled"
    assert rec.iterations_done == stop_at
    assert [e.iteration for e in evs if isinstance(e, Snapshot)][-1] == stop_at
    assert "cancelled" in rec.message


def test_pause_blocks_until_resume(small_config):
    cfg = small_config.replace(impl="numpy-online", steps=400)
    session = Session(cfg, snapshot_interval_s=None, quality_points=0)
    gen = session.run()
    for ev in gen:
        if isinstance(ev, ChunkTimed):
            break
    session.pause()
    assert session.paused
    got: list = []
    t = threading.Thread(target=lambda: got.extend(gen))
    t.start()
    t.join(0.3)
    assert t.is_alive() and not got  # paused between chunks
    session.resume()
    t.join(10)
    assert not t.is_alive() and isinstance(got[-1], Finished)


@pytest.mark.parametrize(
    ("changes", "text"),
    [
        ({"impl": "no-such-impl"}, "unknown implementation 'no-such-impl'"),
        ({"impl": "numpy-online", "epochs": 5}, "epochs"),
        ({"impl": "numpy-batch", "epochs": 2, "width": 0}, "grid"),
        ({"impl": "numpy-batch", "epochs": 2, "data": DataSpec(path="/nonexistent/x.csv")}, "no such file"),
    ],
)
def test_bad_configs_fail_with_a_message(small_config, changes, text):
    evs = _events(small_config.replace(**changes))
    assert len(evs) == 1 and isinstance(evs[0], Failed)
    assert evs[0].record.status == "failed"
    assert text in evs[0].record.message
    env = evs[0].record.env  # the JSON's env keys are there even for a run that never started
    assert {"python", "numpy", "jax", "jaxlib", "backend", "devices"} <= set(env) and env["backend"] is None


def test_too_big_is_refused_up_front(tmp_path):
    # 32768 x 32768 units of 64 float64 features: 550 GB, on any machine.
    np.save(tmp_path / "wide.npy", np.zeros((4, 64)))
    cfg = RunConfig(
        impl="numpy-online",
        width=32768,
        height=32768,
        steps=1,
        precision="float64",
        data=DataSpec(path=str(tmp_path / "wide.npy")),
    )
    evs = _events(cfg)
    assert isinstance(evs[0], Failed)
    msg = evs[0].record.message
    assert "needs about" in msg and "available" in msg and "GiB" in msg


class _Exploding:
    def __init__(self, problem):
        self.map = problem.init_map.copy()

    def warmup(self):
        pass

    def run(self, first, count):
        if first >= 3:
            raise RuntimeError("device on fire")

    def get_map(self):
        return self.map.copy()

    def close(self):
        pass


@pytest.fixture
def exploding_impl(register_impl):
    return register_impl("test-exploding", f"{__name__}:_Exploding")


def test_a_failing_trainer_yields_failed(small_config, exploding_impl):
    evs = _events(small_config.replace(impl=exploding_impl.name, epochs=10), quality_points=0)
    assert isinstance(evs[-1], Failed)
    assert "device on fire" in evs[-1].record.message
    assert evs[-1].record.chunks  # what ran before the failure is kept


@pytest.mark.cpu_backend
def test_jax_runs_report_compile_apart_and_do_not_recompile(small_config):
    cfg = small_config.replace(impl="jax-jit-online", steps=2000)
    rec = run_to_completion(Session(cfg, snapshot_interval_s=0.0, quality_points=4, chunk_target_s=0.005))
    assert rec.status == "ok"
    assert rec.compile_s > 0
    assert rec.compiles == 1  # the warm-up's compile only: chunks of every size reuse it
    assert rec.env["backend"] == "cpu" and rec.env["devices"]
    assert rec.peak_bytes is not None and rec.estimate_bytes > 0


def test_time_the_caller_spends_between_events_is_not_the_runs():
    # A caller that draws or encodes every event (the app, compare's frames) must
    # not make the run look slower: total_s counts only the session's own time.
    import time as _time

    cfg = RunConfig(impl="numpy-batch", width=4, height=3, epochs=3, data=DataSpec(samples=20))
    slept = 0.0
    record = None
    for ev in Session(cfg, snapshot_interval_s=None, quality_points=0).run():
        _time.sleep(0.05)
        slept += 0.05
        record = getattr(ev, "record", record)
    assert record is not None and record.status == "ok"
    assert slept >= 0.3
    assert record.total_s < slept / 2  # the tiny run itself takes milliseconds


def test_a_cancelled_run_does_not_pass_off_an_earlier_quality_as_its_final_one(small_config):
    cfg = small_config.replace(impl="numpy-online", steps=200_000)
    session = Session(cfg, snapshot_interval_s=None, quality_points=10)
    for ev in session.run():
        if isinstance(ev, ChunkTimed) and ev.end > 50:
            session.cancel()
        rec = getattr(ev, "record", None)
    assert rec is not None and rec.status == "cancelled"
    assert rec.history and rec.history[-1]["iteration"] == 0  # measured on the initial map only
    assert rec.qe is None and rec.te is None  # quality.qe/te are the final map's, which was not measured


def test_the_estimate_counts_the_mask_of_missing_values(small_config):
    # Data with NaN train with a mask of known features beside them: the record's estimate says so.
    cfg = small_config.replace(impl="numpy-batch", epochs=1)
    x = np.random.default_rng(0).random((400, 3))
    holed = x.copy()
    holed[::3, 1] = np.nan
    plain = run_to_completion(Session(cfg, data=x, snapshot_interval_s=None, quality_points=0))
    missing = run_to_completion(Session(cfg, data=holed, snapshot_interval_s=None, quality_points=0))
    assert plain.status == missing.status == "ok"
    assert missing.estimate_bytes > plain.estimate_bytes


@pytest.mark.parametrize("impl", ["numpy-batch", "jax-fused-batch"])
def test_every_second_of_a_run_is_counted_by_phase(impl, tmp_path):
    # A table with labels: the final quality pass also gives the model's hits and labels.
    from som_studio.core.data import Table
    from som_studio.core.som import metrics
    from som_studio.session.record import PHASES

    rng = np.random.default_rng(0)
    values = rng.random((90, 4))
    labels = np.where(values[:, 0] > 0.5, "a", "b")
    table = Table(values=values, feature_names=("p", "q", "r", "s"), labels=labels, label_column="kind")
    cfg = RunConfig(impl=impl, width=5, height=4, epochs=4, data=DataSpec(samples=90))
    events = list(Session(cfg, data=table, snapshot_interval_s=None, quality_points=2).run())
    record = events[-1].record
    assert record.status == "ok", record.message
    t = record.to_dict()["timings"]
    assert list(t["phases"]) == list(PHASES)
    assert all(v >= 0 for v in t["phases"].values())
    assert t["phases"]["compile"] >= record.compile_s > 0 or impl == "numpy-batch"
    assert t["phases"]["train"] <= record.total_s
    assert t["phases"]["quality"] > 0 and t["phases"]["data"] > 0
    assert t["phases"]["frames"] == 0.0  # nobody watched: no map frames between the first and the last
    # The wall time holds every phase, and training (compile and initial map included) sits inside it.
    assert record.total_s <= t["wall_s"]
    assert sum(t["phases"].values()) <= t["wall_s"] * (1 + 1e-9)
    # Hits and labels from the final quality pass: the units the reference finds.
    first, _ = metrics.nearest_units(np.asarray(_final_map(events), np.float64), values)
    np.testing.assert_array_equal(record.model.hits.ravel(), metrics.hits(first, 20))
    assert record.label_purity is not None


def test_the_data_a_caller_read_for_the_run_is_its_reading(tmp_path, monkeypatch):
    """The seconds a caller spent reading the data before the session are the run's ``phases.data`` and are in
    its wall time; where the command line's runs share one read, the first run counts it."""
    from som_studio.commands import bench
    from som_studio.session import session as sessionmod

    cfg = RunConfig(impl="numpy-batch", width=3, height=2, epochs=2, data=DataSpec(samples=40))
    record = run_to_completion(Session(cfg, data=np.random.default_rng(0).random((40, 3)), read_s=5.0))
    t = record.to_dict()["timings"]
    assert 5.0 <= t["phases"]["data"] < 5.0 + t["wall_s"] - record.total_s
    assert sum(t["phases"].values()) <= t["wall_s"] * (1 + 1e-9)

    load, given = bench._load, []

    def slow_load(*args):
        time.sleep(0.05)
        return load(*args)

    class Seen(sessionmod.Session):
        def __init__(self, *args, read_s=0.0, **kw):
            given.append(read_s)
            super().__init__(*args, read_s=read_s, **kw)

    monkeypatch.setattr(bench, "_load", slow_load)
    monkeypatch.setattr(sessionmod, "Session", Seen)
    records = bench.run_configs([cfg, cfg.replace(impl="numpy-online", epochs=None, steps=50)], silent=True)
    assert [r.status for r in records] == ["ok", "ok"]
    assert given[0] >= 0.05 and given[1:] == [0.0]
    assert records[0].phases["data"] >= given[0] > records[1].phases["data"]


def _final_map(events):
    from som_studio.session.events import Snapshot

    return [ev for ev in events if isinstance(ev, Snapshot)][-1].map


def test_missing_values_are_judged_by_the_preflight(small_config, register_impl):
    # Every built-in implementation trains on missing values; one that does not is refused by
    # the one preflight (the session, the form and the comparison queue ask it alike).
    from som_studio.core.impls import registry
    from som_studio.session.preflight import preflight

    impl = register_impl("test-no-missing", registry.get("numpy-batch").factory)
    cfg = small_config.replace(impl=impl.name, epochs=1)
    assert preflight(cfg) == preflight(cfg, missing=False) == []
    (refusal,) = preflight(cfg, missing=True)
    assert refusal.field == "impl" and "does not train on data with missing values" in refusal.reason
    holed = np.random.default_rng(0).random((40, 3))
    holed[::3, 1] = np.nan
    record = run_to_completion(Session(cfg, data=holed, snapshot_interval_s=None, quality_points=0))
    assert record.status == "failed" and record.refusal == refusal and record.message == str(refusal)


@pytest.mark.parametrize("impl", ["jax-scan-online", "jax-jit-online"])
def test_a_watched_run_records_its_frames_and_they_show_the_map_they_name(impl, small_config):
    # Every chunk gives a frame (no budget), its map copied to the host asynchronously and finished
    # before the next chunk takes the buffer; the copies' time is phases.frames, not training time.
    cfg = small_config.replace(impl=impl, steps=600)
    events = list(Session(cfg, snapshot_interval_s=0.0, frame_share=None, quality_points=0).run())
    record = events[-1].record
    assert record.status == "ok", record.message
    snaps = [e for e in events if isinstance(e, Snapshot)]
    chunks = [e for e in events if isinstance(e, ChunkTimed)]
    assert [s.iteration for s in snaps] == [0, *(c.end for c in chunks)]
    t = record.to_dict()["timings"]
    assert t["phases"]["frames"] > 0
    assert t["total_s"] + t["phases"]["frames"] <= t["wall_s"]
    # Watching changes nothing in the training: the same final map as headless.
    alone = list(Session(cfg, snapshot_interval_s=None, quality_points=0).run())
    np.testing.assert_array_equal(snaps[-1].map, _final_map(alone))
    assert not np.array_equal(snaps[1].map, snaps[-1].map)  # and the frames moved with it


def test_frames_are_paced_by_what_their_pictures_cost(small_config):
    # The consumer books each picture's cost with the session. Pictures that cost nothing leave
    # frames to the interval; pictures that cost far more than the run leave none between the
    # initial and the final map: the budget is a share of the training time.
    cfg = small_config.replace(impl="numpy-online", steps=3000)

    def snapshots(picture_s: float) -> list[int]:
        session = Session(cfg, snapshot_interval_s=0.0, quality_points=0, chunk_target_s=0.001)
        out = []
        for ev in session.run():
            if isinstance(ev, Snapshot):
                out.append(ev.iteration)
                session.frame_cost(picture_s)
        return out

    assert len(snapshots(0.0)) > 3
    assert snapshots(1e6) == [0, 3000]


def test_the_initial_maps_picture_is_not_charged_to_the_training_frames_budget():
    # The first picture a watcher makes pays what later ones do not (its views' setup): booked against the
    # frames' 2 % of training time, it held back every frame of a small run's first seconds.
    cfg = RunConfig(impl="numpy-batch", width=8, height=6, data=DataSpec(samples=60), epochs=40)
    session = Session(cfg, snapshot_interval_s=0.0, quality_points=0)
    snaps = []
    for ev in session.run():
        if isinstance(ev, Snapshot):
            snaps.append(ev.iteration)
            session.frame_cost(0.1 if len(snaps) == 1 else 0.0, ev.iteration)  # the initial map's: dear
    assert snaps[0] == 0 and len([it for it in snaps if 0 < it < 40]) >= 2  # frames came while it trained


def test_a_stopped_run_keeps_its_scaling_so_its_map_reads_in_the_data_s_units(tmp_path):
    """A run stopped partway on a z-scored table: its model holds the scaling (its map in the file's units, new
    rows searched in the scaled space), without the hits the skipped final pass would have counted."""
    from som_studio.core.som import metrics
    from som_studio.trained import SomRun

    rng = np.random.default_rng(3)
    values = 1000 + 50 * rng.random((300, 3))
    csv = tmp_path / "t.csv"
    np.savetxt(csv, values, delimiter=",", header="a,b,c", comments="")
    cfg = RunConfig(
        impl="numpy-online", width=5, height=4, steps=500_000, data=DataSpec(path=str(csv)), scaling="zscore"
    )
    session = Session(cfg, snapshot_interval_s=None, quality_points=0)
    events = []
    for ev in session.run():
        events.append(ev)
        if isinstance(ev, ChunkTimed) and ev.end > 100:
            session.cancel()
    record = events[-1].record
    assert record.status == "cancelled"
    assert record.model is not None and record.model.hits is None
    run = SomRun.trained(record, _final_map(events))
    assert 900 < run.codebook.mean() < 1100  # the file's units, not z-scores
    want, _ = metrics.nearest_units(run._trained, run.scaling.apply(values))
    got = run.project(values)
    np.testing.assert_array_equal(got.bmu_row * run.width + got.bmu_col, want)


@pytest.mark.parametrize("every", [None, 0.15])
def test_a_long_run_measures_between_its_planned_points_when_asked(small_config, every):
    """The app's Quality dock: 2,000,000 epochs plan their first point 100,000 in, minutes away. Asked for one every
    so many training seconds, the run measures at chunk ends between the planned points; not asked, it does not."""
    cfg = small_config.replace(impl="numpy-online", steps=5_000_000)
    session = Session(cfg, snapshot_interval_s=None, quality_points=2, quality_every_s=every, quality_share=1.0)
    trained = 0.0
    for ev in session.run():
        if isinstance(ev, ChunkTimed):
            trained = ev.elapsed_s
            if trained > 1.2:
                session.cancel()
        rec = getattr(ev, "record", None)
    from som_studio.session.timing import quality_iterations

    planned = set(quality_iterations(cfg.iterations, 2))
    between = [h["iteration"] for h in rec.history if h["iteration"] not in planned]
    if every is None:
        assert between == []
    else:
        assert len(between) >= 3, rec.history  # about every 0.15 s of the 1.2 s trained
        assert between == sorted(set(between))
