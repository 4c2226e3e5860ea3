"""The desktop app, driven for real: worker processes, signals, dialogs, settings (offscreen)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")


from som_studio.core.impls import registry
from som_studio.qt import controller as ctl
from som_studio.qt.main_window import MainWindow
from som_studio.qt.settings import Settings
from som_studio.qt.widgets.timing_plot import format_seconds
from som_studio.session.events import QualityMeasured
from som_studio.worker.process import HOOK_ABORT_AFTER
from tests.worker.fakes import slow_warmup_impl

# The offscreen platform plugin says this about dock widgets; it is not a problem of ours.
pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def configure(
    win: MainWindow, impl: str = "numpy-batch", grid: str = "12x9", samples: int = 120, iterations: int = 8
) -> None:
    p = win.panel
    p.impl.setCurrentIndex(p.impl.findData(impl))
    p.grid.setCurrentText(grid)
    p.random_data.setChecked(True)
    p.samples.setValue(samples)
    p.iterations.setValue(iterations)
    p.simulate.setChecked(False)
    assert p.state.runnable, p.state.reason


def run_and_wait(qtbot, win: MainWindow, **kw) -> None:
    with qtbot.waitSignal(win.controller.run_ended, timeout=WAIT_MS):
        assert win.start_run(**kw)


def test_small_run_end_to_end(qtbot, window):
    steps = 60_000  # long enough for several frames at ~15 a second on a fast core (20,000 steps gave one)
    configure(window, impl="numpy-online", iterations=steps)
    c = window.controller
    order: list[str] = []
    frames: list = []
    for name in ("run_started", "compiled", "chunks_timed", "quality_measured", "run_finished", "run_failed"):
        getattr(c, name).connect(lambda *a, n=name: order.append(n))
    c.frame_ready.connect(frames.append)
    busy: list[bool] = []  # the Compare page's picker told of the run (its Compare button off meanwhile)
    c.run_started.connect(lambda *a: busy.append(window.comparison.picker.busy))
    run_and_wait(qtbot, window)

    assert busy == [True] and not window.comparison.picker.busy
    assert order[0] == "run_started"
    assert "run_failed" not in order
    assert order[-1] == "run_finished" and order.count("run_finished") == 1
    assert order.index("compiled") < order.index("chunks_timed")
    record = window.runs.records[-1]
    assert record.status == "ok" and record.iterations_done == steps
    assert record.qe is not None and record.history[0]["iteration"] == 0
    # The map view was drawn from frames rendered by the worker, newer each time
    # (older ones may be skipped, never reordered); the last is the trained map.
    its = [f.iteration for f in frames]
    assert len(frames) >= 2 and its == sorted(its) and its[-1] == steps
    assert frames[-1].image.shape == (9, 12, 3) and frames[-1].image.dtype == np.uint8
    assert not np.array_equal(frames[0].image, frames[-1].image)
    assert window.map_view.last_frame is frames[-1]
    assert window.map_view.frames_drawn >= 2
    assert window.progress.value() == window.progress.maximum()
    assert window.run_action.isEnabled()


@pytest.fixture
def slow_warmup():
    """An implementation whose warm-up blocks for a minute, registered (here and in the worker) for one test."""
    with registry.registered(slow_warmup_impl()) as (impl,):
        yield impl


def test_stop_during_compile(qtbot, slow_warmup, window):
    # The window lists the registered fake; the worker gets it with the run, through the registry.
    configure(window, impl=slow_warmup.name)
    compiled: list = []
    window.controller.compiled.connect(compiled.append)
    # The warm-up blocks like a long compile, deaf to the session's cancel flag:
    # only killing the process can stop it.
    with qtbot.waitSignal(window.controller.run_started, timeout=WAIT_MS):
        window.start_run()
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.stop_action.trigger()
    assert compiled == []
    assert window.controller.last_exitcode == -signal.SIGKILL
    record = window.runs.records[-1]
    assert record.status == "cancelled"
    assert "compilation" in record.message
    assert window.error_dialog is None  # a stop is not an error
    assert window.controller.state == ctl.IDLE


def test_stop_during_training(qtbot, window):
    configure(window, impl="numpy-online", iterations=5_000_000)
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        window.start_run()
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.stop_action.trigger()
    record = window.runs.records[-1]
    assert record.status == "cancelled"
    assert 0 < record.iterations_done < 5_000_000
    assert window.error_dialog is None


def test_pause_and_resume(qtbot, window):
    configure(window, impl="numpy-online", iterations=5_000_000)
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        window.start_run()
    window.pause_action.trigger()
    assert window.controller.state == ctl.PAUSED and window.pause_action.text() == "&Resume"
    window.pause_action.trigger()
    assert window.controller.state == ctl.RUNNING
    # Another picture of the map: the worker renders it from the next frame on.
    window.map_view.set_choice("umatrix", 0)
    with qtbot.waitSignal(
        window.controller.frame_ready, timeout=WAIT_MS, check_params_cb=lambda f: f.view.mode == "umatrix"
    ):
        pass
    assert window.map_view.last_frame.image.ndim == 2
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.controller.stop()


def test_invalid_grid_disables_run_with_reason(qtbot, window):
    configure(window)
    p = window.panel
    p.grid.setCurrentText("0x9")
    assert not window.run_action.isEnabled()
    # The session's refusal, named by the control's label (the CLI names its flag: --grid).
    assert p.reason_label.text() == "Grid: width and height must be positive, got 0x9"
    assert "Grid" in window.run_action.toolTip()
    assert not window.start_run()
    p.grid.setCurrentText("12 by 9")
    assert "expected WIDTHxHEIGHT" in p.reason_label.text()
    # Valid, but far beyond this machine's memory: refused with the estimate.
    p.grid.setCurrentText("32768x32768")
    p.samples.setValue(100_000_000)
    assert not window.run_action.isEnabled()
    assert p.reason_label.text().startswith("Memory: numpy-batch on a 32768x32768 map")
    p.samples.setValue(120)
    p.grid.setCurrentText("12x9")
    assert window.run_action.isEnabled() and p.reason_label.text() == ""


def test_bad_data_file_shown_as_reason(qtbot, window, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,x\n")
    p = window.panel
    p.file_data.setChecked(True)
    p.path.setText(str(bad))
    p.path.editingFinished.emit()
    assert not window.run_action.isEnabled()  # not while the file is read, on a thread of its own
    qtbot.waitUntil(lambda: "non-numeric value 'x'" in p.reason_label.text(), timeout=WAIT_MS)
    assert p.reason_label.text().startswith("Data: ") and not window.run_action.isEnabled()
    good = tmp_path / "good.npy"
    np.save(good, np.random.default_rng(0).random((50, 5)))
    p.path.setText(str(good))
    p.path.editingFinished.emit()
    qtbot.waitUntil(window.run_action.isEnabled, timeout=WAIT_MS)
    assert "50 x 5" in p.data_info.text()


def _close_error_dialog(window) -> str:
    box = window.error_dialog
    assert box is not None and box.isVisible()
    text = box.text()
    box.accept()
    return text


def test_engine_killed_is_survived(qtbot, window):
    configure(window, impl="numpy-online", iterations=5_000_000)
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        window.start_run()
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        os.kill(window.controller.process.pid, signal.SIGKILL)
    text = _close_error_dialog(window)
    assert "SIGKILL" in text
    assert window.isVisible()
    assert window.runs.records[-1].status == "failed"
    # The next run works.
    configure(window, iterations=3)
    run_and_wait(qtbot, window)
    assert window.runs.records[-1].status == "ok"
    assert len(window.runs.records) == 2


def test_engine_abort_is_survived(qtbot, window):
    configure(window)
    run_and_wait(qtbot, window, hooks={HOOK_ABORT_AFTER: "Compiled"})
    text = _close_error_dialog(window)
    assert "SIGABRT" in text
    record = window.runs.records[-1]
    assert record.status == "failed" and record.compile_s > 0
    run_and_wait(qtbot, window)
    assert window.runs.records[-1].status == "ok"


def test_closing_during_a_run_stops_it_and_keeps_it(qtbot, window):
    configure(window, impl="numpy-online", iterations=5_000_000)
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        window.start_run()
    pid = window.controller.process.pid
    kept = len(window.runs.records)
    window.close()
    qtbot.waitUntil(lambda: not window.isVisible(), timeout=WAIT_MS)
    # Closed as Stop stops: the run is kept, cancelled, with what it trained so far.
    assert len(window.runs.records) == kept + 1
    record = window.runs.records[-1]
    assert record.status == "cancelled" and 0 < record.iterations_done < 5_000_000
    assert multiprocessing.active_children() == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie
    assert window.controller.process is None


def test_settings_round_trip(qtbot, tmp_path):
    path = tmp_path / "settings.ini"
    win = MainWindow(Settings(path))
    qtbot.addWidget(win)
    win.show()
    p = win.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("60x34")
    p.samples.setValue(500)
    p.iterations.setValue(1234)
    p.seed.setText(str(2**40))  # beyond a spin box's 2^31 - 1, within what RunConfig takes
    p.precision.setCurrentText("float64")
    p.layout_box.setCurrentText("2x1")
    p.sigma_end.setText("1.5")
    p.set_cpu_devices(4)
    win.docks["quality"].hide()
    win.map_view.set_choice("umatrix", 0)
    win.timing_plot.log_scale.setChecked(False)
    win.resize(790, 580)
    size = win.size()
    saved = p.state.config
    assert saved is not None and saved.seed == 2**40
    win.close()

    again = MainWindow(Settings(path))
    qtbot.addWidget(again)
    again.show()
    q = again.panel
    assert q.state.config == saved
    assert q.sigma_start.text() == ""  # the default radius stays "auto"
    assert q.state.cpu_devices == 4
    assert again.size() == size
    assert not again.docks["quality"].isVisible()
    assert again.docks["timings"].isVisible()
    assert again.map_view.choice().mode == "umatrix"
    assert not again.timing_plot.log_scale.isChecked()
    again.close()


def test_sharding_view_follows_the_layout(qtbot, window):
    configure(window)
    window.panel.layout_box.setCurrentText("2x2")
    desc = window.sharding_view.description
    # numpy-batch does not shard: the view says so and shows one device.
    assert desc["layout"] == "1x1"
    assert "does not shard" in window.sharding_view.note
    window.panel.grid.setCurrentText("-3x2")
    assert window.sharding_view.description is None


def test_no_display_message(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = subprocess.run(
        [sys.executable, "-m", "som_studio"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 2
    assert "needs a display" in out.stderr
    assert "som-studio bench" in out.stderr and "som-studio list" in out.stderr
    assert "Traceback" not in out.stderr


def test_menus_show_the_shortcuts(window):
    assert window.run_action.shortcut().toString() == "Ctrl+R"
    assert window.stop_action.shortcut().toString() == "Esc"
    assert window.export_action.shortcut().toString() == "Ctrl+E"
    assert window.quit_action.shortcut().toString() == "Ctrl+Q"
    menus = {a.text().replace("&", ""): a.menu() for a in window.menuBar().actions()}
    assert window.run_action in menus["Run"].actions() and window.quit_action in menus["File"].actions()
    assert "SOM Studio" in window.windowTitle()


def test_export_runs_as_json(qtbot, window, tmp_path):
    import json

    configure(window, iterations=3)
    run_and_wait(qtbot, window)
    out = tmp_path / "runs.json"
    assert window.runs_panel.write_runs(str(out))
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["runs"][0]["impl"] == "numpy-batch"
    assert doc["runs"][0]["status"] == "ok"
    assert not window.runs_panel.write_runs(str(tmp_path / "missing" / "runs.json"))
    assert "does not exist" in _close_error_dialog(window.runs_panel)


def test_about_box_names_the_jax_backend_and_devices(qtbot, window):
    window.panel.set_cpu_devices(3)  # a count neither the app nor the test process uses
    with qtbot.waitSignal(window.probe.info_ready, timeout=WAIT_MS):
        window.show_about()
    text = window._about_box.text()
    assert "SOM Studio" in text and "JAX backend" in text
    assert "cpu — 3 device(s)" in text and "asking" not in text
    window._about_box.accept()
    assert window.panel.devices_label.text() == "Devices: 3 × cpu (simulated)"


QUIT_DURING_RUN = r"""
import sys
from PySide6.QtCore import QTimer
from som_studio.qt import main_window

