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
is a header, as is one that numbers the columns (``0,1,2``, as pandas writes
them), and a note says so; an unnamed first column that counts the rows
(pandas' index) is left out, and a note says so too. Missing values (an empty
cell, ``NA``, ``NaN``, ``N/A``, ``NULL``, ``None``, ``#N/A``, ``#NA``, ``<NA>``: pandas's spellings, here in any case;
NaN in a ``.npy``) are kept as NaN; a row with
no known feature is refused with its row number.

A data file never executes code: ``.npy`` is read with ``allow_pickle=False``.
Every problem with a file is reported as a :class:`DataError` that names the
file and what is wrong with it.


The modules, by concern: :mod:`.checks` (the error and the checks every table passes),
:mod:`.scaling`, :mod:`.table` (the :class:`Table`), :mod:`.read` (a whole file as one), :mod:`.frames`
(columnar files and data frames), :mod:`.npy`, :mod:`.files` (which files ``--data`` names),
:mod:`.encoding` and :mod:`.csv_reader` (CSV text read in
chunks), :mod:`.json_fields` (JSON checked field by field) and :mod:`.model_file` (what projection needs of a
run). Their public names are importable from here.
"""

from __future__ import annotations

from som_studio.core.data.checks import (
    COLUMNAR_SUFFIXES,
    DATA_SUFFIXES,
    PYARROW_INSTALL,
    DataError,
    any_missing,
    check_data,
    check_known_rows,
    column_flag,
    empty_array_columns,
    refuse_empty,
    refuse_empty_array_columns,
    refuse_empty_columns,
    refuse_repeated_names,
    unmasked,
)
from som_studio.core.data.csv_reader import MISSING, Chunk, CsvReader
from som_studio.core.data.encoding import CODE_PAGES, Encoding, detect_encoding
from som_studio.core.data.frames import (
    frame_column_names,
    frame_columns,
    frame_features,
    frame_table,
    is_frame,
    read_columnar,
)
from som_studio.core.data.npy import open_npy
from som_studio.core.data.read import file_columns, load_data, read_table
from som_studio.core.data.scaling import SCALINGS, Scaling, fit_scaling
from som_studio.core.data.table import Table, default_feature_names, random_colours

__all__ = [
    "CODE_PAGES",
    "COLUMNAR_SUFFIXES",
    "DATA_SUFFIXES",
    "MISSING",
    "PYARROW_INSTALL",
    "SCALINGS",
    "Chunk",
    "CsvReader",
    "DataError",
    "Encoding",
    "Scaling",
    "Table",
    "any_missing",
    "check_data",
    "check_known_rows",
    "column_flag",
    "default_feature_names",
    "detect_encoding",
    "empty_array_columns",
    "file_columns",
    "fit_scaling",
    "frame_column_names",
    "frame_columns",
    "frame_features",
    "frame_table",
    "is_frame",
    "load_data",
    "open_npy",
    "random_colours",
    "read_columnar",
    "read_table",
    "refuse_empty",
    "refuse_empty_array_columns",
    "refuse_empty_columns",
    "refuse_repeated_names",
    "unmasked",
]
