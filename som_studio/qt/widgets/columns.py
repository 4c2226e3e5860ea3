"""Columns a user arranges: a table's headings moved by dragging, hidden from their context menu, remembered.

Threads: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QObject, QPoint, Qt
from PySide6.QtWidgets import QMenu, QTableView


class ColumnChooser(QObject):
    """Lets the user move (drag a heading) and hide (right-click the headings) ``table``'s columns.

    The first column (what names a row) always stays. :meth:`state` and :meth:`restore` keep the
    arrangement between sessions (the window puts them in its settings).
    """

    def __init__(self, table: QTableView) -> None:
        super().__init__(table)
        self.table = table
        header = table.horizontalHeader()
        header.setSectionsMovable(True)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._on_menu)
        header.setToolTip(self.tr("Drag a heading to move its column; right-click to hide or show columns"))
        # A model reset (a table filled anew) would show every column again: the arrangement is kept.
        self._kept: QByteArray | None = None
        model = table.model()
        model.modelAboutToBeReset.connect(lambda: setattr(self, "_kept", header.saveState()))
        model.modelReset.connect(lambda: self.restore(self._kept))

    def menu(self) -> QMenu:
        """The columns, ticked when shown."""
        model, header = self.table.model(), self.table.horizontalHeader()
        menu = QMenu(self.tr("Columns"), self.table)
        for col in range(model.columnCount()):
            action = menu.addAction(str(model.headerData(col, Qt.Orientation.Horizontal)))
            action.setCheckable(True)
            action.setChecked(not header.isSectionHidden(col))
            action.setEnabled(col != 0)
            action.toggled.connect(lambda on, c=col: self.set_shown(c, on))
        return menu

    def _on_menu(self, pos: QPoint) -> None:
        self.menu().exec(self.table.horizontalHeader().mapToGlobal(pos))

    def set_shown(self, col: int, shown: bool) -> None:
        self.table.horizontalHeader().setSectionHidden(col, not shown)

    def state(self) -> QByteArray:
        """The columns' order, widths and hidden ones."""
        return self.table.horizontalHeader().saveState()

    def restore(self, state: QByteArray | None) -> None:
        """Columns as remembered; a state of another set of columns is not applied."""
        header = self.table.horizontalHeader()
        count = self.table.model().columnCount()
        if state is not None and header.restoreState(state) and header.count() != count:
            header.reset()
