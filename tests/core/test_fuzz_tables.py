"""Generated tables: any CSV text, in any of the encodings spreadsheets write, is read or refused in words.

Each example writes a CSV (a header or none, random cells: numbers, missing values, years,
text in several scripts, huge numbers; random delimiters, blank and comment lines, ragged
rows) in one of several encodings, and reads it with random column roles and every scaling.
Either the table is sound (float64, one name per feature, no row without a known value,
scalings that can be saved) or a :class:`DataError` names the file; nothing else escapes.
"""

from __future__ import annotations

import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from som_studio.core.data import SCALINGS, DataError, Scaling, read_table

SETTINGS = settings(
    max_examples=80,
    deadline=5000,  # ms
    database=None,  # nothing written into the checkout
    suppress_health_check=[HealthCheck.too_slow],
)

_WORDS = st.text(alphabet="abcxyzéèüßñ키몸무게가 ,;\"'\t-_.", min_size=1, max_size=6)
_NUMBERS = st.one_of(st.integers(-1000, 3000).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr))
_CELLS = st.one_of(
    _NUMBERS,
    _NUMBERS,  # most cells of a table are numbers
    _NUMBERS,
    st.sampled_from(
        ["", "NA", "nan", "n/a", "-nan", "inf", "-inf", "1e308", "-1e308", "1e200", "2019", "2020", "2021"]
    ),
    _WORDS,
)


@st.composite
def csv_files(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    """CSV bytes and the header's names (empty when it has none)."""
    sep = draw(st.sampled_from([",", ";", "\t", " "]))
    width = draw(st.integers(1, 5))
    lines: list[str] = []
    header: list[str] = []
    if draw(st.booleans()):
        header = draw(
            st.lists(st.one_of(_WORDS, st.sampled_from(["", "2019", "2020", "x2"])), min_size=width, max_size=width)
        )
        lines.append(sep.join(header))
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(["row", "row", "row", "ragged", "blank", "comment"]))
        if kind == "blank":
            lines.append("")
        elif kind == "comment":
            lines.append("# " + draw(_WORDS))
        else:
            n = width if kind == "row" else draw(st.integers(1, width + 2))
            lines.append(sep.join(draw(st.lists(_CELLS, min_size=n, max_size=n))))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
    encoding = draw(st.sampled_from(["utf-8", "utf-8-sig", "cp949", "cp1252", "utf-16"]))
    data = text.encode(encoding, errors="replace")
    if draw(st.integers(0, 9)) == 0:
        data += draw(st.binary(max_size=8))  # a damaged end
    return data, [c.strip() for c in header]


def _check(data: bytes, labels: str | None, ignore: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "table.csv"
        path.write_bytes(data)
        t0 = time.perf_counter()
        try:
            table = read_table(path, labels=labels, ignore=ignore)
        except DataError as exc:
            assert str(path) in str(exc)
            return
        finally:
            assert time.perf_counter() - t0 < 5
        values = table.values
        assert values.dtype == np.float64 and values.ndim == 2 and values.shape[1] == len(table.feature_names)
        assert len(set(table.feature_names)) == len(table.feature_names)
        assert not np.isinf(values).any() and not np.isnan(values).all(axis=1).any()
        assert not np.isnan(values).all(axis=0).any()
        assert all(note.startswith(f"{path}: ") for note in table.notes)
        if labels is not None:
            assert table.labels is not None and len(table.labels) == len(values)
        for method in SCALINGS:
            try:
                scaled = table.scaled(method)
            except DataError as exc:
                assert str(path) in str(exc) and method != "none"
                continue
            known = ~np.isnan(values)
            assert np.isfinite(scaled.values[known]).all() and np.isnan(scaled.values[~known]).all()
            saved = json.loads(json.dumps(scaled.scaling.to_dict(), allow_nan=False))  # as a run file keeps it
            again = Scaling.from_dict(saved)
            assert all(math.isfinite(v) for v in (*again.offset, *again.scale))


@SETTINGS
@given(csv_files(), st.data())
def test_generated_tables_are_read_or_refused_in_words(csv: tuple[bytes, list[str]], data: st.DataObject) -> None:
    raw, header = csv
    named = [c for c in header if c]
    labels = data.draw(st.sampled_from([None, *named]) if named else st.none(), label="labels")
    ignore = data.draw(st.lists(st.sampled_from(named), max_size=2, unique=True) if named else st.just([]))
    _check(raw, labels, [c for c in ignore if c != labels])


@SETTINGS
@given(st.binary(max_size=300))
def test_any_bytes_are_read_or_refused_in_words(raw: bytes) -> None:
    _check(raw, None, [])
