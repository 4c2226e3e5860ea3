"""Data sets read in row batches: a folder, a glob or one file of any size, never loaded whole.

A :class:`Source` is opened with :func:`open_source` from ``--data``'s text: a folder (every ``.parquet``,
``.arrow``/``.feather``, ``.npy``, ``.csv`` or ``.tsv`` file in it, the text ones gzip'd too (``.csv.gz``), and its
``.txt`` files where it holds no other data file), a quoted glob, or one file. Opening reads only headers and footers,
so a 20 GB folder opens in milliseconds, and refuses before any training what a run could not use: an empty folder,
mixed formats, a file whose columns or types differ from the first one's (naming the file and the column), an
unreadable or truncated file. The source knows its features (the columns left once ``labels``, ``ignore`` and
``id_column`` are set aside, and a CSV's unnamed column of row numbers or a frame's pandas index), its rows, files
and bytes on disk.

The API other parts build on, all of it:

* ``Source.reader(batch_rows, share=(index, count), state=None, dtype=float64, transform=None)``
  gives a :class:`Reader`: an iterator of :class:`Batch` (``values`` (n, D) in ``dtype`` with NaN
  for missing values, then passed through ``transform`` when one is given, ``labels``, ``ids``,
  ``first``: the index of the batch's first row within the share) of exactly ``batch_rows`` rows
  but the last, in a deterministic order (files sorted by name, rows in file order), prefetched
  on a background thread, converted, checked and transformed there or, on a machine of many cores,
  on worker threads; the files' decoding itself runs on pyarrow's threads. One reader is one pass;
  ``Source.reader`` again for the next.
* ``share=(index, count)``: the ``index``-th of ``count`` contiguous, deterministic shares of the source's units,
  of about as many rows each (a Parquet row group, an Arrow IPC record batch, a block of 2^18 rows of a ``.npy``
  file, a CSV file), so every process knows its rows without talking (:meth:`Source.share_rows`).
* ``Reader.get_state()`` / ``Reader.set_state(state)`` (Grain's names): the reader's position
  after the last batch it gave, a small dict of ints, JSON-able; a reader made with that state,
  or set to it, continues with the very next row.
* ``Reader.wait_s`` (seconds the consumer waited for a batch), ``rows_read``, ``bytes_read``; one pass of statistics
  over a source, :mod:`~som_studio.core.data.moments`, gives the run's scaling, ranges, mean, covariance and sample.

A file that changes or breaks while it is read stops the pass with a :class:`DataError` naming the file and the row
group (or block) being read.

Why pyarrow's dataset scanner and not Grain: measured on this machine (``docs/benchmarks.md``), Grain's
``ParquetIterDataset`` yields one Python dict per row, 36-110x fewer rows per second than the scanner's column
batches; Grain's gifts (a checkpointable position, deterministic shards) are small here, and kept in the same shape
(``get_state``/``set_state``, ``share``).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core.data.batches import Batch, BatchPass, Unit, import_pyarrow
from som_studio.core.data.checks import (
    COLUMN_FLAGS,
    DataError,
    column_flag,
    no_such_column,
    refuse_repeated_names,
)
from som_studio.core.data.csv_reader import CsvReader
from som_studio.core.data.files import data_files, file_format
from som_studio.core.data.frames import id_like_notes, non_numeric_column, pandas_index
from som_studio.core.data.npy import open_npy
from som_studio.core.data.table import default_feature_names
from som_studio.i18n import _, ngettext

# Rows of a .npy file read as one unit: 256 Ki rows of 50 float32 features are 50 MB.
NPY_BLOCK = 1 << 18
# Batches decoded ahead of the one being trained on.
PREFETCH = 2
# Cores a machine has for each thread that checks and transforms batches beside the reading one.
CORES_PER_WORKER = 4
MAX_WORKERS = 4
# Batches' bytes (as float64) the workers may hold between them, beyond the one being trained on.
READ_AHEAD_BYTES = 256 << 20


@dataclass(frozen=True, eq=False)
class Source:
    """A data set of one format in one or more files, read in batches (see the module's docstring)."""

    spec: str
    format: str
    paths: tuple[Path, ...]
    columns: tuple[str, ...]  # every column of the files, in the first file's order
    feature_names: tuple[str, ...]
    units: tuple[Unit, ...]
    label_column: str | None = None
    id_column: str | None = None
    stamps: tuple[tuple[int, int], ...] = ()  # (size, mtime in ns) of each file when opened
    notes: tuple[str, ...] = ()
    _csv: dict[str, Any] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(u.rows for u in self.units)

    @property
    def files(self) -> int:
        return len(self.paths)

    @property
    def bytes(self) -> int:
        """Bytes on disk of every file."""
        return sum(s for s, _t in self.stamps)

    @property
    def features(self) -> int:
        return len(self.feature_names)

    def share_units(self, index: int = 0, count: int = 1) -> tuple[Unit, ...]:
        """The units of share ``index`` of ``count``: contiguous, the same on every process.

        A unit goes to the share in whose ``1/count`` of the rows its middle row lies, so shares hold
        about as many rows each (not as many units: files of very different sizes stay balanced).
        """
        if not 0 <= index < count:
            raise ValueError(f"share {index} of {count} does not exist")
        total = max(self.rows, 1)
        out, start = [], 0
        for u in self.units:
            if (2 * start + u.rows) * count // (2 * total) == index:
                out.append(u)
            start += u.rows
        return tuple(out)

    def share_rows(self, index: int = 0, count: int = 1) -> int:
        """Rows in share ``index`` of ``count``."""
        return sum(u.rows for u in self.share_units(index, count))

    def reader(
        self,
        batch_rows: int,
        share: tuple[int, int] = (0, 1),
        state: dict[str, int] | None = None,
        *,
        dtype: Any = np.float64,
        transform: Callable[[np.ndarray], np.ndarray] | None = None,
        workers: int | None = None,
    ) -> Reader:
        """One pass over share ``share`` in batches of ``batch_rows`` rows (see :class:`Reader`)."""
        return Reader(self, batch_rows, share, state, dtype=dtype, transform=transform, workers=workers)

    def read_all(self) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
        """Every row at once: ``(values, labels, ids)``, for data that fits in memory."""
        parts = list(self.reader(max(1, min(self.rows, 1 << 20))))
        if not parts:
            return np.empty((0, self.features)), None, None
        labels = [b.labels for b in parts if b.labels is not None]
        ids = [b.ids for b in parts if b.ids is not None]
        return (
            np.concatenate([b.values for b in parts]),
            np.concatenate(labels) if labels else None,
            np.concatenate(ids) if ids else None,
        )

    def where(self, unit: Unit) -> str:
        """A unit named for people: the file and its row group (or rows)."""
        path = self.paths[unit.file]
        if self.format == "parquet":
            return _("{path}, row group {group}").format(path=path, group=unit.part)
        if self.format == "arrow":
            return _("{path}, record batch {group}").format(path=path, group=unit.part)
        if self.format == "npy":
            return _("{path}, rows {first}-{last}").format(path=path, first=unit.first + 1, last=unit.first + unit.rows)
        return str(path)


# -- opening ------------------------------------------------------------------------------------


def open_source(
    spec: str | os.PathLike[str],
    labels: str | None = None,
    ignore: Sequence[str] = (),
    id_column: str | None = None,
) -> Source:
    """Open ``spec`` (a folder, a glob or a file) as a :class:`Source`, reading headers and footers only."""
    notes: list[str] = []
    files = data_files(spec, notes)
    kind = file_format(files[0])
    index: tuple[str, ...] = ()  # a CSV's unnamed column of row numbers, a frame's index: left out
    stamps = []
    for f in files:
        try:
            st = f.stat()
        except OSError as exc:
            raise DataError(_("{path}: cannot read ({why})").format(path=f, why=exc.strerror or exc)) from None
        stamps.append((st.st_size, st.st_mtime_ns))
    if kind in ("parquet", "arrow"):
        columns, units, index, left = _open_columnar(files, kind, {labels, id_column, *ignore})
        notes += left
    elif kind == "npy":
        if labels or ignore or id_column:
            raise DataError(
                _("{path}: a .npy file has no named columns: {flags} apply to .csv tables").format(
                    path=files[0], flags="--labels, --ignore, --id"
                )
            )
        columns, units = _open_npy(files)
    else:
        columns, units, index, read = _open_csv(files, labels, ignore, id_column)
        notes += read
    by_name = set(columns)
    for key, col in [("labels", labels), ("id_column", id_column)] + [("ignore", c) for c in ignore]:
        if col is not None and col not in by_name:
            raise no_such_column(files[0], COLUMN_FLAGS[key], col, columns)
    roles = {labels, id_column, *ignore}
    features = tuple(c for c in columns if c not in roles and c not in index)
    if not features:
        raise DataError(
            _("{path}: no feature column is left once labels, id and ignored columns are set aside").format(
                path=files[0]
            )
        )
    source = Source(
        spec=str(spec),
        format=kind,
        paths=tuple(files),
        columns=columns,
        feature_names=features,
        units=tuple(units),
        label_column=labels,
        id_column=id_column,
        stamps=tuple(stamps),
        notes=(*notes, *id_like_notes(files[0], features if kind != "npy" else ())),
    )
    if source.rows == 0:
        raise DataError(_("{path}: contains no examples (zero rows)").format(path=spec))
    return source


def _schema(f: Path, kind: str) -> Any:
    pa = import_pyarrow()
    try:
        if kind == "parquet":
            schema = pa.parquet.ParquetFile(f).schema_arrow
        else:
            with pa.memory_map(str(f)) as mm:
                schema = pa.ipc.open_file(mm).schema
        refuse_repeated_names(f, schema.names)
        return schema
    except (OSError, pa.ArrowException) as exc:
        name = "Parquet" if kind == "parquet" else "Arrow IPC"
        raise DataError(_("{path}: cannot read as {kind} ({why})").format(path=f, kind=name, why=exc)) from None


def _kind_of(t: Any) -> str:
    """A column type as the source compares it: ``number`` (integers, floats, booleans), ``text`` (strings, as plain
    or dictionary-encoded: pandas' categories), ``null`` (a column all missing in its file) or its type's text."""
    pa = import_pyarrow()
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t):
        return "number"
    return "text" if pa.types.is_string(t) or pa.types.is_large_string(t) else str(t)


