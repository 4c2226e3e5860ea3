"""Training from a stream: the in-memory run's scaling, initial map and map, on every lattice."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.data import Table, stream
from som_studio.core.impls import registry
from som_studio.core.impls import streamed as streamed_trainer
from som_studio.core.plans import fused_plan
from som_studio.core.som.problem import make_problem, make_stream_problem


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three Parquet files of row groups of 90 rows, 5 % of the values missing (and a copy with none)."""
    rng = np.random.default_rng(7)
    x = rng.random((700, 3)) * [1.0, 4.0, 0.5] + [0.0, -2.0, 10.0]
    holes = x.copy()
    holes[rng.random(x.shape) < 0.05] = np.nan
    out = {}
    for name, v in (("holes", holes), ("whole", x)):
        d = tmp_path_factory.mktemp(name)
        for i, (a, b) in enumerate([(0, 200), (200, 450), (450, 700)]):
            pq.write_table(
                pa.table({c: v[a:b, j] for j, c in enumerate("abc")}), d / f"p{i}.parquet", row_group_size=90
            )
        out[name] = (d, v)
    return out


@pytest.mark.parametrize("fmt", ["npy", "parquet"])
def test_a_streamed_feature_with_no_values_is_refused_by_name(tmp_path, fmt):
    """As a table read whole refuses it: named, with how to leave it out (its range is not 'too large')."""
    from som_studio.core.data import DataError

    x = np.random.default_rng(1).random((300, 3))
    x[:, 1] = np.nan
    for i, (a, b) in enumerate([(0, 120), (120, 300)]):
        if fmt == "npy":
            np.save(tmp_path / f"p{i}.npy", x[a:b])
        else:
            pq.write_table(pa.table({c: x[a:b, j] for j, c in enumerate("abc")}), tmp_path / f"p{i}.parquet")
    source = stream.open_source(str(tmp_path))
    cfg = RunConfig(impl="numpy-batch", width=4, height=3, epochs=1, data=DataSpec(path=str(tmp_path)), stream=True)
    want = "numpy.delete\\(array, 1, axis=1\\)" if fmt == "npy" else "--ignore b$"
    name = "x2" if fmt == "npy" else "b"
    with pytest.raises(DataError, match=f"column 2 \\('{name}'\\) has no values .*leave it out with {want}"):
        make_stream_problem(cfg, "batch", source, 64)
    # The same folder read into memory (it fits): refused before anything trains, in the same words.
    from som_studio.session.resolve import load_data

    with pytest.raises(DataError, match=f"column 2 \\('{name}'\\) has no values .*leave it out with {want}"):
        load_data(cfg.replace(stream=False))


CASES = [
    ("numpy-batch", "rect", False, "pca", "zscore", "holes"),
    ("numpy-batch", "hex", False, "sample", "minmax", "holes"),
    ("jax-fused-batch", "rect", False, "pca", "zscore", "holes"),
    ("jax-fused-batch", "hex", False, "sample", "minmax", "holes"),
    ("jax-fused-batch", "rect", True, "random", "zscore", "holes"),
    ("jax-fused-batch", "rect", False, "random", "none", "whole"),
]


@pytest.mark.parametrize("impl, topology, toroid, init, scaling, data", CASES)
def test_a_streamed_run_ends_at_the_in_memory_map(folder, impl, topology, toroid, init, scaling, data):
    path, x = folder[data]
    cfg = RunConfig(
        impl=impl,
        data=DataSpec(path=str(path)),
        width=5,
        height=4,
        epochs=3,
        topology=topology,
        toroid=toroid,
        init=init,
        scaling=scaling,
    )
    table = Table(x, ("a", "b", "c")).scaled(cfg.scaling_method)
    whole = make_problem(cfg, "batch", table.values)
    streamed = make_stream_problem(cfg, "batch", stream.open_source(path), 64)
    assert streamed.samples == 700 and streamed.missing == (data == "holes")
    np.testing.assert_allclose(streamed.stream.scaling.offset, table.scaling.offset, rtol=1e-12)
    np.testing.assert_allclose(streamed.stream.scaling.scale, table.scaling.scale, rtol=1e-12)
    np.testing.assert_allclose(streamed.init_map, whole.init_map, rtol=1e-6, atol=1e-7)
    maps = []
    for problem in (whole, streamed):
        trainer = streamed_trainer.create(registry.get(impl), problem)
        trainer.warmup()
        trainer.run(0, 3)
        maps.append(trainer.get_map())
        trainer.close()
    np.testing.assert_allclose(maps[1], maps[0], rtol=1e-6, atol=1e-6)


