"""New data on a stored run's map (Runs > Project data…), and its per-unit export (Runs > Export units…).

Both go through :mod:`som_studio.trained` (``load_run`` / ``project``), the model
Python users and ``som-studio project`` use, so the app matches columns by name
and refuses a file with the same words. :func:`project_stored` reads the file
in chunks (memory does not grow with its length) and may take long: call it
off the GUI thread. :func:`project_apart` does the same where a big map would
start JAX, in a process of its own (the app's process never starts JAX).

Threads: any; nothing here starts a thread or imports Qt.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from som_studio.i18n import _
from som_studio.picture import views as picture
from som_studio.picture.mapviews import MapViews
from som_studio.run_settings import Topology
from som_studio.storage.runfile import StoredRun
from som_studio.storage.writers import OutputError
from som_studio.trained import RunFileError, SomRun, load_run, searches_on_device


class ProjectionError(ValueError):
    """New data cannot be projected on a run (or its units exported); the message says why."""


@dataclass(frozen=True, eq=False)
class ProjectedHits:
    """How many rows of ``data_path`` landed on each unit of ``run_name``'s map.

    ``hits`` is (height, width) int64; ``topology`` is the run's lattice.
    """

    run_name: str
    data_path: str
    hits: np.ndarray
    topology: str = Topology.RECT

    @property
    def rows(self) -> int:
        return int(self.hits.sum())

    @property
    def caption(self) -> str:
        h, w = self.hits.shape
        used = int((self.hits > 0).sum())
        return _("{file} on {run}: {rows:,} rows, hits per unit 0–{most}, {used} of {units} units hit").format(
            file=Path(self.data_path).name,
            run=self.run_name,
            rows=self.rows,
            most=int(self.hits.max()) if self.hits.size else 0,
            used=used,
            units=w * h,
        )

    def frame(self) -> picture.MapFrame:
        """The hit map as a picture: the picture pipeline's hit view on the run's lattice, with its colour bar."""
        h, w = self.hits.shape
        views = MapViews(topology=self.topology, hits=self.hits)
        shape_only = np.zeros((h, w, 1))  # the hit view draws the hits; the map gives only its size
        return picture.make_frame(0, shape_only, picture.ViewChoice(picture.HITS), np.zeros(1), np.ones(1), views)


def _model(run: StoredRun) -> SomRun:
    """The run as :func:`som_studio.load_run` gives it (read back from its own ``.somrun`` bytes)."""
    if run.final_map is None:
        raise ProjectionError(_("{name}: the run has no trained map (it did not finish)").format(name=run.name))
    with tempfile.TemporaryDirectory(prefix="som-studio-") as folder:
        path = Path(folder) / "run.somrun"
        try:
            run.save(path)
            return load_run(path)
        except (RunFileError, OutputError, OSError) as exc:
            raise ProjectionError(f"{run.name}: {exc}") from None


def project_stored(run: StoredRun, data_path: str | os.PathLike[str]) -> ProjectedHits:
    """Project the file ``data_path`` on ``run``'s trained map: its hit map. Raises :class:`ProjectionError`."""
    from som_studio.core.data import DataError

    model = _model(run)
    hits = np.zeros((model.height, model.width), dtype=np.int64)
    try:
        for part in model.project_chunks(data_path):
            np.add.at(hits, (part.bmu_row, part.bmu_col), 1)
    except DataError as exc:
        raise ProjectionError(str(exc)) from None
    except OSError as exc:
        raise ProjectionError(
            _("{path}: cannot read ({error})").format(path=data_path, error=exc.strerror or exc)
        ) from None
    if not hits.any():
        raise ProjectionError(_("{path}: has no data rows").format(path=data_path))
    return ProjectedHits(run.name, str(data_path), hits, str(model.config.get("topology", Topology.RECT)))


def project_apart(run: StoredRun, data_path: str | os.PathLike[str]) -> ProjectedHits:
    """:func:`project_stored`, in a fresh process when the map is big enough to search on JAX's device.

    The process starts JAX (hundreds of MB, device memory on a GPU) and gives it
    all back when it ends; small maps are searched with NumPy here, at once.
    Raises :class:`ProjectionError`, also when the process dies.
    """
    shape = np.shape(run.final_map) if run.final_map is not None else ()
    if len(shape) != 3 or not searches_on_device(*shape):
        return project_stored(run, data_path)
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from som_studio.worker import start
    from som_studio.worker.process import speak

    env = dict(os.environ)  # the app's now: its language, not the fork server's
    with ProcessPoolExecutor(
        max_workers=1, mp_context=start.context(), initializer=start.in_environment, initargs=(env, speak)
    ) as pool:
        try:
            return pool.submit(project_stored, run, str(data_path)).result()
        except BrokenProcessPool:
            raise ProjectionError(
                _("{path}: the projection process ended before it answered").format(path=data_path)
            ) from None


def export_units(run: StoredRun, path: str | os.PathLike[str]) -> Path:
    """Write ``run``'s per-unit CSV (unit, hits, label, purity, cluster, codebook by feature name)."""
    model = _model(run)
    if not Path(path).suffix:  # a name typed in the save dialog without its filter's suffix
        path = Path(path).with_suffix(".csv")
    try:
        out: Path = model.export_units(path, force=True)  # the save dialog asked before replacing a file
    except ValueError as exc:  # another suffix
        raise ProjectionError(str(exc)) from None
    except OutputError as exc:
        raise ProjectionError(str(exc)) from None
    except OSError as exc:
        raise ProjectionError(
            _("{path}: cannot write ({error})").format(path=path, error=exc.strerror or exc)
        ) from None
    return out
