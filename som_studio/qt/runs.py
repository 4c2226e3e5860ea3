"""The one list of runs: the persistent run history, as a table every view shares.

:class:`RunsModel` is a table adapter over :class:`~som_studio.storage.RunHistory`
(every run the app finished, saved as it finished, so it survives a restart).
Its first column holds each run's name, editable, with a tick box: the ticked
runs are the ones the comparison view compares. :class:`RunsPanel` is the
"Runs" dock (:mod:`som_studio.qt.runs_panel`).

Threads: GUI thread only (the history writes its files on a thread of its own; their ends come back here).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from som_studio.app_model.runs import (
    COLUMNS,
    DIFFERS_COLUMN,
    NUMBER_COLUMNS,
    RunList,
    differing_settings,
    row_texts,
    run_tooltip,
)
from som_studio.i18n import _
from som_studio.session.record import RunRecord
from som_studio.storage import RunHistory, StoredRun
from som_studio.storage.writers import OutputError


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
    save_failed = Signal(str)  # why a run's file could not be written (the run stays listed until the app closes)
    _written = Signal(object)  # a run's write ended (a Future), emitted on the history's writer thread

    def __init__(self, history: RunHistory, parent: Any = None) -> None:
        super().__init__(parent)
        self.history = history
        self.list = RunList(history)  # the runs and the ticks, without Qt
        self._differs: dict[str, str] = {}  # per ticked run: its settings that differ from the others'
        self.checked_changed.connect(self._on_checked_changed)
        self._written.connect(self._on_written)

    def _on_checked_changed(self) -> None:
        self._differs = differing_settings(self.list.checked_runs())
        if self.history.runs:
            last = len(self.history.runs) - 1
            self.dataChanged.emit(self.index(0, DIFFERS_COLUMN), self.index(last, DIFFERS_COLUMN))

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
        """Keep ``run`` (listed at once, named apart from the others), its file written off the GUI thread;
        one that cannot be saved is listed until the app closes, and ``save_failed`` says why."""
        n = len(self.history.runs)
        self.beginInsertRows(QModelIndex(), n, n)
        try:
            kept, saving = self.list.add(run, check)
        finally:
            self.endInsertRows()
        if check:
            self.checked_changed.emit()
        saving.add_done_callback(self._written.emit)  # on the writer thread: queued to this one
        return kept

    def _on_written(self, saving: Future[Any]) -> None:
        exc = saving.exception()
        if exc is not None:
            self.save_failed.emit(str(exc) if isinstance(exc, OutputError) else f"{type(exc).__name__}: {exc}")

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
                return _(self.COLUMNS[section])  # marked N_ in app_model.runs
            if role == Qt.ItemDataRole.ToolTipRole and section == 0:
                return self.tr("Tick runs to compare them; double-click a name to rename it")
            if role == Qt.ItemDataRole.ToolTipRole and section == DIFFERS_COLUMN:
                return self.tr("The settings in which the ticked runs differ, each run's value")
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
        if role == Qt.ItemDataRole.TextAlignmentRole and col in NUMBER_COLUMNS:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            differs = self._differs.get(run.id, "") if col == DIFFERS_COLUMN else ""
            return differs or run_tooltip(run)  # the whole of a long difference, which its column elides
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        return row_texts(run, self._differs.get(run.id, ""))[col]

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
