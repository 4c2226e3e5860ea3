"""What every data file and table must be, checked before anything trains: the error every reader raises
(:class:`DataError`, naming the file and the problem), the file types read, and the checks of values and rows.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from som_studio.core import jax_runtime
from som_studio.i18n import _, ngettext

#: Columnar files, read with pyarrow (the optional extra ``parquet``).
COLUMNAR_SUFFIXES: tuple[str, ...] = (".parquet", ".arrow", ".feather", ".ipc")


#: Text tables, read by the CSV reader, plain or gzip'd.
TEXT_SUFFIXES: tuple[str, ...] = (".csv", ".tsv", ".txt")


#: Every data file suffix read (a gzip'd text table's, :data:`GZIP_SUFFIXES`, by the suffix before its ``.gz``).
DATA_SUFFIXES: tuple[str, ...] = (".npy", *TEXT_SUFFIXES, *COLUMNAR_SUFFIXES)


GZIP_SUFFIX = ".gz"
#: Gzip'd text tables (``cells.csv.gz``), read as their text is: the form large tables are shared in. Columnar
#: files compress inside, and a ``.npy`` file is mapped in place, so only text is read gzip'd.
GZIP_SUFFIXES: tuple[str, ...] = tuple(s + GZIP_SUFFIX for s in TEXT_SUFFIXES)


class DataSuffix(NamedTuple):
    """What a data file's name says of its format: ``suffix``, the format's (lower case), and whether it is
    gzip'd."""

    suffix: str
    gzip: bool


def data_suffix(path: str | os.PathLike[str]) -> DataSuffix:
    """``path``'s format suffix, and whether it is gzip'd: ``(".csv", True)`` for ``cells.CSV.gz``,
    ``(".parquet", False)`` for ``x.parquet``. Only a text table is read gzip'd: ``x.parquet.gz``'s suffix is
    ``.gz``, a format not read, as ``x.csv.bz2``'s is ``.bz2``."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == GZIP_SUFFIX:
        inner = Path(p.stem).suffix.lower()
        if inner in TEXT_SUFFIXES:
            return DataSuffix(inner, True)
    return DataSuffix(suffix, False)


#: Values this large are rarely measured: programs write float64's largest (1.8e308) or 1e300 for "no value".
MISSING_MARK_MIN = 1e300


def range_refusal(top: float, features: int, precision: str, name: object) -> str | None:
    """Why values up to ``top`` in size are too large for ``precision`` (``None`` where they are not).

    Every implementation sums squared differences of examples and units, which can reach ``4 * D * max|x|^2``:
    past the precision's largest number they are infinite, best-matching units become arbitrary and the map turns
    to NaN.
    """
    limit = math.sqrt(float(np.finfo(np.dtype(precision)).max) / (4 * features))
    if top < limit:
        return None
    fix = (
        _("min-max scale the data to [0, 1] or use float64")
        if precision != "float64"
        else _("min-max scale the data to [0, 1]")
    )
    if top >= MISSING_MARK_MIN:
        fix = _("{fix}; a value this large often marks a missing one: write those as empty cells or NA").format(fix=fix)
    return _(
        "{path}: values up to {top:.3g} are too large for {precision}: squared distances of "
        "{features}-feature examples overflow past {limit:.3g}; {fix}"
    ).format(path=name, top=top, precision=precision, features=features, limit=limit, fix=fix)


def largest_magnitude(values: np.ndarray) -> float:
    """The largest value of ``values`` in size, NaN left out (0 for none), by reductions that copy nothing
    (``nanmax(abs(x))`` makes two copies)."""
    if not values.size:
        return 0.0
    return max(abs(float(np.fmin.reduce(values, axis=None))), abs(float(np.fmax.reduce(values, axis=None))))


def ratio_text(ratio: float) -> str:
    """A ratio of ranges as a reader takes it in: ``2,645`` or, past a million, ``4.5e+307``."""
    return f"{ratio:,.0f}" if ratio < 1e6 else f"{ratio:.2g}"


PYARROW_INSTALL = "pip install 'som-studio[parquet]'"


class DataError(ValueError):
    """The training data cannot be used; the message names the file and the problem."""


#: The command line's flags of a table's column roles, by setting: messages about columns name them so.
COLUMN_FLAGS = {"labels": "--labels", "ignore": "--ignore", "id_column": "--id"}
_COLUMN_FLAG_IN_TEXT = re.compile(r"({})\b ?".format("|".join(map(re.escape, COLUMN_FLAGS.values()))))


def reword_column_flags(text: str, word: Callable[[str], str]) -> str:
    """``text`` with each column flag (``--labels species``) named by ``word(setting)`` instead: the app's control
    label, the Python API's keyword."""
    setting = {flag: name for name, flag in COLUMN_FLAGS.items()}
    return _COLUMN_FLAG_IN_TEXT.sub(lambda m: word(setting[m.group(1)]), text)


