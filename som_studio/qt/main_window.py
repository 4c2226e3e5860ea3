"""The main window: the run panel, the live views, the runs so far, menus and shortcuts.

It wires thin views to one :class:`~som_studio.qt.controller.RunController`
and does no training and no arithmetic on maps itself.
"""

from __future__ import annotations

import platform
import sys
import time
from importlib import metadata
from typing import Any, ClassVar

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QScrollArea,
    QWidget,
)

from som_studio import __version__
from som_studio.config import RunConfig
from som_studio.core import memory
from som_studio.qt import controller as ctl
from som_studio.qt import dialogs, frames
from som_studio.qt.comparison import history_folder
from som_studio.qt.runs import RunsModel, RunsPanel
from som_studio.qt.settings import Settings
from som_studio.qt.widgets.map_view import MapView
from som_studio.qt.widgets.quality_plot import QualityPlot
from som_studio.qt.widgets.run_panel import PanelState, RunPanel
from som_studio.qt.widgets.timing_plot import TimingPlot, format_seconds
from som_studio.report.history import RunHistory, StoredRun
from som_studio.session.events import ChunkTimed, Compiled, QualityMeasured, Started
from som_studio.session.record import RunRecord, runs_document

TITLE = "SOM Studio"


class MainWindow(QMainWindow):
    """SOM Studio's window.

    Threads: GUI thread only.

    Parameters
    ----------
    settings : where to remember the configuration and the window (tests pass their own).
    cpu_devices : the ``--cpu-devices`` given on the command line; overrides the remembered count.
    """

    def __init__(self, settings: Settings | None = None, cpu_devices: int | None = None) -> None:
        super().__init__()
        from som_studio.qt.app import apply_identity

        apply_identity(QApplication.instance())
        self.setWindowTitle(TITLE)
        self.setObjectName("SomStudioMainWindow")
        self.settings = settings or Settings()
        self._cli_cpu_devices = cpu_devices
        self.controller = ctl.RunController(self)
        self.probe = ctl.DeviceProbe(self)
        self.env_info: dict[str, Any] | None = None
        self.controller_cpu_devices: int | None = None
        self.error_dialog: QMessageBox | None = None
        self._run_t0 = 0.0
        self._total = 0
        self._done = 0
        self._train_elapsed = 0.0  # training seconds up to the last chunk, for the ETA

        # -- views -----------------------------------------------------------------------
        self.map_view = MapView()
        self.setCentralWidget(self.map_view)
        self.panel = RunPanel(device_memory=self._device_memory)
        scroll = QScrollArea()
        scroll.setWidget(self.panel)
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(340)
        self.timing_plot = TimingPlot()
        self.quality_plot = QualityPlot()
        # The one run list: every run, kept across restarts (issue 6's history);
        # the comparison view compares the runs ticked in it.
        self.history = RunHistory(history_folder(self.settings))
        self.runs = RunsModel(self.history, self)
        self.runs_panel = RunsPanel(self.runs, rerun=self.run_config, show_run=self.show_run)
        self.docks: dict[str, QDockWidget] = {}
        self._add_dock("run", "Run", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self._add_dock("timings", "Timings", self.timing_plot, Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("quality", "Quality", self.quality_plot, Qt.DockWidgetArea.RightDockWidgetArea)
        self._add_dock("runs", "Runs", self.runs_panel, Qt.DockWidgetArea.BottomDockWidgetArea)
        self._add_sharding_dock()

        # -- status bar -------------------------------------------------------------------
        self.status_label = QLabel("Ready")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFixedWidth(220)
        self.time_label = QLabel("")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.time_label)
        self.statusBar().addPermanentWidget(self.progress)
        self._clock = QTimer(self)
        self._clock.setInterval(250)
        self._clock.timeout.connect(self._update_time)

        self._make_actions()
        # issue 6: the run history, the comparison view and report export.
        from som_studio.qt import comparison

        self.comparison = comparison.install(self)
        self.runs_panel.status.connect(self.status_label.setText)
        if self.history.problems:
            self.status_label.setText("Some kept runs could not be read: " + "; ".join(self.history.problems))
        self._connect()
        self._restore()
        self._on_panel_state(self.panel.state)

    # -- construction --------------------------------------------------------------------
    def _add_dock(self, key: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{key}")  # saveState() needs names
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def _add_sharding_dock(self) -> None:
        from som_studio.qt.widgets.sharding_view import ShardingView

        self.sharding_view = ShardingView()
        dock = self._add_dock("sharding", "Sharding", self.sharding_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["runs"], dock)
        self.docks["runs"].raise_()

    def _make_actions(self) -> None:
        self.run_action = QAction("&Run", self)
        self.run_action.setShortcut(QKeySequence("Ctrl+R"))
        self.run_action.triggered.connect(self.start_run)
        self.pause_action = QAction("&Pause", self)
        self.pause_action.setShortcut(QKeySequence("Ctrl+P"))
        self.pause_action.triggered.connect(self.toggle_pause)
        self.stop_action = QAction("&Stop", self)
        self.stop_action.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.stop_action.triggered.connect(self.controller.stop)
        self.open_action = QAction("&Open run…", self)
        self.open_action.setShortcut(QKeySequence("Ctrl+O"))
        self.open_action.triggered.connect(lambda: self.runs_panel.open_runs())
        self.export_action = QAction("&Export runs as JSON…", self)
        self.export_action.setToolTip("The ticked runs' full records (all kept runs when none is ticked)")
        self.export_action.setShortcut(QKeySequence("Ctrl+E"))
        self.export_action.triggered.connect(self.export_runs)
        self.quit_action = QAction("&Quit", self)
        self.quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        if self.quit_action.shortcut().isEmpty():  # not every platform names one
            self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.quit_action.triggered.connect(self.close)
        self.about_action = QAction("&About SOM Studio", self)
        self.about_action.triggered.connect(self.show_about)
        self.doctor_action = QAction("Environment &doctor…", self)
        self.doctor_action.setToolTip(
            "Check Python, JAX, the GPU driver, memory settings and the display (som-studio doctor)"
        )
        self.doctor_action.triggered.connect(self.show_doctor)

        bar = self.menuBar()
        m = bar.addMenu("&File")
        m.addAction(self.open_action)
        m.addAction(self.export_action)
        m.addSeparator()
        m.addAction(self.quit_action)
        m = bar.addMenu("&Run")
        for a in (self.run_action, self.pause_action, self.stop_action):
            m.addAction(a)
        m = bar.addMenu("&View")
        for dock in self.docks.values():
            m.addAction(dock.toggleViewAction())
        m = bar.addMenu("&Help")
        m.addAction(self.doctor_action)
        m.addSeparator()
        m.addAction(self.about_action)

        tb = self.addToolBar("Run")
        tb.setObjectName("toolbar_run")
        for a in (self.run_action, self.pause_action, self.stop_action):
            tb.addAction(a)

    def _connect(self) -> None:
        c = self.controller
        c.run_started.connect(self._on_run_started)
        c.compiled.connect(self._on_compiled)
        c.chunks_timed.connect(self._on_chunks_timed)
        c.frame_ready.connect(self.map_view.show_frame)
        c.final_map.connect(self.map_view.keep_final)
        c.quality_measured.connect(self._on_quality_measured)
        c.run_finished.connect(self._on_run_finished)
        c.run_failed.connect(self._on_run_failed)
        c.state_changed.connect(self._on_state_changed)
        self.panel.state_changed.connect(self._on_panel_state)
        self.map_view.view_changed.connect(self._on_view_changed)
        self.probe.info_ready.connect(self._on_probe_info)
        self.panel.detect_requested.connect(self.detect_devices)

    def _restore(self) -> None:
        s = self.settings
        self.panel.set_iterations_memory(s.iterations())
        cfg = s.run_config()
        if cfg is not None:
            self.panel.load_config(cfg)
        self.panel.set_cpu_devices(s.cpu_devices())
        if self._cli_cpu_devices is not None:
            self.panel.set_cpu_devices(self._cli_cpu_devices)
        self.map_view.set_choice(*s.view())
        self.timing_plot.log_scale.setChecked(s.log_timing())
        geometry = s.geometry()
        if geometry is None or not self.restoreGeometry(geometry):
            self.resize(1400, 860)
        state = s.window_state()
        if state is None or not self.restoreState(state):
            # First start: room for the form on the left, the plots on the right.
            self.resizeDocks([self.docks["run"], self.docks["timings"]], [380, 520], Qt.Orientation.Horizontal)
            self.resizeDocks([self.docks["timings"], self.docks["quality"]], [300, 300], Qt.Orientation.Vertical)
            self.resizeDocks([self.docks["runs"]], [190], Qt.Orientation.Vertical)
            self.docks["runs"].raise_()  # of the tabs below, the run list first

    def save_settings(self) -> None:
        s = self.settings
        st = self.panel.state
        if st.config is not None:
            s.set_run_config(st.config)
        for kind, n in self.panel.iterations_memory().items():
            s.set_iterations(kind, n)
        s.set_cpu_devices(self.panel.cpu_devices.value() if self.panel.simulate.isChecked() else None)
        c = self.map_view.choice()
        s.set_view(c.mode, c.component)
        s.set_log_timing(self.timing_plot.log_scale.isChecked())
        s.set_geometry(self.saveGeometry())
        s.set_window_state(self.saveState())
        s.sync()

    # -- running ---------------------------------------------------------------------------
    def start_run(self, hooks: dict[str, Any] | None = None) -> bool:
        """Start the configuration shown in the panel; ``hooks`` are for tests only."""
        st = self.panel.state
        if self.controller.busy or not st.runnable or st.config is None:
            return False
        c = self.map_view.choice()
        self.controller_cpu_devices = st.cpu_devices
        try:
            self.controller.start(
                st.config, st.cpu_devices, view=(c.mode, c.component), hooks=hooks if isinstance(hooks, dict) else None
            )
        except OSError as exc:  # no process could be started (limits, memory)
            self.show_error("Cannot start the run", f"Starting the training process failed: {exc}")
            return False
        self._run_t0 = time.perf_counter()
        self._total, self._done, self._train_elapsed = st.config.iterations, 0, 0.0
        self.progress.setValue(0)
        self.timing_plot.begin("batch", 1)
        self.quality_plot.begin()
        self.status_label.setText(f"Starting {st.config.impl} on a {st.config.grid} map…")
        self._clock.start()
        self.save_settings()
        return True

    def run_config(self, cfg: RunConfig) -> str:
        """Show ``cfg`` in the Run panel and run it; ``""``, or why it cannot run (re-run, compare queue)."""
        self.panel.load_config(cfg)
        self.panel.revalidate()
        st = self.panel.state
        if not st.runnable:
            return st.reason or "not runnable"
        return "" if self.start_run() else "a run is already in progress"

    def show_run(self, run: StoredRun) -> None:
        """Show a kept run again in the live views: its final map, timings and quality curves."""
        if self.controller.busy:
            self.status_label.setText("A run is in progress: its views are live; show kept runs after it")
            return
        r = run.record
        self.timing_plot.begin(r.kind, r.samples or 1)
        if r.compile_s:
            self.timing_plot.set_compile(r.compile_s)
        elapsed = 0.0
        chunks = []
        for c in r.chunks:
            elapsed += c.seconds
            chunks.append(ChunkTimed(c.first, c.count, c.seconds, elapsed))
        if chunks:
            self.timing_plot.add_chunks(chunks)
        self.timing_plot.flush()
        self.quality_plot.begin()
        for h in r.history:
            self.quality_plot.add(QualityMeasured(int(h["iteration"]), float(h["qe"]), float(h["te"])))
        if run.final_map is not None:
            fm = np.asarray(run.final_map)
            self.map_view.begin(fm.shape[-1], run.name)
            random = (r.config.get("data") or {}).get("source", "random") == "random"
            lo, hi = (np.zeros(fm.shape[-1]), np.ones(fm.shape[-1])) if random else frames.feature_range(fm)
            self.map_view.show_frame(
                frames.make_frame(r.iterations_done, fm, self.map_view.choice(), lo, hi), force=True
            )
            self.map_view.keep_final(fm)
            self.map_view.caption.setText(f"{run.name} (kept run): iteration {r.iterations_done:,}")
        self.status_label.setText(f"Showing {run.name} ({r.impl}, {r.status}) from the run list")

    def toggle_pause(self) -> None:
        if self.controller.state == ctl.PAUSED:
            self.controller.resume()
        else:
            self.controller.pause()

    def _on_run_started(self, ev: Started) -> None:
        self._total = ev.iterations
        self.map_view.begin(ev.features, ev.config.impl)
        self.timing_plot.begin(ev.kind, ev.samples)
        self.quality_plot.begin()
        self.status_label.setText(f"{ev.config.impl}: compiling and warming up…")
        if ev.env.get("backend") not in (None, "numpy"):
            self.env_info = ev.env
            self.panel.set_devices(ev.env, self.controller_cpu_devices)
        self.panel.set_device_memory(self._device_memory)
        self.sharding_view.set_run(ev.config, ev.layout, ev.env, ev.features, ev.samples)

    def _on_compiled(self, ev: Compiled) -> None:
        self.timing_plot.set_compile(ev.seconds, ev.compiles)
        if ev.compiles:
            self.status_label.setText(
                f"Training ({ev.compiles} compilation{'s' if ev.compiles != 1 else ''}, "
                f"{format_seconds(ev.seconds)} compile + warm-up)"
            )
        else:  # NumPy: nothing to compile
            self.status_label.setText(f"Training ({format_seconds(ev.seconds)} warm-up)")

    def _on_chunks_timed(self, chunks: list[Any]) -> None:
        self.timing_plot.add_chunks(chunks)
        self._done = chunks[-1].end
        self._train_elapsed = chunks[-1].elapsed_s
        if self._total:
            self.progress.setValue(int(1000 * self._done / self._total))
        self._update_time()

    def _on_quality_measured(self, q: QualityMeasured) -> None:
        self.quality_plot.add(q)

    def _update_time(self) -> None:
        if not self.controller.busy:
            return
        elapsed = time.perf_counter() - self._run_t0
        text = f"elapsed {elapsed:5.1f} s"
        if self._done and self._total:
            rate = self._train_elapsed / self._done
            text += f"   ETA {rate * (self._total - self._done):5.1f} s   {self._done:,}/{self._total:,}"
        self.time_label.setText(text)

    def _on_run_finished(self, record: RunRecord) -> None:
        # The run itself lands in the run list through the comparison's recorder
        # (with its final map and frames).
        self.timing_plot.finish(record.median_s, record.mean_s)
        if record.status == "ok":
            self.progress.setValue(1000)
            med = record.median_s
            self.status_label.setText(
                f"Finished {record.impl}: {record.iterations_done:,} iterations in {record.total_s:.2f} s"
                + (f", median {format_seconds(med)}/iteration" if med else "")
            )
        else:
            self.status_label.setText(f"Stopped {record.impl}: {record.message}")

    def _on_run_failed(self, message: str, record: RunRecord) -> None:
        self.timing_plot.flush()
        self.status_label.setText(f"Failed: {message}")
        self.show_error("The run failed", message)

    def _on_state_changed(self, state: str) -> None:
        busy = state != ctl.IDLE
        self.pause_action.setText("&Resume" if state == ctl.PAUSED else "&Pause")
        self.pause_action.setEnabled(state in (ctl.RUNNING, ctl.PAUSED))
        self.stop_action.setEnabled(busy and state != ctl.STOPPING)
        if state == ctl.PAUSED:
            self.status_label.setText("Paused")
        elif state == ctl.STOPPING:
            self.status_label.setText("Stopping…")
        if not busy:
            self._clock.stop()
            self._update_time_final()
        self._on_panel_state(self.panel.state)

    def _update_time_final(self) -> None:
        self.time_label.setText(f"elapsed {time.perf_counter() - self._run_t0:5.1f} s" if self._run_t0 else "")

    def _on_panel_state(self, st: PanelState) -> None:
        busy = self.controller.busy
        self.run_action.setEnabled(st.runnable and not busy)
        if not st.runnable:
            self.run_action.setToolTip(f"Cannot run: {st.reason}")
            if not busy:
                self.status_label.setText(f"Cannot run: {st.reason}")
        else:
            self.run_action.setToolTip("Run this configuration (Ctrl+R)")
            if not busy and self.status_label.text().startswith("Cannot run"):
                self.status_label.setText("Ready")
        self.sharding_view.set_config(st.config, st.cpu_devices, st.features, st.samples)
        self._detect_if_layout_needs_it(st)

    _auto_detected: ClassVar[set[int | None]] = set()

    def _detect_if_layout_needs_it(self, st: PanelState) -> None:
        """Ask which devices JAX sees once a layout needs several and nobody asked yet.

        Otherwise a 2x2 layout on a one-GPU machine passes the form and fails
        in the worker; asked once per device setting, so a failed probe is not
        repeated on every edit.
        """
        from som_studio.config import parse_layout
        from som_studio.core import registry

        if (
            st.config is None
            or st.cpu_devices is not None
            or self.probe.running
            or self.panel._known_device_count() is not None
        ):
            return  # simulated devices are checked against their count already
        if st.cpu_devices in self._auto_detected:
            return
        try:
            d, m = parse_layout(st.config.layout)
            shards = registry.get(st.config.impl).shards
        except Exception:  # the form has already said what is wrong
            return
        if shards and d * m > 1:
            self._auto_detected = self._auto_detected | {st.cpu_devices}
            self.detect_devices()

    def _on_view_changed(self, mode: str, component: int) -> None:
        self.controller.set_view(mode, component)

    # -- devices ---------------------------------------------------------------------------
    def _device_memory(self) -> tuple[int, str] | None:
        """(bytes, where) of the first JAX device, when a worker has told us."""
        info = self.env_info or {}
        devs = info.get("devices") or []
        if devs and devs[0].get("memory_limit"):
            free = int(devs[0]["memory_limit"]) - int(devs[0].get("memory_in_use") or 0)
            return free, f"{devs[0].get('kind', 'device')} memory"
        return None

    def detect_devices(self) -> None:
        """Ask a short-lived worker which devices JAX sees with the panel's settings."""
        if not self.probe.running:
            self._probe_cpu = self.panel.state.cpu_devices
            self.panel.set_devices(None, self._probe_cpu)
            self.probe.start(self._probe_cpu)

    def _on_probe_info(self, info: dict[str, Any]) -> None:
        self.panel.set_devices(info, getattr(self, "_probe_cpu", None))
        if "error" not in info:
            self.env_info = info
            self.panel.set_device_memory(self._device_memory)
        if self._about_box is not None:
            self._about_box.setText(self._about_text(info))

    # -- dialogs ---------------------------------------------------------------------------
    def show_error(self, title: str, message: str) -> None:
        """A dialog naming the problem; window-modal and non-blocking, so the app stays usable."""
        dialogs.show_error(self, title, message)

    _about_box: QMessageBox | None = None

    def _about_text(self, info: dict[str, Any] | None) -> str:
        import numpy as np
        import pyqtgraph as pg
        from PySide6 import __version__ as pyside_version
        from PySide6.QtCore import qVersion

        def version(dist: str) -> str:
            try:
                return metadata.version(dist)
            except metadata.PackageNotFoundError:
                return "not installed"

        if info is None:
            backend = "asking a worker process…"
        elif "error" in info:
            backend = f"unavailable ({info['error']})"
        else:
            devs = info.get("devices") or []
            kinds = sorted({str(d.get("kind")) for d in devs})
            mem = ""
            if devs and devs[0].get("memory_limit"):
                mem = f", {memory.format_bytes(devs[0]['memory_limit'])} each"
            backend = f"{info.get('backend')} — {len(devs)} device(s): {', '.join(kinds)}{mem}"
        return (
            f"<h3>SOM Studio {__version__}</h3>"
            "<p>Self-organizing maps from NumPy to fused, sharded JAX, timed honestly and watched live.</p>"
            "<table>"
            f"<tr><td>Python</td><td>{platform.python_version()} ({sys.platform})</td></tr>"
            f"<tr><td>NumPy</td><td>{np.__version__}</td></tr>"
            f"<tr><td>JAX / jaxlib</td><td>{version('jax')} / {version('jaxlib')}</td></tr>"
            f"<tr><td>JAX backend</td><td>{backend}</td></tr>"
            f"<tr><td>Qt / PySide6</td><td>{qVersion()} / {pyside_version}</td></tr>"
            f"<tr><td>pyqtgraph</td><td>{pg.__version__}</td></tr>"
            "</table>"
        )

    def show_about(self) -> None:
        info = self.env_info
        if info is None:
            # The GUI never starts JAX itself; a short-lived worker asks it.
            self.detect_devices()
        box = QMessageBox(
            QMessageBox.Icon.Information,
            "About SOM Studio",
            self._about_text(info),
            QMessageBox.StandardButton.Ok,
            self,
        )
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self._about_box = box
        box.finished.connect(lambda _=0: setattr(self, "_about_box", None))
        box.open()

    doctor_dialog: Any = None

    def show_doctor(self) -> None:
        """The environment doctor's report, made in a worker process (it starts JAX and runs nvidia-smi)."""
        from som_studio.qt.doctor_dialog import DoctorDialog

        if self.doctor_dialog is None:
            self.doctor_dialog = DoctorDialog(self)
        self.doctor_dialog.show()
        self.doctor_dialog.raise_()
        self.doctor_dialog.check()

    def _export_records(self) -> list[RunRecord]:
        ticked = self.runs.checked_runs()
        return [r.record for r in ticked] if ticked else self.runs.records

    def export_runs(self) -> None:
        if not self.runs.records:
            self.show_error("Nothing to export", "No run has finished yet: run a configuration first (Ctrl+R).")
            return
        path, _ = QFileDialog.getSaveFileName(self, "Export runs as JSON", "som-runs.json", "JSON (*.json)")
        if path:
            self.write_runs(path)

    def write_runs(self, path: str) -> bool:
        from som_studio.report.writers import OutputError, write_json

        try:
            # The file dialog has already asked before replacing a file.
            records = self._export_records()
            write_json(path, runs_document(records), force=True)
        except (OutputError, ValueError) as exc:
            self.show_error("Export failed", str(exc))
            return False
        self.status_label.setText(f"Wrote {len(records)} run(s) to {path}")
        return True

    # -- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        self._clock.stop()
        self.controller.shutdown()
        self.probe.shutdown()
        if self.doctor_dialog is not None:
            self.doctor_dialog.probe.shutdown()
        event.accept()
