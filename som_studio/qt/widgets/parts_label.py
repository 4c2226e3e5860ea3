"""A summary of a few parts: on one line between dots where it fits, one part a line where it does not.

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

SEPARATOR = "   ·   "

# Within a part, no line break: not at its spaces, hyphens or slashes ("3.40 / s", "warm- / up", "ms/ / iteration").
_KEEP = str.maketrans({" ": "\u00a0", "-": "\u2011", "/": "/\u2060"})


class PartsLabel(QLabel):
    """Shows ``parts`` as ``a · b · c`` where the line fits its width, else each part on a line of its own.

    Wrapped at its spaces, the one line left a dot at a line's end ("median 2.57 ms/iteration ·") in a
    narrow dock; the parts stacked read as a list instead. A part is never broken inside.
    """

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._parts: tuple[str, ...] = ()
        self.setWordWrap(True)  # a single part wider than the dock wraps rather than widening it
        self.set_parts([text] if text else [])

    def parts(self) -> tuple[str, ...]:
        return self._parts

    def set_parts(self, parts: Iterable[str]) -> None:
        self._parts = tuple(p.translate(_KEEP) for p in parts)
        self._fit()

    def _fit(self) -> None:
        line = SEPARATOR.join(self._parts)
        room = self.contentsRect().width() - 2 * max(0, self.margin())
        stacked = len(self._parts) > 1 and room > 0 and self.fontMetrics().horizontalAdvance(line) > room
        text = "\n".join(self._parts) if stacked else line
        if text != self.text():  # a new text lays its window out again: only when it changed
            self.setText(text)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()
