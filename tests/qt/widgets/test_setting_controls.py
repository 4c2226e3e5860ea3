"""Controls made from a setting's declaration: one per kind, sending what the user sets, showing the form's values."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

from PySide6.QtWidgets import QCheckBox, QComboBox, QLineEdit, QSpinBox  # noqa: E402

from som_studio.app_model.form import RunForm, control_value  # noqa: E402
from som_studio.config import Control, Init, Setting, parse_number  # noqa: E402
from som_studio.qt.widgets.setting_controls import SettingControls  # noqa: E402


def declared(name: str, control: Control, default: object = None, **kw: object) -> Setting:
    # Labels of real settings, so the controls are named as the app names them.
    return Setting(name=name, flag=f"--{name}", help="h", label="Seed", control=control, default=default, **kw)


SETTINGS = (
    declared("seed", Control.CHECK, False),
    declared("init", Control.CHOICE, None, choices=Init),
    declared("clusters", Control.COUNT),
    declared("lr_end", Control.NUMBER, 0.5, parse=parse_number),
)


def test_each_kind_gets_its_control_and_sends_the_users_value(qtbot):
    controls = SettingControls(SETTINGS)
    qtbot.addWidget(controls)
    kinds = [type(controls.controls[s.name]) for s in SETTINGS]
    assert kinds == [QCheckBox, QComboBox, QSpinBox, QLineEdit]
    sent: list[tuple[str, object]] = []
    controls.edited.connect(lambda name, value: sent.append((name, value)))
    controls.controls["seed"].setChecked(True)
    controls.controls["init"].setCurrentText("pca")
    controls.controls["clusters"].setValue(4)
    controls.controls["lr_end"].setText("0.125")
    assert sent == [("seed", True), ("init", "pca"), ("clusters", 4), ("lr_end", "0.125")]
    assert [control_value(s, v) for s, (_n, v) in zip(SETTINGS, sent)] == [True, Init.PCA, 4, 0.125]


def test_showing_values_sends_nothing(qtbot):
    controls = SettingControls(SETTINGS)
    qtbot.addWidget(controls)
    sent: list[object] = []
    controls.edited.connect(lambda *a: sent.append(a))
    controls.show_values({"seed": True, "init": "sample", "clusters": 7, "lr_end": 0.25})
    assert sent == []
    assert controls.controls["seed"].isChecked() and controls.controls["init"].currentText() == "sample"
    assert controls.controls["clusters"].value() == 7 and controls.controls["lr_end"].text() == "0.25"


def test_no_settings_no_section(qtbot):
    controls = SettingControls(())
    qtbot.addWidget(controls)
    assert controls.isHidden()


def test_the_form_keeps_a_setting_with_no_control_of_its_own():
    form = RunForm()
    form.edit(note_for_later="x")
    assert form.fields.extra == {"note_for_later": "x"}
