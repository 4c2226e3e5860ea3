"""The sharded batch implementations train the same SOM as every other batch implementation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from som_studio import cli
from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.core.inspection import hlo
from som_studio.core.som.problem import make_problem
from som_studio.session.events import Failed, Finished
from som_studio.session.session import Session, run_to_completion
from tests.grids import representative

SHARDED = [i.name for i in registry.all_implementations() if i.shards]
BATCH = [i.name for i in registry.all_implementations() if i.kind == "batch"]
EPOCHS = 5


def _train(cfg: RunConfig, chunks=((0, 2), (2, 1), (3, 2))) -> tuple[np.ndarray, int]:
    """Final map, and the compilations after warm-up (chunks of different sizes)."""
    impl = registry.get(cfg.impl)
    trainer = impl.create(make_problem(cfg, impl.kind))
    try:
        trainer.warmup()
        c0 = jax_runtime.compile_count()
        for first, count in chunks:
            trainer.run(first, count)
        recompiles = jax_runtime.compile_count() - c0
        return trainer.get_map(), recompiles
    finally:
        trainer.close()


@pytest.fixture(scope="module")
def reference():
    """numpy-batch maps, per (grid, samples, precision)."""
    cache: dict[tuple, np.ndarray] = {}

    def get(cfg: RunConfig) -> np.ndarray:
        key = (cfg.width, cfg.height, cfg.data.samples, cfg.precision)
        if key not in cache:
            cache[key] = _train(cfg.replace(impl="numpy-batch", layout="1x1"))[0]
        return cache[key]

    return get


def _cases() -> list[tuple[str, str]]:
    """Every batch implementation; the sharded ones over every layout they accept."""
    out = []
    for name in BATCH:
        if name == "numpy-batch":  # the reference itself
            continue
        impl = registry.get(name)
        for layout in ["1x1", "2x2", "4x2", "1x4", "8x1"] if impl.shards else ["1x1"]:
            if impl.map_axis or layout.endswith("x1"):
                out.append((name, layout))
    return out


# Uneven on purpose: 9 rows over 2 or 4 map blocks, 30 examples over 4 or 8 data blocks.
@pytest.mark.parametrize(("impl", "layout"), representative(_cases()))
def test_every_batch_implementation_agrees(impl, layout, reference):
    cfg = RunConfig(
        impl=impl,
        width=7,
        height=9,
        data=DataSpec(samples=30),
        seed=5,
        epochs=EPOCHS,
        precision="float64",
        layout=layout,
    )
    got, recompiles = _train(cfg)
    np.testing.assert_allclose(got, reference(cfg), rtol=0, atol=1e-10)
    assert recompiles == 0


@pytest.mark.parametrize("impl", SHARDED)
def test_float32_agrees(impl, reference):
    layout = "2x2" if registry.get(impl).map_axis else "4x1"
    cfg = RunConfig(
        impl=impl,
        width=10,
        height=6,
        data=DataSpec(samples=41),
        seed=1,
        epochs=EPOCHS,
        precision="float32",
        layout=layout,
    )
    got, _ = _train(cfg)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, reference(cfg), rtol=0, atol=2e-5)


# Each shardmap smoothing (and the collective it sends) and each jit-sharded program, on rect and hex maps:
# tests/core/test_topology_jax.py.


def test_session_records_collectives_and_layout():
    cfg = RunConfig(
        impl="jax-shardmap-batch", width=8, height=6, data=DataSpec(samples=20), seed=0, epochs=3, layout="2x2"
    )
    record = run_to_completion(Session(cfg, snapshot_interval_s=None, quality_points=0))
    assert record.status == "ok", record.message
    assert record.layout == "2x2"
    extra = record.extra
    per_epoch = [c for c in extra["collectives"] if c["per_epoch"]]
    # winner reduction over map (distance + index), sums reduced over data
    assert {c["kind"] for c in per_epoch} >= {"all-reduce"}
    assert {c["group"] for c in per_epoch} == {2}
    assert extra["bytes_per_epoch"] == sum(c["sent_bytes"] for c in per_epoch) > 0
    assert extra["sharding"]["layout"] == "2x2"
    doc = json.loads(json.dumps(record.to_dict()))
    assert doc["extra"]["bytes_per_epoch"] == extra["bytes_per_epoch"]


def test_one_device_moves_nothing():
    cfg = RunConfig(impl="jax-jit-sharded-batch", width=5, height=4, data=DataSpec(samples=9), epochs=2)
    record = run_to_completion(Session(cfg, snapshot_interval_s=None, quality_points=0))
    assert record.status == "ok" and record.extra["bytes_per_epoch"] == 0


@pytest.mark.parametrize(
    ("impl", "layout", "words"),
    [
        ("jax-pmap-batch", "2x2", ["jax-pmap-batch", "data-parallel only", "4x1"]),
        ("jax-shardmap-batch", "4x4", ["4x4 needs 16 devices", "sees 8"]),
        ("jax-jit-sharded-batch", "16x1", ["16x1 needs 16 devices"]),
    ],
)
def test_session_refuses_layouts(impl, layout, words):
    cfg = RunConfig(impl=impl, width=5, height=4, data=DataSpec(samples=9), epochs=2, layout=layout)
    events = list(Session(cfg).run())
    assert len(events) == 1 and isinstance(events[0], Failed)
    msg = events[0].record.message
    assert msg.startswith("layout: ")
    for w in words:
        assert w in msg


def test_bench_refuses_a_layout_before_training(tmp_path, capsys):
    out = tmp_path / "runs.json"
    rc = cli.main(
        [
            "bench",
            "--impl",
            "numpy-batch,jax-pmap-batch",
            "--layout",
            "1x2",
            "--grid",
            "5x4",
            "--epochs",
            "2",
            "--json",
            str(out),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 2 and not out.exists()
    assert "som-studio bench: error: --layout: jax-pmap-batch is data-parallel only" in err


def test_non_sharded_runs_record_one_device():
    cfg = RunConfig(impl="numpy-batch", width=5, height=4, data=DataSpec(samples=9), epochs=2, layout="4x2")
    events = list(Session(cfg, snapshot_interval_s=None).run())
    assert isinstance(events[-1], Finished) and events[-1].record.layout == "1x1"


HLO = """\
HloModule jit_epochs, entry_computation_layout={()->f32[2]}

