from __future__ import annotations

import json
import tempfile

import pytest

from som_studio.storage.writers import OutputError, write_atomic, write_json


def test_refuses_an_existing_file_without_force(tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("precious")
    with pytest.raises(OutputError, match="exists; use --force"):
        write_atomic(p, "new")
    assert p.read_text() == "precious"
    write_atomic(p, "new", force=True)
    assert p.read_text() == "new"


def test_a_folder_that_refuses_new_files_is_an_output_error(tmp_path, monkeypatch):
    # A folder that passes the up-front checks but refuses the temporary file
    # (as /proc does for root, or a read-only mount): a clear error, no file.
    def refuse(*_args, **_kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(OutputError, match="cannot write"):
        write_atomic(tmp_path / "x.json", "{}")
    assert list(tmp_path.iterdir()) == []


def test_json_writes_non_finite_numbers_as_null(tmp_path):
    p = write_json(tmp_path / "r.json", {"qe": float("nan"), "runs": [1.5, float("inf")], "ok": True})
    assert json.loads(p.read_text()) == {"qe": None, "runs": [1.5, None], "ok": True}


def test_an_interrupted_write_leaves_nothing_behind(tmp_path, monkeypatch):
    import os

    def interrupted(_fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "x.json", "{}")
    assert list(tmp_path.iterdir()) == []
