"""Columnar files (Parquet, Arrow IPC, read with the optional pyarrow) and data frames in memory (pandas, polars,
pyarrow): their column names are the header, read by the same rules as a CSV's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.data.checks import (
    PYARROW_INSTALL,
    DataError,
    check_known_rows,
    check_path,
    column_flag,
    no_such_column,
    refuse_empty_columns,
    refuse_repeated_names,
    row_name,
)
from som_studio.core.data.table import Table
from som_studio.i18n import _


def read_columnar(path: str | Path) -> ColumnarFile:
    """A ``.parquet`` or Arrow IPC (``.arrow``, ``.feather``) file opened as a :class:`ColumnarFile` (its schema
    read, its columns when asked for).

    pyarrow is optional: without it the message says how to install it.
    """
    p = check_path(path)
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds
    except ImportError:
        raise DataError(
            _("{path}: reading {suffix} files needs pyarrow; install it with {command}").format(
                path=p, suffix=p.suffix.lower(), command=PYARROW_INSTALL
            )
        ) from None
    try:
        return ColumnarFile(p, ds.dataset(str(p), format="parquet" if p.suffix.lower() == ".parquet" else "ipc"))
    except (OSError, pa.ArrowException) as exc:
        _refuse_repeated(p)  # Arrow's words for it: "Can't unify schema with duplicate field names"
        raise DataError(columnar_unreadable(p, exc)) from None


def _refuse_repeated(p: Path) -> None:
    """Refuse ``p`` by the name its columns repeat, where its schema can be read."""
    import pyarrow as pa

    try:
        if p.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            names = pq.read_schema(str(p)).names
        else:
            with pa.memory_map(str(p)) as mm:
                names = pa.ipc.open_file(mm).schema.names
    except (OSError, pa.ArrowException):
        return
    refuse_repeated_names(p, names)


def pandas_index(schema: Any, path: object, roles: set[str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The columns a Parquet or Arrow schema's pandas metadata marks as the index of the frame that wrote it, less
    those given a role, each with a note: pandas reads them back as its index, not as data, and a filtered frame's
    ``__index_level_0__`` (row numbers) trained as a feature made a map of them."""
    try:
        meta = schema.pandas_metadata or {}
    except ValueError:  # metadata that is not JSON: none to go by
        return (), ()
    marked = [c for c in meta.get("index_columns", ()) if isinstance(c, str)]  # a RangeIndex is stored as a dict
    left = tuple(c for c in marked if c in schema.names and c not in roles)
    note = _(
        "{path}: column {name!r} holds the index of the pandas table that wrote the file: it is left out of the "
        "features, as pandas reads it back (name it with --id to list examples by it)"
    )
    return left, tuple(note.format(path=path, name=c) for c in left)


_ID_LIKE = re.compile(
    r"(?i:id|uid|uuid|guid|idx|index|barcode)|(?i:.*[_\s.-](id|uuid|barcode))|.*[a-z0-9](ID|Id)|Unnamed: \d+"
)


#: Rows a column must have before a different whole number on every row reads as a numbering, not chance.
NUMBERED_MIN_ROWS = 20