%region_0.1 (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  ROOT %m = f32[] minimum(%a, %b)
}

%body.2 (p: (s32[], f32[3,4,2])) -> (s32[], f32[3,4,2]) {
  %pmin.1 = f32[15]{0} all-reduce(%x), channel_id=1, replica_groups=mesh['data'=2,'map'=4] {'map'}, to_apply=%region_0.1
  %ag = f32[12,4,2]{2,1,0} all-gather(%y), channel_id=2, replica_groups=[2,4]<=[8], dimensions={0}
  ROOT %cp = f32[3,4,2]{2,1,0} collective-permute(%z), source_target_pairs={{0,1},{1,0}}
}

%cond.3 (p: (s32[], f32[3,4,2])) -> pred[] {
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

ENTRY %main.4 (w: f32[3,4,2]) -> f32[3,4,2] {
  %w = f32[3,4,2]{2,1,0} parameter(0)
  %while.5 = (s32[], f32[3,4,2]) while(%t), condition=%cond.3, body=%body.2
  ROOT %rs = f64[2]{0} reduce-scatter(%v), channel_id=3, replica_groups={{0,1,2,3}}, dimensions={0}
}
"""


def test_hlo_collectives_parsed():
    colls = hlo.collectives(HLO, devices=8)
    got = [(c["kind"], c["shape"], c["bytes"], c["group"], c["per_epoch"], c["sent_bytes"]) for c in colls]
    assert got == [
        ("all-reduce", "f32[15]", 60, 4, True, 2 * 3 * 60 // 4),
        ("all-gather", "f32[12,4,2]", 384, 4, True, 3 * 384 // 4),
        ("collective-permute", "f32[3,4,2]", 96, 8, True, 96),
        ("reduce-scatter", "f64[2]", 16, 4, False, 3 * 16),
    ]
    s = hlo.summary(colls, 8)
    assert s["bytes_per_epoch"] == 90 + 288 + 96 and s["bytes_per_call"] == 48


@pytest.fixture(scope="module")
def fused_single_device():
    """jax-fused-batch maps on one device, per config: one compile serves every layout of a precision."""
    cache: dict[RunConfig, np.ndarray] = {}

    def get(cfg: RunConfig) -> np.ndarray:
        if cfg not in cache:
            cache[cfg] = _train(cfg, chunks=((0, EPOCHS),))[0]
        return cache[cfg]

    return get


@pytest.mark.parametrize(
    ("impl", "layout", "precision"),
    representative(
        [
            pytest.param(impl, layout, precision, id=f"{impl}-{layout}-{precision}")
            for impl, layout in [
                ("jax-pmap-batch", "4x1"),
                ("jax-jit-sharded-batch", "2x4"),
                ("jax-shardmap-batch", "4x2"),
                ("jax-shardmap-batch", "1x8"),
            ]
            for precision in ["float32", "float64"]
        ]
    ),
)
def test_agrees_with_the_fused_single_device_implementation(impl, layout, precision, fused_single_device):
    cfg = RunConfig(
        impl=impl,
        width=11,
        height=10,
        data=DataSpec(samples=37),
        seed=7,
        epochs=EPOCHS,
        precision=precision,
        layout=layout,
    )
    fused = fused_single_device(cfg.replace(impl="jax-fused-batch", layout="1x1"))
    got, _ = _train(cfg)
    np.testing.assert_allclose(got, fused, rtol=0, atol=1e-10 if precision == "float64" else 2e-6)


BIG = RunConfig(
    impl="jax-fused-batch", width=45, height=31, data=DataSpec(samples=4500), seed=9, epochs=2, precision="float64"
)


@pytest.fixture(scope="module")
def fused_big() -> np.ndarray:
    return _train(BIG, chunks=((0, 2),))[0]


@pytest.mark.parametrize(
    ("impl", "layout"),
    [
        ("jax-pmap-batch", "2x1"),
        ("jax-jit-sharded-batch", "2x1"),
        ("jax-jit-sharded-batch", "1x2"),
        ("jax-shardmap-batch", "2x2"),
    ],
)
def test_blocked_winner_search_over_several_blocks_and_chunks(impl, layout, fused_big):
    """Enough units for several unit blocks per device, enough examples for several example chunks."""
    from som_studio.core.plans.fused_plan import UNIT_BLOCK, sample_chunk, unit_blocks

    cfg = BIG.replace(impl=impl, layout=layout)
    local_units = 16 * 45  # 31 rows over a map axis of 2: 16 rows per device
    assert unit_blocks(local_units)[0] >= 2 and sample_chunk(4500 // 2, 3, UNIT_BLOCK) < 4500 // 2
    fused = fused_big
    got, _ = _train(cfg, chunks=((0, 1), (1, 1)))
    np.testing.assert_allclose(got, fused, rtol=0, atol=1e-10)


class _DeviceReporting:
    """A device as far as memory reports go (the CPU backend reports none)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def memory_stats(self) -> dict[str, int]:
        return {"bytes_limit": self.limit, "bytes_in_use": 0}


def test_shardmap_takes_the_ring_when_whole_map_buffers_would_crowd_a_device():
    from som_studio.core.impls.jax_shardmap import JaxShardmapBatch

    cfg = RunConfig(impl="jax-shardmap-batch", width=20, height=10, data=DataSpec(samples=8), epochs=1, layout="2x2")
    trainer = JaxShardmapBatch(make_problem(cfg, "batch"))
    assert trainer.smoothing == "all-gather"  # the CPU reports no memory
    full = 10 * 20 * 4 * 4  # rows x columns x (features + 1) x float32
    trainer.devices = [_DeviceReporting(6 * full - 1)] * 4
    assert trainer._auto_smoothing() == "ring"
    trainer.devices = [_DeviceReporting(6 * full + 1)] * 4
    assert trainer._auto_smoothing() == "all-gather"
    trainer.close()
