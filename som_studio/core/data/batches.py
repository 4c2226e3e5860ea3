"""Producing one pass's batches: the part of a :class:`~som_studio.core.data.stream.Reader` its thread runs.

The reader a caller holds and the pass its background thread runs are two objects, so the thread never holds the
reader: a reader dropped without :meth:`~som_studio.core.data.stream.Reader.close` is collected, and closing it then
stops the thread.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.core.data.checks import PYARROW_INSTALL, DataError, changed_while_read, check_known_rows
from som_studio.core.data.csv_reader import CsvReader
from som_studio.core.data.fill import Piece, fill_block, npy_rows, piece_rows
from som_studio.i18n import _

# Values in each record batch Arrow's scanner decodes (at least a training batch's rows): each costs a call per
# column, and a wide table in batches of a few thousand rows spent more on those calls than on its values.
SCAN_VALUES, SCAN_MIN_ROWS, SCAN_MAX_ROWS = 1 << 24, 4096, 1 << 17


@dataclass(frozen=True)
class Unit:
    """The smallest piece a share holds: row group ``part`` of file ``file`` (a block, for ``.npy``)."""

    file: int
    part: int
    first: int  # its first row within the file
    rows: int


@dataclass(frozen=True, eq=False)
class Batch:
    """Consecutive rows of a share: ``first`` is the share's index of the first row."""

    first: int
    values: np.ndarray
    labels: np.ndarray | None
    ids: np.ndarray | None

    @property
    def rows(self) -> int:
        return int(self.values.shape[0])


def import_pyarrow() -> Any:
    """pyarrow with the modules a source uses, or a :class:`DataError` saying how to install it."""
    try:
        import pyarrow
        import pyarrow.dataset
        import pyarrow.fs
        import pyarrow.ipc
        import pyarrow.parquet
    except ImportError:
        raise DataError(
            _("reading Parquet or Arrow files needs pyarrow; install it with {command}").format(command=PYARROW_INSTALL)
        ) from None
    return pyarrow