def id_like_notes(
    path: object,
    features: Sequence[str],
    spell: Callable[[str, str], str] | None = None,
    values: np.ndarray | None = None,
) -> tuple[str, ...]:
    """A note for each feature column that looks like an identifier: named like one (``cell_id``, ``sampleID``,
    ``barcode``, pandas' ``Unnamed: 0``), or, where ``values`` (rows x features) are given, numbering the rows
    whatever its name (``번호``, ``No``, a shuffled table's pandas index written without a name): numbered rows
    trained as a feature make a map of the numbering, with no word said.

    A column numbers the rows where it holds a different whole number on each of :data:`NUMBERED_MIN_ROWS` rows
    or more, in order or as a shuffled run of consecutive numbers.

    ``spell(setting, column)`` words the remedies (the Python API's ``id_column='id'``); by default the command
    line's flags."""
    word = spell or (lambda key, col: column_flag(FLAG_OF[key], col))
    notes = []
    for j, name in enumerate(features):
        if _ID_LIKE.fullmatch(name.strip()):
            why = _("is named like an identifier")
        elif values is not None and _numbers_rows(values[:, j]):
            col = values[:, j]
            why = _("holds a different whole number on every row ({first}, {second}, ...)").format(
                first=f"{col[0]:.0f}", second=f"{col[1]:.0f}"
            )
        else:
            continue
        notes.append(
            _(
                "{path}: column {name!r} {why}, and is trained as a feature; if it is an identifier, carry it "
                "with {id} or leave it out with {ignore}"
            ).format(path=path, name=name, why=why, id=word("id_column", name), ignore=word("ignore", name))
        )
    return tuple(notes)


def _numbers_rows(col: np.ndarray) -> bool:
    """Whether ``col`` numbers its rows: whole numbers, each once, in order or a run of consecutive ones."""
    n = len(col)
    head = col[:64]  # most columns fail here (a fraction, a repeat): 0.56 s on 10^6 x 30 checked whole, every time
    if n < NUMBERED_MIN_ROWS or not np.all(head == np.round(head)) or len(np.unique(head)) < len(head):
        return False
    if not np.all(np.isfinite(col)) or not np.all(col == np.round(col)):
        return False
    steps = np.diff(col)
    if np.all(steps > 0) or np.all(steps < 0):
        return True
    ordered = np.sort(col)
    return bool(np.all(np.diff(ordered) == 1))


def columnar_unreadable(p: Path, why: object) -> str:
    kind = "Parquet" if p.suffix.lower() == ".parquet" else "Arrow IPC"
    return _("{path}: cannot read as {kind} ({why})").format(path=p, kind=kind, why=why)


class ColumnarFile:
    """A Parquet or Arrow IPC file read a column at a time (a ``pyarrow.dataset``): a table of it holds its
    numbers once, not beside a whole decoded copy of the file (pyarrow's allocator keeps what decoding freed,
    returned to the system at :meth:`close`).

    Reads as a ``pyarrow.Table`` does for :func:`frame_column` (``schema``, ``column_names``, ``len``,
    ``column(j)``); its rows are counted from the file's metadata.
    """

    def __init__(self, path: Path, dataset: Any) -> None:
        self.path = path
        self._dataset = dataset
        #: The columns' names and types (``pyarrow.Schema``), as a pyarrow table's ``schema``.
        self.schema = dataset.schema
        self.column_names = [str(n) for n in self.schema.names]
        refuse_repeated_names(path, self.column_names)

    def __len__(self) -> int:
        return int(self._read(lambda d: d.count_rows()))

    def column(self, j: int) -> Any:
        """Column ``j`` as a ``pyarrow.ChunkedArray``, decoded now."""
        return self._read(lambda d: d.to_table(columns=[self.schema.names[j]]).column(0))

    def _read(self, what: Callable[[Any], Any]) -> Any:
        import pyarrow as pa

        try:
            return what(self._dataset)
        except (OSError, pa.ArrowException) as exc:
            raise DataError(columnar_unreadable(self.path, exc)) from None

    def close(self) -> None:
        """Give the memory pyarrow kept from decoding back to the system."""
        import pyarrow as pa

        pa.default_memory_pool().release_unused()


def _frame_kind(frame: Any) -> str | None:
    """``pandas``, ``polars`` or ``pyarrow`` for a table of one of them, else ``None``."""
    kind = type(frame).__module__.split(".")[0]
    if kind == "pandas" and hasattr(frame, "columns") and hasattr(frame, "iloc"):
        return kind
    if kind == "polars" and hasattr(frame, "get_column"):
        return kind
    if (kind == "pyarrow" and hasattr(frame, "column_names")) or isinstance(frame, ColumnarFile):
        return "pyarrow"
    return None


