"""The compact chunk store reads like the list of Chunk it replaces (issue 14)."""

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
