"""The main window: the run panel, the live views, the runs so far, menus and shortcuts.

The map is the central area's first page and the largest thing on screen (at least
:data:`~som_studio.qt.layout_check.MIN_MAP_SHARE` of the window); the run list, the
comparison and the sharding view are pages beside it (:class:`~som_studio.qt.pages.Pages`),
the run panel and the two plots are docks at its sides.

A thin view: the configuration being edited lives in a
:class:`~som_studio.app_model.form.RunForm` (rendered by the run panel), the
runs in a :class:`~som_studio.app_model.runs.RunList` (rendered by the Runs
page), the active run in :class:`~som_studio.app_model.live.LiveProgress` (rendered
by :class:`~som_studio.qt.live_views.LiveViews`); one
:class:`~som_studio.qt.controller.RunController` owns the worker process. The
window wires them together and does no training and no arithmetic on maps.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QResizeEvent, QShowEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMessageBox, QWidget

from som_studio.app_model.form import FormState, RunForm, read_data
from som_studio.config import ConfigError, RunConfig
from som_studio.core.impls.protocol import Implementation
from som_studio.picture import MapViews
from som_studio.qt import controller as ctl
from som_studio.qt import dialogs, menus
from som_studio.qt.collector import collector
from som_studio.qt.comparison import ComparisonView, LiveRecorder, history_folder
from som_studio.qt.devices import DeviceWatch
from som_studio.qt.doctor_dialog import DoctorDialog
from som_studio.qt.empty_states import EmptyStates
from som_studio.qt.i18n import LanguageMenu
from som_studio.qt.identity import apply_identity
from som_studio.qt.layout_check import MIN_MAP_SHARE, visible_share
from som_studio.qt.live_views import LiveViews
from som_studio.qt.pages import Pages
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
from som_studio.storage import RunHistory, StoredRun

TITLE = "SOM Studio"
# Where the app keeps its runs' checkpoints (inside the history's folder), and how often a run writes one.
CHECKPOINTS = "checkpoints"
CHECKPOINT_EVERY_S = 60.0
#: Training seconds after which a run measures its quality again, between its planned points (within their budget).
QUALITY_EVERY_S = 5.0

DOCK_AREAS = {
    "run": Qt.DockWidgetArea.LeftDockWidgetArea,
    "timings": Qt.DockWidgetArea.RightDockWidgetArea,
    "quality": Qt.DockWidgetArea.RightDockWidgetArea,
}
"""Where each dock starts (and goes back to with View > Reset layout)."""


class MainWindow(QMainWindow):
    """SOM Studio's window.

    Threads: GUI thread only.

    Parameters
    ----------
    settings : where to remember the configuration and the window (tests pass their own).
    cpu_devices : the ``--cpu-devices`` given on the command line; overrides the remembered count.
    """

    language_note: QMessageBox | None = None  # View > Language's note while it is open

    def __init__(self, settings: Settings | None = None, cpu_devices: int | None = None) -> None:
        super().__init__()
        apply_identity(cast(QApplication, QApplication.instance()))  # a window needs its application
        self.setWindowTitle(TITLE)
        self.setObjectName("SomStudioMainWindow")
        self.settings = settings or Settings()
        self._cli_cpu_devices = cpu_devices
        self.controller = ctl.RunController(self)
        self.controller_cpu_devices: int | None = None
        self.error_dialog: QMessageBox | None = None
        self._about_box: QMessageBox | None = None
        self.doctor_dialog: Any = None
        # Cycles (Qt objects among them) are collected on this thread only while the window is open.
        collector().hold()
        self._collecting = True
        self._make_views()
        self._make_pages()
        self._make_actions()
        self._make_menus()
        self._add_more_pages()
        self._connect()
        self._restore()

    # -- construction --------------------------------------------------------------------
    def _make_views(self) -> None:
        """The models and the views, each given what it needs."""
        self.history = RunHistory(history_folder(self.settings))  # every run, kept across restarts
        self.form = RunForm(past_runs=lambda: (run.record for run in self.history.runs))  # they say how long
        self.map_view = MapView()
        self.panel = RunPanel(form=self.form)
        self.devices = DeviceWatch(self.form, self.panel.set_devices, self)
        self.probe = self.devices.probe
        self.timing_plot, self.quality_plot, self.sharding_view = TimingPlot(), QualityPlot(), ShardingView()
        # The one run list; the comparison compares the ticked ones.
        self.runs = RunsModel(self.history, self)
        self.runs_panel = RunsPanel(
            self.runs, rerun=self.run_config, show_run=self.show_kept_run, resume=self.resume_run
        )
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
        # The comparison view, given only what it needs to run a comparison. The recorder keeps each
        # run as it ends, before the live views report it (connected first).
        self.comparison = ComparisonView(
            self.runs,
            launch=self._compare_run,
            ended=self.controller.run_ended,
            stop=self.controller.stop,
            base_config=lambda: self.form.state.config,
            iterations=self.form.counts,
            judge=self.form.judge,
            settled=lambda: not self.map_view.inspector.jobs.busy(),
        )
        self._form_before_compare: RunConfig | None = None
        self._closing = False  # the window closes once the run it stopped on closing has ended
        if self.comparison.queue is not None:
            self.comparison.queue.finished.connect(self._after_compare)
        self.user_impls = UserImplementations(  # File > Add implementation…
            self.settings,
            self,
            offer=self._offer_implementation,
            choose=lambda name: self.form.edit(impl=name),
            show_error=self.show_error,
            say=self.status_label.setText,
        )
        for widget, name in (
            (self.map_view.plot, "mapView"),  # the picture itself, its legend beside it not included
            (self.panel, "runPanel"),
            (self.timing_plot, "timingPlot"),
            (self.quality_plot, "qualityPlot"),
            (self.runs_panel.table, "runsTable"),
            (self.comparison, "compareView"),
            (self.sharding_view, "shardingView"),
        ):
            widget.setObjectName(name)

    def _make_pages(self) -> None:
        """The map as the central area's first page, what needs room of its own on pages beside it; the docks."""
        self.pages = Pages()
        self.setCentralWidget(self.pages)
        self.pages.add_page("map", self.tr("Map"), self.map_view)
        self.pages.add_page("runs", self.tr("Runs"), self.runs_panel, self.tr("Every kept run, and what to do with it"))
        self.pages.add_page("compare", self.tr("Compare"), self.comparison, self.tr("The ticked runs, compared"))
        self.pages.add_page(
            "sharding", self.tr("Sharding"), self.sharding_view, self.tr("Which device holds which part of the map")
        )
        self.docks: dict[str, QDockWidget] = {}
        for key, title, widget in (
            ("run", self.tr("Run"), self.panel),  # the panel scrolls its fields, its verdict stays in sight
            ("timings", self.tr("Timings"), self.timing_plot),
            ("quality", self.tr("Quality"), self.quality_plot),
        ):
            self._add_dock(key, title, widget, DOCK_AREAS[key])

    def _make_actions(self) -> None:
        """The window's actions (its menus and run buttons show them)."""

        def action(text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
            return dialogs.action(self, text, slot, shortcut, tip)

        self.run_action = action(self.tr("&Run"), lambda: self.start_run(), "Ctrl+R")
        self.pause_action = action(self.tr("&Pause"), self.controller.toggle_pause, "Ctrl+P")
        self.stop_action = action(self.tr("&Stop"), self.controller.stop, Qt.Key.Key_Escape)
        self.open_action = action(self.tr("&Open run…"), lambda: self.runs_panel.open_runs(), "Ctrl+O")
        tip = self.tr("The ticked runs' full records (all kept runs when none is ticked)")
        self.export_action = action(
            self.tr("&Export runs as JSON…"), lambda: self.runs_panel.export_runs(), "Ctrl+E", tip
        )
        tip = self.tr("Choose a table (.csv, .npy, .parquet or .arrow) for the Run panel's data")
        self.open_data_action = action(
            self.tr("Open &data…"), lambda: self.panel.choose_data_file(), "Ctrl+Shift+O", tip
        )
        tip = self.tr("Choose a folder of tables, one format, read in file-name order (streamed when too large)")
        self.open_folder_action = action(
            self.tr("Open data &folder…"), lambda: self.panel.choose_data_folder(), tip=tip
        )
        tip = self.tr("Put the window's panels back where they start, the map the largest")
        self.reset_layout_action = action(self.tr("&Reset layout"), self.reset_layout, tip=tip)
        tip = self.tr("{name}: a hex map, ready to run").format(name="iris")
        self.example_action = action(self.tr("Open e&xample data"), self.panel.open_example, tip=tip)
        tip = self.tr("Run your own implementation, a class in a Python file, beside the built-in ones")
        self.add_impl_action = action(self.tr("Add &implementation…"), self.user_impls.ask, tip=tip)
        self.quit_action = action(self.tr("&Quit"), self.close, QKeySequence.StandardKey.Quit)
        if self.quit_action.shortcut().isEmpty():  # not every platform names one
            self.quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        self.about_action = action(self.tr("&About SOM Studio"), self.show_about)
        tip = self.tr("Check Python, JAX, the GPU driver, memory settings and the display ({command})").format(
            command="som-studio doctor"
        )
        self.doctor_action = action(self.tr("Environment &doctor…"), self.show_doctor, tip=tip)

    def _make_menus(self) -> None:
        """File, Run, View (the pages, the docks, Reset layout, Language), Help; Run, Pause and Stop beside the tabs."""
        run_actions = (self.run_action, self.pause_action, self.stop_action)
        file_actions = (
            self.open_data_action,
            self.open_folder_action,
            self.open_action,
            self.example_action,
            self.add_impl_action,
        )
        docks = (d.toggleViewAction() for d in self.docks.values())
        self.menus = menus.add_menus(
            self.menuBar(),
            {
                "&File": (self.tr("&File"), (*file_actions, self.export_action, None, self.quit_action)),
                "&Run": (self.tr("&Run"), run_actions),
                "&View": (self.tr("&View"), (*docks, None, self.reset_layout_action)),
                "&Help": (self.tr("&Help"), (self.doctor_action, None, self.about_action)),
            },
        )
        view_menu = self.menus["&View"]
        self.language_menu = LanguageMenu(self.settings, view_menu)
        self.language_menu.language_chosen.connect(self._on_language_chosen)
        view_menu.addSeparator()
        view_menu.addMenu(self.language_menu)
        self.run_bar = menus.run_bar(run_actions)
        self.pages.setCornerWidget(self.run_bar, Qt.Corner.TopRightCorner)
        # The pages go first in View, before the docks.
        self.pages.set_menu(view_menu, view_menu.insertSeparator(view_menu.actions()[0]))
        self.menuBar().insertMenu(self.menuBar().actions()[-1], self.comparison.menu)  # before Help

    def _add_more_pages(self) -> None:
        """Pages of their own: a sweep of the form's SOM, and what JAX made of the ticked runs."""
        # The sweep has a run controller of its own: its events are the Sweep page's, not the live views'.
        self.sweep_view = SweepView(
            base_config=lambda: self.form.state.config,
            keep=self.runs_panel.add_run,
            controller=ctl.RunController(self),
            cpu_devices=lambda: self.form.state.cpu_devices,
        )
        self.sweep_view.setObjectName("sweepView")
        self.pages.add_page(
            "sweep", self.tr("Sweep"), self.sweep_view, self.tr("Many maps of the form's SOM, trained together")
        )
        self.inside_view = InsideView()
        self.inside_view.setObjectName("insideView")
        self.pages.add_page("inside", self.tr("Inside"), self.inside_view, self.tr("What JAX made of the ticked runs"))

    def _connect(self) -> None:
        """The views follow the models, the controller and each other."""
        self.panel.run_button.clicked.connect(self.run_action.trigger)
        self.run_action.changed.connect(lambda: self.panel.run_button.setEnabled(self.run_action.isEnabled()))
        self.empty = EmptyStates(
            self.map_view,
            self.timing_plot,
            self.quality_plot,
            self.runs_panel.table,
            self.runs,
            self.controller.run_started,
            parent=self,
        )
        self.recorder = LiveRecorder(self.controller, parent=self)
        self.recorder.run_recorded.connect(self._on_run_recorded)
        self.comparison.status.connect(self.status_label.setText)
        self.stop_action.triggered.connect(self.comparison.cancel_compare)  # Esc stops the comparison, not one run
        self.comparison.show_requested.connect(lambda: self.pages.show_page("compare"))
        self.sweep_view.status.connect(self.status_label.setText)
        self.sweep_view.controller.run_started.connect(lambda _ev: self.live.forget_run())
        self.sweep_view.controller.run_started.connect(lambda _ev: self.empty.sweep_started())
        self.sweep_view.progress.connect(self.live.show_progress)
        self.runs.checked_changed.connect(self._on_checked_for_inside)
        self._on_checked_for_inside()
        self.live.connect()
        self.runs_panel.status.connect(self.status_label.setText)
        # The run the data go onto is shown first: its timings and quality beside its map, not the last run's.
        self.runs_panel.projector.projecting.connect(self.show_kept_run)
        self.runs_panel.projector.projected.connect(self._on_projected)
        self.controller.state_changed.connect(self._on_state_changed)
        self.panel.state_changed.connect(self._on_form_state)
        self.map_view.view_changed.connect(self.controller.set_view)
        self.devices.info_ready.connect(self._on_info_ready)
        self.panel.detect_requested.connect(self.detect_devices)

    def _restore(self) -> None:
        """What the settings remember: the user's files, the form, the views, the window; the last run's map."""
        if self.history.problems:
            problems = "; ".join(self.history.problems)
            self.status_label.setText(self.tr("Some kept runs could not be read: {problems}").format(problems=problems))
        self.user_impls.restore()  # before the form: the configuration remembered may name one
        self.settings.restore_form(self.form, self._cli_cpu_devices)
        self.map_view.set_choice(*self.settings.view())
        self.timing_plot.log_scale.setChecked(self.settings.log_timing())
        self.inside_view.record.setChecked(self.settings.record_inside())
        self.runs_panel.columns.restore(self.settings.columns("runs"))
        self.comparison.columns.restore(self.settings.columns("compare"))
        self.panel.folders = self.runs_panel.folders = self.settings  # file dialogs start where they last chose
        self._layout_checked = False
        self._restore_window()
        self._on_state_changed(self.controller.state)  # Pause and Stop off until a run starts
        self._on_form_state(self.form.state)
        # A restart shows where the last session ended: the map of its last run that has one.
        last = next((run for run in reversed(self.history.runs) if run.final_map is not None), None)
        if last is not None:
            self.show_kept_run(last)

    def _offer_implementation(self, impl: Implementation) -> None:
        """A user's implementation, loaded: offered where implementations are chosen (the run panel, the comparison)."""
        self.panel.add_implementation(impl)
        self.comparison.picker.add_implementation(impl)

    def _on_language_chosen(self, code: str) -> None:
        """View > Language: the choice takes effect at the next start (a note says so; kept as ``language_note``)."""
        self.language_note = box = menus.restart_note_box(self, code, self.language_menu.saved)
        box.finished.connect(lambda _=0: setattr(self, "language_note", None))

    def _on_run_recorded(self, run: Any) -> None:
        # A run recorded with its inside is ticked: the Inside page shows the ticked runs, and it was asked for.
        inside = bool(run.record.extra.get("inside"))
        self.comparison.note_recorded(self.runs_panel.add_run(run, check=inside))

    def _on_checked_for_inside(self) -> None:
        runs = self.runs.checked_runs()
        self.inside_view.set_runs([r.name for r in runs], [r.record for r in runs])

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
            # Within the screen's room: without a window manager (a bare X server, VNC) nothing else shrinks it.
            room = self.screen().availableGeometry()
            self.resize(min(1400, room.width()), min(860, room.height()))
        state = s.window_state()
        self._restored = state is not None and self.restoreState(state)
        if not self._restored:
            self.reset_layout()

    def reset_layout(self) -> None:
        """View > Reset layout: the run panel on the left, the plots on the right, the map page between, largest."""
        for key, dock in self.docks.items():
            dock.setFloating(False)
            self.addDockWidget(DOCK_AREAS[key], dock)  # added again: back in its area, in this order
            dock.show()
        self._fit_docks()
        self.pages.show_page("map")

    def _fit_docks(self) -> None:
        """Side docks at their least up to a 1400 px window (the default size: a smaller screen shrinks it to
        1280 with the map keeping its share), wider beyond it; the plots halved."""
        w, h = self.width(), self.height()
        extra = max(0, w - 1400)
        left = min(420, self.panel.minimumWidth() + extra // 5)
        right = min(520, 230 + extra // 4)
        self.resizeDocks([self.docks["run"], self.docks["timings"]], [left, right], Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["timings"], self.docks["quality"]], [h // 2, h // 2], Qt.Orientation.Vertical)

    def map_share(self) -> float:
        """The share of the window's area in which the map picture is seen (0 on another page)."""
        return visible_share(self.map_view.plot, self)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._layout_checked:
            # A saved layout that leaves the map less than its share is not restored (a squeezed
            # layout saved once would otherwise come back at every start).
            self._layout_checked = True
            self._keep_map_room(self.tr("The saved layout left the map too little room: the default layout is used"))

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if self._layout_checked and self.isVisible():
            self._keep_map_room()  # a smaller window takes its room from the side docks, not the map

    def _keep_map_room(self, note: str = "") -> None:
        if self.pages.current_key() != "map" or self.isMinimized():
            return
        layout = self.layout()
        if layout is not None:
            layout.activate()
        if self.map_share() < MIN_MAP_SHARE:
            if note:
                self.reset_layout()
                self.status_label.setText(note)
            else:
                self._fit_docks()

    def save_settings(self) -> None:
        s = self.settings
        s.save_form(self.form)
        c = self.map_view.choice()
        s.set_view(c.mode, c.component)
        s.set_log_timing(self.timing_plot.log_scale.isChecked())
        s.set_record_inside(self.inside_view.record.isChecked())
        s.set_columns("runs", self.runs_panel.columns.state())
        s.set_columns("compare", self.comparison.columns.state())
        s.set_geometry(self.saveGeometry())
        s.set_window_state(self.saveState())
        s.sync()

    # -- running ---------------------------------------------------------------------------
    def start_run(self, hooks: dict[str, Any] | None = None, resume: str | None = None) -> bool:
        """Start the form's configuration; ``hooks`` are for tests only.

        Every run keeps a checkpoint in the history's folder (every minute and when it is stopped);
        ``resume`` is the checkpoint folder of a stopped run to go on from.
        """
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
                session_options={
                    **self.inside_view.session_options(),
                    **self._checkpoint_options(resume),
                    # A long run's Quality dock moves within seconds, not at its first planned point minutes in.
                    "quality_every_s": QUALITY_EVERY_S,
                },
            )
        except OSError as exc:  # no process could be started (limits, memory)
            self.show_error(
                self.tr("Cannot start the run"),
                self.tr("Starting the training process failed: {error}").format(error=exc),
            )
            return False
        self.live.begin(st.config)
        self.empty.run_starting(self.status_label.text())
        self.save_settings()
        return True

    def _checkpoint_options(self, resume: str | None) -> dict[str, Any]:
        """The session's checkpoints: a new folder for a new run, the stopped run's own when resumed."""
        import uuid

        from som_studio.session.checkpoint import Checkpoints

        folder = Path(resume) if resume else self.history.folder / CHECKPOINTS / uuid.uuid4().hex[:16]
        options: dict[str, Any] = {"checkpoint": Checkpoints(folder, CHECKPOINT_EVERY_S, at_end=False)}
        if resume:
            options["resume"] = str(folder)
        return options

    def resume_run(self, run: StoredRun) -> str:
        """Go on training a stopped run from its checkpoint; ``""``, or why it cannot start."""
        try:
            cfg = RunConfig.from_dict(run.record.config)
        except ConfigError as exc:
            return self.tr("Its saved configuration is not valid: {error}").format(error=exc)
        st = self._show_config(cfg)
        if not st.runnable:
            return st.reason or self.tr("not runnable")
        folder = str((run.record.extra.get("checkpoint") or {}).get("folder", ""))
        return "" if self.start_run(resume=folder) else self.tr("a run is already in progress")

    def show_kept_run(self, run: StoredRun) -> None:
        """Show a kept run again on the map page (double-click in the run list, Show, a restart)."""
        self.live.show_run(run)
        if not self.controller.busy:
            if run.final_map is not None:  # a run stopped before its map has only its plots (they say so)
                self.empty.run_shown()
            self.pages.show_page("map")

    def _on_projected(self, result: Any) -> None:
        show_projection(self.map_view, result)
        self.empty.run_shown()
        self.pages.show_page("map")

    def _show_config(self, cfg: RunConfig) -> FormState:
        """Show ``cfg`` in the form, its data file read now if it was not (the answer is needed at once)."""
        st = self.form.set_config(cfg)
        while st.data_needed is not None:
            st = self.form.data_read(st.data_needed, read_data(st.data_needed))
        return st

    def run_config(self, cfg: RunConfig) -> str:
        """Show ``cfg`` in the form and run it; ``""``, or why it cannot run (re-run, compare queue)."""
        st = self._show_config(cfg)
        if not st.runnable:
            return st.reason or self.tr("not runnable")
        return "" if self.start_run() else self.tr("a run is already in progress")

    def _compare_run(self, cfg: RunConfig) -> str:
        """One run of the comparison's race (:meth:`run_config`), the form as it was kept to be shown again after."""
        if self._form_before_compare is None:
            self._form_before_compare = self.form.state.config
        return self.run_config(cfg)

    def _after_compare(self, _impls: list[str]) -> None:
        # The race showed each run's configuration in the form: the one the user had comes back.
        kept, self._form_before_compare = self._form_before_compare, None
        if kept is not None:
            self._show_config(kept)

    def _on_state_changed(self, state: str) -> None:
        busy = state != ctl.IDLE
        self.pause_action.setText(self.tr("&Resume") if state == ctl.PAUSED else self.tr("&Pause"))
        self.pause_action.setEnabled(state in (ctl.RUNNING, ctl.PAUSED))
        self.stop_action.setEnabled(busy and state != ctl.STOPPING)
        self.comparison.picker.set_busy(busy)
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
        if st.candidate is not None:
            self.map_view.expect(st.features, MapViews.from_config(st.candidate, st.feature_names))
        self.empty.form_changed(st)
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
        self.error_dialog = box = dialogs.show_error(self, title, message)  # kept while open: tests read it
        box.finished.connect(lambda _=0: setattr(self, "error_dialog", None))

    def _on_info_ready(self, info: dict[str, Any] | None) -> None:
        if self._about_box is not None:
            self._about_box.setText(dialogs.about_text(info))

    def show_about(self) -> None:
        if self.env_info is None:
            self.detect_devices()  # the GUI never starts JAX itself; a short-lived worker asks it
        self._about_box = box = dialogs.show_about(self, self.env_info)  # its text follows the probe
        box.finished.connect(lambda _=0: setattr(self, "_about_box", None))

    def show_doctor(self) -> None:
        """The environment doctor's report, made in a worker process (it starts JAX and runs nvidia-smi)."""
        self.doctor_dialog = DoctorDialog.show_for(self, self.doctor_dialog)

    # -- closing ---------------------------------------------------------------------------
    def closeEvent(self, event: QCloseEvent) -> None:
        if self.controller.busy:
            # Closing stops the run as Stop does, and the window closes once the stopped run is kept (with its
            # checkpoint, where it keeps them): what it trained so far is the user's, not thrown away.
            if not self._closing:
                self._closing = True
                if self.comparison.queue is not None:
                    self.comparison.queue.cancel()
                self.controller.stop()
                self.status_label.setText(self.tr("Stopping the run, then closing…"))
                self.controller.run_ended.connect(self.close, Qt.ConnectionType.QueuedConnection)
            event.ignore()
            return
        self.save_settings()
        self.live.close()
        self.controller.shutdown()
        self.devices.shutdown()
        self.panel.wait_for_readers()
        self.runs_panel.projector.wait()
        self.sweep_view.wait()
        self.history.close()  # the runs' files still being written are written
        if self.doctor_dialog is not None:
            self.doctor_dialog.probe.shutdown()
        if self._collecting:  # the window's threads are done: collection may run anywhere again
            self._collecting = False
            collector().release()
        event.accept()
