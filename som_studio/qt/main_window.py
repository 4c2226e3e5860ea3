"""The main window: the run panel, the live views, the runs so far, menus and shortcuts.

A thin view: the configuration being edited lives in a
:class:`~som_studio.app_model.form.RunForm` (rendered by the run panel), the
runs in a :class:`~som_studio.app_model.runs.RunList` (rendered by the Runs
dock), the active run in :class:`~som_studio.app_model.live.LiveRun` (rendered
by :class:`~som_studio.qt.live_views.LiveViews`); one
:class:`~som_studio.qt.controller.RunController` owns the worker process. The
window wires them together and does no training and no arithmetic on maps.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMessageBox, QWidget

from som_studio.app_model.form import FormState, RunForm, read_data
from som_studio.config import RunConfig
from som_studio.qt import controller as ctl
from som_studio.qt import dialogs
from som_studio.qt.comparison import ComparisonView, LiveRecorder, history_folder
from som_studio.qt.devices import DeviceWatch
from som_studio.qt.docks import show_with_room
from som_studio.qt.doctor_dialog import DoctorDialog
from som_studio.qt.live_views import LiveViews
from som_studio.qt.menus import make_actions
from som_studio.qt.project_dialog import show_projection
from som_studio.qt.runs import RunsModel
from som_studio.qt.runs_panel import RunsPanel
from som_studio.qt.settings import Settings
from som_studio.qt.user_impls import UserImplementations
from som_studio.qt.widgets.inside_view import InsideView
from som_studio.qt.widgets.map_view import MapView
from som_studio.qt.widgets.quality_plot import QualityPlot
from som_studio.qt.widgets.run_panel import RunPanel
from som_studio.qt.widgets.sharding_view import ShardingView
from som_studio.qt.widgets.sweep_view import SweepView
from som_studio.qt.widgets.timing_plot import TimingPlot
from som_studio.storage import RunHistory

TITLE = "SOM Studio"


class MainWindow(QMainWindow):
    """SOM Studio's window.

    Threads: GUI thread only.

    Parameters
    ----------
    settings : where to remember the configuration and the window (tests pass their own).
    cpu_devices : the ``--cpu-devices`` given on the command line; overrides the remembered count.
    """

    # Made by som_studio.qt.menus.make_actions.
    run_action: QAction
    pause_action: QAction
    stop_action: QAction
    open_action: QAction
    export_action: QAction
    example_action: QAction
    add_impl_action: QAction
    quit_action: QAction
    about_action: QAction
    doctor_action: QAction
    menus: dict[str, Any]
    language_menu: Any
    language_note: Any = None

    def __init__(self, settings: Settings | None = None, cpu_devices: int | None = None) -> None:
        super().__init__()
        from som_studio.qt.app import apply_identity

        apply_identity(QApplication.instance())
        self.setWindowTitle(TITLE)
        self.setObjectName("SomStudioMainWindow")
        self.settings = settings or Settings()
        self._cli_cpu_devices = cpu_devices
        self.controller = ctl.RunController(self)
        self.controller_cpu_devices: int | None = None
        self.error_dialog: QMessageBox | None = None
        self._about_box: QMessageBox | None = None
        self.doctor_dialog: Any = None

        # -- models and views ------------------------------------------------------------
        self.history = RunHistory(history_folder(self.settings))  # every run, kept across restarts
        self.form = RunForm(past_runs=lambda: (run.record for run in self.history.runs))  # they say how long
        self.map_view = MapView()
        self.setCentralWidget(self.map_view)
        self.panel = RunPanel(form=self.form)
        self.user_impls = UserImplementations(self)  # File > Add implementation…
        self.devices = DeviceWatch(self.form, self.panel.set_devices, self)
        self.probe = self.devices.probe
        self.timing_plot, self.quality_plot, self.sharding_view = TimingPlot(), QualityPlot(), ShardingView()
        # The one run list; the comparison compares the ticked ones.
        self.runs = RunsModel(self.history, self)
        self.runs_panel = RunsPanel(self.runs, rerun=self.run_config, show_run=lambda run: self.live.show_run(run))
        self.live = LiveViews(
            self.controller,
            self.map_view,
            self.timing_plot,
            self.quality_plot,
            self.sharding_view,
            on_env=lambda env: self.devices.run_env(env, self.controller_cpu_devices),
            on_failed=lambda message: self.show_error(self.tr("The run failed"), message),
        )
        self.status_label, self.time_label, self.progress = self.live.status, self.live.time_label, self.live.progress
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.time_label)
        self.statusBar().addPermanentWidget(self.progress)
        self.docks: dict[str, QDockWidget] = {}
        left, right, bottom = (
            Qt.DockWidgetArea.LeftDockWidgetArea,
            Qt.DockWidgetArea.RightDockWidgetArea,
            Qt.DockWidgetArea.BottomDockWidgetArea,
        )
        for key, title, widget, area in (
            ("run", self.tr("Run"), self.panel, left),  # the panel scrolls its fields, its verdict stays in sight
            ("timings", self.tr("Timings"), self.timing_plot, right),
            ("quality", self.tr("Quality"), self.quality_plot, right),
            ("runs", self.tr("Runs"), self.runs_panel, bottom),
            ("sharding", self.tr("Sharding"), self.sharding_view, bottom),
        ):
            self._add_dock(key, title, widget, area)
        self.tabifyDockWidget(self.docks["runs"], self.docks["sharding"])
        self.docks["runs"].raise_()

        make_actions(self)  # the actions, the menus (View > Language too) and the tool bar
        # The comparison view, given only what it needs to run a comparison. The recorder keeps each
        # run as it ends, before the live views report it (connected first).
        self.comparison = ComparisonView(
            self.runs,
            launch=self.run_config,
            ended=self.controller.run_ended,
            stop=self.controller.stop,
            base_config=lambda: self.form.state.config,
            iterations=self.form.counts,
            judge=self.form.judge,
        )
        self.recorder = LiveRecorder(self.controller, parent=self)
        self.recorder.run_recorded.connect(lambda run: self.comparison.note_recorded(self.runs_panel.add_run(run)))
        self.comparison.status.connect(self.status_label.setText)
        self.stop_action.triggered.connect(self.comparison.cancel_compare)  # Esc stops the comparison, not one run
        self.tabifyDockWidget(
            self.docks["runs"], self._add_dock("compare", self.tr("Compare"), self.comparison, bottom)
        )
        for signal in (self.comparison.show_requested, self.docks["compare"].visibilityChanged):  # room for its maps
            signal.connect(lambda visible=True: show_with_room(self, self.docks["compare"], visible))
        self.menuBar().insertMenu(self.menuBar().actions()[-1], self.comparison.menu)  # before Help
        # The Inside page: the roofline of the ticked runs that recorded their inside.
        self.inside_view = InsideView()
        self.tabifyDockWidget(self.docks["runs"], self._add_dock("inside", self.tr("Inside"), self.inside_view, bottom))
        self.runs.checked_changed.connect(self._on_checked_for_inside)
        self._on_checked_for_inside()
        view_menu = self.menus["&View"]  # the docks, then (after a separator) the Language menu
        view_menu.insertAction(view_menu.actions()[-2], self.docks["compare"].toggleViewAction())
        self.sweep_view = SweepView(base_config=lambda: self.form.state.config, keep=self.runs_panel.add_run)
        self.sweep_view.status.connect(self.status_label.setText)
        self.tabifyDockWidget(self.docks["runs"], self._add_dock("sweep", self.tr("Sweep"), self.sweep_view, bottom))
        view_menu.insertAction(view_menu.actions()[-2], self.docks["sweep"].toggleViewAction())
        view_menu.insertAction(view_menu.actions()[-2], self.docks["inside"].toggleViewAction())
        self.live.connect()
        self.runs_panel.status.connect(self.status_label.setText)
        self.runs_panel.projector.projected.connect(lambda result: show_projection(self.map_view, result))
        if self.history.problems:
            problems = "; ".join(self.history.problems)
            self.status_label.setText(self.tr("Some kept runs could not be read: {problems}").format(problems=problems))
        self.controller.state_changed.connect(self._on_state_changed)
        self.panel.state_changed.connect(self._on_form_state)
        self.map_view.view_changed.connect(self.controller.set_view)
        self.devices.info_ready.connect(
            lambda info: self._about_box and self._about_box.setText(dialogs.about_text(info))
        )
        self.panel.detect_requested.connect(self.detect_devices)
        self.user_impls.restore()  # before the form: the configuration remembered may name one
        self.settings.restore_form(self.form, self._cli_cpu_devices)
        self.map_view.set_choice(*self.settings.view())
        self.timing_plot.log_scale.setChecked(self.settings.log_timing())
        self._restore_window()
        self._on_state_changed(self.controller.state)  # Pause and Stop off until a run starts
        self._on_form_state(self.form.state)

    def _on_checked_for_inside(self) -> None:
        runs = self.runs.checked_runs()
        self.inside_view.set_runs([r.name for r in runs], [r.record for r in runs])

    # -- construction --------------------------------------------------------------------
    def _add_dock(self, key: str, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{key}")  # saveState() needs names
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.docks[key] = dock
        return dock

    def _restore_window(self) -> None:
        s = self.settings
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
        s.save_form(self.form)
        c = self.map_view.choice()
        s.set_view(c.mode, c.component)
        s.set_log_timing(self.timing_plot.log_scale.isChecked())
        s.set_geometry(self.saveGeometry())
        s.set_window_state(self.saveState())
        s.sync()

    # -- running ---------------------------------------------------------------------------
    def start_run(self, hooks: dict[str, Any] | None = None) -> bool:
        """Start the form's configuration; ``hooks`` are for tests only."""
        st = self.form.state
        if self.controller.busy or not st.runnable or st.config is None:
            return False
        if not self.user_impls.ready(st.config.impl):  # a user's file changed and no longer loads
            return False
        c = self.map_view.choice()
        self.controller_cpu_devices = st.cpu_devices
        try:
            self.controller.start(
                st.config,
                st.cpu_devices,
                view=(c.mode, c.component),
                hooks=hooks,
                session_options=self.inside_view.session_options(),
            )
        except OSError as exc:  # no process could be started (limits, memory)
            self.show_error(
                self.tr("Cannot start the run"),
                self.tr("Starting the training process failed: {error}").format(error=exc),
            )
            return False
        self.live.begin(st.config)
        self.save_settings()
        return True

    def run_config(self, cfg: RunConfig) -> str:
        """Show ``cfg`` in the form and run it; ``""``, or why it cannot run (re-run, compare queue)."""
        st = self.form.set_config(cfg)
        while st.data_needed is not None:  # a file not read yet: read it now, the answer is needed
            st = self.form.data_read(st.data_needed, read_data(st.data_needed))
        if not st.runnable:
            return st.reason or self.tr("not runnable")
        return "" if self.start_run() else self.tr("a run is already in progress")

    def _on_state_changed(self, state: str) -> None:
        busy = state != ctl.IDLE
        self.pause_action.setText(self.tr("&Resume") if state == ctl.PAUSED else self.tr("&Pause"))
        self.pause_action.setEnabled(state in (ctl.RUNNING, ctl.PAUSED))
        self.stop_action.setEnabled(busy and state != ctl.STOPPING)
        self._on_form_state(self.form.state)

    def _on_form_state(self, st: FormState) -> None:
        busy = self.controller.busy
        self.run_action.setEnabled(st.runnable and not busy)
        cannot = self.tr("Cannot run: {reason}")
        if not st.runnable:
            self.run_action.setToolTip(cannot.format(reason=st.reason))
            if not busy:
                self.status_label.setText(cannot.format(reason=st.reason))
        else:
            self.run_action.setToolTip(self.tr("Run this configuration ({shortcut})").format(shortcut="Ctrl+R"))
            if not busy and self.status_label.text().startswith(cannot.partition("{")[0]):
                self.status_label.setText(self.tr("Ready"))
        self.sharding_view.set_config(st.config, st.cpu_devices, st.features, st.samples)
        self.devices.detect_if_layout_needs_it(st)

    @property
    def env_info(self) -> dict[str, Any] | None:
        """What the last worker said of JAX's devices, or ``None``."""
        return self.devices.env_info

    def detect_devices(self) -> None:
        self.devices.detect()

    # -- dialogs ---------------------------------------------------------------------------
    def show_error(self, title: str, message: str) -> None:
        """A dialog naming the problem; window-modal and non-blocking, so the app stays usable."""
        dialogs.show_error(self, title, message)

    def show_about(self) -> None:
        if self.env_info is None:
            self.detect_devices()  # the GUI never starts JAX itself; a short-lived worker asks it
        dialogs.show_about(self, self.env_info)

    def show_doctor(self) -> None:
        """The environment doctor's report, made in a worker process (it starts JAX and runs nvidia-smi)."""
        self.doctor_dialog = DoctorDialog.show_for(self, self.doctor_dialog)

    # -- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_settings()
        self.live.close()
        self.controller.shutdown()
        self.devices.shutdown()
        self.panel.wait_for_readers()
        self.runs_panel.projector.wait()
        self.sweep_view.wait()
        if self.doctor_dialog is not None:
            self.doctor_dialog.probe.shutdown()
        event.accept()
