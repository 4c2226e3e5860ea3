"""The comparison view: the runs ticked, compared, shown and exported.

It renders one :class:`~som_studio.report.Comparison` of the ticked runs
(summary table, sortable, with a baseline to pick; flags and configuration
differences; final maps, timing and quality charts drawn by the report's own
chart code) and exports it through the comparison pipeline's
:class:`~som_studio.report.Exporter`, the same one ``som-studio compare``
uses. It also runs ticked implementations one after another
(:class:`~.queue.CompareQueue`) through the few callables it is given.

Its interface to the window is narrow: it is given the run list and, to run a
comparison, ``launch``/``ended``/``stop``/``base_config``/``iterations``/``judge``; it
offers :attr:`ComparisonView.menu` (the Compare menu) and the signals
``status`` and ``show_requested``.

Threads: everything here runs in the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QMenu,
    QMessageBox,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from som_studio.app_model.form import app_text
from som_studio.config import Refusal, RunConfig
from som_studio.core.impls import registry
from som_studio.qt import dialogs
from som_studio.qt.comparison.queue import CompareQueue, ImplementationPicker
from som_studio.qt.comparison.summary import SummaryModel
from som_studio.qt.comparison.texts import CHARTS, data_text, notes_html, translate
from som_studio.qt.runs import RunsModel
from som_studio.qt.widgets.columns import ColumnChooser
from som_studio.report import EXPORTS, Comparison, Exporter, ExportError, compare
from som_studio.session.preflight import preflight
from som_studio.storage import StoredRun
from som_studio.storage.writers import OutputError

#: The most runs the page's timing and quality legends list to a line (the exported report's take four).
APP_LEGEND_MOST = 2


class ComparisonView(QWidget):
    """The runs kept, the comparison of those ticked, and export.

    Parameters
    ----------
    runs : the one run list (the Runs page shows it in full).
    launch : starts one configuration (see :class:`CompareQueue`); ``None``: no compare queue.
    ended, stop : the controller's ``run_ended`` signal and its ``stop``.
    settled : whether the app is done with the last run (see :class:`CompareQueue`).
    base_config : the configuration compared runs share (the Run panel's), or ``None`` when invalid.
    iterations : steps/epochs per kind to use for implementations of the other kind.
    judge : the refusals of one configuration (the Run form's preflight, on its data and
        devices); by default the preflight of what needs neither.
    """

    selection_changed = Signal()
    status = Signal(str)
    show_requested = Signal()  # the view wants to be seen (a comparison was asked for, or ended)

    def __init__(
        self,
        runs: RunsModel,
        launch: Callable[[RunConfig], str] | None = None,
        ended: Any = None,
        stop: Callable[[], None] | None = None,
        base_config: Callable[[], RunConfig | None] | None = None,
        iterations: Callable[[], dict[str, int]] | None = None,
        judge: Callable[[RunConfig], Sequence[Refusal]] | None = None,
        parent: QWidget | None = None,
        settled: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        self.runs = runs
        self.history = runs.history
        self.report: Comparison | None = None
        self._base_config = base_config
        self._iterations = iterations
        self._judge = judge or preflight
        self.error_dialog: QMessageBox | None = None
        self._queue_ids: list[str] = []  # runs recorded while the compare queue ran
        self.queue = (
            CompareQueue(launch, ended, stop or (lambda: None), self, settled) if launch and ended is not None else None
        )

        outer = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(self._runs_side())
        outer.addWidget(self._comparison_side())
        outer.setStretchFactor(1, 3)
        outer.setSizes([220, 880])  # the run names need little; the table and charts take the rest
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

        self.menu = self._compare_menu()
        self._filling = False
        runs.checked_changed.connect(self.refresh)
        self.refresh()

    def _runs_side(self) -> QWidget:
        """Left: the runs' names and ticks, and the implementations to compare."""
        self.picker = ImplementationPicker()
        self.impl_list = self.picker.impl_list
        self.compare_button = self.picker.compare_button
        self.cancel_button = self.picker.cancel_button
        self.queue_label = self.picker.queue_label
        self.compare_button.clicked.connect(self.compare_ticked)
        self.cancel_button.clicked.connect(self.cancel_compare)
        self.picker.setEnabled(self.queue is not None)
        if self.queue is not None:
            self.queue.progress.connect(self._on_queue_progress)
            self.queue.finished.connect(self._on_queue_finished)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        # The run list's names and ticks: a second view on the one model the
        # Runs page shows in full (ticking or renaming here is the same as there).
        self.runs_view = QListView()
        self.runs_view.setModel(self.runs)
        self.runs_view.setModelColumn(0)
        self.runs_view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.runs_view.setToolTip(self.tr("Tick runs to compare them (the Runs tab lists them in full)"))
        self.runs.rowsInserted.connect(lambda *_: self.runs_view.scrollToBottom())
        lv.addWidget(QLabel(self.tr("Runs (tick to compare)")))
        lv.addWidget(self.runs_view, 2)
        lv.addWidget(self.picker, 3)
        return left

    def _comparison_side(self) -> QWidget:
        """Right: the baseline and Export, what the runs trained on, the summary table and the charts."""
        self.baseline = QComboBox()
        self.baseline.setToolTip(
            self.tr(
                "Speed-ups are the baseline's median time per iteration over each run's, "
                "within a kind (an epoch for batch runs, a step for online ones)"
            )
        )
        self.baseline.currentIndexChanged.connect(self._on_baseline_changed)
        # Its items change with the runs ticked: its width follows them, or the default read "(de".
        self.baseline.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # A push button with a menu: its arrow gets room of its own (a tool button's overlaps the word).
        self.export_button = QPushButton(self.tr("Export"))
        self.export_menu = self._export_menu(self.export_button)
        self.export_button.setMenu(self.export_menu)
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Baseline:")))
        top.addWidget(self.baseline)  # its text's width; a stretch factor would split the room evenly
        top.addStretch(1)
        top.addWidget(self.export_button)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
        # The report's first line: the fastest run against its baseline, per iteration and end to end (the table's
        # speed-up columns are past its right edge in most windows).
        self.headline = QLabel("")
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.PlainText)
        font = self.headline.font()
        font.setBold(True)
        self.headline.setFont(font)
        self.headline.hide()
        # What the compared runs trained on, and the settings in which they differ.
        self.data_line = QLabel("")
        self.data_line.setWordWrap(True)
        self.data_line.setTextFormat(Qt.TextFormat.PlainText)
        self.summary = SummaryModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.summary)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # the runs' own order until a header is clicked
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.columns = ColumnChooser(self.table)  # movable, hideable, remembered by the window
        self.charts = QTabWidget()
        self._chart_widgets: dict[str, QWidget] = {}
        for key, title in CHARTS:
            holder = QWidget()
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            self.charts.addTab(holder, translate("ComparisonView", title))
            self._chart_widgets[key] = holder

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addLayout(top)
        rv.addWidget(self.headline)
        rv.addWidget(self.data_line)
        # The notes in a pane of their own that scrolls: many runs' warnings and notes took most of the page,
        # leaving the table two rows and the charts a strip of axis labels.
        notes = QScrollArea()
        notes.setWidget(self.notes)
        notes.setWidgetResizable(True)
        notes.setFrameShape(QFrame.Shape.NoFrame)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(notes)
        split.addWidget(self.table)
        split.addWidget(self.charts)
        split.setStretchFactor(2, 3)
        split.setSizes([70, 150, 400])  # a few lines of notes, four rows of table, the rest for the charts
        self.notes.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        rv.addWidget(split, 1)
        return right

    # -- menus ------------------------------------------------------------------------------
    def _export_menu(self, parent: QWidget) -> QMenu:
        menu = QMenu(self.tr("&Export comparison"), parent)
        for key in EXPORTS:
            action = menu.addAction(EXPORTS[key].menu_text)
            action.triggered.connect(lambda _=False, k=key: self.export(k))
        return menu

    def _compare_menu(self) -> QMenu:
        """The Compare menu, for the window's menu bar: compare, cancel, export."""
        menu = QMenu(self.tr("&Compare"), self)
        compare_action = QAction(self.tr("&Compare ticked implementations"), menu)
        compare_action.setShortcut(QKeySequence("Ctrl+Shift+R"))
        compare_action.triggered.connect(self._on_compare_action)
        cancel = QAction(self.tr("Ca&ncel comparison"), menu)
        cancel.triggered.connect(self.cancel_compare)
        menu.addAction(compare_action)
        menu.addAction(cancel)
        menu.addSeparator()
        menu.addMenu(self._export_menu(menu))
        return menu

    def _on_compare_action(self) -> None:
        self.show_requested.emit()
        self.compare_ticked()

    # -- the runs (the shared run list) ----------------------------------------------------
    def checked_runs(self) -> list[StoredRun]:
        return self.runs.checked_runs()

    def set_checked(self, run_ids: list[str]) -> None:
        self.runs.set_checked(run_ids)

    # -- compare queue ----------------------------------------------------------------------
    def ticked_impls(self) -> list[str]:
        """The ticked implementations, in the order they were ticked (the order they run in)."""
        return self.picker.ticked()

    def set_ticked_impls(self, names: list[str]) -> None:
        """Tick ``names`` in this order (and untick the others)."""
        self.picker.set_ticked(names)

    def compare_configs(self) -> tuple[list[RunConfig], str]:
        """One config per ticked implementation, from the Run panel's; or why not."""
        names = self.ticked_impls()
        if len(names) < 1:
            return [], self.tr("tick the implementations to compare")
        base = self._base_config() if self._base_config else None
        if base is None:
            return [], self.tr("the Run panel's configuration is not runnable; fix it first")
        counts = self._iterations() if self._iterations else {}
        out = []
        for name in names:
            impl = registry.get(name)
            n = counts.get(impl.kind) or base.iterations
            cfg = base.replace(
                impl=name, steps=n if impl.kind == "online" else None, epochs=n if impl.kind == "batch" else None
            )
            # Refused here, every run before any trains, as the form refuses its own configuration.
            refused = self._judge(cfg)
            if refused:
                return [], f"{name}: {app_text(refused[0])}"
            out.append(cfg)
        return out, ""

    def compare_ticked(self) -> bool:
        if self.queue is None or self.queue.active:
            return False
        configs, reason = self.compare_configs()
        if reason:
            self.show_error(self.tr("Cannot compare"), reason)
            return False
        self._queue_ids = []
        self.picker.set_running(True)
        self.queue.start(configs)
        return True

    def cancel_compare(self) -> None:
        if self.queue is not None:
            self.queue.cancel()

    def note_recorded(self, kept: StoredRun) -> None:
        """A run was kept (the app calls this with each recorded run, once it is in the run list)."""
        if self.queue is not None and self.queue.active:
            self._queue_ids.append(kept.id)

    def _on_queue_progress(self, text: str) -> None:
        self.queue_label.setText(text)
        self.status.emit(text)

    def _on_queue_finished(self, _impls: list[str]) -> None:
        self.picker.set_running(False)
        if self._queue_ids:
            self.set_checked(self._queue_ids)
        self.show_requested.emit()

    # -- the comparison -------------------------------------------------------------------------
    def _baseline_name(self) -> str | None:
        data = self.baseline.currentData()
        return str(data) if data else None

    def _on_baseline_changed(self) -> None:
        if not self._filling:
            self.refresh()

    def refresh(self) -> None:
        runs = self.checked_runs()
        names_before = self._baseline_name()
        self.report = compare(runs) if runs else None
        # the baseline choices: default, or one of the compared runs
        self._filling = True
        self.baseline.clear()
        self.baseline.addItem(self.tr("NumPy run of each kind (default)"), None)
        if self.report:
            for r in self.report.runs:
                self.baseline.addItem(r.name, r.name)
        i = self.baseline.findData(names_before) if names_before else 0
        self.baseline.setCurrentIndex(max(i, 0))
        self._filling = False
        if self.report and self._baseline_name():
            self.report = compare(self.report.runs, baseline=self._baseline_name())
        self.summary.set_report(self.report)
        self.table.resizeColumnsToContents()
        self.notes.setText(notes_html(self.report))
        self.headline.setText((self.report.headline() if self.report else None) or "")
        self.headline.setVisible(bool(self.headline.text()))
        self.data_line.setText(data_text(self.checked_runs()))
        self.data_line.setVisible(bool(self.data_line.text()))
        self._draw_charts()
        self.export_button.setEnabled(self.report is not None)
        self.selection_changed.emit()

    def _draw_charts(self) -> None:
        from som_studio.qt.chart_style import theme_of
        from som_studio.qt.report_charts import LAYOUTS

        for key, holder in self._chart_widgets.items():
            lay = holder.layout()
            assert lay is not None  # every holder got its layout in __init__
            while lay.count():
                item = lay.takeAt(0)
                old = item.widget() if item is not None else None
                if old is not None:
                    old.deleteLater()
            if self.report is None:
                lay.addWidget(QLabel(self.tr("Nothing ticked.")))
                continue
            # The app's charts follow the palette, as the live plots do; the report's stay on white paper.
            options: dict[str, object] = {"theme": theme_of(self)}
            if key == "maps":
                options["fixed"] = False
            elif key in ("timing", "quality"):
                # Two runs to a line: four set the chart's least width past the page's at 1280 px, cutting it off.
                options["legend_most"] = APP_LEGEND_MOST
            widget, _, _ = LAYOUTS[key](self.report, **options)
            if key == "maps":  # as many rows as the runs need: they scroll in a low page
                scroll = QScrollArea()
                scroll.setWidgetResizable(True)
                scroll.setFrameShape(QFrame.Shape.NoFrame)
                scroll.setWidget(widget)
                widget = scroll
            lay.addWidget(widget)

    # -- export ---------------------------------------------------------------------------------
    def export(self, kind: str, path: str | None = None, force: bool = True) -> bool:
        """Write the comparison of the ticked runs as ``kind`` (see :data:`~som_studio.report.EXPORTS`).

        Without ``path`` a file dialog asks (and asks before replacing a file,
        so then ``force`` holds); errors are shown in a dialog.
        """
        if self.report is None:
            self.show_error(self.tr("Nothing to export"), self.tr("Tick the runs to compare first."))
            return False
        what = EXPORTS[kind]
        if path is None:
            if kind == "maps":
                path = QFileDialog.getExistingDirectory(self, self.tr("Folder for the final maps"))
            else:
                path, _ = QFileDialog.getSaveFileName(
                    self, what.menu_text.rstrip("…"), f"som-comparison{what.suffix}", what.filter_text
                )
            if not path:
                return False
        try:
            written = self.write(kind, path, force)
        except (OutputError, ExportError) as exc:
            self.show_error(self.tr("Export failed"), str(exc))
            return False
        self.status.emit(self.tr("Wrote {path}").format(path=written))
        if kind == "pdf":
            from som_studio.qt.report_render import missing_glyphs

            if why := missing_glyphs(self.report):
                self.show_error(self.tr("The PDF cannot show its Korean"), f"{written}: {why}", warning=True)
        return True

    def write(self, kind: str, path: str, force: bool = False) -> str:
        """Write ``kind`` through the comparison pipeline; what was written, in words. Raises on failure."""
        assert self.report is not None
        from som_studio.qt.report_render import QtRenderer

        exporter = Exporter(self.report, QtRenderer() if EXPORTS[kind].drawn else None, force=force)
        if kind != "maps":
            return str(exporter.write(kind, path))
        written, _missing = exporter.write_maps(path)
        if not written:
            raise ExportError(self.tr("none of the ticked runs has a final map"))
        return self.tr("{n} map(s) to {folder}").format(n=len(written), folder=f"{Path(path)}/")

    # -- dialogs ---------------------------------------------------------------------------------
    def show_error(self, title: str, message: str, *, warning: bool = False) -> None:
        """A window-modal, non-blocking dialog naming the problem (``warning``: a flaw, nothing failed)."""
        self.error_dialog = box = dialogs.show_error(self, title, message, warning=warning)  # tests read it
        box.finished.connect(lambda _=0: setattr(self, "error_dialog", None))
