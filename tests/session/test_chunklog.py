"""The compact chunk store reads like a list of Chunk."""

from __future__ import annotations

import sys

import numpy as np

from som_studio.session.chunklog import ChunkLog
from som_studio.session.record import Chunk, RunRecord


def _chunks(n: int) -> list[Chunk]:
    return [Chunk(i * 50, 50, 0.01 + i * 1e-6) for i in range(n)]


def test_reads_like_a_list_of_chunks():
    chunks = _chunks(100)
    log = ChunkLog(chunks[:60])
    for c in chunks[60:]:
        log.append(c)
    assert len(log) == 100 and log == chunks and list(log) == chunks
    assert log[0] == chunks[0] and log[-1] == chunks[-1] and log[10:13] == chunks[10:13]
    assert sum(c.count for c in log) == log.iterations_done() == 5000
    np.testing.assert_allclose(log.iteration_seconds(), [c.seconds / c.count for c in chunks])
    log.add(5000, 0, 0.0)  # an empty chunk is kept, but has no per-iteration time
    assert len(log) == 101 and len(log.iteration_seconds()) == 100
    log.clear()
    assert len(log) == 0 and list(log) == []


def test_the_json_form_is_the_records():
    chunks = _chunks(5)
    rec = RunRecord(impl="numpy-online", kind="online", config={}, chunks=chunks)
    assert ChunkLog(chunks).to_dicts() == rec.to_dict()["timings"]["chunks"]


def test_a_chunk_costs_24_bytes_not_an_object():
    n = 100_000
    log = ChunkLog()
    for i in range(n):
        log.add(i * 50, 50, 0.01)
    assert log.nbytes() == 24 * n
    as_list = _chunks(1000)
    per_object = sum(sys.getsizeof(c) + sys.getsizeof(c.seconds) for c in as_list) / len(as_list)
    assert per_object > 2 * 24  # what the list of dataclasses cost per chunk, at the least


def test_a_records_chunks_are_one_chunk_log_whatever_it_is_given():
    rec = RunRecord(impl="numpy-online", kind="online", config={}, chunks=_chunks(3))
    assert isinstance(rec.chunks, ChunkLog)
    rec.chunks = _chunks(4)  # assigned later (a loaded or partial record): still the compact store
    assert isinstance(rec.chunks, ChunkLog) and len(rec.chunks) == 4
    back = RunRecord.from_dict(rec.to_dict())
    assert isinstance(back.chunks, ChunkLog) and back.chunks == rec.chunks
    assert back.median_s == rec.median_s and back.iteration_s == rec.iteration_s


def test_a_long_runs_record_grows_by_its_chunks_bytes_only():
    """A long run's record: 100,000 chunks (75 minutes at 22 a second) in under 40 bytes each."""
    import tracemalloc

    rec = RunRecord(impl="jax-jit-online", kind="online", config={})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(100_000):
            rec.chunks.append(Chunk(i * 250, 250, 0.045))  # as the session appends them
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Three typed arrays: 24 bytes a chunk, plus their spare capacity (arrays grow by ~1/8).
    assert grown < 40 * 100_000, f"{grown / 100_000:.0f} bytes a chunk"
    assert rec.iterations_done == 25_000_000 and rec.median_s == 0.045 / 250
