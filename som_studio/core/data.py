"""Training data: seeded random colours, or ``.npy`` / ``.csv`` files of any width.

A data file never executes code: ``.npy`` is read with ``allow_pickle=False``.
Every problem with a file is reported as a :class:`DataError` that names the
file and what is wrong with it.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


class DataError(ValueError):
    """The training data cannot be used; the message names the file and the problem."""


def random_colours(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` x 3 colours, uniform in [0, 1] (float64)."""
    return rng.random((count, 3))


def load_data(path: str | Path, scale: bool = False) -> np.ndarray:
    """Load an (examples x features) float64 array from ``.npy`` or ``.csv``.

    A 1-D array is taken as one feature. ``scale`` min-max scales each feature
    to [0, 1] (constant features become 0).
    """
    p = Path(path)
    name = str(p)
    if not p.exists():
        raise DataError(f"{name}: no such file")
    if p.is_dir():
        raise DataError(f"{name}: is a folder, not a data file")
    suffix = p.suffix.lower()
    if suffix == ".npy":
        arr = _load_npy(p)
    elif suffix in (".csv", ".txt"):
        arr = _load_csv(p)
    else:
        raise DataError(f"{name}: unsupported file type {p.suffix or '(none)'!r}; use .npy or .csv")
    return check_data(arr, name, scale)


def check_data(arr: np.ndarray, name: str = "data", scale: bool = False) -> np.ndarray:
    """Validate a loaded array and return it as float64 (examples x features)."""
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(f"{name}: data must be numeric, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise DataError(f"{name}: complex numbers are not supported")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{name}: expected a 2-D array (examples x features), got {arr.ndim}-D shape {arr.shape}")
    if arr.shape[0] == 0:
        raise DataError(f"{name}: contains no examples (zero rows)")
    if arr.shape[1] == 0:
        raise DataError(f"{name}: contains no features (zero columns)")
    out = np.asarray(arr, dtype=np.float64)
    bad = ~np.isfinite(out)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise DataError(f"{name}: {int(bad.sum())} value(s) are NaN or infinite (first at index [{row}, {col}])")
    if scale:
        lo, hi = out.min(axis=0), out.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        out = (out - lo) / span
    return np.ascontiguousarray(out)


def _load_npy(p: Path) -> np.ndarray:
    try:
        with open(p, "rb") as f:
            major, _ = np.lib.format.read_magic(f)
            header = (np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0)(f)
    except (ValueError, EOFError):
        raise DataError(f"{p}: not a .npy file (no NumPy array header; save one with numpy.save)") from None
    except OSError as exc:
        raise DataError(f"{p}: cannot read ({exc.strerror or exc})") from None
    if header[2].hasobject:
        raise DataError(
            f"{p}: holds Python objects, which would be unpickled to be read: a data file must "
            "never run code, so only numeric arrays are loaded"
        )
    try:
        arr: np.ndarray = np.load(p, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(f"{p}: cannot read as .npy ({exc or 'file is truncated'})") from None
    return arr


def _load_csv(p: Path) -> np.ndarray:
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise DataError(f"{p}: not a text file (cannot decode as UTF-8)") from None
    except OSError as exc:
        raise DataError(f"{p}: cannot read ({exc.strerror or exc})") from None
    # (line number in the file, text): messages name the file's own lines.
    lines = [(n, ln) for n, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        raise DataError(f"{p}: the file is empty")
    try:
        dialect = csv.Sniffer().sniff(lines[0][1], delimiters=",;\t ")
        delim = dialect.delimiter
    except csv.Error:
        delim = ","
    rows = [[c.strip() for c in r] for r in csv.reader((ln for _, ln in lines), delimiter=delim, skipinitialspace=True)]
    rows = [[c for c in r if c != ""] if delim == " " else r for r in rows]
    numbers = [n for n, _ in lines]
    start = 0
    # A header names columns: none of its cells is a number. A first row with some
    # numbers is data, and a bad cell in it is an error, not a header to drop.
    if not any(_is_number(c) for c in rows[0]):
        start = 1
    body = rows[start:]
    if not body:
        raise DataError(f"{p}: has a header but no data rows (zero rows)")
    width = len(rows[0])
    values = np.empty((len(body), width), dtype=np.float64)
    for i, r in enumerate(body):
        line = numbers[i + start]
        if len(r) != width:
            raise DataError(f"{p}: ragged rows: row {line} has {len(r)} columns, expected {width}")
        for j, c in enumerate(r):
            try:
                values[i, j] = float(c)
            except ValueError:
                what = "empty value" if c == "" else f"non-numeric value {c!r}"
                raise DataError(f"{p}: {what} at row {line}, column {j + 1}") from None
    bad = ~np.isfinite(values)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise DataError(
            f"{p}: {int(bad.sum())} value(s) are NaN or infinite (first at row {numbers[i + start]}, column {j + 1})"
        )
    return values


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
