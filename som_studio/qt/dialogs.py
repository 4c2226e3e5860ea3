"""Small dialogs shared by the app's views (GUI thread only)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget


def show_error(owner: QWidget, title: str, message: str) -> QMessageBox:
    """A window-modal, non-blocking dialog naming the problem, so the app stays usable.

    The open dialog is kept as ``owner.error_dialog`` (tests read it) until closed.
    """
    box = QMessageBox(QMessageBox.Icon.Critical, title, message, QMessageBox.StandardButton.Ok, owner)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    owner.error_dialog = box  # type: ignore[attr-defined]
    box.finished.connect(lambda _=0: setattr(owner, "error_dialog", None))
    box.open()
    return box
