"""Files that are not runs, damaged runs and unreadable folders: named, explained, never fatal."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.session.session import Session
from som_studio.storage import HistoryError, RunHistory, RunRecorder, StoredRun


@pytest.fixture(scope="module")
def run_bytes() -> bytes:
    from som_studio.config import DataSpec, RunConfig

    cfg = RunConfig(impl="numpy-batch", width=6, height=4, data=DataSpec(samples=30), epochs=3, seed=2)
    return StoredRun.from_capture(RunRecorder(frames=4).feed_all(Session(cfg).run())).to_bytes()


def _load_error(path) -> str:
    with pytest.raises(HistoryError) as err:
        StoredRun.load(path)
    return str(err.value)


def test_a_text_file_is_not_a_run_and_gets_no_pickle_advice(tmp_path) -> None:
    bad = tmp_path / "bad.somrun"
    bad.write_text("hello, this is a note\nnot a run\n")
    text = _load_error(bad)
    assert text.startswith(f"{bad}: not a SOM Studio run file: it is a text file")
    assert "'hello, this is a note'" in text
    assert "pickle" not in text.lower()


def test_other_files_say_why_they_are_not_runs(tmp_path) -> None:
    empty, array, objects = tmp_path / "empty.somrun", tmp_path / "array.somrun", tmp_path / "objects.somrun"
    empty.write_bytes(b"")
    with open(array, "wb") as f:
        np.save(f, np.zeros(3))
    with open(objects, "wb") as f:
        np.savez(f, meta=np.array([{"a": 1}], dtype=object))
    assert "the file is empty" in _load_error(empty)
    assert "single NumPy array" in _load_error(array)
    text = _load_error(objects)
    assert "not a SOM Studio run file: it holds Python objects" in text and "allow_pickle" not in text


@pytest.mark.parametrize("keep", [0.3, 0.6, 0.95])
def test_a_truncated_run_says_so(tmp_path, run_bytes, keep) -> None:
    cut = tmp_path / "cut.somrun"
    cut.write_bytes(run_bytes[: int(len(run_bytes) * keep)])
    text = _load_error(cut)
    assert text.startswith(f"{cut}: damaged or truncated SOM Studio run file"), text


def test_a_folder_named_like_a_run_and_an_unreadable_runs_folder(tmp_path, run_bytes) -> None:
    (tmp_path / "dir.somrun").mkdir()
    assert "is a folder" in _load_error(tmp_path / "dir.somrun")
    blocked = tmp_path / "runs"
    blocked.write_text("a file where the runs folder should be")
    h = RunHistory(blocked)
    assert h.runs == [] and len(h.problems) == 1 and str(blocked) in h.problems[0]


def test_the_history_keeps_the_good_runs_beside_the_bad(tmp_path, run_bytes) -> None:
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "good.somrun").write_bytes(run_bytes)
    (folder / "cut.somrun").write_bytes(run_bytes[: len(run_bytes) // 2])
    (folder / "bad.somrun").write_text("text")
    h = RunHistory(folder)
    assert len(h.runs) == 1
    assert sorted(p.split(":")[0].rsplit("/", 1)[1] for p in h.problems) == ["bad.somrun", "cut.somrun"]