_show = main_window.MainWindow.showEvent

def showEvent(self, event):
    _show(self, event)
    if getattr(self, "_driven", False):
        return
    self._driven = True
    p = self.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("12x9")
    p.iterations.setValue(5_000_000)
    p.simulate.setChecked(False)

    def on_chunks(_chunks):
        self.controller.chunks_timed.disconnect(on_chunks)
        print("worker", self.controller.process.pid, flush=True)
        self.quit_action.trigger()  # Ctrl+Q, with the run in progress

    self.controller.chunks_timed.connect(on_chunks)
    QTimer.singleShot(0, self.start_run)

main_window.MainWindow.showEvent = showEvent
from som_studio.cli import main
sys.exit(main([]))
"""


def test_quit_during_a_run_ends_the_app_and_its_worker(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", QUIT_DURING_RUN], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 0, out.stderr
    pid = int(out.stdout.split("worker")[1].split()[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "Traceback" not in out.stderr


def test_run_on_a_file_with_five_features_shows_the_u_matrix(qtbot, window, tmp_path):
    data = tmp_path / "five.npy"
    np.save(data, np.random.default_rng(1).random((60, 5)))
    configure(window, iterations=3)
    p = window.panel
    p.file_data.setChecked(True)
    p.path.setText(str(data))
    p.path.editingFinished.emit()
    qtbot.waitUntil(lambda: p.state.runnable, timeout=WAIT_MS)
    assert p.state.features == 5
    # Before the run, the Show box already lists what a run on this file will offer: no RGB colours.
    box = window.map_view.mode
    before = [box.itemText(i) for i in range(box.count())]
    assert before == ["U-matrix", "All feature planes", "All feature planes (one scale)"] + [
        f"x{k + 1}" for k in range(5)
    ]
    assert box.currentText() == "U-matrix"
    frames: list = []
    window.controller.frame_ready.connect(frames.append)
    run_and_wait(qtbot, window)
    assert window.runs.records[-1].status == "ok"
    assert frames[-1].view.mode == "umatrix" and frames[-1].image.shape == (9, 12)
    modes = [window.map_view.mode.itemText(i) for i in range(window.map_view.mode.count())]
    # The picture pipeline's listing (picture.choices): the U-matrix, the planes grid, then each plane,
    # named as the run's data names its columns (a file without a header: x1, x2, ...); the hit map
    # too, once the run's record brought its model.
    assert modes == ["U-matrix", "All feature planes", "All feature planes (one scale)", "Hit map"] + [
        f"x{k + 1}" for k in range(5)
    ]
    # After the run, the kept final map is re-rendered for a new choice, in this process (off the GUI thread).
    window.map_view.set_choice("component", 3)
    qtbot.waitUntil(lambda: window.map_view.last_frame.view.mode == "component", timeout=WAIT_MS)
    last = window.map_view.last_frame
    assert last.view.mode == "component" and last.view.component == 3 and last.iteration == 3
    assert not np.array_equal(last.image, frames[-1].image)


@pytest.fixture
def damaged_files(tmp_path):
    """Before the window opens: a settings file from a newer SOM Studio, a text file among the kept runs."""
    settings = tmp_path / "settings.ini"
    settings.write_text("[settings]\nversion=99\n\n[view]\nlog_timing=true\n")
    (tmp_path / "history").mkdir()
    (tmp_path / "history" / "bad.somrun").write_text("a note, not a run\n")
    return settings, settings.read_bytes()


def test_damaged_settings_and_runs_are_named_and_the_app_starts(qtbot, damaged_files, window):
    from som_studio.qt.app import show_settings_problems

    settings_file, before = damaged_files
    show_settings_problems(window, window.settings)
    shown = window.status_label.text()
    assert "bad.somrun: not a SOM Studio run file: it is a text file" in shown
    assert f"{settings_file}: written by a newer SOM Studio (settings version 99" in shown
    assert window.timing_plot.log_scale.isChecked()  # what it understands is used
    configure(window)
    run_and_wait(qtbot, window)  # the app works, and keeps its new run beside the bad file
    assert len(window.history.runs) == 1
    window.close()
    assert settings_file.read_bytes() == before  # a newer version's file is left as it is


# -- rough edges ---------------------------------------------------------------------------------
def test_a_first_start_opens_on_a_jax_implementation_with_pause_and_stop_off(window):
    assert window.form.state.config is not None and window.form.state.config.impl == "jax-fused-batch"
    assert window.panel.impl.currentData() == "jax-fused-batch"
    assert window.run_action.isEnabled()
    assert not window.pause_action.isEnabled() and not window.stop_action.isEnabled()


def test_elapsed_stops_while_paused(small_config):
    from som_studio.app_model.live import LiveProgress

    live = LiveProgress()
    live.begin(small_config, now=100.0)
    live.pause(102.0)
    assert live.time_text(110.0, running=False) == "elapsed   2.0 s"
    live.pause(105.0)  # a second pause signal changes nothing
    live.resume(110.0)
    assert live.time_text(111.0, running=False) == "elapsed   3.0 s"
    live.begin(small_config, now=200.0)  # a new run starts from zero, unpaused
    assert live.time_text(201.0, running=False) == "elapsed   1.0 s"


def _choice(window) -> tuple[str, int]:
    c = window.map_view.choice()
    return c.mode, c.component


def test_the_view_goes_back_to_the_runs_default_when_the_features_change(qtbot, window, tmp_path):
    from som_studio import picture
    from som_studio.config import DataSpec, RunConfig

    table = tmp_path / "five.csv"
    rows = np.random.default_rng(1).uniform(size=(40, 5))
    table.write_text("a,b,c,d,e\n" + "\n".join(",".join(f"{v:.3f}" for v in r) for r in rows) + "\n")
    colours = RunConfig(impl="numpy-batch", width=8, height=5, data=DataSpec(samples=40), epochs=3)
    five = colours.replace(data=DataSpec(path=str(table)))

    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.run_config(colours) == ""
    assert window.map_view.choice().mode == picture.RGB
    window.map_view.set_choice(picture.COMPONENT, 2)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.run_config(five) == ""
    assert _choice(window) == (picture.UMATRIX, 0)  # not "Feature 2" of the colours
    window.map_view.set_choice(picture.COMPONENT, 4)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.run_config(five.replace(seed=2)) == ""
    assert _choice(window) == (picture.COMPONENT, 4)  # the same features: the choice stays


def test_the_quality_plot_keeps_sane_axes_with_no_point_or_one(qtbot, window):
    plot = window.quality_plot
    plot.begin()  # a run that failed before its first measurement
    (x0, x1), (y0, y1) = plot.plot.getPlotItem().vb.viewRange()
    assert x0 > -1 and 0 < x1 < 3 and y0 > -0.5 and y1 <= 1.5
    plot.add(QualityMeasured(0, 0.2, 0.4))  # a one-point run: iterations 0 to 2 (0 and 1 labelled)
    plot.flush()
    (x0, x1), (y0, y1) = plot.plot.getPlotItem().vb.viewRange()
    assert -0.5 < x0 <= 0 and 1 < x1 < 3 and y0 >= -0.01 and 0.2 < y1 < 0.5
    assert not plot.plot.getAxis("bottom").autoSIPrefix
    plot.add(QualityMeasured(400, 0.1, 0.2))  # two points: pyqtgraph's own range again (at its next update)
    plot.flush()
    qtbot.waitUntil(lambda: plot.plot.getPlotItem().vb.viewRange()[0][1] >= 400, timeout=WAIT_MS)


def test_a_kept_run_shown_again_says_its_own_figures_not_the_last_runs(qtbot, window):
    # Shown from the run list, a run's timing summary read the rolling median of its last chunks as "median"
    # (not its record's, which the run list and the comparison give), and the status bar kept the last run's.
    configure(window, impl="numpy-batch", iterations=6)
    run_and_wait(qtbot, window)
    (kept,) = window.history.runs
    configure(window, impl="numpy-online", iterations=500)
    # Read as the run starts (after the window's own slots): a run this short can draw its last frame, and end,
    # while its start is waited for (the caption then read "iteration 500" in one run of the suite).
    captions = []
    window.controller.run_started.connect(lambda _ev: captions.append(window.map_view.caption.text()))
    # Waited for from before the start, for the same reason.
    ended = qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS)
    with qtbot.waitSignal(window.controller.run_started, timeout=WAIT_MS):
        assert window.start_run()
    # A run starting: the map's caption says so, not the last run's "iteration 6".
    assert "numpy-online" in captions[0]
    ended.wait()
    window.show_kept_run(kept)
    text = " ".join(window.timing_plot.caption.text().replace("\u2060", "").split())  # no-break spaces as spaces
    assert f"median {format_seconds(kept.record.median_s)}/iteration" in text
    assert f"mean {format_seconds(kept.record.mean_s)}/iteration" in text
    assert window.progress.value() == window.progress.maximum()
    assert window.time_label.text().split() == ["took", f"{kept.record.wall_s:.1f}", "s"]


def test_opening_a_run_already_in_the_list_does_not_add_it_twice(qtbot, window, tmp_path):
    configure(window)
    run_and_wait(qtbot, window)
    (kept,) = window.history.runs
    copy = kept.save(tmp_path / "copy.somrun")
    window.history.close()  # the run is listed at once and its file written on the writer thread: let it finish
    own_file = next((tmp_path / "history").glob("*.somrun"))
    for path in (own_file, copy):
        assert [r.id for r in window.runs_panel.open_runs([str(path)])] == [kept.id]
    assert len(window.history.runs) == 1 and window.runs.rowCount() == 1
    assert [r.id for r in window.runs.checked_runs()] == [kept.id]  # ticked, as an opened run is
    assert "already in the list" in window.status_label.text()


def test_a_layout_refused_in_the_worker_names_the_apps_control(window):
    from som_studio.app_model.form import LABELS
    from som_studio.config import Refusal
    from som_studio.session.record import RunRecord

    # What the worker's session sends when its devices cannot hold the layout: the message in the
    # CLI's words, and the refusal as a value beside it.
    refusal = Refusal(
        "layout",
        "layout 4x2 needs 8 devices (4 along data x 2 along map), but JAX sees 1 cpu device",
        ("cpu_devices", 8),
    )
    record = RunRecord(
        impl="jax-shardmap-batch", kind="batch", config={}, status="failed", message=str(refusal), refusal=refusal
    )
    assert record.message.endswith("simulate more with --cpu-devices 8")
    window.controller.run_failed.emit(record.message, record)
    shown = window.status_label.text()
    assert shown.startswith("Failed: Layout: layout 4x2 needs 8 devices")
    assert "--cpu-devices" not in shown and LABELS["cpu_devices"].format(n=8) in shown


def test_the_restored_configuration_says_how_long_it_will_take(qtbot, tmp_path):
    path = tmp_path / "settings.ini"
    win = MainWindow(Settings(path))
    qtbot.addWidget(win)
    win.show()
    configure(win, iterations=8)
    assert "Time: " not in win.panel.memory_label.text()  # no kept run of this problem yet
    run_and_wait(qtbot, win)
    kept = win.history.runs[-1].record
    assert kept.status == "ok" and kept.mean_s
    win.close()

    again = MainWindow(Settings(path))
    qtbot.addWidget(again)
    again.show()
    # Before Ctrl+R: the kept run's compile time and seconds per iteration, for the restored iterations.
    from som_studio.app_model import estimate

    text = again.panel.memory_label.text()
    assert estimate.time_text(again.form.state.config, [kept]) in text and "Time: " in text
    assert again.panel.memory_label.isVisible()
    again.panel.grid.setCurrentText("13x9")  # another problem: no kept run tells
    assert "Time: " not in again.panel.memory_label.text()
    again.close()


def test_paused_stays_said_until_the_pause_ends_then_what_the_run_does_is_said_again(qtbot, window):
    """A run paused while it compiled read "Training (3 compilations, …)" once compiled, not "Paused"."""
    from som_studio.config import RunConfig
    from som_studio.session.events import Compiled
    from som_studio.worker import messages as m

    class Pipe:
        def __init__(self) -> None:
            self.items: list = []

        def take(self):
            items, self.items = self.items, []
            return items, None

    c = window.controller
    window.live.begin(RunConfig(impl="jax-fused-batch", width=8, height=6, epochs=10))
    c._reader = Pipe()
    c._set_state(ctl.RUNNING)
    try:
        c._set_state(ctl.PAUSED)
        assert window.status_label.text() == "Paused"
        c._reader.items = [m.EventMessage(Compiled(seconds=7.05, compiles=3))]
        c._dispatch_now()
        assert window.status_label.text() == "Paused"
        c._set_state(ctl.RUNNING)
        assert window.status_label.text().startswith("Training (3 compilations, 7.05 s compile + warm-up")
    finally:
        c._reader = None
        c._set_state(ctl.IDLE)


def test_a_streamed_epoch_moves_the_status_and_the_bar(qtbot, window):
    """Where a streamed epoch stands reaches the status bar, the latest only, and never once its epoch ended."""
    from som_studio.config import RunConfig
    from som_studio.qt.live_views import PROGRESS_STEPS
    from som_studio.session.events import ChunkTimed, EpochProgress
    from som_studio.worker import messages as m

    class Pipe:  # the pipe reader's side: what arrived since the controller last took
        def __init__(self) -> None:
            self.items: list = []

        def take(self):
            items, self.items = self.items, []
            return items, None

    def progress(t, row):
        return m.EventMessage(EpochProgress(iteration=t, row=row, rows=10**7, first=0, seconds=row / 1e6, wait_s=0.1))

    c = window.controller
    cfg = RunConfig(impl="jax-fused-batch", width=32, height=32, epochs=10)
    window.live.begin(cfg)
    c._reader, c._state = Pipe(), ctl.RUNNING
    shown = []
    c.epoch_progress.connect(lambda ev: shown.append(ev))
    try:
        c._reader.items = [m.EventMessage(ChunkTimed(0, 2, 20.0, 20.0)), progress(2, 10**6), progress(2, 4 * 10**6)]
        c._dispatch_now()
        assert [ev.row for ev in shown] == [4 * 10**6]  # the latest of the batch
        assert window.status_label.text() == (
            "Epoch 3 of 10: 4,000,000 of 10,000,000 rows, 1,000,000 rows/s, 6 s left in it; "
            "waiting for the disk 2% of the time"
        )
        assert window.progress.value() == int(PROGRESS_STEPS * 2.4 / 10)
        c._reader.items = [progress(2, 9 * 10**6), m.EventMessage(ChunkTimed(2, 1, 10.0, 30.0))]
        c._dispatch_now()
        assert len(shown) == 1  # its epoch ended in the same batch: nothing stale is shown
        # Chunks move the bar with the status bar's clock (every STATUS_MS), not with each batch.
        qtbot.waitUntil(lambda: window.progress.value() == int(PROGRESS_STEPS * 3 / 10), timeout=10_000)
    finally:
        c._reader, c._state = None, ctl.IDLE


def test_file_opens_a_folder_of_data_as_the_guide_says(window, tmp_path, monkeypatch):
    """The guide's "File takes a folder" had only a file dialog: a folder could be typed, not chosen."""
    from PySide6.QtWidgets import QFileDialog

    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(2):
        (folder / f"part{i}.csv").write_text("a,b,c\n" + "".join(f"{i + j},{j},{2 * j}\n" for j in range(30)))
    asked = []
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: asked.append(a) or str(folder))
    window.open_folder_action.trigger()
    assert asked and window.panel.path.text() == str(folder)
    assert window.form.fields.path == str(folder)
