"""A finished run is listed at once and its file written off the GUI thread; a write that fails is told."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from som_studio.qt.runs import RunsModel
from som_studio.session.record import RunRecord
from som_studio.storage import RunHistory, StoredRun


def _run() -> StoredRun:
    return StoredRun(RunRecord(impl="numpy-batch", kind="batch", config={"grid": [4, 3]}, status="ok"))


def test_the_gui_thread_lists_a_run_while_its_file_is_still_being_written(qtbot, tmp_path, monkeypatch):
    gate, writers = threading.Event(), []
    real = StoredRun.to_bytes

    def slow_to_bytes(self: StoredRun) -> bytes:  # a long run's frames take seconds to encode
        writers.append(threading.current_thread())
        assert gate.wait(10)
        return real(self)

    monkeypatch.setattr(StoredRun, "to_bytes", slow_to_bytes)
    history = RunHistory(tmp_path / "history")
    model = RunsModel(history)
    kept = model.add(_run())  # returns with the encoding held up
    path = tmp_path / "history" / f"{kept.id}.somrun"
    assert model.rowCount() == 1 and model.run_at(0) is kept and not path.exists()
    gate.set()
    qtbot.waitUntil(path.exists, timeout=5000)
    assert writers and writers[0] is not threading.main_thread()
    model.rename_failed.connect(pytest.fail)
    assert model.setData(model.index(0, 0), "mine")  # in order, after the write: the file has the new name
    history.close()
    assert [(r.id, r.name) for r in RunHistory(tmp_path / "history").runs] == [(kept.id, "mine")]


def test_a_run_whose_file_cannot_be_written_stays_listed_and_the_model_says_why(qtbot, tmp_path):
    history = RunHistory(tmp_path / "history")
    (tmp_path / "history").rmdir()
    (tmp_path / "history").write_text("a file where the folder was")
    model = RunsModel(history)
    with qtbot.waitSignal(model.save_failed, timeout=5000) as told:
        kept = model.add(_run())
    assert "history" in told.args[0] and model.run_at(0) is kept
    history.close()
