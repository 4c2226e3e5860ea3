"""Columnar files (Parquet, Arrow IPC, read with the optional pyarrow) and data frames in memory (pandas, polars,
pyarrow): their column names are the header, read by the same rules as a CSV's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core.data.checks import PYARROW_INSTALL, DataError, check_known_rows, check_path, refuse_empty_columns
from som_studio.core.data.table import Table
from som_studio.i18n import _


def read_columnar(path: str | Path) -> Any:
    """A ``.parquet`` or Arrow IPC (``.arrow``, ``.feather``) file as a ``pyarrow.Table``.

    pyarrow is optional: without it the message says how to install it.
    """
    p = check_path(path)
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
        (lambda key, col: f"{key}={col!r}") if keywords else (lambda key, col: f"{FLAG_OF[key]} {col}")
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
                    path=source, flag=FLAG_OF[key] if not keywords else f"{key}=", name=col, columns=shown
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


FLAG_OF = {"labels": "--labels", "ignore": "--ignore", "id_column": "--id"}


def _numeric_column(col: np.ndarray, name: str, source: str, spell: Callable[[str, str], str]) -> np.ndarray:
    """A frame's column as float64, missing values NaN; a text cell refuses the column by name."""
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
            raise DataError(non_numeric_column(source, name, type(v).__name__, spell, value=v, row=i + 1))
    return out


def non_numeric_column(
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
