"""Docks that must open tall enough to show what they hold."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

MIN_HEIGHT = 460
"""The least height that shows the Compare dock's table (a few rows) and its final maps."""


def show_with_room(window: QMainWindow, dock: QDockWidget, visible: bool = True) -> None:
    """Show ``dock`` (asked for, or its tab chosen) at least 55 % of ``window`` tall, and never under
    :data:`MIN_HEIGHT`: at 1600x1000 it opened 279 pixels tall, two table rows and the maps' titles
    only. A floating dock, or one being hidden (``visible`` false), is left as it is."""
    if not visible or dock.isFloating():
        return
    dock.show()
    dock.raise_()
    want = max(MIN_HEIGHT, window.height() * 11 // 20)
    if dock.height() < want:
        window.resizeDocks([dock], [want], Qt.Orientation.Vertical)
