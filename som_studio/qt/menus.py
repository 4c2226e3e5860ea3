"""The main window's menus and run buttons, laid out from the actions the window made.

The window owns its actions (``MainWindow.run_action`` …); here they are placed in
the menu bar (File, Run, View with Language, Help) and in the run bar beside the
pages' tabs, and the note that a language chosen takes effect at the next start is made.

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMenuBar, QMessageBox, QToolBar, QWidget

from som_studio.qt.i18n import restart_note

translate = QCoreApplication.translate


def add_menus(bar: QMenuBar, menus: Mapping[str, tuple[str, Iterable[QAction | None]]]) -> dict[str, QMenu]:
    """Add a menu to ``bar`` for each ``key: (title, actions)`` (``None``: a separator); the menus by key.

    The keys are the menus' English names (tests and the window find them so); the titles are in
    the language in use.
    """
    made: dict[str, QMenu] = {}
    for key, (title, actions) in menus.items():
        made[key] = menu = bar.addMenu(title)
        for a in actions:
            menu.addSeparator() if a is None else menu.addAction(a)
    return made


def run_bar(actions: Sequence[QAction]) -> QToolBar:
    """Run, Pause and Stop as text buttons: they sit at the right of the pages' tab bar, a row less above the map."""
    bar = QToolBar(translate("MainWindow", "Run"))
    bar.setObjectName("toolbar_run")
    bar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    for a in actions:
        bar.addAction(a)
    return bar


def restart_note_box(parent: QWidget, code: str, saved: bool) -> QMessageBox:
    """Say (non-blocking) that language ``code`` takes effect at the next start, or that it could not be saved."""
    box = QMessageBox(
        QMessageBox.Icon.Information if saved else QMessageBox.Icon.Warning,
        translate("MainWindow", "Language"),
        restart_note(code, saved),
        QMessageBox.StandardButton.Ok,
        parent,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box