def _open_columnar(
    files: list[Path], kind: str, roles: set[str | None]
) -> tuple[tuple[str, ...], list[Unit], tuple[str, ...], tuple[str, ...]]:
    """The files' columns, their units (row groups, record batches), the first file's pandas index and its notes;
    a file whose columns differ or whose feature column is not numbers is refused, naming both."""
    pa = import_pyarrow()
    first = _schema(files[0], kind)
    columns = tuple(first.names)
    index, notes = pandas_index(first, files[0], roles)
    types = {n: "null" for n in columns}  # each column's kind in the files so far
    units: list[Unit] = []
    for i, f in enumerate(files):
        schema = first if i == 0 else _schema(f, kind)
        kinds = {n: _kind_of(schema.field(n).type) for n in schema.names}
        _same_columns(files[0], f, columns, types, tuple(schema.names), kinds)
        for name in (c for c in columns if c not in roles and c not in index and kinds[c] not in ("number", "null")):
            spell = lambda key, col: column_flag(COLUMN_FLAGS[key], col)
            raise DataError(non_numeric_column(str(f), name, schema.field(name).type, spell))
        try:
            if kind == "parquet":
                meta = pa.parquet.ParquetFile(f).metadata
                at = 0
                for g in range(meta.num_row_groups):
                    n = meta.row_group(g).num_rows
                    units.append(Unit(i, g, at, n))
                    at += n
            else:
                with pa.memory_map(str(f)) as mm:
                    r = pa.ipc.open_file(mm)
                    at = 0
                    for g in range(r.num_record_batches):
                        n = r.get_batch(g).num_rows
                        units.append(Unit(i, g, at, n))
                        at += n
        except (OSError, pa.ArrowException) as exc:
            name = "Parquet" if kind == "parquet" else "Arrow IPC"
            raise DataError(_("{path}: cannot read as {kind} ({why})").format(path=f, kind=name, why=exc)) from None
    return columns, units, index, notes