def changed_while_read(where: str) -> DataError:
    """A file whose size or time changed while a run read it (``where``: the file and its part)."""
    return DataError(_("{where}: the file changed while the run read it; start the run again").format(where=where))


def no_such_column(path: object, flag: str, name: str, columns: Sequence[str]) -> DataError:
    """``flag name`` names no column of ``columns``: the refusal lists the first of them and, where one is
    spelt nearly so (``Sample`` for ``sample``, ``cellid`` for ``cell_id``), names it: a table's columns are
    many, and the one meant may be past the list's end."""
    import difflib

    shown = ", ".join(columns[:12]) + (", ..." if len(columns) > 12 else "")
    named = f"{flag}{name}" if flag.endswith("=") else f"{flag} {name}"  # a keyword (labels=) or a flag
    folded = [c for c in columns if c.casefold() == name.casefold()]
    near = folded or difflib.get_close_matches(name, list(columns), n=1, cutoff=0.75)
    if near:
        return DataError(
            _("{path}: {named}: no such column; did you mean {near!r}? The columns are {columns}").format(
                path=path, named=named, near=near[0], columns=shown
            )
        )
    return DataError(
        _("{path}: {named}: no such column; the columns are {columns}").format(path=path, named=named, columns=shown)
    )


def column_flag(flag: str, name: str) -> str:
    """``flag`` followed by the column ``name`` as a shell reads it (``--ignore 'sepal width (cm)'``): a remedy
    pasted into a shell names the column, not the words of its name."""
    return f"{flag} {shlex.quote(name)}"


def refuse_empty_columns(
    values: np.ndarray, path: object, numbers: Sequence[int], names: Sequence[str], leave_out: Callable[[str], str]
) -> None:
    """Refuse a feature column with no value at all (every cell empty or missing), naming it.

    ``numbers`` are the columns' 1-based places in the file, ``names`` their names; ``leave_out(name)``
    says how the caller leaves a column out (``--ignore`` on the command line).
    """
    refuse_empty(np.isnan(values).all(axis=0), path, numbers, names, leave_out)


def refuse_empty(
    empty: np.ndarray, path: object, numbers: Sequence[int], names: Sequence[str], leave_out: Callable[[str], str]
) -> None:
    """:func:`refuse_empty_columns` for columns known to be ``empty`` (a mask, one per column)."""
    if empty.any():
        j = int(np.argmax(empty))
        raise DataError(
            _(
                "{path}: column {number} ({name!r}) has no values (every cell is empty or missing); "
                "leave it out with {flag}"
            ).format(path=path, number=numbers[j], name=names[j], flag=leave_out(names[j]))
        )


def empty_array_columns(values: np.ndarray) -> np.ndarray:
    """Which columns of ``values`` (N, D) have no value at all: only those missing in the first row are read
    whole, so a table without missing values costs one row's look."""
    empty = np.zeros(values.shape[1], bool)
    if values.shape[0] == 0:
        return empty
    maybe = np.flatnonzero(np.isnan(values[0]))
    empty[maybe] = np.isnan(values[:, maybe]).all(axis=0)
    return empty


def refuse_empty_array_columns(empty: np.ndarray, path: object) -> None:
    """Refuse a column of an array (a ``.npy`` file's, or one in memory) with no value at all (``empty``, a
    mask), naming it by its place: it has no name to leave out by, so the message says how to take it out."""
    names = [f"x{j + 1}" for j in range(len(empty))]
    place = {name: j for j, name in enumerate(names)}
    refuse_empty(
        empty, path, range(1, len(empty) + 1), names, lambda name: f"numpy.delete(array, {place[name]}, axis=1)"
    )


def not_numeric(name: str, dtype: object) -> str:
    return _("{path}: data must be numeric, got dtype {dtype}").format(path=name, dtype=dtype)


