"""The comparison's summary table as a Qt model: text to show, numbers to sort on.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from som_studio.app_model.form import app_message
from som_studio.app_model.runs import kind_text, status_text
from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.report.content import Report

# The report's headings (its keys: Report.SUMMARY_HEADER) as this table shows them; names and units as they are.
HEADINGS = {
    "implementation": QT_TRANSLATE_NOOP("SummaryModel", "implementation"),
    "kind": QT_TRANSLATE_NOOP("SummaryModel", "kind"),
    "status": QT_TRANSLATE_NOOP("SummaryModel", "status"),
    "layout": QT_TRANSLATE_NOOP("SummaryModel", "layout"),
    "compile": QT_TRANSLATE_NOOP("SummaryModel", "compile"),
    "median / it": QT_TRANSLATE_NOOP("SummaryModel", "median / it"),
    "p95 / it": QT_TRANSLATE_NOOP("SummaryModel", "p95 / it"),
    "mean / it": QT_TRANSLATE_NOOP("SummaryModel", "mean / it"),
    "total": QT_TRANSLATE_NOOP("SummaryModel", "total"),
    "speed-up": QT_TRANSLATE_NOOP("SummaryModel", "speed-up"),
    "end-to-end": QT_TRANSLATE_NOOP("SummaryModel", "end-to-end"),
    "faster after": QT_TRANSLATE_NOOP("SummaryModel", "faster after"),
    "peak memory": QT_TRANSLATE_NOOP("SummaryModel", "peak memory"),
}


def heading(key: str) -> str:
    """Column ``key`` of the summary, in the language in use."""
    return QCoreApplication.translate("SummaryModel", HEADINGS[key]) if key in HEADINGS else key


class SummaryModel(QAbstractTableModel):
    """The report's summary table; sorts on the raw numbers (``Qt.UserRole``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._header = list(Report.SUMMARY_HEADER)
        self._rows: list[list[str]] = []
        self._values: list[dict[str, Any]] = []
        self._messages: list[str] = []

    def set_report(self, report: Report | None) -> None:
        self.beginResetModel()
        self._rows = report.summary_rows() if report else []
        self._values = report.summary_values() if report else []
        self._messages = [app_message(r.record.message) for r in report.runs] if report else []
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._header)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return heading(self._header[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        r, c = index.row(), index.column()
        key = self._header[c]
        if role == Qt.ItemDataRole.DisplayRole:
            text = self._rows[r][c]
            return status_text(text) if key == "status" else kind_text(text) if key == "kind" else text
        if role == Qt.ItemDataRole.UserRole:
            v = self._values[r][key]
            if isinstance(v, str):
                return v
            return float("inf") if v is None else float(v)  # missing numbers sort last
        if role == Qt.ItemDataRole.TextAlignmentRole and c >= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and self._messages[r]:
            return self._messages[r]
        return None
