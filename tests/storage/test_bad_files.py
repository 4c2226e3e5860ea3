"""Files that are not runs, damaged runs and unreadable folders: named, explained, never fatal."""

from __future__ import annotations

import io
import json
import time
import zipfile

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


# -- arrays and descriptions that disagree: refused by name, the same words from load_run ------------
def _arrays(run_bytes: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(run_bytes), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _json(doc: object) -> np.ndarray:
    return np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)


def _write(path, arrays: dict[str, np.ndarray]):
    with open(path, "wb") as f:  # a file object: savez would add .npz to a name
        np.savez(f, **arrays)
    return path


def _edited(run_bytes: bytes, edit_meta=None, edit_model=None, **arrays) -> dict[str, np.ndarray]:
    """The run's arrays with ``arrays`` replaced (``None`` removes one), ``edit_*`` editing the JSON."""
    out = _arrays(run_bytes)
    for key, doc_edit in (("meta", edit_meta), ("model_meta", edit_model)):
        if doc_edit is not None:
            doc = json.loads(bytes(out[key]))
            out[key] = _json(doc_edit(doc))
    for key, value in arrays.items():
        if value is None:
            out.pop(key)
        else:
            out[key] = value
    return out


def _set(path: str, value: object):
    """A JSON edit: ``path`` (``record.timings.compile_s``) set to ``value``."""

    def edit(doc):
        *parents, last = path.split(".")
        node = doc
        for k in parents:
            node = node[k]
        node[last] = value
        return doc

    return edit


def _both_refuse(path) -> str:
    """The message of StoredRun.load, checked to be load_run's too."""
    from som_studio.trained import RunFileError, load_run

    text = _load_error(path)
    with pytest.raises(RunFileError) as err:
        load_run(path)
    assert str(err.value) == text
    return text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hits": np.zeros((3, 5), np.int64)}, "array hits has shape (3, 5), which does not match final_map (4, 6,"),
        ({"final_image": np.zeros((4, 6, 4), np.uint8)}, "array final_image has shape (4, 6, 4); its last dimension"),
        ({"final_map": np.zeros((4, 6), np.float32)}, "array final_map has shape (4, 6); expected 3 dimensions"),
        ({"final_map": np.zeros((0, 6, 3), np.float32)}, "array final_map has shape (0, 6, 3): it is empty"),
        ({"hits": np.zeros((4, 6), np.float64)}, "array hits holds float64; expected whole numbers"),
        ({"final_map": np.zeros((4, 6, 3), np.complex64)}, "array final_map holds complex64; expected numbers"),
        ({"meta": np.zeros(4, np.int32)}, "array meta holds int32; expected bytes (uint8)"),
        (
            {"frame_iterations": np.arange(3)},
            "array frames_png_sizes has shape (2,), which does not match frame_iterations (3,)",
        ),
        ({"unit_labels": np.zeros((4, 6), np.int32)}, "array unit_labels holds int32; expected text"),
        ({"hits": -np.ones((4, 6), np.int64)}, "array hits holds negative counts"),
        ({"clusters": np.full((4, 6), 99, np.int32)}, "array clusters holds cluster numbers outside 0 .. 23"),
        ({"unit_purity": np.full((4, 6), 2.0)}, "array unit_purity holds shares outside 0 .. 1"),
        ({"frames_png_sizes": np.array([5, 7])}, "its frames' sizes do not add up"),
        ({"frames_png": None}, "its frames are listed but not stored"),
    ],
)
def test_arrays_that_disagree_in_shape_or_kind_are_refused_by_name(tmp_path, run_bytes, change, message) -> None:
    path = _write(tmp_path / "edited.somrun", _edited(run_bytes, **change))
    text = _load_error(path)
    assert text.startswith(f"{path}: damaged SOM Studio run file (") and message in text, text


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_map_with_non_finite_values_is_refused(tmp_path, run_bytes, bad) -> None:
    final = _arrays(run_bytes)["final_map"].copy()
    final[1, 2, 0] = bad
    path = _write(tmp_path / "nan.somrun", _edited(run_bytes, final_map=final))
    assert "its map holds 1 value that is not a finite number (NaN or infinity)" in _both_refuse(path)


