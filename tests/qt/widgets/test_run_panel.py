"""The run panel's devices: what a worker reported, forgotten when the settings change, asked for when needed."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def test_devices_seen_with_other_settings_are_forgotten(window):
    p = window.panel
    p.set_cpu_devices(8)
    p.set_devices({"backend": "cpu", "devices": [{"kind": "cpu"}] * 8}, 8)
    assert p.devices_label.text() == "Devices: 8 × cpu (simulated)" and p.form.known_device_count() == 8
    p.simulate.setChecked(False)  # the machine's own devices: not known until a worker says
    assert p.form.known_device_count() is None and "not asked yet" in p.devices_label.text()


def test_a_layout_needing_several_devices_asks_which_there_are(qtbot, window):
    p = window.panel
    p.simulate.setChecked(False)
    p.grid.setCurrentText("8x6")
    p.impl.setCurrentIndex(p.impl.findData("jax-shardmap-batch"))
    with qtbot.waitSignal(window.probe.info_ready, timeout=WAIT_MS):
        p.layout_box.setCurrentText("2x2")  # this process's 8 simulated devices are not the worker's
    assert not window.run_action.isEnabled()
    # The session's layout refusal, with the app's control named where the CLI names --cpu-devices.
    assert p.reason_label.text() == (
        "Layout: layout 2x2 needs 4 devices (2 along data x 2 along map), but JAX sees 1 cpu device; "
        "simulate more with Layout's “simulate” box set to 4 CPU devices"
    )


def test_a_field_being_typed_in_keeps_its_text_when_the_form_changes_elsewhere(qtbot, window):
    p = window.panel
    p.file_data.setChecked(True)
    window.activateWindow()
    p.path.setFocus()
    qtbot.waitUntil(p.path.hasFocus, timeout=WAIT_MS)
    p.path.setText("/data/half-typ")  # not finished: the form has not been told yet
    p.set_devices({"backend": "cpu", "devices": [{"kind": "cpu"}]}, None)  # a probe answers meanwhile
    assert p.path.text() == "/data/half-typ" and p.form.fields.path == ""
    # A configuration loaded into the form is shown, typing or not.
    from som_studio.config import DataSpec, RunConfig

    p.load_config(RunConfig(impl="numpy-batch", data=DataSpec(path="/data/full.csv"), epochs=2))
    assert p.path.text() == "/data/full.csv"


def test_open_example_data_shows_iris_ready_to_run_and_jax_refuses_hex_by_control(qtbot, window):
    p = window.panel
    window.example_action.trigger()
    qtbot.waitUntil(lambda: p.state.runnable, timeout=WAIT_MS)
    cfg = p.state.config
    assert (cfg.grid, cfg.topology, cfg.init, cfg.scaling, cfg.labels) == ("12x8", "hex", "pca", "zscore", "species")
    assert cfg.impl == "numpy-batch" and (p.state.samples, p.state.features) == (150, 4)
    # The file's columns are the label, ignore and id choices; the controls show the example's.
    t = p.table
    assert [t.labels.itemText(i) for i in range(t.labels.count())][1:] == list(p.state.columns)
    assert (t.labels.currentText(), t.topology.currentText(), t.scaling.currentText()) == ("species", "hex", "zscore")
    assert t.init.currentText() == "pca" and "150 x 4" in p.data_info.text()
    p.impl.setCurrentIndex(p.impl.findData("jax-fused-batch"))
    if p.state.refusals and p.state.refusals[0].field == "impl":  # until the JAX ports train hex maps
        assert p.reason_label.text().startswith("Implementation: ") and p.reason_label.isVisible()
        assert not window.run_action.isEnabled()


def _use_file(window, path, grid=None):
    """The run panel of ``window`` set to read ``path`` (and its grid to ``grid``), as a user types it."""
    p = window.panel
    if grid is not None:
        p.grid.setCurrentText(grid)
    p.file_data.setChecked(True)
    p.path.setText(str(path))
    p.path.editingFinished.emit()
    return p


def test_a_table_column_is_chosen_from_the_file_and_the_grid_left_to_auto_says_what_it_chose(qtbot, window, tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("a,b,kind\n" + "".join(f"{i},{i * i % 7},{'xy'[i % 2]}\n" for i in range(40)))
    p = _use_file(window, data, grid="auto")
    qtbot.waitUntil(lambda: "non-numeric" in p.reason_label.text(), timeout=WAIT_MS)
    assert "(Label column kind)" in p.reason_label.text()
    p.table.labels.setCurrentText("kind")
    qtbot.waitUntil(lambda: p.state.runnable, timeout=WAIT_MS)
    assert p.state.config.labels == "kind" and p.grid_info.text().startswith("Grid: ") and p.grid_info.isVisible()
    # Long descriptions, column names and refusals wrap: the panel never asks for more width.
    p.table.ignore.menu().actions()[0].trigger()
    assert p.form.fields.ignore == ("a",)
    assert p.minimumSizeHint().width() <= 360


def test_the_devices_line_gets_the_height_its_wrapped_words_need(qtbot):
    """Beside Detect, in a narrow panel, "Devices: not asked yet for these settings" wraps to two lines and had the
    button's height: both lines were cut, top and bottom."""
    from som_studio.qt.widgets.run_panel import RunPanel

    p = RunPanel()
    qtbot.addWidget(p)
    p.resize(330, 900)
    p.show()
    qtbot.waitExposed(p)
    p.devices_label.setText("Devices: not asked yet for these settings")
    label = p.devices_label
    qtbot.waitUntil(lambda: label.height() >= label.heightForWidth(label.width()), timeout=WAIT_MS)
    assert label.heightForWidth(label.width()) > label.fontMetrics().lineSpacing() * 1.5  # it did wrap


def test_a_table_with_a_value_too_large_is_refused_in_the_forms_words_not_left_reading(qtbot, window, tmp_path):
    """float64's largest number written for "no value": the default grid's principal components raised a bare
    LinAlgError on the reader's thread, and the form read "reading…" until another file was chosen."""
    data = tmp_path / "sentinel.csv"
    data.write_text("a,b\n" + "".join(f"{i / 7:.3f},{i % 5}\n" for i in range(30)) + "1.7976931348623157e308,1\n")
    p = _use_file(window, data, grid="auto")
    qtbot.waitUntil(lambda: "too large for float32" in p.reason_label.text(), timeout=WAIT_MS)
    assert "marks a missing one" in p.reason_label.text() and not window.run_action.isEnabled()


def test_a_fault_while_reading_a_file_is_said_in_the_form(qtbot, window, tmp_path, monkeypatch):
    from som_studio.qt.widgets import data_reader

    def broken(key):
        raise RuntimeError("a fault of ours")

    monkeypatch.setattr(data_reader, "read_data", broken)
    data = tmp_path / "t.csv"
    data.write_text("a,b\n1,2\n3,4\n")
    p = _use_file(window, data)
    qtbot.waitUntil(lambda: "could not be read" in p.reason_label.text(), timeout=WAIT_MS)
    assert "a fault of ours" in p.reason_label.text() and not window.run_action.isEnabled()