def test_the_shares_of_several_processes_merge_to_the_whole_sources_statistics_and_rows(folder):
    """Each of three processes reads its share; what they gather (here: stacked by the test) merges to the
    statistics of the whole source, and each seeded row comes from the process that holds it."""
    from som_studio.core.data import moments

    path, _x = folder["holes"]
    source = stream.open_source(path)
    parts = [moments.statistics(source, 64, (i, 3)) for i in range(3)]
    assert [m.rows for m in parts] == [source.share_rows(i, 3) for i in range(3)]
    stack = np.stack([m.flat() for m in parts])
    merged = moments.statistics(source, 64, (1, 3), gather=lambda _mine: stack)
    whole = moments.statistics(source, 64)
    assert merged.rows == whole.rows == 700
    np.testing.assert_allclose(merged.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(merged.comoments(), whole.comoments(), rtol=1e-10, atol=1e-9)
    np.testing.assert_array_equal(merged.low, whole.low)
    np.testing.assert_array_equal(merged.high, whole.high)
    rows = np.random.default_rng(0).integers(0, 700, size=40)
    held = [moments.gather_rows(source, rows, 64, (i, 3)) for i in range(3)]
    mask = [~np.isnan(h).all(axis=1) for h in held]
    stacked = np.stack([np.concatenate([h, m[:, None].astype(float)], axis=1) for h, m in zip(held, mask)])
    picked = moments.gather_rows(source, rows, 64, (0, 3), gather=lambda _mine: stacked)
    np.testing.assert_array_equal(picked, moments.gather_rows(source, rows, 64))


SHARDED = [
    ("jax-jit-sharded-batch", "2x1", "rect", False, "pca", "zscore"),
    ("jax-jit-sharded-batch", "1x2", "hex", False, "sample", "minmax"),
    ("jax-shardmap-batch", "2x2", "rect", True, "random", "zscore"),
    ("jax-pmap-batch", "2x1", "hex", True, "pca", "none"),
]


@pytest.mark.parametrize("impl, layout, topology, toroid, init, scaling", SHARDED)
def test_a_sharded_streamed_run_ends_at_the_in_memory_map_of_its_layout(
    folder, impl, layout, topology, toroid, init, scaling
):
    """Batches of 64 rows (the last short) placed over the layout's data axis, sums kept on the devices."""
    path, x = folder["holes"]
    cfg = RunConfig(
        impl=impl,
        data=DataSpec(path=str(path)),
        width=5,
        height=4,
        epochs=3,
        topology=topology,
        toroid=toroid,
        init=init,
        scaling=scaling,
        layout=layout,
    )
    whole = make_problem(cfg, "batch", Table(x, ("a", "b", "c")).scaled(cfg.scaling_method).values)
    streamed = make_stream_problem(cfg, "batch", stream.open_source(path), 64)
    maps = []
    for problem in (whole, streamed):
        trainer = streamed_trainer.create(registry.get(impl), problem)
        trainer.warmup()
        trainer.run(0, 2)
        trainer.run(2, 1)
        maps.append(trainer.get_map())
        if problem is streamed:
            assert trainer.rows_read == 3 * 700
            facts = trainer.describe()
            assert facts["sharding"]["layout"] == layout and facts["memory_compiled_bytes"] > 0
        trainer.close()
    np.testing.assert_allclose(maps[1], maps[0], rtol=1e-6, atol=1e-6)


def test_a_pass_s_short_last_batch_searches_its_own_rows_to_the_in_memory_map(folder):
    """700 rows in batches of 256: the last 188 go through a program of whole chunks of the plan (on the CPU 192
    rows in chunks of 24, some padding; an accelerator's chunk of 4 pads none), compiled with the others, not
    through a full batch of padding."""
    path, x = folder["holes"]
    cfg = RunConfig(impl="jax-fused-batch", data=DataSpec(path=str(path)), width=5, height=4, epochs=2)
    table = Table(x, ("a", "b", "c")).scaled(cfg.scaling_method)
    maps = []
    with fused_plan.forced("matmul", budget=6144):
        for problem in (
            make_problem(cfg, "batch", table.values),
            make_stream_problem(cfg, "batch", stream.open_source(path), 256),
        ):
            trainer = streamed_trainer.create(registry.get(cfg.impl), problem)
            trainer.warmup()
            if problem.stream is not None:
                c = trainer.inner.plan.chunk
                tail = -(-188 // c) * c
                assert set(trainer.inner._tails) == {tail} and tail < 256
            trainer.run(0, 2)
            maps.append(trainer.get_map())
            trainer.close()
    np.testing.assert_allclose(maps[1], maps[0], rtol=1e-6, atol=1e-6)


@pytest.mark.test_devices
def test_a_sharded_epoch_goes_on_from_its_saved_sums(folder):
    """Sums taken after three batches (a checkpoint inside an epoch) and given to a fresh trainer: the rest
    of the epoch ends at the uninterrupted trainer's map, bit for bit."""
    path, _x = folder["holes"]
    cfg = RunConfig(impl="jax-shardmap-batch", data=DataSpec(path=str(path)), width=5, height=4, epochs=2)
    problem = make_stream_problem(cfg.replace(layout="2x2"), "batch", stream.open_source(path), 64)
    batches = [problem.stream.scaled(b.values, problem.dtype) for b in problem.stream.source.reader(64)]
    impl = registry.get("jax-shardmap-batch")
    whole, first, then = (impl.create(problem) for _ in range(3))
    for trainer, rows in ((whole, batches), (first, batches[:3])):
        trainer.begin_epoch(0)
        for b in rows:
            trainer.add_rows(b)
    then.begin_epoch(0)
    then.set_epoch_sums(first.epoch_sums())
    for b in batches[3:]:
        then.add_rows(b)
    for trainer in (whole, then):
        trainer.end_epoch(0)
    np.testing.assert_array_equal(then.get_map(), whole.get_map())
    for trainer in (whole, first, then):
        trainer.close()


def test_bench_streams_a_folder_and_records_what_it_read(folder, tmp_path, capsys):
    from som_studio.cli import main

    path, _x = folder["holes"]
    out = tmp_path / "runs.json"
    args = ["bench", "--data", str(path), "--impl", "jax-fused-batch", "--grid", "5x4", "--epochs", "2", "-q"]
    assert main([*args, "--stream", "--batch-rows", "100", "--json", str(out)]) == 0
    run = json.loads(out.read_text())["runs"][0]
    assert run["status"] == "ok" and run["samples"] == 700
    facts = run["extra"]["stream"]
    assert (facts["rows"], facts["files"], facts["batch_rows"], facts["by_process"]) == (700, 3, 100, [700])
    assert facts["bytes_read"] > 0
    assert run["timings"]["phases"]["read"] >= 0
    assert main([*args, "--json", str(tmp_path / "mem.json")]) == 0  # the same folder, loaded whole
    mem = json.loads((tmp_path / "mem.json").read_text())["runs"][0]
    assert "stream" not in mem["extra"]
    assert mem["quality"]["qe"] == pytest.approx(run["quality"]["qe"], rel=1e-5)


def test_a_csv_file_too_big_for_memory_streams_unasked(tmp_path, capsys, monkeypatch):
    """One CSV file has no row count: one large enough that its table might not fit is counted and streams
    when it would not (the command says so), where reading it whole would be killed for memory; it loads
    whole when it fits, and the app's form judges it the same way."""
    from som_studio.app_model.form import DataKey, read_data
    from som_studio.cli import main
    from som_studio.core.impls import memory
    from som_studio.session import preflight, resolve

    monkeypatch.setattr(resolve, "TEXT_SAMPLE_BYTES", 1 << 16)  # its rows estimated from its first 64 KiB
    x = np.random.default_rng(5).normal(size=(6_000, 6))
    path = tmp_path / "big.csv"
    np.savetxt(path, x, delimiter=",", fmt="%.5f", header=",".join(f"f{j}" for j in range(6)), comments="")
    assert path.stat().st_size > resolve.TEXT_SAMPLE_BYTES
    out = tmp_path / "runs.json"
    args = ["bench", "--data", str(path), "--impl", "jax-fused-batch", "--grid", "5x4", "--epochs", "2"]
    # 6,000 x 6 loads as ~0.9 MB: let a table have 0.4 MB, and the run itself the machine's memory.
    monkeypatch.setattr(preflight, "STREAM_SHARE", 4e5 / memory.host_available())
    assert main([*args, "--json", str(out)]) == 0
    assert f"{path}: 6,000 rows x 6 would not fit in memory: streamed" in capsys.readouterr().err
    run = json.loads(out.read_text())["runs"][0]
    assert run["status"] == "ok" and run["extra"]["stream"]["rows"] == 6_000 and not run["extra"]["stream"]["asked"]
    assert read_data(DataKey(str(path))).streamed is not None  # the app does not load it either
    monkeypatch.setattr(preflight, "STREAM_SHARE", 0.5)
    assert not resolve.text_may_not_fit(str(path))
    assert main([*args, "--json", str(out), "--force"]) == 0
    assert "stream" not in json.loads(out.read_text())["runs"][0]["extra"]


def test_a_gzipd_csv_is_judged_by_its_text_not_its_size_on_disk(tmp_path, capsys, monkeypatch):
    """A ``.csv.gz`` far smaller on disk than its table streams unasked when the table would not fit, and trains
    the map its plain twin does."""
    from som_studio.cli import main
    from som_studio.core.impls import memory
    from som_studio.session import preflight, resolve

    monkeypatch.setattr(resolve, "TEXT_SAMPLE_BYTES", 1 << 16)
    x = np.random.default_rng(5).integers(0, 4, size=(6_000, 6)) + 0.5  # few distinct values: compresses well
    text = "".join(f"f{j}," for j in range(5)) + "f5\n" + "".join(",".join(map(str, r)) + "\n" for r in x)
    path, twin = tmp_path / "big.csv.gz", tmp_path / "big.csv"
    path.write_bytes(gzip.compress(text.encode()))
    twin.write_text(text)
    assert path.stat().st_size < resolve.TEXT_SAMPLE_BYTES < len(text)  # under the sample on disk, not in its text
    monkeypatch.setattr(preflight, "STREAM_SHARE", 4e5 / memory.host_available())
    assert resolve.text_may_not_fit(str(path))
    qe = []
    for data in (path, twin):
        out = tmp_path / f"{data.name}.json"
        args = ["bench", "--data", str(data), "--impl", "numpy-batch", "--grid", "5x4", "--epochs", "1"]
        assert main([*args, "--json", str(out)]) == 0
        assert f"{data}: 6,000 rows x 6 would not fit in memory: streamed" in capsys.readouterr().err
        run = json.loads(out.read_text())["runs"][0]
        assert run["status"] == "ok" and run["extra"]["stream"]["rows"] == 6_000
        qe.append(run["quality"]["qe"])
    assert qe[0] == qe[1]


def test_an_implementation_that_cannot_stream_is_refused_a_stream(folder, capsys):
    from som_studio.cli import main

    path, _x = folder["whole"]
    assert main(["bench", "--data", str(path), "--impl", "jax-vmap-batch", "--grid", "4x3", "--stream"]) != 0
    assert "does not train from a stream" in capsys.readouterr().err


def test_a_streamed_run_counts_the_in_memory_hits_and_labels(tmp_path):
    from som_studio.session.session import Session, run_to_completion

    rng = np.random.default_rng(3)
    x = rng.random((500, 2))
    x[rng.random(x.shape) < 0.05] = np.nan
    x[np.isnan(x).all(axis=1), 1] = 0.5  # every row knows a feature
    kinds = np.where(x[:, 0] > 0.5, "right", "left")
    for i, (a, b) in enumerate([(0, 260), (260, 500)]):
        table = pa.table({"u": x[a:b, 0], "kind": kinds[a:b], "v": x[a:b, 1]})
        pq.write_table(table, tmp_path / f"p{i}.parquet", row_group_size=100)
    cfg = RunConfig(impl="jax-fused-batch", data=DataSpec(path=str(tmp_path)), width=4, height=3, epochs=2)
    cfg = cfg.replace(labels="kind", scaling="minmax")
    runs = [
        run_to_completion(Session(cfg.replace(stream=s, batch_rows=128), snapshot_interval_s=None))
        for s in (True, False)
    ]
    streamed, whole = (r.model for r in runs)
    assert runs[0].status == runs[1].status == "ok" and "stream" in runs[0].extra
    np.testing.assert_array_equal(streamed.hits, whole.hits)
    np.testing.assert_array_equal(streamed.unit_labels, whole.unit_labels)
    np.testing.assert_allclose(streamed.unit_purity, whole.unit_purity)
    assert runs[0].label_purity == pytest.approx(runs[1].label_purity)
    np.testing.assert_allclose(streamed.scaling.offset, whole.scaling.offset)


def test_a_streamed_epoch_says_where_it_stands_and_ends_at_the_same_map(folder):
    from som_studio.session.events import ChunkTimed, EpochProgress, Finished, Snapshot
    from som_studio.session.session import Session

    path, _x = folder["holes"]
    cfg = RunConfig(
        impl="numpy-batch", data=DataSpec(path=str(path)), width=4, height=3, epochs=2, stream=True, batch_rows=100
    )

    def events(every):
        return list(Session(cfg, snapshot_interval_s=None, progress_interval_s=every).run())

    told, quiet = events(0.0), events(None)
    steps = [e for e in told if isinstance(e, EpochProgress)]
    assert not any(isinstance(e, EpochProgress) for e in quiet)
    # Every batch of both epochs (every_s 0): 100, 200, ... 700 rows of each, in order, before its chunk's end.
    assert [(e.iteration, e.row) for e in steps] == [(t, r) for t in (0, 1) for r in range(100, 701, 100)]
    assert all(e.rows == 700 and e.first == 0 and 0 <= e.wait_s <= e.seconds for e in steps)
    assert steps[-1].epoch_left_s == 0.0 and steps[0].rows_per_s > 0 and 0 <= steps[0].wait_share <= 1
    ends = [i for i, e in enumerate(told) if isinstance(e, ChunkTimed)]
    assert told.index(steps[0]) < ends[0]
    maps = [next(e.map for e in reversed(evs) if isinstance(e, Snapshot)) for evs in (told, quiet)]
    np.testing.assert_array_equal(maps[0], maps[1])
    assert isinstance(told[-1], Finished) and told[-1].record.status == "ok"


def test_pause_holds_a_streamed_epoch_between_its_batches(folder):
    import threading
    import time

    from som_studio.session.events import EpochProgress, Snapshot
    from som_studio.session.session import Session

    path, _x = folder["whole"]
    cfg = RunConfig(
        impl="numpy-batch", data=DataSpec(path=str(path)), width=4, height=3, epochs=2, stream=True, batch_rows=100
    )
    session = Session(cfg, snapshot_interval_s=None, progress_interval_s=0.0)
    resumed = threading.Event()

    def resume_later():
        time.sleep(0.5)  # far longer than the few batches left would take, were they not held
        resumed.set()
        session.resume()

    after: list[bool] = []  # per event after Pause: whether it came once the run was resumed
    final = None
    for ev in session.run():
        if session.paused or resumed.is_set():
            after.append(resumed.is_set())
        elif isinstance(ev, EpochProgress) and (ev.iteration, ev.row) == (0, 300):
            session.pause()  # Pause pressed inside the first epoch
            threading.Thread(target=resume_later).start()
        if isinstance(ev, Snapshot):
            final = ev.map
    assert len(after) > 10 and all(after)  # every later batch was trained once the run was resumed
    quiet = [e.map for e in Session(cfg, snapshot_interval_s=None).run() if isinstance(e, Snapshot)][-1]
    np.testing.assert_array_equal(final, quiet)


def test_a_streamed_run_stopped_within_an_epoch_records_what_it_read(folder, tmp_path):
    # Its record said 0 bytes and 0 s of reading: the pass's counts were added at its end only.
    from som_studio.session.checkpoint import Checkpoints
    from som_studio.session.events import EpochProgress, Finished
    from som_studio.session.session import Session

    path, _x = folder["holes"]
    cfg = RunConfig(
        impl="numpy-batch", data=DataSpec(path=str(path)), width=4, height=3, epochs=2, stream=True, batch_rows=100
    )
    checkpoint = Checkpoints(tmp_path / "ck", every_s=3600)  # a stop within the epoch keeps its rows read
    s = Session(cfg, snapshot_interval_s=None, progress_interval_s=0.0, checkpoint=checkpoint)
    record = None
    for e in s.run():
        if isinstance(e, EpochProgress) and e.row == 300:
            s.cancel()
        if isinstance(e, Finished):
            record = e.record
    assert record is not None and record.status == "cancelled" and record.iterations_done == 0
    assert 300 <= record.extra["checkpoint"]["row"] < 700 and record.extra["stream"]["bytes_read"] > 0