def _same_columns(
    ref: Path, f: Path, columns: tuple[str, ...], types: dict[str, str], names: tuple[str, ...], kinds: dict[str, str]
) -> None:
    """Refuse ``f`` when its columns or their types differ from the files' before it (``types``, a column all missing
    in a file, of type null there, passing), naming the column; ``types`` learns ``f``'s."""
    lacks = [c for c in columns if c not in names]
    if lacks:
        raise DataError(
            _("{path}: has no column {name!r}, which {first} has; every file must have the same columns").format(
                path=f, name=lacks[0], first=ref.name
            )
        )
    extra = [c for c in names if c not in columns]
    if extra:
        raise DataError(
            _("{path}: has a column {name!r} that {first} lacks; every file must have the same columns").format(
                path=f, name=extra[0], first=ref.name
            )
        )
    for c in columns:
        if "null" not in (kinds[c], types[c]) and kinds[c] != types[c]:
            raise DataError(
                _("{path}: column {name!r} is {kind} here but {other} in {first}").format(
                    path=f, name=c, kind=kinds[c], other=types[c], first=ref.name
                )
            )
        if types[c] == "null":
            types[c] = kinds[c]


def _open_npy(files: list[Path]) -> tuple[tuple[str, ...], list[Unit]]:
    units: list[Unit] = []
    width = None
    for i, f in enumerate(files):
        arr = open_npy(f)
        d = 1 if arr.ndim == 1 else int(arr.shape[1])
        if width is None:
            width = d
        elif d != width:
            raise DataError(
                _("{path}: has {n} columns but {first} has {m}; every file must have the same columns").format(
                    path=f, n=d, first=files[0].name, m=width
                )
            )
        n = int(arr.shape[0])
        units.extend(Unit(i, k, a, min(NPY_BLOCK, n - a)) for k, a in enumerate(range(0, n, NPY_BLOCK)))
        del arr
    return default_feature_names(width or 0), units


