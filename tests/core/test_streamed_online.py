"""Online steps from a stream: step t on the stream's row t mod N, the in-memory run of the same rows in order."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.data import stream
from som_studio.core.impls import registry
from som_studio.core.impls import streamed as streamed_trainer
from som_studio.core.impls.jax_scan_online import ScanOnline
from som_studio.core.plans.online_plan import OnlinePlan
from som_studio.core.som.problem import make_problem, make_stream_problem, rows_in_order

ROWS = 230
# Chunks as the session cuts them: across batch boundaries and the end of the data (steps wrap around).
CHUNKS = [(0, 1), (1, 40), (41, 190), (231, 169)]
STEPS = 400


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Three Parquet files of row groups of 30 rows, 6 % of the values missing (and a copy with none)."""
    rng = np.random.default_rng(11)
    x = rng.random((ROWS, 3)) * [1.0, 4.0, 0.5] + [0.0, -2.0, 10.0]
    holes = x.copy()
    holes[rng.random(x.shape) < 0.06] = np.nan
    out = {}
    for name, v in (("holes", holes), ("whole", x)):
        d = tmp_path_factory.mktemp(name)
        for i, (a, b) in enumerate([(0, 70), (70, 150), (150, ROWS)]):
            pq.write_table(
                pa.table({c: v[a:b, j] for j, c in enumerate("abc")}), d / f"p{i}.parquet", row_group_size=30
            )
        out[name] = (d, v)
    return out


def _problems(folder, data, impl, topology, toroid, scaling="zscore"):
    """The streamed problem and its in-memory reference: the same scaled rows, in order, the same initial map."""
    path, x = folder[data]
    cfg = RunConfig(
        impl=impl,
        data=DataSpec(path=str(path)),
        width=5,
        height=4,
        steps=STEPS,
        topology=topology,
        toroid=toroid,
        init="random",
        scaling=scaling,
    )
    streamed = make_stream_problem(cfg, "online", stream.open_source(path), 48)
    rows = streamed.stream.scaled(x, streamed.dtype)
    whole = dataclasses.replace(make_problem(cfg, "online", rows), init_map=streamed.init_map, in_order=True)
    return whole, streamed


def _train(trainer):
    trainer.warmup()
    for first, count in CHUNKS:
        trainer.run(first, count)
    got = trainer.get_map()
    trainer.close()
    return got


CASES = [
    ("numpy-online", "rect", False, "whole"),
    ("numpy-online", "hex", False, "holes"),
    ("numpy-online", "rect", True, "holes"),
    ("jax-scan-online", "rect", False, "holes"),
    ("jax-scan-online", "hex", False, "holes"),
    ("jax-scan-online", "rect", True, "whole"),
    ("jax-jit-online", "hex", True, "holes"),
]


@pytest.mark.parametrize("impl, topology, toroid, data", CASES)
def test_a_streamed_online_run_ends_at_the_in_memory_map_of_its_rows_in_order(folder, impl, topology, toroid, data):
    whole, streamed = _problems(folder, data, impl, topology, toroid)
    assert streamed.in_order and streamed.missing == (data == "holes")
    maps = [_train(streamed_trainer.create(registry.get(impl), p)) for p in (whole, streamed)]
    assert not np.isnan(maps[1]).any()
    np.testing.assert_allclose(maps[1], maps[0], rtol=1e-6, atol=1e-6)


def test_the_stream_order_is_not_the_in_memory_random_order(folder):
    whole, _streamed = _problems(folder, "whole", "numpy-online", "rect", False)
    ordered = whole.schedule().block(0).order
    assert np.array_equal(ordered[:STEPS], np.arange(STEPS) % ROWS)
    assert np.array_equal(rows_in_order(ROWS - 2, 4, ROWS), [ROWS - 2, ROWS - 1, 0, 1])
    drawn = dataclasses.replace(whole, in_order=False).schedule().block(0).order
    assert not np.array_equal(drawn, ordered)


def test_several_steps_per_trip_take_the_fed_rows_and_mask_the_tail(folder):
    """The scanned program's masked tail (K steps per trip, the chunk not a multiple of K) reads fed rows too."""
    whole, streamed = _problems(folder, "holes", "jax-scan-online", "rect", False)
    plan = OnlinePlan("all", 4)  # the accelerators' form; CHUNKS' counts are not multiples of 4
    maps = [_train(streamed_trainer.StreamedTrainer(ScanOnline(streamed, plan), streamed)), None]
    maps[1] = _train(ScanOnline(whole, plan))
    np.testing.assert_allclose(maps[0], maps[1], rtol=1e-6, atol=1e-6)


def test_the_eager_ladder_rung_streams_too(folder):
    whole, streamed = _problems(folder, "holes", "jax-naive-online", "rect", False, scaling="minmax")
    impl = registry.get("jax-naive-online")
    short = [dataclasses.replace(p, iterations=60) for p in (whole, streamed)]
    maps = []
    for p in short:
        trainer = streamed_trainer.create(impl, p)
        trainer.warmup()
        trainer.run(0, 25)
        trainer.run(25, 35)
        maps.append(trainer.get_map())
        trainer.close()
    np.testing.assert_allclose(maps[1], maps[0], rtol=1e-6, atol=1e-6)
