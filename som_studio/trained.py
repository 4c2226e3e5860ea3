"""A trained map for Python users: ``som_studio.load_run(path)``, no Qt.

>>> run = som_studio.load_run("iris.somrun")          # doctest: +SKIP
>>> run.codebook.shape, run.feature_names               # doctest: +SKIP
>>> result = run.project("new.csv")                     # doctest: +SKIP

The codebook is given in the data's original units; projection scales new data
the way the training data was scaled and finds each row's best-matching unit
over its known features. Reading a ``.somrun`` runs no code (no pickle).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core.data import (
    COLUMNAR_SUFFIXES,
    PYARROW_INSTALL,
    CsvReader,
    DataError,
    Scaling,
    check_data,
    frame_features,
    is_frame,
    open_npy,
    refuse_repeated_names,
    unmasked,
)
from som_studio.core.data.checks import data_suffix
from som_studio.core.data.fill import fill_block, npy_rows
from som_studio.core.data.model_file import ModelInfo
from som_studio.core.som import metrics
from som_studio.i18n import _

PROJECT_CHUNK_ROWS = 8192
#: Projection searches on JAX's device (the kernel plan, :mod:`som_studio.core.plans.nearest_jax`) once one chunk
#: of rows x units x features reaches this; below it NumPy's search is done before JAX would have started.
#: Measured on the 2-core CPU, 8192 rows on a 256 x 256 map of 50 features, float64: NumPy 5.1 s of CPU,
#: the blocked plan 2.4 s (1.2 s in float32).
DEVICE_SEARCH_WORK = 1_000_000_000


def searches_on_device(height: int, width: int, features: int) -> bool:
    """Whether projecting on a map of this shape searches on JAX's device (:data:`DEVICE_SEARCH_WORK`)."""
    return PROJECT_CHUNK_ROWS * height * width * features >= DEVICE_SEARCH_WORK


class RunFileError(ValueError):
    """A run file cannot be used; the message names the file and why."""


@dataclass(frozen=True, eq=False)
class Projection:
    """Where rows land on a map: for each row, its unit and distance, its unit's cluster and label.

    ``bmu_row``/``bmu_col`` are int64; ``distance`` is in the scaled space the map
    was trained in (over the row's known features); ``cluster`` is -1 and
    ``label`` ``""`` where the run has none.
    """

    bmu_row: np.ndarray
    bmu_col: np.ndarray
    distance: np.ndarray
    cluster: np.ndarray
    label: np.ndarray
    ids: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.bmu_row.shape[0])

    def to_pandas(self, index: Any = None) -> Any:
        """A pandas DataFrame, a row per projected row: ``id`` (when the run has an id column: integers where every id
        is one), ``row``, ``col``, ``distance``, ``cluster``, ``label``. ``index``: its index, e.g. the projected
        frame's (``df.index``)."""
        import pandas as pd

        from som_studio.core.data.frames import integer_ids

        columns: dict[str, Any] = {}
        if self.ids is not None:  # integers where every id is one (pandas' Int64 where some are missing)
            whole = integer_ids(self.ids)
            ints = None if whole is None else pd.array(whole, "Int64") if None in whole else np.array(whole, np.int64)
            columns["id"] = self.ids if ints is None else ints
        columns.update(row=self.bmu_row, col=self.bmu_col, distance=self.distance, cluster=self.cluster)
        return pd.DataFrame({**columns, "label": self.label}, index=index)