class BatchPass:
    """One pass's batches from share rows on: the units' pieces read, gathered into batches, checked, transformed.

    ``source`` is the :class:`~som_studio.core.data.stream.Source` read (typed loosely: that module builds passes).
    """

    def __init__(
        self,
        source: Any,
        units: tuple[Unit, ...],
        batch_rows: int,
        dtype: np.dtype,
        transform: Callable[[np.ndarray], np.ndarray] | None,
        workers: int,
    ) -> None:
        self.source = source
        self.units = units
        self.batch_rows = batch_rows
        self.dtype = dtype
        self.transform = transform
        self.workers = workers

    def produce(self, row: int, stop: threading.Event, out: queue.Queue[Any]) -> None:
        """The background thread: assemble batches from the units' pieces, in order.

        Here the pieces are read and a batch's spans of them gathered; copying, checking and transforming
        its values (most of a batch's cost) is :meth:`finish`, run here or, with :attr:`workers` threads,
        on those while the next batch is gathered (the queue then holds their futures, in order).
        """

        def put(item: Any) -> bool:
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    pass
            return False

        pool = ThreadPoolExecutor(self.workers, thread_name_prefix="som-read") if self.workers > 1 else None

        def finished(*args: Any) -> Any:
            return pool.submit(self.finish, *args) if pool is not None else self.finish(*args)

        try:
            b, d = self.batch_rows, self.source.features
            vals = np.empty((b, d), self.dtype)
            labs: list[np.ndarray] = []
            ids: list[np.ndarray] = []
            spans: list[_Span] = []
            fill, first, nbytes = 0, row, 0
            for unit, start, data, labels, idv, size in self.pieces(row):
                at = 0
                n = piece_rows(data)
                nbytes += size
                while at < n:
                    take = min(b - fill, n - at)
                    spans.append((unit, start + at, fill, take, data, at))
                    if labels is not None:
                        labs.append(labels[at : at + take])
                    if idv is not None:
                        ids.append(idv[at : at + take])
                    fill += take
                    at += take
                    if fill == b:
                        if not put((finished(first, vals, labs, ids, spans), nbytes)):
                            return
                        vals = np.empty((b, d), self.dtype)
                        labs, ids, spans = [], [], []
                        first += fill
                        fill, nbytes = 0, 0
                if stop.is_set():
                    return
            if fill:
                put((finished(first, vals[:fill], labs, ids, spans), nbytes))
            put(None)
        except BaseException as exc:  # handed to the consumer, who raises it
            put(exc)
        finally:
            if pool is not None:  # the batches given to it are still wanted, unless the pass was stopped
                pool.shutdown(wait=False, cancel_futures=stop.is_set())

    def finish(
        self,
        first: int,
        values: np.ndarray,
        labels: list[np.ndarray],
        ids: list[np.ndarray],
        spans: list[_Span],
    ) -> Batch:
        """A batch from its pieces: each span's rows copied into ``values`` and checked, the values transformed."""
        for unit, start, at, take, data, offset in spans:
            dst = values[at : at + take]
            fill_block(dst, data, offset)
            self._checked(unit, start, dst)
        if self.transform is not None:
            values = self.transform(values)
        return Batch(first, values, _cat(labels), _cat(ids))

    def pieces(self, row: int) -> Iterator[_Piece]:
        """``(unit, first, values, labels, ids, bytes)`` in order from share row ``row`` on, unit by unit:
        ``first`` is the piece's first row within the unit, ``values`` an (n, D) array or a list of D
        columns."""
        at = 0
        for unit in self.units:
            if at + unit.rows <= row:
                at += unit.rows
                continue
            skip = max(0, row - at)
            at += unit.rows
            yield from self._unit(unit, skip)

    def _unit(self, unit: Unit, skip: int) -> Iterator[_Piece]:
        src = self.source
        path = src.paths[unit.file]
        try:
            self._unchanged(unit)
            if src.format == "npy":
                part = npy_rows(path, unit.first + skip, unit.rows - skip, src.where(unit))
                yield unit, skip, part, None, None, int(part.nbytes)
                return
            yield from self._csv(unit, skip) if src.format == "csv" else self._columnar(unit, skip)
            self._unchanged(unit)  # appended to or cut while it was read: its rows are not the ones counted
        except DataError:
            self._unchanged(unit)  # a file cut mid-line reads as ragged: say what happened
            raise
        except Exception as exc:
            raise DataError(
                _("{where}: cannot be read ({why})").format(where=src.where(unit), why=str(exc) or type(exc).__name__)
            ) from None

    def _unchanged(self, unit: Unit) -> None:
        """Refuse to read on from a file whose size or time changed since the source was opened."""
        st = self.source.paths[unit.file].stat()
        if (st.st_size, st.st_mtime_ns) != self.source.stamps[unit.file]:
            raise changed_while_read(self.source.where(unit))

    def _columnar(self, unit: Unit, skip: int) -> Iterator[_Piece]:
        pa = import_pyarrow()
        src = self.source
        path = src.paths[unit.file]
        wanted = list(src.feature_names)
        extra = [c for c in (src.label_column, src.id_column) if c is not None]
        if src.format == "parquet":
            fmt = pa.dataset.ParquetFileFormat()
            fragment = fmt.make_fragment(
                str(path.resolve()), filesystem=pa.fs.LocalFileSystem(), row_groups=[unit.part]
            )
            batches = pa.dataset.Scanner.from_fragment(
                fragment,
                columns=wanted + extra,
                batch_size=min(max(self.batch_rows, SCAN_MIN_ROWS, SCAN_VALUES // max(len(wanted), 1)), SCAN_MAX_ROWS),
                batch_readahead=4,
                use_threads=True,
            ).to_batches()
        else:
            mm = pa.memory_map(str(path))
            batches = iter([pa.ipc.open_file(mm).get_batch(unit.part).select(wanted + extra)])
        at = 0
        for rb in batches:
            n = rb.num_rows
            if at + n <= skip:
                at += n
                continue
            cut = max(0, skip - at)
            rb = rb.slice(cut)
            first = at + cut
            at += n
            # Columns of the reader's type are the file's buffers, not copies; the others are cast
            # to float64 first, as the whole table is when it is loaded.
            same = pa.from_numpy_dtype(self.dtype)
            columns = []
            for name in wanted:
                col = rb.column(name)
                if col.type != same:
                    col = col.cast(pa.float64(), safe=False)  # as frame_column casts it: large integers rounded
                columns.append(col.to_numpy(zero_copy_only=False))
            labels = _text(rb.column(src.label_column)) if src.label_column else None
            ids = _text(rb.column(src.id_column)) if src.id_column else None
            yield unit, first, columns, labels, ids, int(rb.nbytes)

    def _csv(self, unit: Unit, skip: int) -> Iterator[_Piece]:
        src = self.source
        # Every column that is neither a feature nor labels nor ids is ignored (an index too, its count checked
        # when the source was opened): none is read, and a run never stops on one.
        roles = {src.label_column, src.id_column, *src.feature_names}
        ignore = [c for c in src.columns if c not in roles]
        r = CsvReader(src.paths[unit.file], labels=src.label_column, ignore=ignore, id_column=src.id_column)
        keep = [r.feature_names.index(n) for n in src.feature_names]
        for c in r.chunks():
            n = c.values.shape[0]
            if c.first + n <= skip:
                continue
            cut = max(0, skip - c.first)
            values = c.values[cut:, keep]
            labels = c.labels[cut:] if src.label_column and c.labels is not None else None
            ids = c.ids[cut:] if src.id_column and c.ids is not None else None
            yield unit, c.first + cut, values, labels, ids, int(values.nbytes)

    def _checked(self, unit: Unit, first: int, values: np.ndarray) -> None:
        """Refuse ``values`` (rows from row ``first`` of ``unit``) when a value is infinite or a row knows
        no feature (row numbers in its file)."""
        where = str(self.source.paths[unit.file])
        if np.isinf(values).any():
            row, col = np.argwhere(np.isinf(values))[0]
            raise DataError(
                _("{path}: infinite value {value!r} at row {row}, column {column}").format(
                    path=where,
                    value=float(values[row, col]),
                    row=unit.first + first + int(row) + 1,
                    column=self.source.feature_names[col],
                )
            )
        check_known_rows(values, where, first_row=unit.first + first)


#: What a unit is read as: ``(unit, first row within it, values, labels, ids, bytes read)``; the values
#: an (n, D) array or a list of D columns.
_Piece = tuple[Unit, int, Piece, "np.ndarray | None", "np.ndarray | None", int]


#: A batch's rows from one piece: ``(unit, first row within it, at in the batch, rows, the piece's values,
#: the first row within them)``.
_Span = tuple[Unit, int, int, int, Piece, int]


def _cat(parts: list[np.ndarray]) -> np.ndarray | None:
    return np.concatenate(parts) if parts else None


def _text(col: Any) -> np.ndarray:
    return np.array(["" if v is None else str(v) for v in col.to_pylist()], dtype=str)
