"""The central area's pages: the map first, and beside it the views that need room of their own.

Runs, the comparison and the sharding view (and any page added later: one
:meth:`Pages.add_page` call) each get the whole central area when chosen,
instead of a dock that halves the window. Each page has a View-menu action
with the shortcut Ctrl+1, Ctrl+2… in the order the pages were added.

Threads: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMenu, QTabWidget, QWidget


class Pages(QTabWidget):
    """Pages, one shown at a time; ``page_shown(key)`` when another is chosen.

    The View menu lists them once :meth:`set_menu` gave it; pages added later join it.
    """

    page_shown = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("pages")
        self.setDocumentMode(True)  # a flat tab bar: the page below keeps the room a frame would take
        self.keys: list[str] = []
        self.actions_by_key: dict[str, QAction] = {}
        self._group = QActionGroup(self)
        self._menu: QMenu | None = None
        self._before: QAction | None = None
        self.currentChanged.connect(self._on_current_changed)

    def add_page(self, key: str, title: str, widget: QWidget, tip: str = "") -> QWidget:
        """Add ``widget`` as the page ``key`` titled ``title`` (already translated); returns the widget."""
        self.addTab(widget, title)
        i = self.count() - 1
        if tip:
            self.setTabToolTip(i, tip)
        self.keys.append(key)
        action = QAction(title, self)
        action.setCheckable(True)
        if i < 9:
            action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
        if tip:
            action.setToolTip(tip)
        action.triggered.connect(lambda _=False, k=key: self.show_page(k))
        self._group.addAction(action)
        self.actions_by_key[key] = action
        if self._menu is not None:
            self._menu.insertAction(self._before, action)  # type: ignore[arg-type]
        action.setChecked(self.currentIndex() == i)
        return widget

    def set_menu(self, menu: QMenu, before: QAction | None = None) -> None:
        """List the pages in ``menu`` (before ``before``, or at its end), and the pages added later too."""
        self._menu, self._before = menu, before
        for key in self.keys:
            menu.insertAction(before, self.actions_by_key[key])  # type: ignore[arg-type]

    def page(self, key: str) -> QWidget:
        w = self.widget(self.keys.index(key))
        assert w is not None
        return w

    def current_key(self) -> str:
        i = self.currentIndex()
        return self.keys[i] if 0 <= i < len(self.keys) else ""

    def show_page(self, key: str) -> None:
        self.setCurrentIndex(self.keys.index(key))

    def _on_current_changed(self, i: int) -> None:
        if 0 <= i < len(self.keys):
            self.actions_by_key[self.keys[i]].setChecked(True)
            self.page_shown.emit(self.keys[i])
