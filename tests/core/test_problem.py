"""Schedules and the sample order come a block at a time, and equal the whole run's numbers."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.core.som import problem
from som_studio.core.som.problem import decay, make_problem, seed_streams

ONLINE = [i.name for i in registry.all_implementations() if i.kind == "online"]
BATCH = [i.name for i in registry.all_implementations() if i.kind == "batch"]


def _cfg(kind: str, n: int, **kw) -> RunConfig:
    counts = {"steps": n, "epochs": None} if kind == "online" else {"epochs": n, "steps": None}
    return RunConfig(impl="numpy-online", width=5, height=4, data=DataSpec(samples=23), seed=3, **counts).replace(**kw)


@pytest.mark.parametrize("kind", ["online", "batch"])
def test_blocks_hold_the_whole_runs_numbers(kind, monkeypatch):
    monkeypatch.setattr(problem, "BLOCK", 7)
    T = 7 * 5 + 3
    p = make_problem(_cfg(kind, T), kind)
    s = p.schedule()
    assert s.length == 7
    blocks = [s.block(i) for i in range(6)]
    assert [b.size for b in blocks] == [7, 7, 7, 7, 7, 3]
    assert all(b.sigma_x.shape == (7,) for b in blocks)  # the last one padded: one compiled shape
    # The numbers of one whole-run array, block by block (the same seeded stream, the same formula).
    cfg = p.config
    (sx0, _), (sx1, _) = cfg.sigmas
    np.testing.assert_array_equal(
        np.concatenate([b.sigma_x[: b.size] for b in blocks]), decay(sx0, sx1, T).astype(np.float32)
    )
    np.testing.assert_array_equal(
        np.concatenate([b.lr[: b.size] for b in blocks]), decay(cfg.lr_start, cfg.lr_end, T).astype(np.float32)
    )
    assert blocks[-1].sigma_x[-1] == blocks[-1].sigma_x[2]  # padding repeats the last iteration
    if kind == "batch":
        assert all(b.order is None for b in blocks)
        return
    whole = seed_streams(cfg.seed)[2].integers(0, p.samples, size=T).astype(np.int32)
    np.testing.assert_array_equal(np.concatenate([b.order[: b.size] for b in blocks]), whole)
    np.testing.assert_array_equal(p.whole().order, whole)
    # Going back redraws the same block; skipping ahead draws the skipped ones.
    np.testing.assert_array_equal(s.block(1).order, blocks[1].order)
    np.testing.assert_array_equal(p.schedule().block(4).order, blocks[4].order)
    with pytest.raises(IndexError):
        s.block(6)


def test_segments_split_a_chunk_at_block_edges(monkeypatch):
    monkeypatch.setattr(problem, "BLOCK", 8)
    s = make_problem(_cfg("online", 30), "online").schedule()
    pieces = [(b.index, local, n) for b, local, n in s.segments(5, 20)]
    assert pieces == [(0, 5, 3), (1, 0, 8), (2, 0, 8), (3, 0, 1)]


def test_a_100_million_step_problem_holds_no_per_step_array():
    cfg = _cfg("online", 100_000_000)
    tracemalloc.start()
    try:
        p = make_problem(cfg, "online")
        s = p.schedule()
        for _ in s.segments(0, 3 * problem.BLOCK):
            pass
        s.block(100_000_000 // problem.BLOCK)  # the last block: skips draw, hold nothing
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A per-step array would be 400 MB (int32 order) or more; one block of four is ~1 MB.
    assert peak < 8 << 20, f"peak {peak / 1e6:.1f} MB"
    assert p.iterations == 100_000_000


def _trained(name: str, cfg: RunConfig, chunks: list[int]) -> np.ndarray:
    impl = registry.get(name)
    trainer = impl.create(make_problem(cfg.replace(impl=name), impl.kind))
    try:
        trainer.warmup()
        first = 0
        for n in chunks:
            trainer.run(first, n)
            first += n
        return trainer.get_map()
    finally:
        trainer.close()


@pytest.mark.parametrize("name", ONLINE + BATCH)
def test_a_run_in_blocks_is_the_run_in_one_block(name, monkeypatch):
    """Small blocks and uneven chunks across their edges give the one-block run's map, bit for bit."""
    impl = registry.get(name)
    T = 40 if impl.kind == "online" else 9
    cfg = _cfg(impl.kind, T, layout="2x2" if impl.shards and impl.map_axis else "2x1" if impl.shards else "1x1")
    if impl.shards and len(jax_runtime.jax().devices()) < 4:
        pytest.skip("needs 4 devices")
    whole = _trained(name, cfg, [T])
    monkeypatch.setattr(problem, "BLOCK", 4 if impl.kind == "batch" else 16)
    chunks = [3, 3, 1, 2] if impl.kind == "batch" else [5, 17, 1, 12, 5]
    assert sum(chunks) == T
    np.testing.assert_array_equal(_trained(name, cfg, chunks), whole)