def frame_column_names(frame: Any) -> list[str] | None:
    """A pandas, polars or pyarrow table's column names, in order; ``None`` for anything else."""
    kind = _frame_kind(frame)
    if kind is None:
        return None
    return [str(n) for n in (frame.column_names if kind == "pyarrow" else frame.columns)]


def frame_column(frame: Any, j: int) -> np.ndarray:
    """Column ``j`` of a pandas, polars or pyarrow table as a 1-D array, converted when asked for: a reader takes
    one column at a time, never a second copy of the whole table beside the frame.

    Missing values (pandas' NA, polars' and Arrow's nulls) come back as NaN in numeric
    columns and as ``None`` in object columns.
    """
    kind = _frame_kind(frame)
    if kind == "pandas":
        col = frame.iloc[:, j]
        if col.dtype.kind in "biuf" or str(col.dtype) in _PANDAS_NUMERIC:
            return np.asarray(col.to_numpy(dtype=np.float64, na_value=np.nan))
        return np.asarray(col.to_numpy(dtype=object))
    if kind == "polars":
        col = frame.get_column(frame.columns[j])
        if col.dtype.is_numeric() or str(col.dtype) == "Boolean":
            return np.asarray(col.cast(float).to_numpy())  # nulls become NaN
        return np.asarray(col.to_list(), dtype=object)
    import pyarrow as pa

    col = frame.column(j)
    if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_boolean(col.type):
        # Not safe: an integer past 2^53 rounds to the nearest float64, as NumPy and pandas convert it, where Arrow's
        # safe cast refused the whole column ("Integer value ... not in range").
        return np.asarray(col.cast(pa.float64(), safe=False).to_numpy(zero_copy_only=False))  # nulls become NaN
    return np.asarray(col.to_pylist(), dtype=object)


def frame_text_column(frame: Any, j: int) -> np.ndarray:
    """Column ``j`` of a pandas, polars or pyarrow table as text, each cell as the table holds it (an integer id
    ``"115"``, where :func:`frame_column` would make it the float ``115.0``); a missing cell ``""``."""
    kind = _frame_kind(frame)
    if kind == "pandas":
        col = frame.iloc[:, j]
        cells = col.astype(object).where(col.notna(), None).to_list()
    elif kind == "polars":
        cells = frame.get_column(frame.columns[j]).to_list()
    else:
        cells = frame.column(j).to_pylist()
    cells = [None if isinstance(v, float) and math.isnan(v) else v for v in cells]
    floats = [v for v in cells if isinstance(v, float)]
    if floats and all(v.is_integer() and abs(v) < 2**53 for v in floats):
        # Whole numbers held as floats: an integer column with a missing cell, as pandas holds it. Its labels
        # and ids are the integers, "2" as where no cell is missing, not "2.0".
        cells = [int(v) if isinstance(v, float) else v for v in cells]
    return np.array(["" if v is None else str(v) for v in cells], dtype=str)


_WHOLE = re.compile(r"-?(0|[1-9][0-9]*)")


def integer_ids(ids: np.ndarray) -> list[int | None] | None:
    """Ids read as text (:func:`frame_text_column`) as the integers they were, ``""`` as ``None``; ``None`` unless
    every id is a whole number written plainly ("115", "-3"; not "007", "1e3", "r5") within int64: an integer id
    column written back as text sorts "10" before "9" and joins to nothing on the source's."""
    out: list[int | None] = []
    for v in ids.tolist():
        if v == "":
            out.append(None)
        elif _WHOLE.fullmatch(v) and -(2**63) <= (k := int(v)) < 2**63:
            out.append(k)
        else:
            return None
    return out if any(k is not None for k in out) else None


def frame_column_is_float32(frame: Any, j: int) -> bool:
    """Whether column ``j`` of a pandas, polars or pyarrow table holds float32 numbers (no conversion made)."""
    kind = _frame_kind(frame)
    if kind == "pandas":
        return str(frame.dtypes.iloc[j]) in ("float32", "Float32")
    if kind == "polars":
        return str(frame.schema[frame.columns[j]]) == "Float32"
    import pyarrow as pa

    return bool(frame.schema.field(j).type == pa.float32())


