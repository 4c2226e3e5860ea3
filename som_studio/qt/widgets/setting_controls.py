"""Controls made from the settings' declaration, for the settings the run panel does not lay out by hand.

A setting declared in :mod:`som_studio.config` with no control of its own in the run panel
(:data:`~som_studio.app_model.form.EXTRA_SETTINGS`) still gets one: its declared kind
(:class:`~som_studio.run_settings.Control`) picks the widget, its label names it, its help
(in the user's language) is the tooltip. What the user types is sent to the form as is; the form reads it with the
setting's ``parse`` and refuses it by the label, as it does every field.

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QComboBox, QFormLayout, QLineEdit, QSpinBox, QWidget

from som_studio.app_model.form import control_text, labels
from som_studio.config import MAX_ITERATIONS, Control, Setting
from som_studio.i18n import _
from som_studio.session.resolve import AUTO


class SettingControls(QWidget):
    """One control per setting in ``settings``; ``edited(name, value)`` after each change by the user."""

    edited = Signal(str, object)

    def __init__(self, settings: Sequence[Setting], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = tuple(settings)
        self.controls: dict[str, QWidget] = {}
        rows = QFormLayout(self)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        names = labels()
        for s in self.settings:
            w = self._make(s)
            # The help is the command line's, in the user's language where the catalogue has it.
            w.setToolTip(_(s.help).replace("%(default)s", str(s.default)))
            w.setObjectName(f"setting_{s.name}")
            self.controls[s.name] = w
            rows.addRow(names[s.name], w)
        self.setVisible(bool(self.settings))

    def _make(self, s: Setting) -> QWidget:
        def send(value: Any, name: str = s.name) -> None:
            self.edited.emit(name, value)

        if s.control == Control.CHECK:
            box = QCheckBox()
            box.toggled.connect(send)
            return box
        if s.control == Control.CHOICE and s.choices is not None:
            combo = QComboBox()
            if s.default is None:
                combo.addItem(AUTO)
            combo.addItems([str(c) for c in s.choices])
            combo.currentTextChanged.connect(send)
            return combo
        if s.control == Control.COUNT:
            spin = QSpinBox()
            spin.setRange(0, MAX_ITERATIONS)
            spin.setSpecialValueText(self.tr("none"))
            spin.valueChanged.connect(send)
            return spin
        edit = QLineEdit()  # numbers, text, columns: read by the setting's parse
        edit.setPlaceholderText(AUTO if s.default is None else str(control_text(s, s.default)))
        edit.textChanged.connect(send)
        return edit

    def show_values(self, values: Mapping[str, Any]) -> None:
        """Show the form's values (missing ones: the declared defaults), without emitting ``edited``."""
        for s in self.settings:
            w = self.controls[s.name]
            value = values.get(s.name, control_text(s, s.default))
            w.blockSignals(True)
            try:
                if isinstance(w, QCheckBox):
                    w.setChecked(bool(value))
                elif isinstance(w, QComboBox):
                    w.setCurrentText(str(value))
                elif isinstance(w, QSpinBox):
                    w.setValue(int(value or 0))
                elif isinstance(w, QLineEdit) and w.text() != str(value) and not w.hasFocus():
                    w.setText("" if value == s.default else str(value))
            finally:
                w.blockSignals(False)