def _open_csv(
    files: list[Path], labels: str | None, ignore: Sequence[str], id_column: str | None
) -> tuple[tuple[str, ...], list[Unit], tuple[str, ...], list[str]]:
    """The files' columns, units (a file each), the unnamed column of row numbers every file leaves out (pandas'
    index; none or the first) and the notes: the first file's, then how many others have some and the first of
    them (a folder of a thousand files, each with its index, says so once)."""
    units: list[Unit] = []
    columns: tuple[str, ...] = ()
    index: tuple[str, ...] = ()
    notes: list[str] = []
    others: list[str] = []  # the first note of each other file that has one
    for i, f in enumerate(files):
        r = CsvReader(f, labels=labels, ignore=ignore, id_column=id_column)
        # A CSV holds no row count: it is counted once here, reading the file (its notes are complete after).
        n = sum(c.values.shape[0] for c in r.chunks())
        left = (r.columns[0],) if r.index_start is not None else ()
        if i == 0:
            columns, index, notes = r.columns, left, list(r.notes)
        elif r.columns != columns:
            lacks = [c for c in columns if c not in r.columns]
            extra = [c for c in r.columns if c not in columns]
            name = lacks[0] if lacks else extra[0] if extra else r.columns[0]
            raise DataError(
                _(
                    "{path}: its columns differ from {first}'s at column {name!r}; "
                    "every file must have the same columns"
                ).format(path=f, first=files[0].name, name=name)
            )
        elif left != index:
            message = (
                _(
                    "{path}: its column 1 ({name!r}) counts the rows, as pandas writes a table's index, and is left "
                    "out, but {first}'s is data; every file must have the same columns: name the column in the headers"
                )
                if left
                else _(
                    "{path}: its column 1 ({name!r}) is data, but {first}'s counts the rows, as pandas writes a "
                    "table's index, and is left out; every file must have the same columns: name the column in the "
                    "headers"
                )
            )
            raise DataError(message.format(path=f, name=columns[0], first=files[0].name))
        elif r.notes:
            others.append(r.notes[0])
        units.append(Unit(i, 0, 0, n))
    if others:
        notes.append(
            ngettext(
                "{n} other file has notes of its own; its first: {note}",
                "{n} other files have notes of their own; the first one's: {note}",
                len(others),
            ).format(n=len(others), note=others[0])
        )
    return columns, units, index, notes


# -- reading ------------------------------------------------------------------------------------


