"""Damaged run files, generated: every one is opened or refused in words, never with another exception.

Each example takes a good ``.somrun`` and breaks it one way (truncated, bytes flipped, an array
replaced by one of another shape or dtype or holding NaN, a JSON field given a value of another
type), then opens it with both readers. Either both give a run whose map is usable, or both refuse
it with the same message naming the file; a refusal takes at most a few seconds.
"""

from __future__ import annotations

import functools
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from som_studio.storage import HistoryError, StoredRun
from som_studio.trained import RunFileError, load_run

SETTINGS = settings(
    max_examples=60,
    deadline=5000,  # ms: a refusal must be quick, not a read of what a header claims
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow],
)
KEYS = ("meta", "frame_iterations", "final_map", "final_image", "frames_png", "frames_png_sizes", "model_meta", "hits")


@functools.cache
def good_run() -> bytes:
    """A small finished run with labels, clusters and frames (every kind of array a run file holds)."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.session import Session
    from som_studio.storage import RunRecorder

    table = Path(tempfile.mkdtemp()) / "table.csv"
    table.write_text("a,b,kind\n" + "".join(f"{i % 5},{(i * 3) % 7},{'xy'[i % 2]}\n" for i in range(24)))
    cfg = RunConfig(
        impl="numpy-batch",
        width=5,
        height=3,
        data=DataSpec(path=str(table)),
        labels="kind",
        scaling="zscore",
        epochs=2,
        seed=3,
        clusters=2,
    )
    return StoredRun.from_capture(RunRecorder(frames=3).feed_all(Session(cfg).run())).to_bytes()


@pytest.fixture(autouse=True, scope="module")
def _trained_before_the_clock_starts() -> None:
    """Train the good run outside any example: the deadline is for reading files."""
    good_arrays()


@functools.cache
def good_arrays() -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(good_run()), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _savez(arrays: dict[str, np.ndarray], compressed: bool) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _check(data: bytes) -> None:
    """Open ``data`` as a run file with both readers: the same run, or the same refusal."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "damaged.somrun"
        path.write_bytes(data)
        t0 = time.perf_counter()
        stored = refused = None
        try:
            stored = StoredRun.load(path)
        except HistoryError as exc:
            refused = str(exc)
            assert refused.startswith(f"{path}: ") and len(refused) > len(f"{path}: ")
        try:
            model = load_run(path)
        except RunFileError as exc:
            if refused is not None:
                assert str(exc) == refused
            else:  # the one file the history keeps that a model cannot be: a run that did not finish
                assert stored is not None and stored.final_map is None
                assert str(exc) == f"{path}: the run has no final map (it did not finish)"
        else:
            assert refused is None and stored is not None
            assert np.isfinite(model.codebook).all()
            assert model.codebook.shape == stored.final_map.shape
            h, w, d = model.codebook.shape
            for per_unit in (model.hits, model.clusters, model.labels, model.purity):
                assert per_unit is None or per_unit.shape == (h, w)
            got = model.project(np.zeros((2, d)))
            assert got.bmu_row.shape == (2,) and (got.bmu_row < h).all() and (got.bmu_col < w).all()
        assert time.perf_counter() - t0 < 5


@SETTINGS
@given(keep=st.floats(0, 1, exclude_max=True), compressed=st.booleans())
def test_truncated_run_files(keep: float, compressed: bool) -> None:
    data = _savez(good_arrays(), compressed)
    _check(data[: int(len(data) * keep)])


@SETTINGS
@given(data=st.data(), compressed=st.booleans())
def test_run_files_with_flipped_bytes(data: st.DataObject, compressed: bool) -> None:
    raw = bytearray(_savez(good_arrays(), compressed))
    for _ in range(data.draw(st.integers(1, 8), label="flips")):
        at = data.draw(st.integers(0, len(raw) - 1), label="at")
        raw[at] = data.draw(st.integers(0, 255), label="byte")
    _check(bytes(raw))


_DTYPES = st.one_of(
    hnp.integer_dtypes(),
    hnp.unsigned_integer_dtypes(),
    hnp.floating_dtypes(),
    hnp.complex_number_dtypes(),
    hnp.boolean_dtypes(),
    hnp.unicode_string_dtypes(max_len=4),
    hnp.byte_string_dtypes(max_len=4),
)


@SETTINGS
@given(
    key=st.sampled_from(KEYS + ("unit_labels", "unit_purity", "clusters")),
    replacement=st.one_of(
        st.none(),  # removed
        hnp.arrays(_DTYPES, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)),
    ),
    poison=st.sampled_from([None, np.nan, np.inf, -1, 10**6]),
)
def test_run_files_with_an_array_of_another_shape_dtype_or_value(key, replacement, poison) -> None:
    arrays = dict(good_arrays())
    if replacement is None:
        arrays.pop(key, None)
    else:
        arrays[key] = replacement
    if poison is not None and key in arrays and arrays[key].size and arrays[key].dtype.kind in "fiu":
        try:  # a value the array's dtype can hold: NaN, infinity, a negative or out-of-range count
            with np.errstate(over="ignore", invalid="ignore"):
                arrays[key].flat[0] = poison
        except (ValueError, OverflowError):
            pass
    _check(_savez(arrays, compressed=False))


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_FIELDS = (
    "format",
    "version",
    "id",
    "name",
    "created",
    "iterations",
    "record",
    "record.impl",
    "record.kind",
    "record.status",
    "record.config",
    "record.config.grid",
    "record.config.seed",
    "record.config.feature_names",
    "record.config.topology",
    "record.timings",
    "record.timings.compile_s",
    "record.timings.chunks",
    "record.quality",
    "record.quality.qe",
    "record.quality.history",
    "record.memory.peak_bytes",
    "record.samples",
    "record.env",
)
_MODEL_FIELDS = (
    "model_version",
    "feature_names",
    "scaling",
    "scaling.method",
    "scaling.offset",
    "scaling.scale",
    "label_column",
    "id_column",
    "ignore",
)


def _set(doc: dict, path: str, value: object) -> None:
    *parents, last = path.split(".")
    for k in parents:
        doc = doc[k]
    doc[last] = value


@SETTINGS
@given(
    which=st.sampled_from([("meta", f) for f in _FIELDS] + [("model_meta", f) for f in _MODEL_FIELDS]),
    value=_JSON,
)
def test_run_files_whose_json_fields_have_other_types(which, value) -> None:
    key, field = which
    arrays = dict(good_arrays())
    doc = json.loads(bytes(arrays[key]))
    _set(doc, field, value)
    arrays[key] = np.frombuffer(json.dumps(doc).encode(), dtype=np.uint8)
    _check(_savez(arrays, compressed=True))


@SETTINGS
@given(st.binary(max_size=400) | st.text(max_size=200).map(str.encode))
def test_run_files_that_are_anything_at_all(data: bytes) -> None:
    _check(data)


def test_the_good_run_opens(tmp_path) -> None:
    _check(good_run())
    path = tmp_path / "good.somrun"
    path.write_bytes(good_run())
    run = StoredRun.load(path)
    model = run.record.model
    assert len(run.frames) >= 2 and all(
        a is not None for a in (model.clusters, model.hits, model.unit_labels, model.unit_purity)
    )
