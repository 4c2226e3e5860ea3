"""Reading a whole data file into a :class:`~som_studio.core.data.table.Table`, whatever its format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from som_studio.core.data.checks import (
    COLUMNAR_SUFFIXES,
    DataError,
    check_data,
    check_path,
    column_flag,
    data_suffix,
    empty_array_columns,
    refuse_empty_array_columns,
    refuse_empty_columns,
)
from som_studio.core.data.csv_reader import CsvReader
from som_studio.core.data.frames import frame_table, id_like_notes, read_columnar
from som_studio.core.data.npy import read_npy
from som_studio.core.data.table import Table, default_feature_names
from som_studio.i18n import _
from som_studio.run_settings import Scaling as Method


def load_data(path: str | Path, scale: bool = False) -> np.ndarray:
    """Load an (examples x features) float64 array from ``.npy`` or ``.csv`` (float32 as a float32 ``.npy`` holds it).

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
    p = check_path(path)
    suffix = data_suffix(p).suffix
    if suffix in COLUMNAR_SUFFIXES:
        columnar = read_columnar(p)
        try:
            return frame_table(columnar, labels, ignore, id_column, source=str(p))
        finally:
            columnar.close()
    if suffix == ".npy":
        if labels or ignore or id_column:
            raise DataError(
                _("{path}: a .npy file has no named columns: {flags} apply to .csv tables").format(
                    path=p, flags="--labels, --ignore, --id"
                )
            )
        # Read once, into the table's own memory where the file holds its type; else mapped and copied once.
        arr = read_npy(p)
        values = check_data(arr, str(p), columns=default_feature_names(arr.shape[1] if arr.ndim == 2 else 1))
        refuse_empty_array_columns(empty_array_columns(values), p)
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
        values,
        p,
        [c + 1 for c in reader.feature_columns],
        reader.feature_names,
        lambda name: column_flag("--ignore", name),
    )
    return Table(
        np.ascontiguousarray(values),
        reader.feature_names,
        labels=np.concatenate([c.labels for c in parts]) if labels else None,
        ids=np.concatenate([c.ids for c in parts]) if id_column else None,
        label_column=labels,
        id_column=id_column,
        source=str(p),
        notes=(*reader.notes, *id_like_notes(p, reader.feature_names, values=values)),
    )


def file_columns(path: str | Path) -> tuple[str, ...]:
    """The column names of a data file's header (a CSV's, a columnar file's), with no roles; ``()`` for ``.npy``."""
    p = check_path(path)
    suffix = data_suffix(p).suffix
    if suffix in COLUMNAR_SUFFIXES:
        return tuple(str(n) for n in read_columnar(p).column_names)
    if suffix == ".npy":
        return ()
    return CsvReader(p).columns