#: pandas' nullable numeric dtypes, read as numbers (their NA as NaN).
_PANDAS_NUMERIC = frozenset(
    ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64", "boolean")
)


def frame_columns(frame: Any) -> list[tuple[str, np.ndarray]] | None:
    """A pandas, polars or pyarrow table's columns as ``(name, 1-D array)`` (:func:`frame_column`); ``None`` for
    anything else."""
    names = frame_column_names(frame)
    return None if names is None else [(name, frame_column(frame, j)) for j, name in enumerate(names)]


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
    found = frame_column_names(frame)
    if found is None:
        raise DataError(
            _("{path}: expected a pandas, polars or pyarrow table, got {type}").format(
                path=source, type=type(frame).__name__
            )
        )
    names = found
    spell: Callable[[str, str], str] = (
        (lambda key, col: f"{key}={col!r}") if keywords else (lambda key, col: column_flag(FLAG_OF[key], col))
    )
    if not names:
        raise DataError(_("{path}: contains no features (zero columns)").format(path=source))
    rows = len(frame)
    if rows == 0:
        raise DataError(_("{path}: contains no examples (zero rows)").format(path=source))
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise DataError(
            _("{path}: the header names column {name!r} twice; column names must be unique").format(
                path=source, name=dup
            )
        )
    for key, col in [("labels", labels), ("id_column", id_column)] + [("ignore", c) for c in ignore]:
        if col is not None and col not in names:
            raise no_such_column(source, FLAG_OF[key] if not keywords else f"{key}=", col, names)
    roles = {labels, id_column, *ignore}
    index_columns, notes = pandas_index(frame.schema, source, roles) if _frame_kind(frame) == "pyarrow" else ((), ())
    features = [n for n in names if n not in roles and n not in index_columns]
    if not features:
        raise DataError(
            _("{path}: no feature column is left once labels, id and ignored columns are set aside").format(path=source)
        )
    # Float32 columns make a float32 table, as a float32 array does (check_data): each value exact in float64 too,
    # half the memory, and a float32 run's examples without a copy (aligned as JAX's CPU device takes them).
    single = all(frame_column_is_float32(frame, names.index(name)) for name in features)
    values = jax_runtime.host_array((rows, len(features)), np.float32 if single else np.float64)
    index = frame.index if _frame_kind(frame) == "pandas" else None  # the labels its user looks a row up by
    for j, name in enumerate(features):
        values[:, j] = _numeric_column(frame_column(frame, names.index(name)), name, source, spell, index)
    # fmin and fmax pass over missing values: an infinite extreme is an infinite value, found with no mask.
    if np.isinf(np.fmin.reduce(values, axis=None)) or np.isinf(np.fmax.reduce(values, axis=None)):
        row, col = np.argwhere(np.isinf(values))[0]
        raise DataError(
            _("{path}: infinite value {value!r} at row {row}, column {column}").format(
                path=source,
                value=float(values[row, col]),
                row=row_name(int(row), index),
                column=features[col],
            )
        )
    refuse_empty_columns(
        values, source, [names.index(f) + 1 for f in features], features, lambda name: spell("ignore", name)
    )
    check_known_rows(values, source, index=index)

    def text(col: str | None) -> np.ndarray | None:
        return None if col is None else frame_text_column(frame, names.index(col))

    return Table(
        np.ascontiguousarray(values),
        tuple(features),
        labels=text(labels),
        ids=text(id_column),
        label_column=labels,
        id_column=id_column,
        source=source,
        notes=(*notes, *id_like_notes(source, features, spell, values)),
    )


