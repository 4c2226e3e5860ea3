"""Help > Environment doctor: ``som-studio doctor``'s report in a dialog, with a Copy button.

The report starts JAX and runs ``nvidia-smi``, so it is made in a short-lived
worker process (:func:`som_studio.worker.process.doctor_report`); the dialog
opens at once and fills in when the answer comes.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.qt.probe import DeviceProbe

WAITING = QT_TRANSLATE_NOOP(
    "DoctorDialog", "Checking the environment (starting JAX and asking {tool} in a separate process)…"
)  # shown through translate()


class DoctorDialog(QDialog):
    """Shows the environment doctor's report; ``report_ready(dict)`` fires when it has arrived."""

    @classmethod
    def show_for(cls, parent: QWidget, dialog: DoctorDialog | None = None) -> DoctorDialog:
        """Show ``dialog`` (a new one for ``parent`` when ``None``) and ask for a fresh report."""
        if dialog is None:
            dialog = cls(parent)
        dialog.show()
        dialog.raise_()
        dialog.check()
        return dialog

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Environment doctor"))
        self.resize(760, 560)
        self.probe = DeviceProbe(self, target="doctor_report")
        self.report_ready = self.probe.info_ready
        self.intro = QLabel(
            self.tr(
                "What {command} reports for this machine: versions, the JAX backend "
                "and devices, the GPU driver, memory settings and the display, with fixes for what is "
                "wrong."
            ).format(command="<code>som-studio doctor</code>")
        )
        self.intro.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy_button = QPushButton(self.tr("Copy"))
        self.copy_button.setToolTip(self.tr("Copy the report to the clipboard (to paste it into a bug report)"))
        self.again_button = QPushButton(self.tr("Check again"))
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.again_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.copy_button.clicked.connect(self.copy)
        self.again_button.clicked.connect(self.check)
        lay = QVBoxLayout(self)
        lay.addWidget(self.intro)
        lay.addWidget(self.text, 1)
        lay.addWidget(buttons)
        self.probe.info_ready.connect(self._on_report)
        self.finished.connect(lambda _=0: self.probe.shutdown())

    def check(self) -> None:
        """Ask a worker process for a fresh report."""
        if self.probe.running:
            return
        self.text.setPlainText(QCoreApplication.translate("DoctorDialog", WAITING).format(tool="nvidia-smi"))
        self.copy_button.setEnabled(False)
        self.again_button.setEnabled(False)
        self.probe.start(None)  # the machine's own devices, as `som-studio doctor` sees them

    def _on_report(self, info: dict[str, Any]) -> None:
        if "text" in info:
            self.text.setPlainText(str(info["text"]))
        else:
            text = self.tr("The doctor could not finish: {error}\n\nRun {command} in a terminal.")
            error = info.get("error") or self.tr("no answer")
            self.text.setPlainText(text.format(error=error, command="`som-studio doctor`"))
        self.copy_button.setEnabled(True)
        self.again_button.setEnabled(True)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())


def _preview() -> None:  # python -m som_studio.qt.doctor_dialog
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    dialog = DoctorDialog()
    dialog.check()
    dialog.show()
    app.exec()


if __name__ == "__main__":
    _preview()
