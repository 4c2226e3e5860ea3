"""A streamed online run through the session, the CLI and the API: stopped or killed and resumed, it
ends at the uninterrupted run's map; its steps take the stream's rows in order."""

from __future__ import annotations

import json

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.session.checkpoint import Checkpoints, resume_from
from som_studio.session.events import ChunkTimed, Failed, Finished, Snapshot
from som_studio.session.session import Session

ROWS = 170


@pytest.fixture(scope="module")
def parquet_folder(tmp_path_factory):
    """Two Parquet files, row groups of 40 rows, 5 % of the values missing."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rng = np.random.default_rng(5)
    x = rng.random((ROWS, 3))
    x[rng.random(x.shape) < 0.05] = np.nan
    d = tmp_path_factory.mktemp("parts")
    for i, (a, b) in enumerate([(0, 90), (90, ROWS)]):
        pq.write_table(pa.table({c: x[a:b, j] for j, c in enumerate("abc")}), d / f"p{i}.parquet", row_group_size=40)
    return d


def _final(session: Session, stop_at: int | None = None):
    """The final map and record of ``session``; with ``stop_at``, cancelled once that many steps are done."""
    final, record = None, None
    for ev in session.run():
        if isinstance(ev, Snapshot):
            final = ev.map
        elif isinstance(ev, ChunkTimed) and stop_at is not None and ev.end >= stop_at:
            session.cancel()
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
    return final, record


class _Killed(Exception):
    pass


class _KilledAfter(Checkpoints):
    """Checkpoints that end the run (as SIGKILL would, the checkpoint written) once one is saved at ``step`` on."""

    def __init__(self, folder, step: int) -> None:
        super().__init__(folder, every_s=0)
        self.step = step

    def save(self, arrays, meta):
        super().save(arrays, meta)
        if meta["iteration"] >= self.step:
            raise _Killed


def _config(folder, impl: str, **kw) -> RunConfig:
    return RunConfig(
        impl=impl, data=DataSpec(path=str(folder)), width=5, height=4, steps=500, topology="hex", toroid=True,
        scaling="zscore", stream=True, batch_rows=64, **kw,
    )  # fmt: skip


@pytest.mark.parametrize("impl", ["numpy-online", "jax-scan-online"])
def test_a_streamed_online_run_stopped_or_killed_resumes_to_the_uninterrupted_map(tmp_path, parquet_folder, impl):
    cfg = _config(parquet_folder, impl)
    whole, rec = _final(Session(cfg, snapshot_interval_s=None, max_chunk=64))
    assert rec.status == "ok", rec.message
    assert rec.extra["stream"]["bytes_read"] > 0 and rec.extra["stream"]["rows"] == ROWS

    stopped, rec = _final(
        Session(cfg, snapshot_interval_s=None, max_chunk=64, checkpoint=Checkpoints(tmp_path / "s", every_s=0)), 230
    )
    assert rec.status == "cancelled"
    saved = resume_from(tmp_path / "s", cfg)
    assert 230 <= saved.iteration < cfg.iterations and np.array_equal(saved.map, stopped)
    # The position in the stream: the row the next step takes (past the end of the data once: wrapped around).
    assert saved.meta["reader"] == {"row": saved.iteration % ROWS} and saved.meta["position"]["row"] == 0
    resumed, rec = _final(Session(cfg, snapshot_interval_s=None, max_chunk=64, resume=saved))
    assert rec.status == "ok", rec.message
    assert rec.chunks.arrays()[0][0] == saved.iteration  # nothing before the checkpoint trained again
    np.testing.assert_array_equal(resumed, whole)  # bit for bit

    _, rec = _final(Session(cfg, snapshot_interval_s=None, max_chunk=48, checkpoint=_KilledAfter(tmp_path / "k", 100)))
    assert rec.status == "failed"
    saved = resume_from(tmp_path / "k", cfg)
    assert 100 <= saved.iteration < 200
    resumed, rec = _final(Session(cfg, snapshot_interval_s=None, resume=saved))
    assert rec.status == "ok", rec.message
    np.testing.assert_array_equal(resumed, whole)


def test_bench_streams_an_online_rung_and_the_api_too(tmp_path, parquet_folder):
    from som_studio import train
    from som_studio.cli import main

    out = tmp_path / "runs.json"
    args = ["bench", "--data", str(parquet_folder), "--impl", "jax-jit-online", "--grid", "5x4", "--steps", "300"]
    assert main([*args, "--stream", "--batch-rows", "50", "-q", "--json", str(out)]) == 0
    run = json.loads(out.read_text())["runs"][0]
    assert run["status"] == "ok" and run["samples"] == ROWS
    facts = run["extra"]["stream"]
    assert (facts["rows"], facts["files"], facts["batch_rows"]) == (ROWS, 2, 50)
    got = train(str(parquet_folder), impl="jax-jit-online", grid="5x4", steps=300, stream=True, batch_rows=50)
    assert got.record["status"] == "ok" and got.record["extra"]["stream"]["batch_rows"] == 50
    assert got.record["quality"]["qe"] == run["quality"]["qe"]  # the same rows in the same order: the same map


def test_the_preflight_accepts_a_stream_for_every_online_rung_and_names_those_that_cannot(parquet_folder):
    from som_studio.core.impls import registry
    from som_studio.session.preflight import preflight

    online = [i for i in registry.all_implementations() if i.kind == "online" and i.file is None]
    assert len(online) == 4
    for impl in online:
        assert impl.streams and preflight(_config(parquet_folder, impl.name)) == [], impl.name
    cfg = RunConfig(impl="jax-vmap-batch", data=DataSpec(path=str(parquet_folder)), epochs=2, stream=True)
    (refusal,) = [r for r in preflight(cfg) if r.field == "stream"]
    assert "jax-vmap-batch does not train from a stream" in refusal.reason and "jax-scan-online" in refusal.reason