def frame_features(
    frame: Any,
    feature_names: Sequence[str],
    id_column: str | None = None,
    *,
    source: str = "DataFrame",
    others: Sequence[str] = (),
) -> tuple[np.ndarray, np.ndarray | None]:
    """A frame's columns named ``feature_names``, in that order (float64), and its id column if it has one.

    Other columns (a run's labels, ignored columns, new ones) are passed over; a feature
    column the frame lacks is refused by name, with the columns it has beside the run's ``others`` (its labels,
    id and ignored columns): a renamed column reads at a glance.
    """
    names = frame_column_names(frame)
    if names is None:
        raise DataError(
            _("{path}: expected a pandas, polars or pyarrow table, got {type}").format(
                path=source, type=type(frame).__name__
            )
        )
    missing = [n for n in feature_names if n not in names]
    if missing:
        bits = [_("missing {columns}").format(columns=", ".join(missing))]
        unexpected = [n for n in names if n not in feature_names and n not in others and n != id_column]
        if unexpected:
            bits.append(_("unexpected {columns}").format(columns=", ".join(unexpected)))
        raise DataError(
            _("{path}: its feature columns do not match the run's ({columns}): {problems}").format(
                path=source, columns=", ".join(feature_names), problems="; ".join(bits)
            )
        )
    values = np.empty((len(frame) if names else 0, len(feature_names)), dtype=np.float64)
    for j, name in enumerate(feature_names):
        values[:, j] = _numeric_column(frame_column(frame, names.index(name)), name, source, None)
    ids = None
    if id_column is not None and id_column in names:
        ids = frame_text_column(frame, names.index(id_column))
    return values, ids


FLAG_OF = {"labels": "--labels", "ignore": "--ignore", "id_column": "--id"}


def _numeric_column(
    col: np.ndarray, name: str, source: str, spell: Callable[[str, str], str] | None, index: Any = None
) -> np.ndarray:
    """A frame's column as float64, missing values NaN; a text cell refuses the column by name (its row by ``index``'s
    label too: a pandas frame's)."""
    if col.dtype != object:
        if col.dtype.kind not in "biuf":
            raise DataError(non_numeric_column(source, name, col.dtype, spell))
        return np.asarray(col, dtype=np.float64)
    out = np.empty(len(col), dtype=np.float64)
    for i, v in enumerate(col):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out[i] = np.nan
        elif isinstance(v, (int, float, bool, np.number, np.bool_)):
            out[i] = float(v)
        else:
            # A column read as text for one cell that is no number (pandas' read_csv does so for a "-"): that cell
            # is the one to quote, not the first, which may read as a number.
            bad = next((k for k in range(i, len(col)) if not _reads_as_number(col[k])), None)
            if bad is None:
                raise DataError(
                    _(
                        "{path}: column {name!r} holds numbers written as text ({value!r} at row {row}): store it "
                        "as a numeric column"
                    ).format(path=source, name=name, value=v, row=row_name(i, index))
                )
            w = col[bad]
            raise DataError(
                non_numeric_column(source, name, type(w).__name__, spell, value=w, row=row_name(bad, index))
            )
    return out


def _reads_as_number(v: Any) -> bool:
    """Whether a frame's cell is a number, missing, or text that reads as a number."""
    if v is None or isinstance(v, (int, float, bool, np.number, np.bool_)):
        return True
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def non_numeric_column(
    source: str, name: str, dtype: object, spell: Callable[[str, str], str] | None, value: Any = None, row: Any = 0
) -> str:
    """A text column refused; ``spell`` words the keywords or flags that give it a role, ``None`` for a trained
    run's feature (projected: it can have no other role)."""
    where = _(" (value {value!r} at row {row})").format(value=value, row=row) if row else ""
    if spell is None:
        return _(
            "{path}: column {name!r} is not numeric ({dtype}){where}: the run was trained on it as a feature"
        ).format(path=source, name=name, dtype=dtype, where=where)
    return _(
        "{path}: column {name!r} is not numeric ({dtype}){where}: such a column can be the labels ({labels}), "
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
