"""The one list of runs: the persistent run history, as a table every view shares.

:class:`RunsModel` is a table adapter over :class:`~som_studio.storage.RunHistory`
(every run the app finished, saved as it finished, so it survives a restart).
Its first column holds each run's name, editable, with a tick box: the ticked
runs are the ones the comparison view compares. :class:`RunsPanel` is the
"Runs" dock: the table and what can be done to a run (rename, remove, save to
and open from a file, re-run, show again).

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
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

from som_studio.app_model.runs import COLUMNS, RunList, row_texts, run_tooltip
from som_studio.config import ConfigError, RunConfig
from som_studio.qt import dialogs
from som_studio.qt.project_dialog import ProjectData
from som_studio.report.writers import OutputError
from som_studio.session.record import RunRecord
from som_studio.storage import SUFFIX, HistoryError, RunHistory, StoredRun


class RunsModel(QAbstractTableModel):
    """The kept runs, oldest first; the name column is editable and has the compare tick.

    Every change goes through to the history's files at once; a change that
    cannot be written raises :class:`OutputError` (or ``ValueError`` for a
    blank name) and leaves the model as it was.
    ``checked_changed`` fires when the set of ticked runs (or a ticked run's name) changes.
    """

    COLUMNS = COLUMNS
    checked_changed = Signal()
    rename_failed = Signal(str)

    def __init__(self, history: RunHistory, parent: Any = None) -> None:
        super().__init__(parent)
        self.history = history
        self.list = RunList(history)  # the runs and the ticks, without Qt

    # -- the runs ------------------------------------------------------------------------
    @property
    def runs(self) -> list[StoredRun]:
        return self.history.runs

    @property
    def records(self) -> list[RunRecord]:
        return self.list.records

    def run_at(self, row: int) -> StoredRun:
        return self.history.runs[row]

    def row_of(self, run_id: str) -> int:
        return self.list.row_of(run_id)

    def unique_name(self, name: str, run_id: str | None = None) -> str:
        """``name``, or ``name (2)``, ``(3)``... if another run has it (see :meth:`RunList.unique_name`)."""
        return self.list.unique_name(name, run_id)

    def add(self, run: StoredRun, check: bool = False) -> StoredRun:
        """Keep ``run`` (saved at once, named apart from the others); if it cannot be saved it is
        listed until the app closes, and the error re-raised."""
        n = len(self.history.runs)
        self.beginInsertRows(QModelIndex(), n, n)
        try:
            kept, error = self.list.add(run, check)
        finally:
            self.endInsertRows()
        if check:
            self.checked_changed.emit()
        if error is not None:
            raise error
        return kept

    def remove(self, run_id: str) -> None:
        row = self.row_of(run_id)
        self.beginRemoveRows(QModelIndex(), row, row)
        try:
            was_checked = self.list.remove(run_id)
        finally:
            self.endRemoveRows()
        if was_checked:
            self.checked_changed.emit()

    def checked_runs(self) -> list[StoredRun]:
        """The ticked runs, in the history's order."""
        return self.list.checked_runs()

    def set_checked(self, run_ids: list[str] | set[str]) -> None:
        self.list.set_checked(run_ids)
        if self.history.runs:
            self.dataChanged.emit(
                self.index(0, 0), self.index(len(self.history.runs) - 1, 0), [Qt.ItemDataRole.CheckStateRole]
            )
        self.checked_changed.emit()

    # -- Qt's table interface -------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.history.runs)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.COLUMNS)

    def headerData(
        self,
        section: int,
        orientation: Qt.Orientation,
        role: int = Qt.ItemDataRole.DisplayRole,
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal:
            if role == Qt.ItemDataRole.DisplayRole:
                return self.COLUMNS[section]
            if role == Qt.ItemDataRole.ToolTipRole and section == 0:
                return "Tick runs to compare them; double-click a name to rename it"
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        f = super().flags(index)
        if index.column() == 0:
            f |= Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable
        return f

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        run = self.history.runs[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.CheckStateRole and col == 0:
            return Qt.CheckState.Checked if self.list.is_checked(run.id) else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.UserRole:
            return run.id
        if role == Qt.ItemDataRole.EditRole and col == 0:
            return run.name
        if role == Qt.ItemDataRole.TextAlignmentRole and 5 <= col <= 10:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return run_tooltip(run)
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return row_texts(run)[col]

    def setData(
        self,
        index: QModelIndex | QPersistentModelIndex,
        value: Any,
        role: int = Qt.ItemDataRole.EditRole,
    ) -> bool:
        if index.column() != 0:
            return False
        run = self.history.runs[index.row()]
        if role == Qt.ItemDataRole.CheckStateRole:
            on = Qt.CheckState(value) == Qt.CheckState.Checked
            self.list.check(run.id, on)
            self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
            self.checked_changed.emit()
            return True
        if role == Qt.ItemDataRole.EditRole:
            name = str(value).strip()
            if name == run.name:
                return False
            problem = self.list.rename_problem(run, name)
            if problem:
                self.rename_failed.emit(problem)
                return False
            try:
                self.history.rename(run.id, name)
            except (ValueError, OutputError) as exc:
                self.rename_failed.emit(str(exc))
                return False
            self.dataChanged.emit(index, index)
            if self.list.is_checked(run.id):
                self.checked_changed.emit()  # the comparison shows names
            return True
        return False


class RunsPanel(QWidget):
    """The "Runs" dock: the run history's table and what can be done to its runs.

    Parameters
    ----------
    model : the shared run list.
    rerun : starts a configuration; returns ``""`` or why it could not start.
    show_run : shows a kept run again in the live views (double-click, or Show).
    """

    status = Signal(str)

    def __init__(
        self,
        model: RunsModel,
        rerun: Callable[[RunConfig], str] | None = None,
        show_run: Callable[[StoredRun], None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.model = model
        self._rerun = rerun
        self._show_run = show_run
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
        self.table.setColumnWidth(0, 170)
        self.table.setToolTip(
            "Tick runs to compare them (Compare tab); double-click a name to rename it, "
            "another cell to show the run again"
        )
        self.table.doubleClicked.connect(self._on_double_clicked)
        model.rename_failed.connect(lambda text: self.show_error("Cannot rename the run", text))
        model.rowsInserted.connect(self._on_rows_inserted)
        self.table.resizeColumnsToContents()

        self.show_button = QPushButton("Show")
        self.show_button.setToolTip("Show the selected run again: its final map, timings and quality")
        self.remove_button = QPushButton("Remove")
        self.save_button = QPushButton("Save…")
        self.open_button = QPushButton("Open…")
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run the selected run's configuration again")
        self.show_button.clicked.connect(self.show_selected)
        self.remove_button.clicked.connect(self.ask_remove_selected)
        self.save_button.clicked.connect(lambda: self.save_selected())
        self.open_button.clicked.connect(lambda: self.open_runs())
        self.rerun_button.clicked.connect(self.rerun_selected)
        remove = QAction("Remove", self.table)
        remove.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        remove.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        remove.triggered.connect(self.ask_remove_selected)
        self.table.addAction(remove)
        self.remove_button.setToolTip("Remove the selected runs from the list and their files (Delete)")
        self.show_button.setEnabled(show_run is not None)
        self.rerun_button.setEnabled(rerun is not None)
        self.projector = ProjectData(self._one, self)  # Project data… and Export units…
        self.projector.status.connect(self.status)
        buttons = QHBoxLayout()
        for b in (self.show_button, self.rerun_button, *self.projector.buttons, self.save_button):
            buttons.addWidget(b)
        for b in (self.open_button, self.remove_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.table, 1)
        lay.addLayout(buttons)

    def _on_rows_inserted(self, *_: Any) -> None:
        self.table.resizeColumnsToContents()
        self.table.scrollToBottom()

    # -- acting on runs ------------------------------------------------------------------
    def selected(self) -> list[StoredRun]:
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.model.run_at(r) for r in rows]

    def select(self, run_id: str) -> None:
        self.table.selectRow(self.model.row_of(run_id))

    def _one(self, what: str) -> StoredRun | None:
        runs = self.selected() or self.model.checked_runs()
        if len(runs) != 1:
            self.show_error(what, f"Select one run to {what.lower()} it.")
            return None
        return runs[0]

    def add_run(self, run: StoredRun, check: bool = False) -> StoredRun:
        """Keep ``run`` in the history (saved at once) and list it."""
        try:
            return self.model.add(run, check=check)
        except OutputError as exc:
            self.show_error("Cannot keep the run", f"{exc}\nThe run is listed until the app closes.")
            return run

    def ask_remove_selected(self) -> None:
        """Remove the selected runs once the user agrees: their files go too, for good."""
        runs = self.selected()
        if not runs:
            self.status.emit("Select the runs to remove first")
            return
        what = f"the run {runs[0].name!r}" if len(runs) == 1 else f"{len(runs)} runs"
        answer = QMessageBox.question(
            self,
            "Remove runs",
            f"Remove {what} from the list? Its saved file is deleted too (save it first to keep a copy).",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.remove_selected()

    def remove_selected(self) -> None:
        for run in self.selected():
            try:
                self.model.remove(run.id)
            except OutputError as exc:
                self.show_error("Cannot remove the run", str(exc))

    def save_selected(self, path: str | None = None) -> bool:
        run = self._one("Save")
        if run is None:
            return False
        if path is None:
            path, _ = QFileDialog.getSaveFileName(
                self, "Save run", f"{run.name}{SUFFIX}", f"SOM Studio run (*{SUFFIX})"
            )
            if not path:
                return False
        try:
            run.save(path, force=True)  # the file dialog asked before replacing
        except OutputError as exc:
            self.show_error("Cannot save the run", str(exc))
            return False
        self.status.emit(f"Saved {run.name} to {path}")
        return True

    def export_runs(self) -> None:
        """Ask where, then write the ticked runs' records (all when none is ticked) as the ``--json`` document."""
        if not self.model.records:
            self.show_error("Nothing to export", "No run has finished yet: run a configuration first (Ctrl+R).")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export runs as JSON", "som-runs.json", "JSON (*.json)")
        if path:
            self.write_runs(path)

    def write_runs(self, path: str) -> bool:
        """Write the export to ``path`` (replacing it: the file dialog has asked) through the comparison pipeline."""
        from som_studio.report.writers import OutputError

        try:
            n = self.model.list.write_json(path)
        except (OutputError, ValueError) as exc:
            self.show_error("Export failed", str(exc))
            return False
        self.status.emit(f"Wrote {n} run(s) to {path}")
        return True

    def open_runs(self, paths: list[str] | None = None) -> list[StoredRun]:
        if paths is None:
            paths, _ = QFileDialog.getOpenFileNames(self, "Open runs", "", f"SOM Studio run (*{SUFFIX})")
        opened = []
        for p in paths:
            try:
                run = StoredRun.load(p)
            except HistoryError as exc:
                self.show_error("Cannot open the run", str(exc))
                continue
            kept = self.model.history.find(run)
            if kept is not None:  # already listed (the history's own file, or a copy of it): not twice
                self.model.set_checked({r.id for r in self.model.checked_runs()} | {kept.id})
                self.status.emit(f"{kept.name or kept.record.impl} is already in the list")
                opened.append(kept)
                continue
            opened.append(self.add_run(run, check=True))
        return opened

    def rerun_selected(self) -> None:
        run = self._one("Re-run")
        if run is None or self._rerun is None:
            return
        try:
            cfg = RunConfig.from_dict(run.record.config)
        except ConfigError as exc:
            self.show_error("Cannot re-run", f"its saved configuration is not valid: {exc}")
            return
        reason = self._rerun(cfg)
        if reason:
            self.show_error("Cannot re-run", reason)

    def show_selected(self) -> None:
        run = self._one("Show")
        if run is not None and self._show_run is not None:
            self._show_run(run)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.column() != 0 and self._show_run is not None:  # column 0: rename
            self._show_run(self.model.run_at(index.row()))

    show_error = dialogs.show_error  # a window-modal, non-blocking dialog naming the problem
