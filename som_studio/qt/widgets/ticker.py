"""A line of text that changes many times a second (a run's iteration, its clock) without laying out its window.

Threads: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

MARGIN = 2  # pixels either side of the text


class TickerLabel(QWidget):
    """One line of text that a live run updates with each frame or tick.

    A :class:`~PySide6.QtWidgets.QLabel` asks for its window's layout again with each new text
    (``updateGeometry``), and a tab widget repaints all of itself after each layout: a counter in a
    label beside the map repainted the whole page, its tool bar and legend included, with every frame.
    This one is as wide as the widest text it has shown since it was last cleared, so a new text of
    no greater width repaints the label alone; and it fills its own background, so that repaint
    does not paint every widget under it again (the window, the pages, the page: measured, each
    one paint per frame for a transparent label).
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self._width = 0
        self.setAutoFillBackground(True)  # opaque: Qt paints nothing beneath it
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setText(text)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        """Show ``text``; the label grows when it is wider than any shown since the last ``""``."""
        if text == self._text:
            return
        self._text = text
        width = self.fontMetrics().horizontalAdvance(text) if text else 0
        if width > self._width or not text:
            self._width = width
            self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(self._width + 2 * MARGIN if self._width else 0, self.fontMetrics().height())

    def minimumSizeHint(self) -> QSize:
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setPen(self.palette().color(self.foregroundRole()))
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.rect().adjusted(MARGIN, 0, -MARGIN, 0), int(flags), self._text)
        painter.end()