class SomRun:
    """A stored run's trained map.

    Attributes
    ----------
    codebook : (height, width, features) float64, in the data's original units
    feature_names : list of str
    config : the run's configuration, as its record's ``config`` dict
    labels : (height, width) array of str (``""`` for units without labelled hits), or ``None``
    clusters : (height, width) int32 array, or ``None``
    hits : (height, width) int64, training examples per unit, or ``None`` (older files)
    purity : (height, width) float64, share of a unit's labelled examples with its label (NaN: none), or ``None``
    scaling : how the data were scaled before training
    record : the whole run record (dict, the ``--json`` schema)
    qe, te : the final map's quantization and topographic errors (``None`` when not measured)
    """

    def __init__(
        self,
        path: Path | None,
        record: dict[str, Any],
        trained: np.ndarray,
        model: ModelInfo | None,
        stored: Any = None,
    ) -> None:
        #: The file the run was read from or last saved to; ``None`` for a run trained here and not saved.
        self.path = path
        self._stored = stored  # the StoredRun that save() writes
        self.record = record
        self.config: dict[str, Any] = dict(record.get("config") or {})
        self._trained = np.asarray(trained, dtype=np.float64)  # the scaled space
        d = self._trained.shape[2]
        if model is None:  # a run stored before models were: unscaled, unnamed
            names = self.config.get("feature_names") or [f"x{j + 1}" for j in range(d)]
            model = ModelInfo(tuple(names), Scaling.identity(d))
        if len(model.feature_names) != d or model.scaling.offset.shape != (d,):
            raise RunFileError(
                _("{path}: the model's {n} features do not match its map's {d}").format(
                    path=path, n=len(model.feature_names), d=d
                )
            )
        self.model = model
        self.scaling = model.scaling
        self.feature_names = list(model.feature_names)
        self.labels = model.unit_labels
        self.clusters = model.clusters
        self.hits = model.hits
        self.purity = model.unit_purity
        self.codebook = self.scaling.invert(self._trained)
        self._device_search: Any = None

    @property
    def height(self) -> int:
        return int(self._trained.shape[0])

    @property
    def qe(self) -> float | None:
        """The final map's quantization error (mean distance of each example to its unit, in the scaled space the
        map was trained in), as its record says; ``None`` when it was not measured."""
        return (self.record.get("quality") or {}).get("qe")

    @property
    def te(self) -> float | None:
        """The final map's topographic error (share of examples whose two best units are not neighbours)."""
        return (self.record.get("quality") or {}).get("te")

    def u_matrix(self) -> np.ndarray:
        """(height, width): each unit's mean distance to its neighbouring units on the run's lattice (hex, toroid),
        in the scaled space the map was trained in, as the app and the notebook picture it."""
        topology = str(self.config.get("topology") or "rect")
        return metrics.u_matrix(self._trained, topology, bool(self.config.get("toroid")))

    @property
    def width(self) -> int:
        return int(self._trained.shape[1])

    @classmethod
    def trained(cls, record: Any, final_map: np.ndarray) -> SomRun:
        """The run a finished session gives: its :class:`~som_studio.session.record.RunRecord` and final map.

        The same object :func:`load_run` returns for the file :meth:`save` writes.
        """
        from som_studio.storage.runfile import StoredRun

        stored = StoredRun(record=record, final_map=np.asarray(final_map))
        return cls(None, record.to_dict(), stored.final_map, record.model, stored)  # type: ignore[arg-type]

    def save(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """Write this run as a ``.somrun`` file, as ``bench --save-runs`` does (an existing one only with ``force``)."""
        from som_studio.storage.runfile import SUFFIX
        from som_studio.storage.writers import OutputError

        p = Path(path)
        if p.suffix.lower() != SUFFIX:
            raise RunFileError(_("{path}: a run is saved as a {suffix} file").format(path=p, suffix=SUFFIX))
        if p.exists() and not force:  # in the words of this call, not the command line's --force
            raise RunFileError(_("{path}: exists; pass force=True to overwrite it").format(path=p))
        try:
            self.path = self._stored.save(p, force=force)
        except OutputError as exc:
            raise RunFileError(str(exc)) from None
        return self.path

    def __repr__(self) -> str:
        where = self.path.name if self.path is not None else self.config.get("impl", "run")
        return f"<SomRun {where}: {self.width}x{self.height} map of {len(self.feature_names)} features>"

    def _repr_html_(self) -> str:
        """The run as a notebook shows it: its final map, timings and quality in the report's words."""
        from som_studio.report.notebook import run_html

        return run_html(self)

    # -- exports ------------------------------------------------------------------------
    def unit_columns(self) -> list[str]:
        """The header of :meth:`unit_rows`: unit, row, col, hits, label, purity, cluster, then the features."""
        return ["unit", "row", "col", "hits", "label", "purity", "cluster", *self.feature_names]

    def unit_rows(self) -> Iterator[list[Any]]:
        """One row per unit (row-major): its hits, majority label, purity, cluster and codebook by feature name.

        Values the run does not have are ``""``; the codebook is in the data's original units.
        """
        cb = self.codebook.reshape(self.height * self.width, -1)
        for u in range(self.height * self.width):
            r, c = divmod(u, self.width)
            purity = self.purity.ravel()[u] if self.purity is not None else np.nan
            yield [
                u,
                r,
                c,
                int(self.hits.ravel()[u]) if self.hits is not None else "",
                self.labels.ravel()[u] if self.labels is not None else "",
                "" if np.isnan(purity) else f"{purity:.6g}",
                int(self.clusters.ravel()[u]) if self.clusters is not None else "",
                *(f"{v:.9g}" for v in cb[u]),
            ]

    def export_units(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """Write :meth:`unit_rows` as CSV (UTF-8, header first) atomically (an existing file only with ``force``)."""
        import csv
        import io

        if Path(path).suffix.lower() != ".csv":  # export_units('iris.npy') wrote CSV under another format's name
            raise ValueError(_("{path}: the units export as a .csv file").format(path=path))
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.unit_columns())
        w.writerows(self.unit_rows())
        return _export(path, buf.getvalue(), force)

    def export_codebook(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """The codebook in original units: ``.npy`` (height x width x features) or ``.csv`` (a row per unit);
        an existing file is replaced only with ``force``."""
        import io

        p = Path(path)
        if p.suffix.lower() == ".npy":
            buf = io.BytesIO()
            np.save(buf, self.codebook)
            return _export(p, buf.getvalue(), force)
        if p.suffix.lower() != ".csv":
            raise ValueError(_("{path}: a codebook exports as .csv or .npy").format(path=p))
        import csv

        text = io.StringIO()
        w = csv.writer(text, lineterminator="\n")  # quotes a feature name holding a comma
        w.writerow(["row", "col", *self.feature_names])
        for u, values in enumerate(self.codebook.reshape(self.height * self.width, -1)):
            w.writerow([*divmod(u, self.width), *(f"{v:.9g}" for v in values)])
        return _export(p, text.getvalue(), force)

    # -- projection ----------------------------------------------------------------------
    def project(self, data: Any, clusters: np.ndarray | None = None) -> Projection:
        """Project an (N, features) array in the data's original units, a data frame, or a data file.

        A file (``.csv``, ``.npy``, ``.parquet``, ``.arrow``) or a pandas, polars or pyarrow
        table has its columns matched by name (its label, ignored and id columns may be present).
        """
        if is_frame(data):
            values, ids = frame_features(data, self.feature_names, self.model.id_column, others=self._others())
            return self._project_values(check_data(values, "DataFrame"), ids, clusters)
        if isinstance(data, (str, os.PathLike)):
            parts = list(self.project_chunks(data, clusters=clusters))
            if not parts:
                raise DataError(_("{path}: has no data rows").format(path=data))
            id_parts = [p.ids for p in parts if p.ids is not None]
            return Projection(
                bmu_row=np.concatenate([p.bmu_row for p in parts]),
                bmu_col=np.concatenate([p.bmu_col for p in parts]),
                distance=np.concatenate([p.distance for p in parts]),
                cluster=np.concatenate([p.cluster for p in parts]),
                label=np.concatenate([p.label for p in parts]),
                ids=np.concatenate(id_parts) if id_parts else None,
            )
        arr = np.asarray(unmasked(data))
        if arr.ndim == 1 and len(self.feature_names) > 1 and arr.shape[0] == len(self.feature_names):
            raise DataError(
                _(
                    "data: a 1-D array is one column, and the run was trained on {n} features; for one row, pass "
                    "x.reshape(1, -1) (a data frame's row as df.iloc[[i]])"
                ).format(n=len(self.feature_names))
            )
        arr = check_data(arr, "data")
        self._check_width(arr.shape[1], "data")
        return self._project_values(arr, None, clusters)

    def project_chunks(
        self,
        path: str | os.PathLike[str],
        rows: int = PROJECT_CHUNK_ROWS,
        clusters: np.ndarray | None = None,
        on_note: Callable[[str], None] | None = None,
    ) -> Iterator[Projection]:
        """Project a file, a folder's files or a glob's in chunks of ``rows``: memory does not grow with their length.

        ``on_note`` is given each thing reading a CSV decided without certainty (a guessed
        encoding, a header of years: :attr:`CsvReader.notes <som_studio.core.data.CsvReader>`).
        """
        from som_studio.core.data.files import data_files, is_streamable

        if is_streamable(str(path)):  # a folder or a glob: its files in name order, one format
            left_out: list[str] = []
            files = data_files(path, left_out)
            if on_note is not None:
                for note in left_out:
                    on_note(note)
            for f in files:
                yield from self.project_chunks(f, rows, clusters, on_note)
            return
        p = Path(path)
        suffix = data_suffix(p).suffix
        if suffix in COLUMNAR_SUFFIXES:
            s = 0
            for batch in _columnar_batches(p, rows):  # a batch at a time: a file of any size
                values, ids = frame_features(
                    batch, self.feature_names, self.model.id_column, source=str(p), others=self._others()
                )
                part = check_data(values, str(p), first_row=s, columns=self.feature_names)
                yield self._project_values(part, ids, clusters)
                s += len(values)
            return
        if suffix == ".npy":
            arr = open_npy(p)  # its header checked; its rows read chunk by chunk, not through the map
            width = arr.shape[1] if arr.ndim == 2 else 1
            self._check_width(width, str(p))
            rows_of = npy_rows(p, 0, len(arr), str(p))
            for s in range(0, len(arr), rows):
                block = np.empty((min(rows, len(arr) - s), width), arr.dtype.newbyteorder("="))
                fill_block(block, rows_of, s)  # a file cut short meanwhile: a DataError, not a bus error
                values = check_data(block, str(p), first_row=s, columns=self.feature_names)
                yield self._project_values(values, None, clusters)
            return
        m = self.model
        optional = [c for c in (m.label_column, m.id_column, *m.ignore) if c]
        reader = CsvReader(p, m.label_column, m.ignore, m.id_column, optional=optional, roles=False)
        # A run trained on an unnamed column of row numbers as a feature (read so before such a column was left
        # out) projects with it.
        keep_index = reader.index_start is not None and reader.columns[0] in self.feature_names
        if keep_index:
            reader = CsvReader(
                p, m.label_column, m.ignore, m.id_column, optional=optional, roles=False, keep_index=True
            )
        notes = list(reader.notes)
        if not reader.header:
            self._check_width(len(reader.feature_names), str(p))
            order = list(range(len(self.feature_names)))
        else:
            have, want = list(reader.feature_names), self.feature_names
            missing = [n for n in want if n not in have]
            unexpected = [n for n in have if n not in want]
            if missing:
                # The columns it has beside the missing ones named too: a renamed column reads at a glance.
                bits = [_("missing {columns}").format(columns=", ".join(missing))]
                if unexpected:
                    bits.append(_("unexpected {columns}").format(columns=", ".join(unexpected)))
                raise DataError(
                    _("{path}: its feature columns do not match the run's ({columns}): {problems}").format(
                        path=p, columns=", ".join(want), problems="; ".join(bits)
                    )
                )
            # Columns the run was not trained on are left out, as a Parquet file's are: a table with a note
            # or two beside the features projects as it is.
            if unexpected:
                ignore = (*m.ignore, *unexpected)
                reader = CsvReader(
                    p,
                    m.label_column,
                    ignore,
                    m.id_column,
                    optional=[*optional, *unexpected],
                    roles=False,
                    keep_index=keep_index,
                )
                notes.append(
                    _("{path}: left out, the run has no such features: {columns}").format(
                        path=p, columns=", ".join(unexpected)
                    )
                )
            order = [list(reader.feature_names).index(n) for n in want]
        if on_note is not None:
            for note in notes:
                on_note(note)
        for chunk in reader.chunks(rows):
            yield self._project_values(chunk.values[:, order], chunk.ids, clusters)

    def _others(self) -> list[str]:
        """The run's columns that are not features: its labels, id and ignored columns."""
        m = self.model
        return [c for c in (m.label_column, m.id_column, *m.ignore) if c]

    def _check_width(self, d: int, name: str) -> None:
        if d != len(self.feature_names):
            raise DataError(
                _("{path}: has {d} features; the run was trained on {n}").format(
                    path=name, d=d, n=len(self.feature_names)
                )
            )

    def _project_values(self, values: np.ndarray, ids: np.ndarray | None, clusters: np.ndarray | None) -> Projection:
        x = self.scaling.apply(values)
        first, d2 = self._nearest(x)
        row, col = np.divmod(first, self.width)
        cl = clusters if clusters is not None else self.clusters
        return Projection(
            bmu_row=row,
            bmu_col=col,
            distance=np.sqrt(d2),
            cluster=cl.ravel()[first].astype(np.int64) if cl is not None else np.full(len(first), -1),
            label=self.labels.ravel()[first] if self.labels is not None else np.full(len(first), "", dtype=str),
            ids=ids,
        )

    def _nearest(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each scaled row's unit (flat) and squared distance over its known features (float64).

        Big maps search on JAX's device with its kernel plan, chunk by chunk, in the run's precision:
        the very search whose final pass gave the run's hits, so a training row lands on the unit its
        hits counted it in. Small maps take NumPy's float64 reference search, as small runs' hits did.
        """
        h, w, d = self._trained.shape
        if not searches_on_device(h, w, d):
            return metrics.nearest_units(self._trained, x)
        if self._device_search is None:
            from som_studio.core.plans.nearest_jax import DeviceNearest

            precision = str((self.record.get("config") or {}).get("precision") or "float32")
            dtype = np.float64 if precision == "float64" else np.float32
            self._device_search = DeviceNearest(self._trained.reshape(h * w, d), PROJECT_CHUNK_ROWS, dtype)
        search = self._device_search
        first = (
            np.concatenate([search(x[s : s + PROJECT_CHUNK_ROWS]) for s in range(0, len(x), PROJECT_CHUNK_ROWS)])
            if len(x)
            else np.zeros(0, np.int64)
        )
        diff = x - self._trained.reshape(h * w, d)[first]
        diff[np.isnan(diff)] = 0.0  # a missing feature does not count
        return first, np.einsum("nd,nd->n", diff, diff)


def refuse_existing(path: str | os.PathLike[str], force: bool) -> Path:
    """``path``, or :class:`FileExistsError` when a file is there and not ``force``: in the words of a Python
    call (``force=True``), not the command line's ``--force``."""
    p = Path(path)
    if p.exists() and not force:
        raise FileExistsError(_("{path}: exists; pass force=True to overwrite it").format(path=p))
    return p


def _export(path: str | os.PathLike[str], content: str | bytes, force: bool) -> Path:
    """Write an export atomically; an existing file (the run's own data, say) only with ``force``."""
    from som_studio.storage.writers import write_atomic

    return write_atomic(refuse_existing(path, force), content, force=force)


def load_run(path: str | os.PathLike[str]) -> SomRun:
    """Open a ``.somrun`` file; raises :class:`RunFileError` naming what is wrong.

    The file is read by :meth:`StoredRun.load <som_studio.storage.runfile.StoredRun.load>`, as the
    app's history reads it: the same file is refused with the same words here and there.
    """
    from som_studio.storage.runfile import HistoryError, StoredRun

    if not isinstance(path, (str, os.PathLike)):  # load_run(None): pathlib's TypeError said nothing of the run
        raise TypeError(_("expected the path of a .somrun file, got {value!r}").format(value=path))
    p = Path(path)
    try:
        stored = StoredRun.load(p)
    except HistoryError as exc:
        raise RunFileError(str(exc)) from None
    if stored.final_map is None:
        raise RunFileError(_("{path}: the run has no final map (it did not finish)").format(path=p))
    return SomRun(p, stored.record.to_dict(), stored.final_map, stored.record.model, stored)


Run = SomRun
"""A trained map: what :func:`load_run` reads and :func:`som_studio.train` returns."""


def _columnar_batches(path: Path, rows: int) -> Iterator[Any]:
    """A ``.parquet`` or Arrow IPC file as ``pyarrow.Table`` pieces of at most ``rows`` rows, read as asked for.

    Memory holds one piece (and what pyarrow's scanner reads ahead), whatever the file's length.
    """
    if not path.is_file():
        raise DataError(_("{path}: no such file").format(path=path))
    try:
        import pyarrow as pa
        import pyarrow.ipc as ipc
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(
            _("{path}: reading {suffix} files needs pyarrow; install it with {command}").format(
                path=path, suffix=path.suffix.lower(), command=PYARROW_INSTALL
            )
        ) from None

    parquet = path.suffix.lower() == ".parquet"
    kind = "Parquet" if parquet else "Arrow IPC"
    try:
        if parquet:  # without pre-buffering: only the row group being decoded is held
            batches = pq.ParquetFile(path, pre_buffer=False).iter_batches(batch_size=rows)
        else:  # memory-mapped: the pages of one batch at a time
            reader = ipc.open_file(pa.memory_map(str(path)))
            batches = (
                piece
                for i in range(reader.num_record_batches)
                for piece in pa.Table.from_batches([reader.get_batch(i)]).to_batches(rows)
            )
        for batch in batches:
            refuse_repeated_names(path, batch.schema.names)  # which one the run's feature is: unknown
            if batch.num_rows:
                yield pa.Table.from_batches([batch])
    except (OSError, pa.ArrowException) as exc:
        raise DataError(_("{path}: cannot read as {kind} ({why})").format(path=path, kind=kind, why=exc)) from None
