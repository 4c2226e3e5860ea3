"""The main window's actions, menus and run buttons (File, Run, View with Language, Help).

Built here, not in the window, to keep :mod:`som_studio.qt.main_window` a
short wiring of views. Every text is translated in the ``MainWindow`` context.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QMessageBox, QToolBar

from som_studio.qt import dialogs
from som_studio.qt.i18n import LanguageMenu, restart_note

if TYPE_CHECKING:
    from som_studio.qt.main_window import MainWindow


translate = QCoreApplication.translate


def make_actions(win: MainWindow) -> None:
    """Give ``win`` its actions (``run_action``… ``doctor_action``), its menus (``win.menus``) and run buttons.

    Run, Pause and Stop sit at the right of the pages' tab bar (``win.run_bar``), not in a tool bar
    of their own: a row less above the map."""

    def action(text: str, slot: Any, shortcut: Any = None, tip: str = "") -> Any:
        return dialogs.action(win, text, slot, shortcut, tip)

    win.run_action = action(translate("MainWindow", "&Run"), lambda: win.start_run(), "Ctrl+R")
    win.pause_action = action(translate("MainWindow", "&Pause"), win.controller.toggle_pause, "Ctrl+P")
    win.stop_action = action(translate("MainWindow", "&Stop"), win.controller.stop, Qt.Key.Key_Escape)
    win.open_action = action(translate("MainWindow", "&Open run…"), lambda: win.runs_panel.open_runs(), "Ctrl+O")
    tip = translate("MainWindow", "The ticked runs' full records (all kept runs when none is ticked)")
    win.export_action = action(
        translate("MainWindow", "&Export runs as JSON…"), lambda: win.runs_panel.export_runs(), "Ctrl+E", tip
    )
    tip = translate("MainWindow", "Choose a table (.npy or .csv) for the Run panel's data")
    win.open_data_action = action(
        translate("MainWindow", "Open &data…"), lambda: win.panel.choose_data_file(), "Ctrl+Shift+O", tip
    )
    tip = translate("MainWindow", "Put the window's panels back where they start, the map the largest")
    win.reset_layout_action = action(translate("MainWindow", "&Reset layout"), win.reset_layout, tip=tip)
    tip = translate("MainWindow", "{name}: a hex map, ready to run").format(name="iris")
    win.example_action = action(translate("MainWindow", "Open e&xample data"), win.panel.open_example, tip=tip)
    tip = translate("MainWindow", "Run your own implementation, a class in a Python file, beside the built-in ones")
    win.add_impl_action = action(translate("MainWindow", "Add &implementation…"), win.user_impls.ask, tip=tip)
    win.quit_action = action(translate("MainWindow", "&Quit"), win.close, QKeySequence.StandardKey.Quit)
    if win.quit_action.shortcut().isEmpty():  # not every platform names one
        win.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
    win.about_action = action(translate("MainWindow", "&About SOM Studio"), win.show_about)
    tip = translate(
        "MainWindow", "Check Python, JAX, the GPU driver, memory settings and the display ({command})"
    ).format(command="som-studio doctor")
    win.doctor_action = action(translate("MainWindow", "Environment &doctor…"), win.show_doctor, tip=tip)
    run_actions = (win.run_action, win.pause_action, win.stop_action)
    bar = win.menuBar()
    # Keyed by their English names (tests and the window find them so); titled in the language in use.
    menus = {
        "&File": (
            translate("MainWindow", "&File"),
            (
                win.open_data_action,
                win.open_action,
                win.example_action,
                win.add_impl_action,
                win.export_action,
                None,
                win.quit_action,
            ),
        ),
        "&Run": (translate("MainWindow", "&Run"), run_actions),
        # The pages (added by the window, before the docks), the docks, then Reset layout.
        "&View": (
            translate("MainWindow", "&View"),
            (*(d.toggleViewAction() for d in win.docks.values()), None, win.reset_layout_action),
        ),
        "&Help": (translate("MainWindow", "&Help"), (win.doctor_action, None, win.about_action)),
    }
    win.menus = {}
    for key, (title, actions) in menus.items():
        win.menus[key] = m = bar.addMenu(title)
        for a in actions:
            m.addSeparator() if a is None else m.addAction(a)
    win.language_menu = LanguageMenu(win.settings, win.menus["&View"])
    win.language_menu.language_chosen.connect(lambda code: show_restart_note(win, code))
    win.menus["&View"].addSeparator()
    win.menus["&View"].addMenu(win.language_menu)
    tb = QToolBar(translate("MainWindow", "Run"))
    tb.setObjectName("toolbar_run")
    tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
    for a in run_actions:
        tb.addAction(a)
    win.run_bar = tb


def show_restart_note(win: MainWindow, code: str) -> QMessageBox:
    """Say that the language chosen takes effect at the next start (non-blocking; kept as ``win.language_note``)."""
    saved = win.language_menu.saved
    box = QMessageBox(
        QMessageBox.Icon.Information if saved else QMessageBox.Icon.Warning,
        translate("MainWindow", "Language"),
        restart_note(code, saved),
        QMessageBox.StandardButton.Ok,
        win,
    )
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    win.language_note = box
    box.finished.connect(lambda _=0: setattr(win, "language_note", None))
    box.open()
    return box
