"""An empty view that says what will appear there and how to make it appear.

:class:`EmptyState` lies over a view (the map, a plot, a table) while the view
has nothing to show: a centred, wrapped text on the window's own background,
covering the black picture or the invented axes below. The owner says when it
shows (``setVisible``) and what it says (:meth:`EmptyState.set_text`).

Threads: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QAbstractScrollArea, QLabel, QWidget


class EmptyState(QLabel):
    """A text over ``target`` (over its viewport, for a scrolling view), filling it and following its size.

    Parameters
    ----------
    target : the view it covers while the view is empty.
    text : what will appear there, and how (plain text; wrapped).
    name : its object name (tests and style sheets find it so).
    """

    def __init__(self, target: QWidget, text: str = "", name: str = "") -> None:
        host = target.viewport() if isinstance(target, QAbstractScrollArea) else target
        super().__init__(text, host)
        if name:
            self.setObjectName(name)
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMargin(16)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.Window)
        self.setForegroundRole(QPalette.ColorRole.WindowText)
        self._host = host
        host.installEventFilter(self)
        self.setGeometry(host.rect())
        self.raise_()

    def set_text(self, text: str) -> None:
        self.setText(text)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._host and event.type() == QEvent.Type.Resize:
            self.setGeometry(self._host.rect())
        return False
