"""Help > Doctor: the report of `som-studio doctor`, made in a worker process, shown and copied."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QGuiApplication

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def test_help_menu_shows_the_doctor_report_and_copies_it(qtbot, window):
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert window.doctor_action in menus["Help"].actions()
    window.doctor_action.trigger()
    dialog = window.doctor_dialog
    assert dialog.isVisible() and "Checking the environment" in dialog.text.toPlainText()  # the GUI did not wait
    with qtbot.waitSignal(dialog.report_ready, timeout=WAIT_MS):
        pass  # the report arrives through the event loop
    text = dialog.text.toPlainText()
    # The report of `som-studio doctor`, made in a worker process: this process never started JAX's backend.
    assert text.startswith("SOM Studio") and "Versions" in text and "Findings" in text
    assert "backend" in text and "cpu" in text
    dialog.copy()
    assert QGuiApplication.clipboard().text() == text
    dialog.close()
    assert not dialog.probe.running
