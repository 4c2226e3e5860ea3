"""Stored runs and the run history: files that round-trip, survive a restart, and fail clearly."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.session.session import Session
from som_studio.storage import HistoryError, RunHistory, RunRecorder, StoredRun
from som_studio.storage.writers import OutputError


@pytest.fixture(scope="module")
def capture() -> RunRecorder:
    from som_studio.config import DataSpec, RunConfig

    cfg = RunConfig(impl="numpy-online", width=7, height=5, data=DataSpec(samples=40), steps=200, seed=1)
    cap = RunRecorder(frames=8)
    cap.feed_all(Session(cfg, snapshot_interval_s=0.0, chunk_target_s=0.0005, quality_points=3).run())
    return cap


def test_a_run_file_round_trips(tmp_path, capture) -> None:
    run = StoredRun.from_capture(capture)
    run.name = "my run"
    path = run.save(tmp_path / "x.somrun")
    back = StoredRun.load(path)
    assert (back.id, back.name, back.created, back.iterations) == (run.id, "my run", run.created, 200)
    assert back.record.to_dict() == run.record.to_dict()
    np.testing.assert_array_equal(back.final_map, capture.final_map)
    np.testing.assert_array_equal(back.final_image, capture.final_image)
    assert [it for it, _ in back.frames] == [it for it, _ in capture.frames]
    for (_, a), (_, b) in zip(back.frames, capture.frames):
        np.testing.assert_array_equal(a, b)
    assert back.name == "my run"
    with pytest.raises(OutputError, match="exists; use --force"):
        run.save(path)


def test_history_survives_a_restart(tmp_path, capture) -> None:
    h = RunHistory(tmp_path / "history")
    a = h.add(StoredRun.from_capture(capture))
    b = h.add(StoredRun.from_capture(capture))
    assert a.id != b.id
    h.rename(b.id, "  second  ")
    again = RunHistory(tmp_path / "history")
    assert [(r.id, r.name) for r in again.runs] == [(a.id, "numpy-online"), (b.id, "second")]
    again.remove(a.id)
    assert [r.id for r in RunHistory(tmp_path / "history").runs] == [b.id]
    with pytest.raises(ValueError, match="needs a name"):
        again.rename(b.id, " ")


def test_unreadable_files_are_named_not_fatal(tmp_path, capture) -> None:
    folder = tmp_path / "history"
    h = RunHistory(folder)
    h.add(StoredRun.from_capture(capture))
    (folder / "broken.somrun").write_bytes(b"not a zip")
    np.savez(folder / "other.somrun", x=np.zeros(2))  # np.savez appends .npz: name it back
    (folder / "other.somrun.npz").rename(folder / "other.somrun")
    again = RunHistory(folder)
    assert len(again.runs) == 1
    assert len(again.problems) == 2
    assert any("broken.somrun: not a SOM Studio run file: it is a text file" in p for p in again.problems)
    assert any("other.somrun: not a SOM Studio run file" in p for p in again.problems)
    with pytest.raises(HistoryError, match="no such file"):
        StoredRun.load(tmp_path / "missing.somrun")
