"""Training data: seeded random colours, or ``.npy`` / ``.csv`` / Parquet / Arrow tables of any width.

A CSV table may have a header row: its names become the feature names. One
text column can be the labels (``labels``), some columns can be left out
(``ignore``) and one carried through to projections (``id_column``); any other
non-numeric column is refused with a message naming it and those choices.
Columnar tables (``.parquet``, ``.arrow``/``.feather`` Arrow IPC files, read
with the optional pyarrow) and data frames in memory (pandas, polars, pyarrow:
:func:`frame_table`) follow the same rules, their column names being the header.
Files are read as UTF-8 (with or without a BOM); a file that is not UTF-8 is
read in the likeliest of the code pages spreadsheets write (CP949, Korean
Excel's CSV export, Windows-1252, ...), guessed with charset-normalizer, and
the table's notes say which. A first row of years in order above other numbers
is a header, and a note says so. Missing values (an empty cell, ``NA``,
``NaN``; NaN in a ``.npy``) are kept as NaN; a row with no known feature is
refused with its row number.

A data file never executes code: ``.npy`` is read with ``allow_pickle=False``.
Every problem with a file is reported as a :class:`DataError` that names the
file and what is wrong with it.
"""

from __future__ import annotations

import codecs
import csv
import math
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.i18n import _, ngettext
from som_studio.run_settings import Scaling as Method

SCALINGS: tuple[str, ...] = tuple(Method)
#: Columnar files, read with pyarrow (the optional extra ``parquet``).
COLUMNAR_SUFFIXES: tuple[str, ...] = (".parquet", ".arrow", ".feather", ".ipc")
#: Every data file suffix read.
DATA_SUFFIXES: tuple[str, ...] = (".npy", ".csv", ".txt", *COLUMNAR_SUFFIXES)
PYARROW_INSTALL = "pip install 'som-studio[parquet]'"
# Cell texts read as a missing value (compared in lower case).
MISSING = frozenset({"", "na", "nan", "n/a"})
_READ_BLOCK = 1 << 20


class DataError(ValueError):
    """The training data cannot be used; the message names the file and the problem."""


def refuse_empty_columns(
    values: np.ndarray, path: object, numbers: Sequence[int], names: Sequence[str], leave_out: Callable[[str], str]
) -> None:
    """Refuse a feature column with no value at all (every cell empty or missing), naming it.

    ``numbers`` are the columns' 1-based places in the file, ``names`` their names; ``leave_out(name)``
    says how the caller leaves a column out (``--ignore`` on the command line).
    """
    empty = np.isnan(values).all(axis=0)
    if empty.any():
        j = int(np.argmax(empty))
        raise DataError(
            _(
                "{path}: column {number} ({name!r}) has no values (every cell is empty or missing); "
                "leave it out with {flag}"
            ).format(path=path, number=numbers[j], name=names[j], flag=leave_out(names[j]))
        )


