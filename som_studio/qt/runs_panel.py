"""The Runs page: the run history's table and what can be done to its runs.

Rename, remove, save to and open from a file, re-run, show again, project new
data and export the units: each on the runs selected in the table of the one
run list (:class:`~som_studio.qt.runs.RunsModel`).

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from som_studio.app_model.runs import DIFFERS_COLUMN
from som_studio.config import ConfigError, RunConfig
from som_studio.qt import dialogs
from som_studio.qt.project_dialog import ProjectData
from som_studio.qt.runs import RunsModel
from som_studio.qt.widgets.columns import ColumnChooser
from som_studio.storage import SUFFIX, HistoryError, StoredRun
from som_studio.storage.writers import OutputError

DIFFERS_MAX_PX = 320
"""The widest the ticked runs' differences are shown in their column (the rest elided, whole in a tooltip)."""


def resumable(run: StoredRun, runs: Iterable[StoredRun] = ()) -> bool:
    """Whether ``run`` stopped before its end and left a checkpoint to go on from, which no later run of
    ``runs`` went on from (a resumed run writes to the checkpoint it resumed: it is that later run's now)."""
    kept = run.record.extra.get("checkpoint") or {}
    folder = kept.get("folder")
    if run.record.status == "ok" or not folder or not Path(str(folder)).is_dir():
        return False
    return not any(
        other.created > run.created and (other.record.extra.get("resumed") or {}).get("checkpoint") == str(folder)
        for other in runs
    )


