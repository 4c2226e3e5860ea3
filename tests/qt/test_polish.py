"""The app as one piece: display detection, desktop identity, the doctor, plots between runs, one run list."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from som_studio import resources
from som_studio.qt import app as appmod
from som_studio.qt.widgets.timing_plot import SecondsAxis, TimingPlot, short_seconds
from som_studio.session.events import ChunkTimed

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


# -- no display, or one that does not answer ----------------------------------------------------
def _free_x_display() -> int:
    return next(n for n in range(600, 700) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))


def test_unreachable_display_is_reported_before_qt_aborts(tmp_path):
    n = _free_x_display()
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = f":{n}"
    out = subprocess.run(
        [sys.executable, "-m", "som_studio"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr
    assert f"DISPLAY=:{n} set, but no display server answers there" in out.stderr
    assert "som-studio bench" in out.stderr and "xvfb-run" in out.stderr
    assert "Traceback" not in out.stderr and "Aborted" not in out.stderr


def test_x_display_over_tcp_is_reachable_only_while_a_server_listens():
    for n in range(40, 90):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            server.bind(("127.0.0.1", 6000 + n))
            break
        except OSError:
            server.close()
    else:
        pytest.skip("no free X11 TCP port (6040-6089) to listen on")
    with server:
        server.listen(1)
        assert appmod.x_server_reachable(f"127.0.0.1:{n}.0")
    assert not appmod.x_server_reachable(f"127.0.0.1:{n}")
    assert not appmod.x_server_reachable("not a display")
    assert not appmod.x_server_reachable(f":{_free_x_display()}")


def test_wayland_socket_is_found_under_the_runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    assert "WAYLAND_DISPLAY=wayland-test set, but no display server answers" in appmod.display_problem()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-test"))
        server.listen(1)
        assert appmod.display_problem() == ""
    monkeypatch.delenv("WAYLAND_DISPLAY")
    assert appmod.display_problem() == "DISPLAY and WAYLAND_DISPLAY are unset"
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert appmod.display_problem() == ""


# -- the window and its parts ---------------------------------------------------------------------


def test_desktop_identity_and_icon(window):
    assert QGuiApplication.desktopFileName() == resources.APP_ID
    icon = QGuiApplication.windowIcon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 48, 256}


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


def _chunks(first_end: int, step: int, n: int, seconds: float) -> list[ChunkTimed]:
    return [ChunkTimed(first_end + i * step - step, step, seconds * step, 0.0) for i in range(n)]


def test_timing_plot_frames_each_run_afresh(qtbot):
    plot = TimingPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 300)
    plot.show()
    # 20,000 online steps, then a batch run of 6 epochs (a compare queue's order).
    plot.begin("online", 1)
    plot.add_chunks(_chunks(100, 100, 200, 5e-5))
    plot.flush()
    qtbot.wait(50)
    assert plot.plot.viewRange()[0][1] >= 19_000
    plot.begin("batch", 1000)
    for k in range(1, 4):
        plot.add_chunks(_chunks(k, 1, 1, 0.07))
        plot.flush()
        qtbot.wait(20)
    lo, hi = plot.plot.viewRange()[0]
    assert -1 <= lo and hi <= 10, (lo, hi)  # not the previous run's thousands of steps
    assert len(plot.points.getData()[0]) == 3  # every epoch drawn


def test_timing_axis_labels_are_seconds_and_do_not_pile_up():
    assert [short_seconds(s) for s in (0.07, 5e-5, 1.5, 2.5e-3)] == ["70 ms", "50 µs", "1.5 s", "2.5 ms"]
    axis = SecondsAxis("left")
    axis.setLogMode(False, True)
    # 50 ms to 75 ms: less than a fifth of a decade, on 120 pixels.
    ((_, values),) = axis.tickValues(np.log10(0.05), np.log10(0.075), 120)
    assert 2 <= len(values) <= 4
    labels = axis.tickStrings(values, 1.0, 0.0)
    assert all(label.endswith(" ms") for label in labels)
    # Six decades on 120 pixels: a few decade ticks, not 54 minor ones.
    ((_, values),) = axis.tickValues(-7.0, -1.0, 120)
    assert 2 <= len(values) <= 4 and all(float(v).is_integer() for v in values)


def test_compare_queue_follows_the_order_ticked(window):
    view = window.comparison
    items = {
        view.impl_list.item(i).data(Qt.ItemDataRole.UserRole): view.impl_list.item(i)
        for i in range(view.impl_list.count())
    }
    for name in ("jax-jit-online", "numpy-batch", "numpy-online"):  # not the registry's order
        items[name].setCheckState(Qt.CheckState.Checked)
    items["numpy-batch"].setCheckState(Qt.CheckState.Unchecked)
    assert view.ticked_impls() == ["jax-jit-online", "numpy-online"]
    assert items["jax-jit-online"].text() == "1. jax-jit-online" and items["numpy-batch"].text() == "numpy-batch"
    assert "jax-jit-online → numpy-online" in view.queue_label.text()
    configs, reason = view.compare_configs()
    assert reason == "" and [c.impl for c in configs] == ["jax-jit-online", "numpy-online"]


def test_one_run_list_shared_by_the_runs_dock_and_the_comparison(qtbot, window):
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("10x7")
    p.random_data.setChecked(True)
    p.samples.setValue(80)
    p.iterations.setValue(4)
    p.simulate.setChecked(False)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.start_run()
    runs = window.runs
    assert window.runs_panel.table.model() is runs
    assert window.comparison.runs_view.model() is runs
    assert runs.rowCount() == 1 and runs.records[0].status == "ok"
    run = runs.runs[0]
    # Ticking in the one list is what the comparison compares.
    assert runs.setData(runs.index(0, 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert [r.name for r in window.comparison.report.runs] == ["numpy-batch"]
    # Show it again: the live views take the kept run's map, timings and quality.
    window.map_view.begin(3, "something else")
    window.timing_plot.begin("online", 1)
    window.runs_panel.select(run.id)
    window.runs_panel.show_selected()
    assert window.map_view.last_frame.image.shape == (7, 10, 3)
    assert len(window.timing_plot._points) == len(run.record.chunks) > 0
    assert len(window.quality_plot._qe) == len(run.record.history) > 0
    # Re-run: the kept configuration, not the form's; the second run gets a name of its own
    # (names title the comparison, pick its baseline and name exported map files).
    p.grid.setCurrentText("12x9")
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.runs_panel.rerun_selected()
    assert runs.runs[1].record.config == run.record.config and p.grid.currentText() == "10x7"
    assert [r.name for r in runs.runs] == ["numpy-batch", "numpy-batch (2)"]
    assert not runs.setData(runs.index(1, 0), "numpy-batch")
    assert "already called 'numpy-batch'" in window.runs_panel.error_dialog.text()
    window.runs_panel.error_dialog.close()
    runs.remove(runs.runs[1].id)
    window.close()
    # The list is the history: a restarted app lists the same run.
    again = MainWindow(Settings(window.settings.qsettings.fileName()))
    qtbot.addWidget(again)
    try:
        assert [r.id for r in again.runs.runs] == [run.id]
        assert again.runs_panel.table.model().rowCount() == 1
    finally:
        again.close()


def test_devices_seen_with_other_settings_are_forgotten(window):
    p = window.panel
    p.set_cpu_devices(8)
    p.set_devices({"backend": "cpu", "devices": [{"kind": "cpu"}] * 8}, 8)
    assert p.devices_label.text() == "Devices: 8 × cpu (simulated)" and p._known_device_count() == 8
    p.simulate.setChecked(False)  # the machine's own devices: not known until a worker says
    assert p._known_device_count() is None and "not asked yet" in p.devices_label.text()


def test_stop_during_a_comparison_stops_the_comparison(qtbot, window):
    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("8x6")
    p.random_data.setChecked(True)
    p.samples.setValue(50)
    p.iterations.setValue(5_000_000)
    p.simulate.setChecked(False)
    view = window.comparison
    view.set_ticked_impls(["numpy-online", "jax-jit-online"])
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        assert view.compare_ticked()
    with qtbot.waitSignal(view.queue.finished, timeout=WAIT_MS):
        window.stop_action.trigger()
    assert [r.record.status for r in window.runs.runs] == ["cancelled"]  # jax-jit-online never started
    assert not window.controller.busy and view.compare_button.isEnabled()


def test_a_layout_needing_several_devices_asks_which_there_are(qtbot, window):
    p = window.panel
    p.simulate.setChecked(False)
    p.grid.setCurrentText("8x6")
    p.impl.setCurrentIndex(p.impl.findData("jax-shardmap-batch"))
    with qtbot.waitSignal(window.probe.info_ready, timeout=WAIT_MS):
        p.layout_box.setCurrentText("2x2")  # this process's 8 simulated devices are not the worker's
    assert not window.run_action.isEnabled()
    assert "2x2 needs 4 devices, but JAX sees 1" in p.reason_label.text()