def random_colours(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` x 3 colours, uniform in [0, 1] (float64)."""
    return rng.random((count, 3))


# -- scaling ---------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Scaling:
    """A per-feature affine scaling ``(x - offset) / scale``, kept so new data is scaled the same way.

    ``method`` is ``none``, ``minmax`` (to [0, 1]; constant features become 0) or
    ``zscore`` (mean 0, standard deviation 1 with the N-1 divisor, as the SOM
    Toolbox's ``var``; constant features become 0). Missing values stay missing.
    """

    method: str
    offset: np.ndarray
    scale: np.ndarray

    def apply(self, values: np.ndarray) -> np.ndarray:
        """``values`` (N, D) in the scaled space (float64)."""
        scaled: np.ndarray = (np.asarray(values, dtype=np.float64) - self.offset) / self.scale
        return scaled

    def invert(self, values: np.ndarray) -> np.ndarray:
        """Back from the scaled space to the data's original units (float64)."""
        original: np.ndarray = np.asarray(values, dtype=np.float64) * self.scale + self.offset
        return original

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "offset": self.offset.tolist(), "scale": self.scale.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scaling:
        method = str(d.get("method", "none"))
        if method not in SCALINGS:
            raise DataError(_unknown_scaling(method))
        offset = np.asarray(d["offset"], dtype=np.float64)
        scale = np.asarray(d["scale"], dtype=np.float64)
        finite = bool(np.all(np.isfinite(offset)) and np.all(np.isfinite(scale)))
        if offset.shape != scale.shape or offset.ndim != 1 or not finite or not np.all(scale > 0):
            raise DataError(
                _(
                    "scaling parameters are damaged (offset and scale must be matching rows of finite numbers, "
                    "scale > 0)"
                )
            )
        return cls(method, offset, scale)

    @classmethod
    def identity(cls, features: int) -> Scaling:
        return cls("none", np.zeros(features), np.ones(features))


def _unknown_scaling(method: str) -> str:
    return _("unknown scaling {method!r}; expected one of {choices}").format(method=method, choices=", ".join(SCALINGS))


def _not_numeric(name: str, dtype: object) -> str:
    return _("{path}: data must be numeric, got dtype {dtype}").format(path=name, dtype=dtype)


def _not_2d(name: str, arr: np.ndarray) -> str:
    return _("{path}: expected a 2-D array (examples x features), got {ndim}-D shape {shape}").format(
        path=name, ndim=arr.ndim, shape=arr.shape
    )


def _cannot_read(p: Path, exc: OSError) -> str:
    return _("{path}: cannot read ({why})").format(path=p, why=exc.strerror or exc)


def fit_scaling(values: np.ndarray, method: str) -> Scaling:
    """The scaling ``method`` fitted to ``values`` (N, D), ignoring missing values (NaN)."""
    if method not in SCALINGS:
        raise DataError(_unknown_scaling(method))
    x = np.asarray(values, dtype=np.float64)
    d = x.shape[1]
    if method == "none":
        return Scaling.identity(d)
    known = ~np.isnan(x)
    # Every column has a known value (read_table refuses an all-missing column), but
    # stay quiet and neutral for arrays built elsewhere.
    has = known.any(axis=0)
    safe = np.where(known, x, 0.0)
    # Values near float64's limit overflow here; Table.scaled refuses the feature by name.
    with np.errstate(over="ignore", invalid="ignore"):
        if method == Method.MINMAX:
            lo = np.where(has, np.min(np.where(known, x, np.inf), axis=0), 0.0)
            hi = np.where(has, np.max(np.where(known, x, -np.inf), axis=0), 1.0)
            span = hi - lo
            return Scaling(Method.MINMAX, lo, np.where(span > 0, span, 1.0))
        n = known.sum(axis=0)
        mean = np.where(n > 0, safe.sum(axis=0) / np.maximum(n, 1), 0.0)
        sq = np.where(known, (x - mean) ** 2, 0.0).sum(axis=0)
        std = np.sqrt(sq / np.maximum(n - 1, 1))
    return Scaling(Method.ZSCORE, mean, np.where(std > 0, std, 1.0))


# -- tables ----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Table:
    """A data table: numeric features, and the optional label and id columns.

    Attributes
    ----------
    values : (N, D) float64 array; NaN marks a missing value
    feature_names : one name per feature column
    labels : (N,) array of str, or ``None``
    ids : (N,) array of str, or ``None``
    label_column, id_column : the chosen columns' names, or ``None``
    scaling : how ``values`` were scaled from the file's units (``none`` when not)
    source : the file the table was read from (``data`` for one made in memory), for messages
    notes : what reading it decided without certainty (a guessed encoding, a header of years,
        an unnamed column), one line each, for the user to see
    """

    values: np.ndarray
    feature_names: tuple[str, ...]
    labels: np.ndarray | None = None
    ids: np.ndarray | None = None
    label_column: str | None = None
    id_column: str | None = None
    scaling: Scaling | None = field(default=None)
    source: str = "data"
    notes: tuple[str, ...] = ()

    @property
    def has_missing(self) -> bool:
        return bool(np.isnan(self.values).any())

    def scaled(self, method: str) -> Table:
        """This table with its features scaled by ``method`` (fitted to these values).

        A feature whose values are too large for the scaling's arithmetic (its range or
        squares overflow float64) is refused by name: its scaled values would be NaN, read
        as missing everywhere, and the run could not be saved.
        """
        s = fit_scaling(self.values, method)
        if method == "none":
            return replace(self, scaling=s)
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.ascontiguousarray(s.apply(self.values))
            lost = (~np.isfinite(values) & ~np.isnan(self.values)).any(axis=0)
        lost |= ~(np.isfinite(s.offset) & np.isfinite(s.scale))
        if lost.any():
            j = int(np.argmax(lost))
            top = float(np.nanmax(np.abs(self.values[:, j])))
            raise DataError(
                _(
                    "{path}: feature {name!r} cannot be scaled with {method}: its values (up to {top:.3g} in size) "
                    "overflow the arithmetic; divide the column by a power of ten, or leave it out with {flag}"
                ).format(path=self.source, name=self.feature_names[j], method=method, top=top, flag="--ignore")
            )
        return replace(self, values=values, scaling=s)


def default_feature_names(count: int) -> tuple[str, ...]:
    """Names for features of a file without a header: ``x1``, ``x2``, ..."""
    return tuple(f"x{j + 1}" for j in range(count))


def load_data(path: str | Path, scale: bool = False) -> np.ndarray:
    """Load an (examples x features) float64 array from ``.npy`` or ``.csv``.

    A 1-D array is taken as one feature. ``scale`` min-max scales each feature
    to [0, 1] (constant features become 0). Missing values are NaN.
    """
    table = read_table(path)
    return table.scaled(Method.MINMAX).values if scale else table.values


def read_table(
    path: str | Path,
    labels: str | None = None,
    ignore: Sequence[str] = (),
    id_column: str | None = None,
) -> Table:
    """Read a whole ``.npy`` or ``.csv`` file as a :class:`Table` (unscaled).

    ``labels``, ``ignore`` and ``id_column`` name columns of a CSV's header
    (or ``x1``, ``x2``, ... in a file without one).
    """
    p = _check_path(path)
    if p.suffix.lower() in COLUMNAR_SUFFIXES:
        return frame_table(read_columnar(p), labels, ignore, id_column, source=str(p))
    if p.suffix.lower() == ".npy":
        if labels or ignore or id_column:
            raise DataError(
                _("{path}: a .npy file has no named columns: {flags} apply to .csv tables").format(
                    path=p, flags="--labels, --ignore, --id"
                )
            )
        arr = _load_npy(p)
        values = check_data(arr, str(p))
        return Table(values, default_feature_names(values.shape[1]), source=str(p))
    reader = CsvReader(p, labels=labels, ignore=ignore, id_column=id_column)
    parts = list(reader.chunks())
    if not parts:
        raise DataError(
            (
                _("{path}: has a header but no data rows (zero rows)")
                if reader.header
                else _("{path}: the file is empty")
            ).format(path=p)
        )
    values = np.concatenate([c.values for c in parts])
    refuse_empty_columns(
        values, p, [c + 1 for c in reader.feature_columns], reader.feature_names, lambda _name: "--ignore"
    )
    return Table(
        np.ascontiguousarray(values),
        reader.feature_names,
        labels=np.concatenate([c.labels for c in parts]) if labels else None,
        ids=np.concatenate([c.ids for c in parts]) if id_column else None,
        label_column=labels,
        id_column=id_column,
        source=str(p),
        notes=tuple(reader.notes),
    )


def check_data(arr: np.ndarray, name: str = "data", scale: bool = False, first_row: int = 0) -> np.ndarray:
    """Validate a loaded array and return it as float64 (examples x features); NaN is a missing value.

    ``first_row`` is the 0-based index of ``arr``'s first row in its file (messages count from there).
    """
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(_not_numeric(name, arr.dtype))
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise DataError(_("{path}: complex numbers are not supported").format(path=name))
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(_not_2d(name, arr))
    if arr.shape[0] == 0:
        raise DataError(_("{path}: contains no examples (zero rows)").format(path=name))
    if arr.shape[1] == 0:
        raise DataError(_("{path}: contains no features (zero columns)").format(path=name))
    out = np.asarray(arr, dtype=np.float64)
    inf = np.isinf(out)
    if inf.any():
        row, col = np.argwhere(inf)[0]
        raise DataError(
            ngettext(
                "{path}: {n} value is infinite (first at index [{row}, {col}])",
                "{path}: {n} values are infinite (first at index [{row}, {col}])",
                int(inf.sum()),
            ).format(path=name, n=int(inf.sum()), row=first_row + row, col=col)
        )
    check_known_rows(out, name, first_row=first_row)
    if scale:
        out = fit_scaling(out, Method.MINMAX).apply(out)
    return np.ascontiguousarray(out)


def check_known_rows(values: np.ndarray, name: str, lines: np.ndarray | None = None, first_row: int = 0) -> None:
    """Refuse a row whose features are all missing, naming it (1-based data row; its file line if known)."""
    none = np.isnan(values).all(axis=1)
    if none.any():
        i = int(np.argmax(none))
        where = _(" (line {line} of the file)").format(line=int(lines[i])) if lines is not None else ""
        raise DataError(
            _(
                "{path}: data row {row}{where} has no known feature value (all missing); a row needs at least one"
            ).format(path=name, row=first_row + i + 1, where=where)
        )


def _check_path(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise DataError(_("{path}: no such file").format(path=p))
    if p.is_dir():
        raise DataError(_("{path}: is a folder, not a data file").format(path=p))
    if p.suffix.lower() not in DATA_SUFFIXES:
        raise DataError(
            _("{path}: unsupported file type {suffix!r}; use .npy, .csv, .parquet or .arrow").format(
                path=p, suffix=p.suffix or _("(none)")
            )
        )
    return p


# -- columnar files and data frames ---------------------------------------------------------


def read_columnar(path: str | Path) -> Any:
    """A ``.parquet`` or Arrow IPC (``.arrow``, ``.feather``) file as a ``pyarrow.Table``.

    pyarrow is optional: without it the message says how to install it.
    """
    p = _check_path(path)
    try:
        import pyarrow as pa
        import pyarrow.feather as feather
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            _("{path}: reading {suffix} files needs pyarrow; install it with {command}").format(
                path=p, suffix=p.suffix.lower(), command=PYARROW_INSTALL
            )
        ) from None
    try:
        if p.suffix.lower() == ".parquet":
            return pq.read_table(p)
        return feather.read_table(p)
    except (OSError, pa.ArrowException) as exc:
        kind = "Parquet" if p.suffix.lower() == ".parquet" else "Arrow IPC"
        raise DataError(_("{path}: cannot read as {kind} ({why})").format(path=p, kind=kind, why=exc)) from None


def file_columns(path: str | Path) -> tuple[str, ...]:
    """The column names of a data file's header (a CSV's, a columnar file's), with no roles; ``()`` for ``.npy``."""
    p = _check_path(path)
    if p.suffix.lower() in COLUMNAR_SUFFIXES:
        return tuple(str(n) for n in read_columnar(p).column_names)
    if p.suffix.lower() == ".npy":
        return ()
    return CsvReader(p).columns


def frame_columns(frame: Any) -> list[tuple[str, np.ndarray]] | None:
    """A pandas, polars or pyarrow table's columns as ``(name, 1-D array)``; ``None`` for anything else.

    Missing values (pandas' NA, polars' and Arrow's nulls) come back as NaN in numeric
    columns and as ``None`` in object columns.
    """
    kind = type(frame).__module__.split(".")[0]
    if kind == "pandas" and hasattr(frame, "columns") and hasattr(frame, "iloc"):
        out = []
        for j, name in enumerate(frame.columns):
            col = frame.iloc[:, j]
            if col.dtype.kind in "biuf" or str(col.dtype) in (
                "Int8",
                "Int16",
                "Int32",
                "Int64",
                "UInt8",
                "UInt16",
                "UInt32",
                "UInt64",
                "Float32",
                "Float64",
                "boolean",
            ):
                arr = col.to_numpy(dtype=np.float64, na_value=np.nan)
            else:
                arr = col.to_numpy(dtype=object)
            out.append((str(name), arr))
        return out
    if kind == "polars" and hasattr(frame, "get_column"):
        out = []
        for name in frame.columns:
            col = frame.get_column(name)
            if col.dtype.is_numeric():
                arr = col.cast(float).to_numpy()  # nulls become NaN
            elif str(col.dtype) == "Boolean":
                arr = col.cast(float).to_numpy()
            else:
                arr = np.asarray(col.to_list(), dtype=object)
            out.append((str(name), arr))
        return out
    if kind == "pyarrow" and hasattr(frame, "column_names"):
        import pyarrow as pa

        out = []
        for name in frame.column_names:
            col = frame.column(name)
            if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type):
                arr = col.cast(pa.float64()).to_numpy(zero_copy_only=False)  # nulls become NaN
            else:
                arr = np.asarray(col.to_pylist(), dtype=object)
            out.append((str(name), arr))
        return out
    return None


def is_frame(data: Any) -> bool:
    """Whether ``data`` is a pandas, polars or pyarrow table (:func:`frame_table` reads it)."""
    kind = type(data).__module__.split(".")[0]
    return kind in ("pandas", "polars", "pyarrow") and (hasattr(data, "columns") or hasattr(data, "column_names"))


def frame_table(
    frame: Any,
    labels: str | None = None,
    ignore: Sequence[str] = (),
    id_column: str | None = None,
    *,
    source: str = "DataFrame",
    keywords: bool = False,
) -> Table:
    """A data frame (pandas, polars or a ``pyarrow.Table``) as a :class:`Table`: column names become feature names.

    ``labels``, ``ignore`` and ``id_column`` name its columns as they do a CSV's header.
    A non-numeric column that none of them names is refused by name, with the choices;
    ``keywords`` words them as the Python API's keywords (``labels='name'``), else as the
    command line's flags. An empty frame is refused.
    """
    columns = frame_columns(frame)
    if columns is None:
        raise DataError(
            _("{path}: expected a pandas, polars or pyarrow table, got {type}").format(
                path=source, type=type(frame).__name__
            )
        )
    names = [n for n, _col in columns]
    spell: Callable[[str, str], str] = (
        (lambda key, col: f"{key}={col!r}") if keywords else (lambda key, col: f"{_FLAG_OF[key]} {col}")
    )
    if not columns:
        raise DataError(_("{path}: contains no features (zero columns)").format(path=source))
    rows = len(columns[0][1])
    if rows == 0:
        raise DataError(_("{path}: contains no examples (zero rows)").format(path=source))
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataError(
            _("{path}: the header names column {name!r} twice; column names must be unique").format(
                path=source, name=dup
            )
        )
    by_name = dict(columns)
    for key, col in [("labels", labels), ("id_column", id_column)] + [("ignore", c) for c in ignore]:
        if col is not None and col not in by_name:
            shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
            raise DataError(
                _("{path}: {flag} {name}: no such column; the columns are {columns}").format(
                    path=source, flag=_FLAG_OF[key] if not keywords else f"{key}=", name=col, columns=shown
                )
            )
    roles = {labels, id_column, *ignore}
    features = [n for n in names if n not in roles]
    if not features:
        raise DataError(
            _("{path}: no feature column is left once labels, id and ignored columns are set aside").format(path=source)
        )
    values = np.empty((rows, len(features)), dtype=np.float64)
    for j, name in enumerate(features):
        values[:, j] = _numeric_column(by_name[name], name, source, spell)
    if np.isinf(values).any():
        row, col = np.argwhere(np.isinf(values))[0]
        raise DataError(
            _("{path}: infinite value {value!r} at row {row}, column {column}").format(
                path=source, value=float(values[row, col]), row=int(row) + 1, column=features[col]
            )
        )
    refuse_empty_columns(
        values, source, [names.index(f) + 1 for f in features], features, lambda name: spell("ignore", name)
    )
    check_known_rows(values, source)

    def text(col: str | None) -> np.ndarray | None:
        if col is None:
            return None
        return np.array(
            ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in by_name[col]], dtype=str
        )

    return Table(
        np.ascontiguousarray(values),
        tuple(features),
        labels=text(labels),
        ids=text(id_column),
        label_column=labels,
        id_column=id_column,
        source=source,
    )


def frame_features(
    frame: Any, feature_names: Sequence[str], id_column: str | None = None, *, source: str = "DataFrame"
) -> tuple[np.ndarray, np.ndarray | None]:
    """A frame's columns named ``feature_names``, in that order (float64), and its id column if it has one.

    Other columns (a run's labels, ignored columns, new ones) are passed over; a feature
    column the frame lacks is refused by name.
    """
    columns = frame_columns(frame)
    if columns is None:
        raise DataError(
            _("{path}: expected a pandas, polars or pyarrow table, got {type}").format(
                path=source, type=type(frame).__name__
            )
        )
    by_name = dict(columns)
    missing = [n for n in feature_names if n not in by_name]
    if missing:
        raise DataError(
            _("{path}: its feature columns do not match the run's ({columns}): {problems}").format(
                path=source,
                columns=", ".join(feature_names),
                problems=_("missing {columns}").format(columns=", ".join(missing)),
            )
        )
    rows = len(columns[0][1]) if columns else 0
    values = np.empty((rows, len(feature_names)), dtype=np.float64)
    for j, name in enumerate(feature_names):
        values[:, j] = _numeric_column(by_name[name], name, source, lambda key, col: f"{key}={col!r}")
    ids = None
    if id_column is not None and id_column in by_name:
        ids = np.array([str(v) for v in by_name[id_column]], dtype=str)
    return values, ids


_FLAG_OF = {"labels": "--labels", "ignore": "--ignore", "id_column": "--id"}


def _numeric_column(col: np.ndarray, name: str, source: str, spell: Callable[[str, str], str]) -> np.ndarray:
    """A frame's column as float64, missing values NaN; a text cell refuses the column by name."""
    if col.dtype != object:
        if col.dtype.kind not in "biuf":
            raise DataError(_non_numeric_column(source, name, col.dtype, spell))
        return np.asarray(col, dtype=np.float64)
    out = np.empty(len(col), dtype=np.float64)
    for i, v in enumerate(col):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out[i] = np.nan
        elif isinstance(v, (int, float, bool, np.number, np.bool_)):
            out[i] = float(v)
        else:
            raise DataError(_non_numeric_column(source, name, type(v).__name__, spell, value=v, row=i + 1))
    return out


def _non_numeric_column(
    source: str, name: str, dtype: object, spell: Callable[[str, str], str], value: Any = None, row: int = 0
) -> str:
    where = _(" (value {value!r} at row {row})").format(value=value, row=row) if row else ""
    return _(
        "{path}: column {name!r} is not numeric ({dtype}){where}: a text column can be the labels ({labels}), "
        "left out ({ignore}) or carried through ({id})"
    ).format(
        path=source,
        name=name,
        dtype=dtype,
        where=where,
        labels=spell("labels", name),
        ignore=spell("ignore", name),
        id=spell("id_column", name),
    )


def _load_npy(p: Path, mmap: bool = False) -> np.ndarray:
    try:
        with open(p, "rb") as f:
            major, _minor = np.lib.format.read_magic(f)
            header = (np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0)(f)
    except (ValueError, EOFError):
        raise DataError(
            _("{path}: not a .npy file (no NumPy array header; save one with numpy.save)").format(path=p)
        ) from None
    except OSError as exc:
        raise DataError(_cannot_read(p, exc)) from None
    if header[2].hasobject:
        raise DataError(
            _(
                "{path}: holds Python objects, which would be unpickled to be read: a data file must "
                "never run code, so only numeric arrays are loaded"
            ).format(path=p)
        )
    try:
        arr: np.ndarray = np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(
            _("{path}: cannot read as .npy ({why})").format(path=p, why=exc or _("file is truncated"))
        ) from None
    return arr


def open_npy(path: str | Path) -> np.ndarray:
    """A ``.npy`` file mapped read-only (rows are read when used), its header checked as :func:`read_table` does."""
    p = _check_path(path)
    arr = _load_npy(p, mmap=True)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(_not_numeric(str(p), arr.dtype))
    if arr.ndim not in (1, 2):
        raise DataError(_not_2d(str(p), arr))
    return arr


# -- CSV, streamed ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Chunk:
    """Consecutive data rows of a table: ``first`` is the 0-based index of the first."""

    first: int
    values: np.ndarray
    labels: np.ndarray | None
    ids: np.ndarray | None
    lines: np.ndarray


@dataclass(frozen=True)
class Encoding:
    """How a text file is decoded: the codec, its name for people, and a note when it was guessed."""

    codec: str
    name: str
    note: str = ""


def detect_encoding(p: Path) -> Encoding:
    """The encoding ``p`` decodes in; :class:`DataError` when it has none that SOM Studio reads.

    UTF-8 (with or without a BOM) is certain when the whole file decodes in it, and is tried
    first. Otherwise the encoding is a guess: charset-normalizer ranks the code pages of
    :data:`CODE_PAGES` on the file's first megabyte, the whole file must then decode in the
    winner, and the :class:`Encoding` carries a note that says which was chosen.
    """
    try:
        with open(p, "rb") as f:
            head = f.read(_READ_BLOCK)
    except OSError as exc:
        raise DataError(_cannot_read(p, exc)) from None
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise DataError(_("{path}: the text is UTF-16 encoded; save it as CSV UTF-8 (or CP949)").format(path=p))
    utf8_error = _decode_error(p, "utf-8-sig")
    if utf8_error is None:
        return Encoding("utf-8-sig", "UTF-8")
    codec = _guess_code_page(head)
    later = _decode_error(p, codec) if codec is not None else None
    if codec is not None and later is not None:
        raise DataError(
            _(
                "{path}: not a text file in a supported encoding: it is not UTF-8 ({error} is not UTF-8), "
                "and its start reads as {encoding} but {later} does not; save it as CSV UTF-8"
            ).format(path=p, error=utf8_error, encoding=CODE_PAGES[codec], later=later)
        )
    if codec is None:
        raise DataError(
            _(
                "{path}: not a text file in a supported encoding: it is not UTF-8 ({error} is not UTF-8) "
                "and reads as none of the code pages SOM Studio knows (CP949, Windows-1252, ...); "
                "save it as CSV UTF-8"
            ).format(path=p, error=utf8_error)
        )
    name = CODE_PAGES[codec]
    note = _(
        "{path}: not UTF-8 ({error} is not UTF-8): read as {encoding}, the likeliest encoding of its text "
        "(a guess); if its words look wrong, save it as CSV UTF-8"
    ).format(path=p, error=utf8_error, encoding=name)
    return Encoding(codec, name, note)


#: The code pages a CSV that is not UTF-8 may be in, by codec: the ones spreadsheets save "CSV" in
#: (Korean Excel's CP949 first, for the ties below), and the name people know each by.
CODE_PAGES: dict[str, str] = {
    "cp949": "CP949",
    "cp1252": "Windows-1252",
    "cp1250": "Windows-1250",
    "cp1251": "Windows-1251",
    "cp1253": "Windows-1253",
    "cp1254": "Windows-1254",
    "cp1257": "Windows-1257",
    "cp932": "Shift_JIS (CP932)",
    "gb18030": "GB18030",
    "big5": "Big5",
}


def _decode_error(p: Path, codec: str) -> str | None:
    """Where ``p`` stops decoding in ``codec`` (``byte 0x.. at offset N``), read in blocks; ``None`` if it decodes."""
    dec = codecs.getincrementaldecoder(codec)()
    offset = 0
    try:
        with open(p, "rb") as f:
            while block := f.read(_READ_BLOCK):
                dec.decode(block)
                offset += len(block)
            dec.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        bad = exc.object[exc.start : exc.start + 1].hex()
        return _("byte 0x{byte} at offset {offset}").format(byte=bad, offset=offset + exc.start)
    except OSError as exc:
        raise DataError(_cannot_read(p, exc)) from None
    return None


def _guess_code_page(head: bytes) -> str | None:
    """The likeliest of :data:`CODE_PAGES` for ``head``, or ``None`` if it reads as none.

    charset-normalizer ranks them by how messy and how coherent the decoded text is; short
    texts often tie (a few accented letters decode well in several code pages). A tie goes
    to the first in :data:`CODE_PAGES` order, except CP949 unless its text is Hangul: two
    Western letters in a row also make a valid CP949 pair, read as a Chinese character. The
    code page named is the first that reads the text alike (``café €`` is Windows-1252's, though
    Windows-1250 reads it the same). Text it finds too messy for any (a few rare letters
    side by side) goes to the first code page in that order that reads it as text, without
    control characters; bytes that no code page reads so are not text.
    """
    from charset_normalizer import from_bytes

    matches = list(from_bytes(head, cp_isolation=list(CODE_PAGES)))
    hangul = _mostly_hangul(head)
    fits = [m for m in matches if m.encoding in CODE_PAGES and (m.encoding != "cp949" or hangul)]
    if not fits and matches:  # CP949 alone decodes it (Hanja, say): still the likeliest
        return str(matches[0].encoding)
    if not fits:
        return next((c for c in CODE_PAGES if (c != "cp949" or hangul) and _reads_as_text(head, c)), None)
    rank = [(round(m.chaos, 3), round(m.coherence, 3)) for m in fits]
    tied = [str(m.encoding) for m, r in zip(fits, rank) if r == rank[0]]
    order = list(CODE_PAGES)
    chosen = min(tied, key=order.index)
    # Code pages share most letters: one earlier in the order that reads this text alike is the one to name.
    text = head.decode(chosen, "replace")
    return next(c for c in order if c == chosen or (c != "cp949" and head.decode(c, "replace") == text))


def _reads_as_text(head: bytes, codec: str) -> bool:
    """Whether ``head`` decodes in ``codec`` (its last character may be cut) to text without control characters."""
    try:
        text = codecs.getincrementaldecoder(codec)().decode(head)
    except UnicodeDecodeError:
        return False
    return all(ch >= " " or ch in "\t\r\n" for ch in text)


def _mostly_hangul(head: bytes) -> bool:
    """Whether ``head``'s non-ASCII text read as CP949 is mostly Hangul syllables."""
    text = head.decode("cp949", "ignore")
    wide = [ch for ch in text if ord(ch) > 0x7F]
    hangul = sum(1 for ch in wide if "\uac00" <= ch <= "\ud7a3")
    return bool(wide) and hangul * 2 > len(wide)


class CsvReader:
    """A CSV table read row by row: the header and column roles first, then chunks of rows.

    Memory is bounded by the chunk size, so projecting a file of any length
    does not grow with its row count. Messages name the file's own lines
    (blank and ``#`` comment lines counted).
    """

    def __init__(
        self,
        path: str | Path,
        labels: str | None = None,
        ignore: Sequence[str] = (),
        id_column: str | None = None,
        *,
        optional: Sequence[str] = (),
    ) -> None:
        self.path = p = _check_path(path)
        enc = detect_encoding(p)
        self.encoding = enc.codec
        #: What was decided without certainty (the encoding, the header, unnamed columns), one line each.
        self.notes: list[str] = [enc.note] if enc.note else []
        lines = self._lines()
        first = next(lines, None)
        if first is None:
            raise DataError(_("{path}: the file is empty").format(path=p))
        _line, text = first
        try:
            self.delimiter = csv.Sniffer().sniff(text, delimiters=",;\t ").delimiter
        except csv.Error:
            self.delimiter = ","
        cells = self._split(text)
        second = next(lines, None)
        lines.close()
        self.header = self._is_header(cells, self._split(second[1]) if second else None)
        self.width = len(cells)
        names = self._names(cells) if self.header else list(default_feature_names(len(cells)))
        self.columns: tuple[str, ...] = tuple(names)
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise DataError(
                _("{path}: the header names column {name!r} twice; column names must be unique").format(
                    path=p, name=dup
                )
            )
        self.label_index = self._column(labels, "--labels", optional)
        self.id_index = self._column(id_column, "--id", optional)
        skip = {self._column(c, "--ignore", optional) for c in ignore}
        roles = {self.label_index, self.id_index} | skip
        self.feature_columns = [j for j in range(self.width) if j not in roles]
        if not self.feature_columns:
            raise DataError(
                _("{path}: no feature column is left once labels, id and ignored columns are set aside").format(path=p)
            )
        self.feature_names: tuple[str, ...] = tuple(names[j] for j in self.feature_columns)

    def _is_header(self, cells: list[str], below: list[str] | None) -> bool:
        """Whether the first row ``cells`` names the columns (``below``: the next row's cells, if any).

        A header names columns: none of its cells is a number. A first row with some numbers is
        data, and a bad cell in it is an error, not a header to drop; except a row whose numbers
        are years in order (``2019,2020,2021``, or ``country,2019,2020``) above a row whose numbers
        are not: that is a header, and a note says so, as it does when such a row is kept as data.
        """
        numbers = [c for c in cells if _is_number(c)]
        if not numbers:
            return True
        if below is None or not _years_in_order(numbers):
            return False
        shown = ", ".join(cells[:6]) + (", ..." if len(cells) > 6 else "")
        under = [c for j, c in enumerate(below) if j < len(cells) and _is_number(cells[j])]
        if under and all(_is_year(c) for c in under):
            self.notes.append(
                _(
                    "{path}: the first line ({cells}) looks like a header of years, but the line below holds "
                    "years too: both are read as data; to make it a header, name the columns with text "
                    "(y{year})"
                ).format(path=self.path, cells=shown, year=numbers[0])
            )
            return False
        self.notes.append(
            _(
                "{path}: the first line ({cells}) is read as the header: its numbers are years in order and "
                "the line below holds other numbers; if it is data, add a header line of column names"
            ).format(path=self.path, cells=shown)
        )
        return True

    def _names(self, cells: list[str]) -> list[str]:
        """The header's column names; an empty cell gets ``x<column>`` (or a name no other column has)."""
        names = list(cells)
        taken = set(cells)
        for j, cell in enumerate(cells):
            if cell:
                continue
            base = name = f"x{j + 1}"
            k = 2
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            names[j] = name
            taken.add(name)
            self.notes.append(
                _("{path}: column {number} has no name in the header; it is called {name!r}").format(
                    path=self.path, number=j + 1, name=name
                )
            )
        return names

    def _column(self, name: str | None, flag: str, optional: Sequence[str]) -> int | None:
        if name is None:
            return None
        if name in self.columns:
            return self.columns.index(name)
        if name in optional:
            return None
        shown = ", ".join(self.columns[:12]) + (", ..." if len(self.columns) > 12 else "")
        raise DataError(
            _("{path}: {flag} {name}: no such column; the columns are {columns}").format(
                path=self.path, flag=flag, name=name, columns=shown
            )
        )

    def _lines(self) -> Generator[tuple[int, str]]:
        try:
            with open(self.path, encoding=self.encoding, newline="") as f:
                for n, ln in enumerate(f, 1):
                    s = ln.strip()
                    if s and not s.startswith("#"):
                        yield n, ln.rstrip("\r\n")
        except OSError as exc:
            raise DataError(_cannot_read(self.path, exc)) from None

    def _split(self, text: str) -> list[str]:
        if '"' in text:  # quoted cells: the csv module's rules
            row = next(csv.reader([text], delimiter=self.delimiter, skipinitialspace=True), [])
        else:  # the common case, ~4x cheaper than a csv.reader per line
            row = text.split(self.delimiter)
        row = [c.strip() for c in row]
        return [c for c in row if c != ""] if self.delimiter == " " else row

    def chunks(self, rows: int = 65536) -> Iterator[Chunk]:
        """The data rows in chunks of at most ``rows``."""
        lines = self._lines()
        if self.header:
            next(lines)
        cols = self.feature_columns
        done = 0
        buf_v: list[list[float]] = []
        buf_l: list[str] = []
        buf_i: list[str] = []
        buf_n: list[int] = []
        for n, text in lines:
            r = self._split(text)
            if done == 0 and not buf_v and not any(_is_number(c) or c.lower() in MISSING for c in r):
                # The first data row has no number at all: prose or another text file, not a table with a bad row.
                raise DataError(
                    _(
                        "{path}: no numeric data: line {line} holds text, not numbers; expected a table of "
                        "examples x features (numbers separated by commas, semicolons, tabs or spaces)"
                    ).format(path=self.path, line=n)
                )
            if len(r) != self.width:
                raise DataError(
                    _("{path}: ragged rows: row {row} has {n} columns, expected {width}").format(
                        path=self.path, row=n, n=len(r), width=self.width
                    )
                )
            buf_v.append([self._number(r[j], n, j) for j in cols])
            if self.label_index is not None:
                buf_l.append(r[self.label_index])
            if self.id_index is not None:
                buf_i.append(r[self.id_index])
            buf_n.append(n)
            if len(buf_v) >= rows:
                yield self._chunk(done, buf_v, buf_l, buf_i, buf_n)
                done += len(buf_v)
                buf_v, buf_l, buf_i, buf_n = [], [], [], []
        if buf_v:
            yield self._chunk(done, buf_v, buf_l, buf_i, buf_n)

    def _chunk(self, first: int, v: list[list[float]], lab: list[str], ids: list[str], lines: list[int]) -> Chunk:
        values = np.array(v, dtype=np.float64).reshape(len(v), len(self.feature_columns))
        line_arr = np.array(lines, dtype=np.int64)
        check_known_rows(values, str(self.path), line_arr, first)
        return Chunk(
            first,
            values,
            np.array(lab, dtype=str) if self.label_index is not None else None,
            np.array(ids, dtype=str) if self.id_index is not None else None,
            line_arr,
        )

    def _number(self, cell: str, line: int, j: int) -> float:
        try:
            v = float(cell)  # "nan" spellings read as NaN here, missing as they should be
        except ValueError:
            if cell.lower() in MISSING:
                return np.nan
            named = f" ({self.columns[j]!r})" if self.header else ""
            flag = self.columns[j]
            raise DataError(
                _(
                    "{path}: non-numeric value {value!r} at row {row}, column {column}{named}: a text column "
                    "can be the labels ({labels}), left out ({ignore}) or carried through ({id})"
                ).format(
                    path=self.path,
                    value=cell,
                    row=line,
                    column=j + 1,
                    named=named,
                    labels=f"--labels {flag}",
                    ignore=f"--ignore {flag}",
                    id=f"--id {flag}",
                )
            ) from None
        if math.isinf(v):
            raise DataError(
                _("{path}: infinite value {value!r} at row {row}, column {column}").format(
                    path=self.path, value=cell, row=line, column=j + 1
                )
            )
        # float() reads "nan" spellings the MISSING set does not list ("-nan", "NAN ")
        return v


def _is_year(text: str) -> bool:
    """A cell written as a year: four digits, 1000 to 2999."""
    return len(text) == 4 and text.isdigit() and text.isascii() and "1000" <= text <= "2999"


def _years_in_order(cells: list[str]) -> bool:
    """Two or more years, rising or falling (a header of years is written in order)."""
    if len(cells) < 2 or not all(_is_year(c) for c in cells):
        return False
    years = [int(c) for c in cells]
    steps = {b > a for a, b in zip(years, years[1:])}
    return len(steps) == 1 and len(set(years)) == len(years)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