class RunsPanel(QWidget):
    """The Runs page: the run history's table and what can be done to its runs.

    Parameters
    ----------
    model : the shared run list.
    rerun : starts a configuration; returns ``""`` or why it could not start.
    resume : resumes a stopped run from its checkpoint; returns ``""`` or why it could not start.
    show_run : shows a kept run again in the live views (double-click, or Show).
    """

    status = Signal(str)

    def __init__(
        self,
        model: RunsModel,
        rerun: Callable[[RunConfig], str] | None = None,
        show_run: Callable[[StoredRun], None] | None = None,
        parent: QWidget | None = None,
        resume: Callable[[StoredRun], str] | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self._rerun = rerun
        self._show_run = show_run
        self._resume = resume
        self.error_dialog: QMessageBox | None = None
        self.table = QTableView()
        self.table.setModel(model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setStretchLastSection(True)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        # Where the run file dialogs start and what they remember: ``folder(kind)``/``set_folder(kind, path)``.
        self.folders: Any = None
        self.table.setColumnWidth(0, 170)
        self.table.setToolTip(
            self.tr(
                "Tick runs to compare them (the Compare page); double-click a name to rename it, "
                "another cell to show the run again"
            )
        )
        self.columns = ColumnChooser(self.table)  # movable, hideable, remembered by the window
        self.table.doubleClicked.connect(self._on_double_clicked)
        model.rename_failed.connect(lambda text: self.show_error(self.tr("Cannot rename the run"), text))
        model.save_failed.connect(self._on_save_failed)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.checked_changed.connect(self._fit_columns)
        self._fit_columns()

        self.show_button = QPushButton(self.tr("Show"))
        self.show_button.setToolTip(self.tr("Show the selected run again: its final map, timings and quality"))
        self.remove_button = QPushButton(self.tr("Remove"))
        self.save_button = QPushButton(self.tr("Save…"))
        self.open_button = QPushButton(self.tr("Open…"))
        self.rerun_button = QPushButton(self.tr("Re-run"))
        self.rerun_button.setToolTip(self.tr("Run the selected run's configuration again"))
        self.resume_button = QPushButton(self.tr("Resume"))
        self.resume_button.setObjectName("resumeRunButton")
        self.resume_button.setToolTip(
            self.tr(
                "Go on training the selected stopped run from its last checkpoint, to the map it would have reached"
            )
        )
        self.resume_button.clicked.connect(self.resume_selected)
        self.resume_button.setEnabled(False)
        self.table.selectionModel().selectionChanged.connect(self._update_resume)
        for changed in (model.modelReset, model.rowsInserted, model.rowsRemoved, model.dataChanged):
            changed.connect(self._update_resume)
        self.show_button.clicked.connect(self.show_selected)
        self.remove_button.clicked.connect(self.ask_remove_selected)
        self.save_button.clicked.connect(lambda: self.save_selected())
        self.open_button.clicked.connect(lambda: self.open_runs())
        self.rerun_button.clicked.connect(self.rerun_selected)
        remove = QAction(self.tr("Remove"), self.table)
        remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(self.ask_remove_selected)
        self.table.addAction(remove)
        self.remove_button.setToolTip(self.tr("Remove the selected runs from the list and their files (Delete)"))
        self.show_button.setEnabled(show_run is not None)
        self.rerun_button.setEnabled(rerun is not None)
        self.projector = ProjectData(self._one, self, self.show_error)  # Project data… and Export units…
        self.projector.status.connect(self.status)
        # Two rows, what acts on the selected runs, then their files: in one row of eight, a narrow window
        # (1,024 px, the docks beside) cut the buttons' words ("oject data", "port units").
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.table, 1)
        for row in (
            (self.show_button, self.rerun_button, self.resume_button, self.remove_button),
            (*self.projector.buttons, self.save_button, self.open_button),
        ):
            buttons = QHBoxLayout()
            for b in row:
                buttons.addWidget(b)
            buttons.addStretch(1)
            lay.addLayout(buttons)

    def _folder(self, kind: str) -> str:
        return self.folders.folder(kind) if self.folders is not None else ""

    def _remember_folder(self, kind: str, path: str) -> None:
        if self.folders is not None and path:
            self.folders.set_folder(kind, str(Path(path).parent))

    def _on_rows_inserted(self, *_: Any) -> None:
        self._fit_columns()
        self.table.scrollToBottom()

    def _fit_columns(self) -> None:
        """Each column as wide as its texts, the ticked runs' differences at most :data:`DIFFERS_MAX_PX` (elided,
        whole in their tooltip): four runs' differences pushed every other column out of sight."""
        self.table.resizeColumnsToContents()
        if self.table.columnWidth(DIFFERS_COLUMN) > DIFFERS_MAX_PX:
            self.table.setColumnWidth(DIFFERS_COLUMN, DIFFERS_MAX_PX)

    # -- acting on runs ------------------------------------------------------------------
    def selected(self) -> list[StoredRun]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.run_at(r) for r in rows]

    def select(self, run_id: str) -> None:
        self.table.selectRow(self.model.row_of(run_id))

    def _one(self, what: str) -> StoredRun | None:
        """The one run selected (or ticked); ``what``: the action asking, named in the dialog otherwise."""
        runs = self.selected() or self.model.checked_runs()
        if len(runs) != 1:
            self.show_error(
                what, self.tr("Select one run in the list, then choose {action} again.").format(action=what)
            )
            return None
        return runs[0]

    def add_run(self, run: StoredRun, check: bool = False) -> StoredRun:
        """Keep ``run`` in the history (its file written off the GUI thread) and list it."""
        return self.model.add(run, check=check)

    def _on_save_failed(self, error: str) -> None:
        message = self.tr("{error}\nThe run is listed until the app closes.").format(error=error)
        self.show_error(self.tr("Cannot keep the run"), message)

    def ask_remove_selected(self) -> None:
        """Remove the selected runs once the user agrees: their files go too, for good."""
        runs = self.selected()
        if not runs:
            self.status.emit(self.tr("Select the runs to remove first"))
            return
        if len(runs) == 1:
            question = self.tr("Remove the run “{name}” from the list?").format(name=runs[0].name)
            question += " " + self.tr("Its saved files are deleted too (save the run first to keep a copy).")
        else:
            question = self.tr("Remove {n} runs from the list?").format(n=len(runs))
            question += " " + self.tr("Their saved files are deleted too (save a run first to keep a copy).")
        answer = QMessageBox.question(self, self.tr("Remove runs"), question)
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_selected()

    def remove_selected(self) -> None:
        for run in self.selected():
            try:
                self.model.remove(run.id)
            except OutputError as exc:
                self.show_error(self.tr("Cannot remove the run"), str(exc))

    def save_selected(self, path: str | None = None) -> bool:
        run = self._one(self.tr("Save…"))
        if run is None:
            return False
        if path is None:
            kind = self.tr("SOM Studio run")
            start = str(Path(self._folder("runs")) / f"{run.name}{SUFFIX}")
            path, _ = QFileDialog.getSaveFileName(self, self.tr("Save run"), start, f"{kind} (*{SUFFIX})")
            if not path:
                return False
            self._remember_folder("runs", path)
        try:
            run.save(path, force=True)  # the file dialog asked before replacing
        except OutputError as exc:
            self.show_error(self.tr("Cannot save the run"), str(exc))
            return False
        self.status.emit(self.tr("Saved {name} to {path}").format(name=run.name, path=path))
        return True

    def export_runs(self) -> None:
        """Ask where, then write the ticked runs' records (all when none is ticked) as the ``--json`` document."""
        if not self.model.records:
            message = self.tr("No run has finished yet: run a configuration first ({shortcut}).")
            self.show_error(self.tr("Nothing to export"), message.format(shortcut="Ctrl+R"))
            return
        start = str(Path(self._folder("export")) / "som-runs.json")
        path, _ = QFileDialog.getSaveFileName(self, self.tr("Export runs as JSON"), start, "JSON (*.json)")
        if path:
            self._remember_folder("export", path)
            self.write_runs(path)

    def write_runs(self, path: str) -> bool:
        """Write the export to ``path`` (replacing it: the file dialog has asked) through the comparison pipeline."""
        from som_studio.storage.writers import OutputError

        try:
            n = self.model.list.write_json(path)
        except (OutputError, ValueError) as exc:
            self.show_error(self.tr("Export failed"), str(exc))
            return False
        self.status.emit(self.tr("Wrote {n} run(s) to {path}").format(n=n, path=path))
        return True

    def open_runs(self, paths: list[str] | None = None) -> list[StoredRun]:
        if paths is None:
            kind = self.tr("SOM Studio run")
            paths, _ = QFileDialog.getOpenFileNames(
                self, self.tr("Open runs"), self._folder("runs"), f"{kind} (*{SUFFIX})"
            )
            if paths:
                self._remember_folder("runs", paths[0])
        opened = []
        for p in paths:
            try:
                run = StoredRun.load(p)
            except HistoryError as exc:
                self.show_error(self.tr("Cannot open the run"), str(exc))
                continue
            kept = self.model.history.find(run)
            if kept is not None:  # already listed (the history's own file, or a copy of it): not twice
                self.model.set_checked({r.id for r in self.model.checked_runs()} | {kept.id})
                self.status.emit(self.tr("{name} is already in the list").format(name=kept.name or kept.record.impl))
                opened.append(kept)
                continue
            opened.append(self.add_run(run, check=True))
        return opened

    def rerun_selected(self) -> None:
        run = self._one(self.tr("Re-run"))
        if run is None or self._rerun is None:
            return
        try:
            cfg = RunConfig.from_dict(run.record.config)
        except ConfigError as exc:
            message = self.tr("Its saved configuration is not valid: {error}").format(error=exc)
            self.show_error(self.tr("Cannot re-run"), message)
            return
        reason = self._rerun(cfg)
        if reason:
            self.show_error(self.tr("Cannot re-run"), reason)

    def _update_resume(self, *_: Any) -> None:
        runs = self.selected()
        self.resume_button.setEnabled(
            self._resume is not None and len(runs) == 1 and resumable(runs[0], self.model.runs)
        )

    def resume_selected(self) -> None:
        run = self._one(self.tr("Resume"))
        if run is None or self._resume is None:
            return
        if not resumable(run, self.model.runs):
            self.show_error(
                self.tr("Cannot resume"),
                self.tr(
                    "This run has no checkpoint to go on from: it ended, stopped before its first one, or a later "
                    "run went on from it."
                ),
            )
            return
        reason = self._resume(run)
        if reason:
            self.show_error(self.tr("Cannot resume"), reason)

    def show_selected(self) -> None:
        run = self._one(self.tr("Show"))
        if run is not None and self._show_run is not None:
            self._show_run(run)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.column() != 0 and self._show_run is not None:  # column 0: rename
            self._show_run(self.model.run_at(index.row()))

    def show_error(self, title: str, message: str) -> None:
        """A window-modal, non-blocking dialog naming the problem."""
        self.error_dialog = box = dialogs.show_error(self, title, message)  # kept while open: tests read it
        box.finished.connect(lambda _=0: setattr(self, "error_dialog", None))