def not_2d(name: str, arr: np.ndarray) -> str:
    return _("{path}: expected a 2-D array (examples x features), got {ndim}-D shape {shape}").format(
        path=name, ndim=arr.ndim, shape=arr.shape
    )


def cannot_read(p: Path, exc: OSError) -> str:
    return _("{path}: cannot read ({why})").format(path=p, why=exc.strerror or exc)


def refuse_repeated_names(path: str | Path, names: Sequence[str]) -> None:
    """Refuse a Parquet or Arrow file whose columns repeat a name: which one a role or a feature meant is unknown."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise DataError(
                _("{path}: has two columns named {name!r}; column names must be unique").format(path=path, name=name)
            )
        seen.add(name)


def unmasked(data: Any) -> Any:
    """A NumPy masked array as floats with NaN in its masked cells, the missing values it marks (``np.asarray``
    drops the mask, and a sentinel such as 999 it hid would be trained on); anything else as it is."""
    if isinstance(data, np.ma.MaskedArray):
        return np.ma.filled(data.astype(np.result_type(data.dtype, np.float32)), np.nan)
    return data


def check_data(
    arr: np.ndarray, name: str = "data", first_row: int = 0, columns: Sequence[str] | None = None
) -> np.ndarray:
    """Validate a loaded array and return it (examples x features) as float64, or float32 when it is float32:
    NaN is a missing value.

    A float32 table keeps its own numbers (every one exact in float64 too): training in float32 takes it as
    it is, and reading a float32 file of a billion values writes 4 GB, not 8 GB and a float32 copy later.
    Arithmetic on a table's values (scaling, moments, initial maps) is done in float64 whatever its type.

    ``first_row`` is the 0-based index of ``arr``'s first row in its file (messages count from there).
    ``columns``: the file's names of ``arr``'s columns: a message then names a value by its 1-based row and its
    column, as a streamed run's does, not by its array index.
    """
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(not_numeric(name, arr.dtype))
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise DataError(_("{path}: complex numbers are not supported").format(path=name))
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(not_2d(name, arr))
    if arr.shape[0] == 0:
        raise DataError(_("{path}: contains no examples (zero rows)").format(path=name))
    if arr.shape[1] == 0:
        raise DataError(_("{path}: contains no features (zero columns)").format(path=name))
    # A file mapped in memory is copied even when it is in its table's type: a table never changes with its file.
    # Aligned as JAX's CPU device takes memory without a copy: a run in that precision trains on the table's
    # own rows (200,000 x 1,000 float32: 800 MB less).
    dtype = np.float32 if arr.dtype.kind == "f" and arr.dtype.itemsize == 4 else np.float64  # native byte order
    out = jax_runtime.placeable(arr, dtype, copy=isinstance(arr, np.memmap))
    if np.isfinite(out.min()) and np.isfinite(out.max()):
        # Both extremes finite: no infinity and no NaN (a NaN extreme would be NaN), so no row is all
        # missing. Two reductions that allocate nothing, where the scans below make arrays as large as the data.
        return out
    # fmin and fmax pass over missing values: an infinite extreme is an infinite value, found with no mask.
    if np.isinf(np.fmin.reduce(out, axis=None)) or np.isinf(np.fmax.reduce(out, axis=None)):
        inf = np.isinf(out)
        row, col = np.argwhere(inf)[0]
        if columns is not None:
            raise DataError(
                _("{path}: infinite value {value!r} at row {row}, column {column}").format(
                    path=name, value=float(out[row, col]), row=first_row + int(row) + 1, column=columns[col]
                )
            )
        raise DataError(
            ngettext(
                "{path}: {n} value is infinite (first at index [{row}, {col}])",
                "{path}: {n} values are infinite (first at index [{row}, {col}])",
                int(inf.sum()),
            ).format(path=name, n=int(inf.sum()), row=first_row + row, col=col)
        )
    check_known_rows(out, name, first_row=first_row)
    return out


def any_missing(values: np.ndarray) -> bool:
    """Whether ``values`` hold a missing value (NaN), by one reduction that allocates nothing: a NaN is every
    minimum's. ``isnan(values).any()`` fills a mask as large as the values first (200 MB for 800 MB of float32)."""
    return values.size > 0 and bool(np.isnan(np.min(values)))


#: Bytes of a table's values checked at a time for rows with no known value.
CHECK_BLOCK_BYTES = 1 << 22