@pytest.mark.parametrize(
    ("meta", "model", "message"),
    [
        (_set("iterations", "many"), None, "iterations is text; expected a whole number or null"),
        (_set("iterations", -3), None, "iterations is -3; expected at least 0"),
        (_set("name", ["a"]), None, "name is a list; expected text or null"),
        (_set("version", "2"), None, "version is text; expected a whole number"),
        (_set("record", [1, 2]), None, "record is a list; expected an object"),
        (_set("record.timings", []), None, "record.timings is a list; expected an object"),
        (_set("record.quality.qe", "good"), None, "record.quality.qe is text; expected a number or null"),
        (_set("record.timings.compiles", 1.5), None, "record.timings.compiles is a number; expected a whole number"),
        (_set("record.timings.compile_s", 10**400), None, "record.timings.compile_s is a number; expected a number"),
        (_set("record.timings.chunks", [{"first": 0}]), None, "record.timings.chunks[0].count is missing"),
        (_set("record.config.grid", "6x4"), None, "record.config.grid is text; expected a list"),
        (_set("record.config.grid", [5, 4]), None, "record.config.grid is [5, 4], but the map is 6x4"),
        (_set("record.config.seed", None), None, "record.config.seed is null; expected a whole number"),
        (_set("record.config.feature_names", "rgb"), None, "record.config.feature_names is text; expected a list"),
        (None, _set("feature_names", "rgb"), "feature_names is text; expected a list or null"),
        (None, _set("feature_names", ["r", "g"]), "its model has 2 features, its map 3"),
        (None, _set("scaling", "zscore"), "scaling is text; expected an object"),
        (None, _set("scaling.offset", ["a", 0, 0]), "scaling.offset[0] is text; expected a number"),
        (None, _set("scaling", {"offset": [1.7e308] * 3, "scale": [1.7e308] * 3}), "the data's units is not finite"),
        (None, _set("label_column", 3), "label_column is a whole number; expected text or null"),
        (None, _set("model_version", "1"), "model_version is text; expected a whole number or null"),
        (None, lambda doc: [doc], "it is a list; expected an object"),
    ],
)
def test_descriptions_with_the_wrong_json_types_are_refused_by_field(tmp_path, run_bytes, meta, model, message) -> None:
    path = _write(tmp_path / "typed.somrun", _edited(run_bytes, edit_meta=meta, edit_model=model))
    text = _both_refuse(path)
    assert text.startswith(f"{path}: ") and message in text, text


def test_json_that_is_not_json_nests_too_deep_or_says_nan_is_refused(tmp_path, run_bytes) -> None:
    for name, raw in (("deep", b"[" * 100_000), ("nan", b'{"format": "som-studio-run", "iterations": NaN}')):
        path = _write(tmp_path / f"{name}.somrun", _edited(run_bytes, meta=np.frombuffer(raw, np.uint8)))
        assert f"{path}: damaged SOM Studio run file" in _both_refuse(path)


def _npy_claiming(shape: tuple[int, ...], data: bytes = b"\0" * 64, descr: str = "<f8") -> bytes:
    """A .npy member whose header claims ``shape`` of ``descr``, followed by only ``data``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue() + data


def test_a_header_claiming_more_memory_than_the_machine_has_is_refused_before_loading(tmp_path, run_bytes) -> None:
    path = tmp_path / "huge.somrun"
    with zipfile.ZipFile(path, "w") as zf:
        for key, arr in _arrays(run_bytes).items():
            if key != "final_map":
                with zf.open(f"{key}.npy", "w") as f:
                    np.lib.format.write_array(f, arr)
        zf.writestr("final_map.npy", _npy_claiming((4, 6, 50_000_000_000_000)))
    t0 = time.perf_counter()
    text = _both_refuse(path)
    assert time.perf_counter() - t0 < 5
    assert text.startswith(f"{path}: cannot open: array final_map ((4, 6, 50000000000000) of float64) would need ")
    assert "TiB of memory, more than the" in text and "available" in text


def test_a_header_claiming_more_data_than_its_entry_holds_is_refused(tmp_path, run_bytes) -> None:
    path = tmp_path / "short.somrun"
    with zipfile.ZipFile(path, "w") as zf:
        for key, arr in _arrays(run_bytes).items():
            if key != "hits":
                with zf.open(f"{key}.npy", "w") as f:
                    np.lib.format.write_array(f, arr)
        zf.writestr("hits.npy", _npy_claiming((4, 6), b"\0" * 16, "<i8"))
    assert "array hits claims" in _both_refuse(path)


def test_a_run_without_impl_or_kind_takes_its_configs_and_loads(tmp_path, run_bytes) -> None:
    def strip(doc):
        del doc["record"]["impl"], doc["record"]["kind"]
        return doc

    run = StoredRun.load(_write(tmp_path / "bare.somrun", _edited(run_bytes, edit_meta=strip)))
    assert run.record.impl == "numpy-batch" and run.record.kind == ""


def test_project_refuses_a_damaged_run_without_a_traceback(tmp_path, run_bytes, capsys) -> None:
    from som_studio import cli

    path = _write(tmp_path / "bad.somrun", _edited(run_bytes, hits=np.zeros((3, 5), np.int64)))
    data = tmp_path / "rows.csv"
    data.write_text("r,g,b\n0.1,0.2,0.3\n")
    out = tmp_path / "out.csv"
    assert cli.main(["project", str(path), str(data), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{path}: damaged SOM Studio run file (array hits has shape (3, 5)" in err
    assert "Traceback" not in err and not out.exists()
