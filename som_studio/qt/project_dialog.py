"""Runs > Project data… and Export units…: new data on a stored run's map, and its per-unit CSV.

A thin view of :mod:`som_studio.app_model.projection`: it asks for the files,
projects on a thread of its own (a large file never blocks the window) and
shows the hit map of the new data in the map view, or the refusal (columns
that do not match are named) in a dialog.

The hit map is drawn by the picture pipeline's component-plane renderer fed
with the counts, as a square-pixel image (a hex map's hexagons come with the
hit-map pictures of ``som_studio.picture`` once they exist).

Threads: GUI thread, but for the projection's thread, which only emits ``_done``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Signal
from PySide6.QtWidgets import QFileDialog, QPushButton, QWidget

from som_studio.app_model.projection import ProjectedHits, ProjectionError, export_units, project_apart
from som_studio.picture import views as picture
from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.storage.runfile import StoredRun

HITS_ITEM = QT_TRANSLATE_NOOP("ProjectData", "Hits of the new data")  # shown through translate()


class ProjectData(QObject):
    """The Runs panel's *Project data…* and *Export units…* buttons and what they do.

    Parameters
    ----------
    pick : ``pick(what)`` gives the one selected run, or ``None`` (having said why).
    parent : the widget dialogs open over.
    show_error : ``(title, message)``: a dialog saying why a projection or an export failed.

    ``projecting(StoredRun)`` (the run the data go onto, as its projection starts), ``projected(ProjectedHits)``
    and ``status(str)`` are emitted on the GUI thread.
    """

    projecting = Signal(object)
    projected = Signal(object)
    status = Signal(str)
    _done = Signal(object, str)  # ProjectedHits or None, the refusal; emitted on the projection's thread

    def __init__(
        self, pick: Callable[[str], StoredRun | None], parent: QWidget, show_error: Callable[[str, str], None]
    ) -> None:
        super().__init__(parent)
        self._pick = pick
        self._show_error = show_error
        self._parent = parent
        self._threads: list[threading.Thread] = []
        self.project_button = QPushButton(self.tr("Project data…"))
        self.project_button.setToolTip(
            self.tr("Where the rows of another file land on the selected run's map (its hit map)")
        )
        self.export_button = QPushButton(self.tr("Export units…"))
        self.export_button.setToolTip(self.tr("A CSV with one line per unit: hits, label, purity, cluster, codebook"))
        self.project_button.clicked.connect(lambda: self.project())
        self.export_button.clicked.connect(lambda: self.export_units())
        self._done.connect(self._on_done)

    @property
    def buttons(self) -> tuple[QPushButton, QPushButton]:
        return self.project_button, self.export_button

    def project(self, path: str | None = None) -> None:
        """Project ``path`` (asked for when ``None``) on the selected run, off the GUI thread."""
        run = self._pick(self.tr("Project data…"))
        if run is None:
            return
        if path is None:
            from som_studio.core.data.files import DATA_PATTERNS

            filters = self.tr("Data ({patterns});;All files (*)").format(patterns=DATA_PATTERNS)
            title = self.tr("Data to project on {name}").format(name=run.name)
            trained_on = str((run.record.config.get("data") or {}).get("path") or "")
            start = str(Path(trained_on).parent) if trained_on and Path(trained_on).parent.is_dir() else ""
            path, _ = QFileDialog.getOpenFileName(self._parent, title, start, filters)  # by the run's own data
            if not path:
                return
        self.projecting.emit(run)
        self.status.emit(self.tr("Projecting {file} on {name}…").format(file=Path(path).name, name=run.name))
        self._threads = [t for t in self._threads if t.is_alive()]
        thread = threading.Thread(target=self._project, args=(run, path), name="som-projection", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _project(self, run: StoredRun, path: str) -> None:
        try:
            self._done.emit(project_apart(run, path), "")
        except ProjectionError as exc:
            self._done.emit(None, str(exc))

    def _on_done(self, result: ProjectedHits | None, error: str) -> None:
        if result is None:
            self.status.emit(self.tr("Cannot project the data"))
            self._show_error(self.tr("Cannot project the data"), error)
            return
        self.status.emit(result.caption)
        self.projected.emit(result)

    def export_units(self, path: str | None = None) -> Path | None:
        """Write the selected run's per-unit CSV to ``path`` (asked for when ``None``)."""
        run = self._pick(self.tr("Export units…"))
        if run is None:
            return None
        if path is None:
            title = self.tr("Units of {name}").format(name=run.name)
            path, _ = QFileDialog.getSaveFileName(self._parent, title, f"{run.name}-units.csv", "CSV (*.csv)")
            if not path:
                return None
        try:
            out = export_units(run, path)
        except ProjectionError as exc:
            self._show_error(self.tr("Cannot export the units"), str(exc))
            return None
        self.status.emit(self.tr("Wrote {path}").format(path=out))
        return out

    def wait(self) -> None:
        """Wait for projections under way (closing the window)."""
        for thread in self._threads:
            thread.join()
        self._threads = []


def show_projection(map_view: Any, result: ProjectedHits) -> None:
    """Show ``result``'s hit map in ``map_view`` (a :class:`~som_studio.qt.widgets.map_view.MapView`)."""
    map_view.begin(1, result.caption)
    i = map_view.mode.findData(f"{picture.COMPONENT}:0")
    map_view.mode.setItemText(i, QCoreApplication.translate("ProjectData", HITS_ITEM))
    map_view.set_choice(picture.COMPONENT, 0)
    map_view.show_frame(result.frame(), force=True)
    map_view.caption.setText(result.caption)
    map_view.iteration.setText("")  # new rows' hits have no iteration ("iteration 0" was said beside them)