def check_known_rows(
    values: np.ndarray, name: str, lines: np.ndarray | None = None, first_row: int = 0, index: Any = None
) -> None:
    """Refuse a row whose features are all missing, naming it (1-based data row; its file line if known, its label in
    a pandas frame's ``index``, by which its user looks it up).

    A block of rows at a time (:data:`CHECK_BLOCK_BYTES` of their values): the table's mask is never made whole."""
    step = max(1, CHECK_BLOCK_BYTES // max(values.itemsize * values.shape[1], 1))
    for at in range(0, len(values), step):
        none = np.isnan(values[at : at + step]).all(axis=1)
        if none.any():
            _refuse_unknown_row(name, at + int(np.argmax(none)), lines, first_row, index)


def _refuse_unknown_row(name: str, i: int, lines: np.ndarray | None, first_row: int, index: Any = None) -> None:
    """Row ``i`` of the values checked (0-based; the first is its file's ``first_row``) has no known value."""
    where = _(" (line {line} of the file)").format(line=int(lines[i])) if lines is not None else ""
    if index is not None:
        where = index_words(index[i])
    raise DataError(
        _("{path}: data row {row}{where} has no known feature value (all missing); a row needs at least one").format(
            path=name, row=first_row + i + 1, where=where
        )
    )


def index_words(label: Any) -> str:
    """A pandas frame's row named by its index label, after its 1-based row: `` (index 0)``."""
    return _(" (index {label})").format(label=label.item() if isinstance(label, np.generic) else label)


def row_name(i: int, index: Any = None) -> int | str:
    """Row ``i`` (0-based) as a message names it: 1-based, with its label in a pandas frame's ``index`` if given."""
    return f"{i + 1}{index_words(index[i])}" if index is not None else int(i) + 1


def check_path(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise DataError(_("{path}: no such file").format(path=p))
    if p.is_dir():
        raise DataError(_("{path}: is a folder, not a data file").format(path=p))
    if not p.is_file():  # a named pipe is read to its end more than once (its encoding, then its rows): it hung
        raise DataError(_("{path}: is not a regular file (a pipe or a device); save the data to a file").format(path=p))
    if data_suffix(p).suffix not in DATA_SUFFIXES:
        raise unsupported_type(p)
    return p


def unsupported_type(p: Path) -> DataError:
    """A file whose suffix is none of the data formats read, with those that are. A data file compressed otherwise
    than by gzip is named by both its suffixes (``.csv.bz2``): the compression is what is not read."""
    inner = Path(p.stem).suffix
    suffix = inner + p.suffix if p.suffix and inner.lower() in DATA_SUFFIXES else p.suffix
    return DataError(
        _(
            "{path}: unsupported file type {suffix!r}; use .npy, .csv (.tsv, .txt), .csv.gz (.tsv.gz, .txt.gz), "
            ".parquet or .arrow (.feather, .ipc)"
        ).format(path=p, suffix=suffix or _("(none)"))
    )


RANGE_RATIO_FOR_ZSCORE = 100.0
"""Feature ranges further apart than this: the form suggests z-score scaling, a comparison notes it."""


def widest_feature(low: Sequence[float] | np.ndarray, high: Sequence[float] | np.ndarray, names: Sequence[str]) -> str:
    """The name of the feature with the widest range (``""`` for none): the one an unscaled map follows."""
    with np.errstate(all="ignore"):
        spans = np.asarray(high, dtype=float) - np.asarray(low, dtype=float)
    spans = np.where(np.isfinite(spans), spans, -np.inf)
    if not spans.size or len(names) != spans.size or not np.isfinite(spans.max()):
        return ""
    return str(names[int(np.argmax(spans))])


def spans_ratio(low: Sequence[float] | np.ndarray, high: Sequence[float] | np.ndarray) -> float:
    """The widest feature's range over the narrowest (non-zero) one's, from each feature's least and greatest
    value; 1 for one feature or none."""
    with np.errstate(all="ignore"):
        spans = np.asarray(high, dtype=float) - np.asarray(low, dtype=float)
    spans = spans[np.isfinite(spans) & (spans > 0)]
    with np.errstate(over="ignore"):  # held at float64's largest: an infinite ratio read "infx" and is no JSON
        return min(float(spans.max() / spans.min()), float(np.finfo(float).max)) if spans.size > 1 else 1.0