class Reader:
    """One pass over a share of a :class:`Source`, in batches, decoded ahead on a background thread.

    Iterate it for :class:`Batch` es. :meth:`get_state` is the position after the last batch
    given; :meth:`set_state` moves there (the prefetched batches are dropped). :meth:`close`
    stops the thread (iterating to the end does too). Used from one thread at a time.

    A batch's values are written once, into a block of ``dtype`` (float32 columns go into a
    float32 block without a float64 copy between), checked and transformed by ``transform`` (the run's
    scaling, say) on background threads (:attr:`workers` of them beside the reading one on a machine of
    many cores), so the consumer's thread only trains.
    """

    def __init__(
        self,
        source: Source,
        batch_rows: int,
        share: tuple[int, int] = (0, 1),
        state: dict[str, int] | None = None,
        *,
        dtype: Any = np.float64,
        transform: Callable[[np.ndarray], np.ndarray] | None = None,
        workers: int | None = None,
    ) -> None:
        if batch_rows < 1:
            raise ValueError("batch_rows must be at least 1")
        self.source = source
        self.batch_rows = int(batch_rows)
        self.dtype = np.dtype(dtype)
        if self.dtype.kind != "f":
            raise ValueError(f"a reader gives floating-point values, not {self.dtype}")
        self.transform = transform
        #: Threads that check and transform batches (1: the reading thread does). Each holds a batch and the
        #: queue one more: batches of more than a few tens of MB (``--batch-rows``) get fewer.
        if workers is None:
            batch_bytes = self.batch_rows * max(source.features, 1) * 8
            workers = min(read_workers(), max(1, READ_AHEAD_BYTES // batch_bytes))
        self.workers = max(1, int(workers))
        self.share = share
        self.units = source.share_units(*share)
        self.rows = sum(u.rows for u in self.units)
        #: Seconds the consumer waited for a batch; rows and bytes read so far.
        self.wait_s = 0.0
        self.rows_read = 0
        self.bytes_read = 0
        self._position = 0
        self._thread: threading.Thread | None = None
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=PREFETCH + self.workers - 1)
        self._stop = threading.Event()
        self._pass = BatchPass(source, self.units, self.batch_rows, self.dtype, transform, self.workers)
        self.set_state(state or {"row": 0})

    # -- position -----------------------------------------------------------------------
    def get_state(self) -> dict[str, int]:
        """Where the reader stands: ``{"row": index within the share of the next row}``."""
        return {"row": self._position}

    def set_state(self, state: dict[str, int]) -> None:
        """Continue from ``state`` (a :meth:`get_state` of a reader of the same source and share)."""
        row = int(state["row"])
        if not 0 <= row <= self.rows:
            raise DataError(
                _("{path}: a saved position (row {row}) is past this data's {rows} rows").format(
                    path=self.source.spec, row=row, rows=self.rows
                )
            )
        self.close()
        self._position = row
        self._stop = threading.Event()
        self._queue = queue.Queue(maxsize=PREFETCH + self.workers - 1)
        self._thread = threading.Thread(target=self._pass.produce, args=(row, self._stop, self._queue), daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop reading ahead (the reader gives nothing more until :meth:`set_state`)."""
        if self._thread is None:
            return
        self._stop.set()
        if self._thread is threading.current_thread():  # a collection on the thread finalised the reader
            self._thread = None
            return
        while self._thread.is_alive():
            try:
                self._queue.get(timeout=0.05)
            except queue.Empty:
                pass
        self._thread = None

    def __enter__(self) -> Reader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()

    # -- batches ------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Batch]:
        return self

    def __next__(self) -> Batch:
        if self._thread is None:
            raise StopIteration
        t = time.perf_counter()
        item = self._queue.get()
        if isinstance(item, tuple) and isinstance(item[0], Future):
            try:
                item = (item[0].result(), item[1])
            except BaseException:
                self.close()
                raise
        self.wait_s += time.perf_counter() - t
        if item is None:
            self._thread.join()
            self._thread = None
            raise StopIteration
        if isinstance(item, BaseException):
            self._thread.join()
            self._thread = None
            raise item
        batch: Batch = item[0]
        nbytes: int = item[1]
        self._position = batch.first + batch.rows
        self.rows_read += batch.rows
        self.bytes_read += nbytes
        return batch


def read_workers() -> int:
    """Threads a reader checks and transforms batches on: one in four of the cores, up to four.

    A batch's check and scaling pass over its values several times; on a host of many cores one thread
    doing them reads about 1 GB/s, below what a GPU's copy and sums take. On a small machine they stay on
    the reading thread, the cores left to training.
    """
    return max(1, min(MAX_WORKERS, (os.cpu_count() or 1) // CORES_PER_WORKER))
