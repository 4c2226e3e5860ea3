"""Comparing runs in the app: the run history, a compare queue, the comparison view and export.

* :class:`RunRecorder` turns the controller's signals into a
  :class:`~som_studio.report.history.StoredRun` per run (record, final map,
  the frames it kept, evenly spread, in bounded memory).
* Every run lands in the :class:`~som_studio.report.history.RunHistory`, saved
  as it finishes, so the history survives a restart.
* :class:`CompareQueue` runs ticked implementations one after another on the
  configuration of the Run panel (same data, seed, schedules); it can be cancelled.
* :class:`ComparisonView` shows the ticked runs: summary table (sortable, with a
  baseline to pick), flags and configuration differences, final maps, timing and
  quality charts — drawn by the same code as the exported report — and exports the
  report (HTML, PDF), CSV, JSON, maps and the animation.

Threads: everything here runs in the GUI thread.

Run alone with two real runs: ``python -m som_studio.qt.comparison``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QSplitter,
    QTableView,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from som_studio.config import ConfigError, RunConfig
from som_studio.core import registry
from som_studio.qt import dialogs
from som_studio.qt.runs import RunsModel
from som_studio.report.content import NOISY_RATIO, Report, build_report
from som_studio.report.history import RunHistory, StoredRun
from som_studio.report.writers import OutputError, write_atomic, write_json
from som_studio.session.capture import DEFAULT_FRAMES, FrameKeeper, feature_range, map_image
from som_studio.session.record import RunRecord, runs_document

EXPORTS = {
    "html": ("Report (HTML)…", "HTML page (*.html)", ".html"),
    "pdf": ("Report (PDF)…", "PDF (*.pdf)", ".pdf"),
    "csv": ("Timed chunks (CSV)…", "CSV (*.csv)", ".csv"),
    "json": ("Full records (JSON)…", "JSON (*.json)", ".json"),
    "maps": ("Final maps (PNG, one per run)…", "", ""),
    "animation": ("Animation (GIF, WebP, MP4)…", "GIF (*.gif);;WebP (*.webp);;MP4 (*.mp4)", ".gif"),
}
"""What the Export menu offers: key -> (menu text, file dialog filter, default suffix)."""


class RunRecorder(QObject):
    """Builds a :class:`StoredRun` from one run's signals; emits ``run_recorded`` when it ends.

    The map frames it keeps are those the worker sent for display (the view the
    user chose, coalesced to what the window could draw), thinned by a
    :class:`FrameKeeper` to at most ``frames``, evenly spread.
    """

    run_recorded = Signal(object)  # StoredRun

    def __init__(self, controller: Any, frames: int = DEFAULT_FRAMES, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._capacity = frames
        self._reset()
        controller.run_started.connect(self._on_run_started)
        controller.frame_ready.connect(self._on_frame_ready)
        controller.final_map.connect(self._on_final_map)
        controller.run_finished.connect(self._on_run_finished)
        controller.run_failed.connect(self._on_run_failed)

    def _reset(self) -> None:
        self._keeper: FrameKeeper[np.ndarray] = FrameKeeper(self._capacity)
        self._iterations = 0
        self._final: np.ndarray | None = None

    def _on_run_started(self, ev: Any) -> None:
        self._reset()
        self._iterations = int(ev.iterations)

    def _on_frame_ready(self, frame: Any) -> None:
        img = np.asarray(frame.image)
        if img.ndim == 2:  # a scalar view (U-matrix, component plane): grey
            img = np.repeat(img[..., None], 3, axis=-1)
        self._keeper.offer(int(frame.iteration), np.ascontiguousarray(img, dtype=np.uint8))

    def _on_final_map(self, weights: Any) -> None:
        self._final = np.asarray(weights)

    def _on_run_finished(self, record: RunRecord) -> None:
        self._emit(record)

    def _on_run_failed(self, _message: str, record: RunRecord) -> None:
        self._emit(record)

    def _emit(self, record: RunRecord) -> None:
        final = self._final
        image = None
        if final is not None:
            # Random colours are uniform in [0, 1]: draw them on that range, as the
            # worker does from the initial map; other data on the map's own range.
            random = (record.config.get("data") or {}).get("source", "random") == "random"
            lo, hi = (None, None) if random else feature_range(final)
            image = map_image(final, lo, hi)
        run = StoredRun(
            record=record,
            name=record.impl,
            iterations=self._iterations or record.iterations_done,
            final_map=final,
            final_image=image,
            frames=self._keeper.frames,
        )
        self._reset()
        self.run_recorded.emit(run)


class CompareQueue(QObject):
    """Runs configurations one after another; cancel stops the current run and drops the rest.

    ``launch(config) -> str`` starts one run and returns ``""``, or says why it
    could not start (that configuration is then skipped). ``ended`` is the
    controller's ``run_ended`` signal.
    """

    progress = Signal(str)
    finished = Signal(list)  # the implementations that ran, in order

    def __init__(
        self, launch: Callable[[RunConfig], str], ended: Any, stop: Callable[[], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._launch = launch
        self._stop = stop
        self._queue: list[RunConfig] = []
        self._done: list[str] = []
        self._active = False
        self._skipped: list[str] = []
        self._current = ""
        ended.connect(self._on_ended)

    @property
    def active(self) -> bool:
        return self._active

    def start(self, configs: list[RunConfig]) -> None:
        if self._active:
            raise RuntimeError("a comparison is already running")
        self._queue, self._done, self._skipped = list(configs), [], []
        self._active = True
        self._next()

    def cancel(self) -> None:
        if not self._active:
            return
        self._queue.clear()
        self.progress.emit("Comparison cancelled")
        self._stop()

    def _next(self) -> None:
        while self._queue:
            cfg = self._queue.pop(0)
            n = len(self._done) + len(self._skipped) + 1
            total = n + len(self._queue)
            reason = self._launch(cfg)
            if not reason:
                self.progress.emit(f"Comparing: {cfg.impl} ({n} of {total})")
                self._current = cfg.impl
                return
            self._skipped.append(f"{cfg.impl}: {reason}")
        self._active = False
        text = f"Compared {len(self._done)} run(s)"
        if self._skipped:
            text += "; skipped " + "; ".join(self._skipped)
        self.progress.emit(text)
        self.finished.emit(list(self._done))

    def _on_ended(self) -> None:
        if not self._active:
            return
        self._done.append(self._current)
        self._next()


class SummaryModel(QAbstractTableModel):
    """The report's summary table; sorts on the raw numbers (``Qt.UserRole``)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._header = list(Report.SUMMARY_HEADER)
        self._rows: list[list[str]] = []
        self._values: list[dict[str, Any]] = []
        self._messages: list[str] = []

    def set_report(self, report: Report | None) -> None:
        self.beginResetModel()
        self._rows = report.summary_rows() if report else []
        self._values = report.summary_values() if report else []
        self._messages = [r.record.message for r in report.runs] if report else []
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._header)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return self._header[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        r, c = index.row(), index.column()
        key = self._header[c]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows[r][c]
        if role == Qt.ItemDataRole.UserRole:
            v = self._values[r][key]
            if isinstance(v, str):
                return v
            return float("inf") if v is None else float(v)  # missing numbers sort last
        if role == Qt.ItemDataRole.TextAlignmentRole and c >= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and self._messages[r]:
            return self._messages[r]
        return None


class ComparisonView(QWidget):
    """The runs kept, the comparison of those ticked, and export.

    Parameters
    ----------
    history : the persistent run history.
    launch : starts one configuration (see :class:`CompareQueue`); ``None``: no compare queue.
    ended, stop : the controller's ``run_ended`` signal and its ``stop``.
    base_config : the configuration compared runs share (the Run panel's), or ``None`` when invalid.
    iterations : steps/epochs per kind to use for implementations of the other kind.
    """

    selection_changed = Signal()
    status = Signal(str)

    def __init__(
        self,
        runs: RunsModel,
        launch: Callable[[RunConfig], str] | None = None,
        ended: Any = None,
        stop: Callable[[], None] | None = None,
        base_config: Callable[[], RunConfig | None] | None = None,
        iterations: Callable[[], dict[str, int]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.runs = runs
        self.history = runs.history
        self.report: Report | None = None
        self._base_config = base_config
        self._iterations = iterations
        self.error_dialog: QMessageBox | None = None
        self._queue_ids: list[str] = []  # runs recorded while the compare queue ran
        self.queue = CompareQueue(launch, ended, stop or (lambda: None), self) if launch and ended is not None else None

        # -- left: the implementations to compare -----------------------------------------
        self.impl_list = QListWidget()
        for impl in registry.all_implementations():
            item = QListWidgetItem(impl.name)
            item.setData(Qt.ItemDataRole.UserRole, impl.name)
            item.setToolTip(f"{impl.description}\n[{impl.supports()}]")
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.impl_list.addItem(item)
        self._tick_order: list[str] = []  # the queue runs in the order implementations were ticked
        self.impl_list.itemChanged.connect(self._on_impl_ticked)
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip(
            "Run the ticked implementations one after another on the Run panel's "
            "configuration (same data, seed and schedules)"
        )
        self.compare_button.clicked.connect(self.compare_ticked)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel_compare)
        self.queue_label = QLabel("Tick implementations in the order they should run.")
        self.queue_label.setWordWrap(True)
        group = QGroupBox("Compare implementations")
        g = QVBoxLayout(group)
        g.addWidget(self.impl_list)
        row = QHBoxLayout()
        row.addWidget(self.compare_button)
        row.addWidget(self.cancel_button)
        g.addLayout(row)
        g.addWidget(self.queue_label)
        group.setEnabled(self.queue is not None)
        if self.queue is not None:
            self.queue.progress.connect(self._on_queue_progress)
            self.queue.finished.connect(self._on_queue_finished)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        # The run list's names and ticks: a second view on the one model the
        # Runs dock shows in full (ticking or renaming here is the same as there).
        self.runs_view = QListView()
        self.runs_view.setModel(runs)
        self.runs_view.setModelColumn(0)
        self.runs_view.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.runs_view.setToolTip("Tick runs to compare them (the Runs tab lists them in full)")
        runs.rowsInserted.connect(lambda *_: self.runs_view.scrollToBottom())
        lv.addWidget(QLabel("Runs (tick to compare)"))
        lv.addWidget(self.runs_view, 2)
        lv.addWidget(group, 3)

        # -- right: the comparison ------------------------------------------------------
        self.baseline = QComboBox()
        self.baseline.setToolTip(
            "Speed-ups are the baseline's median time per iteration over each run's, "
            "within a kind (an epoch for batch runs, a step for online ones)"
        )
        self.baseline.currentIndexChanged.connect(self._on_baseline_changed)
        self.export_button = QToolButton()
        self.export_button.setText("Export")
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.export_menu = QMenu(self.export_button)
        for key, (text, _, _) in EXPORTS.items():
            action = self.export_menu.addAction(text)
            action.triggered.connect(lambda _=False, k=key: self.export(k))
        self.export_button.setMenu(self.export_menu)
        top = QHBoxLayout()
        top.addWidget(QLabel("Baseline:"))
        top.addWidget(self.baseline, 1)
        top.addStretch(1)
        top.addWidget(self.export_button)
        self.notes = QLabel("")
        self.notes.setWordWrap(True)
        self.notes.setTextFormat(Qt.TextFormat.RichText)
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
        self.charts = QTabWidget()
        self._chart_widgets: dict[str, QWidget] = {}
        for key, title in (("maps", "Final maps"), ("timing", "Time per iteration"), ("quality", "Quality")):
            holder = QWidget()
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            self.charts.addTab(holder, title)
            self._chart_widgets[key] = holder

        right = QWidget()
        rv = QVBoxLayout(right)
        rv.setContentsMargins(0, 0, 0, 0)
        rv.addLayout(top)
        rv.addWidget(self.notes)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.charts)
        split.setStretchFactor(1, 3)
        split.setSizes([110, 400])  # a few rows of table, the rest for the charts
        rv.addWidget(split, 1)

        outer = QSplitter(Qt.Orientation.Horizontal)
        outer.addWidget(left)
        outer.addWidget(right)
        outer.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(outer)

        self._filling = False
        runs.checked_changed.connect(self.refresh)
        self.refresh()

    # -- the runs (the shared run list) ----------------------------------------------------
    def checked_runs(self) -> list[StoredRun]:
        return self.runs.checked_runs()

    def set_checked(self, run_ids: list[str]) -> None:
        self.runs.set_checked(run_ids)

    # -- compare queue ----------------------------------------------------------------------
    def _impl_items(self) -> list[QListWidgetItem]:
        return [self.impl_list.item(i) for i in range(self.impl_list.count())]

    def _on_impl_ticked(self, item: QListWidgetItem) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        ticked = item.checkState() == Qt.CheckState.Checked
        if ticked and name not in self._tick_order:
            self._tick_order.append(name)
        elif not ticked and name in self._tick_order:
            self._tick_order.remove(name)
        else:
            return  # a change of text, not of the tick
        self._show_tick_order()

    def _show_tick_order(self) -> None:
        """Number the ticked implementations in the order they will run."""
        self.impl_list.blockSignals(True)
        try:
            for it in self._impl_items():
                name = it.data(Qt.ItemDataRole.UserRole)
                it.setText(f"{self._tick_order.index(name) + 1}. {name}" if name in self._tick_order else name)
        finally:
            self.impl_list.blockSignals(False)
        if not (self.queue is not None and self.queue.active):
            self.queue_label.setText(
                "Runs in the order ticked: " + " → ".join(self._tick_order)
                if self._tick_order
                else "Tick implementations in the order they should run."
            )

    def ticked_impls(self) -> list[str]:
        """The ticked implementations, in the order they were ticked (the order they run in)."""
        return list(self._tick_order)

    def set_ticked_impls(self, names: list[str]) -> None:
        """Tick ``names`` in this order (and untick the others)."""
        self.impl_list.blockSignals(True)
        try:
            for it in self._impl_items():
                it.setCheckState(
                    Qt.CheckState.Checked if it.data(Qt.ItemDataRole.UserRole) in names else Qt.CheckState.Unchecked
                )
        finally:
            self.impl_list.blockSignals(False)
        known = {it.data(Qt.ItemDataRole.UserRole) for it in self._impl_items()}
        self._tick_order = [n for n in dict.fromkeys(names) if n in known]
        self._show_tick_order()

    def compare_configs(self) -> tuple[list[RunConfig], str]:
        """One config per ticked implementation, from the Run panel's; or why not."""
        names = self.ticked_impls()
        if len(names) < 1:
            return [], "tick the implementations to compare"
        base = self._base_config() if self._base_config else None
        if base is None:
            return [], "the Run panel's configuration is not runnable; fix it first"
        counts = self._iterations() if self._iterations else {}
        out = []
        for name in names:
            impl = registry.get(name)
            n = counts.get(impl.kind) or base.iterations
            cfg = base.replace(
                impl=name, steps=n if impl.kind == "online" else None, epochs=n if impl.kind == "batch" else None
            )
            try:
                cfg.validate(impl.kind)
            except ConfigError as exc:
                return [], f"{name}: {exc}"
            out.append(cfg)
        return out, ""

    def compare_ticked(self) -> bool:
        if self.queue is None:
            return False
        if self.queue.active:
            return False
        configs, reason = self.compare_configs()
        if reason:
            self.show_error("Cannot compare", reason)
            return False
        self._queue_ids = []
        self.compare_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
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
        self.compare_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

        if self._queue_ids:
            self.set_checked(self._queue_ids)

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
        self.report = build_report([r.report_run() for r in runs]) if runs else None
        # the baseline choices: default, or one of the compared runs
        self._filling = True
        self.baseline.clear()
        self.baseline.addItem("NumPy run of each kind (default)", None)
        if self.report:
            for r in self.report.runs:
                self.baseline.addItem(r.name, r.name)
        i = self.baseline.findData(names_before) if names_before else 0
        self.baseline.setCurrentIndex(max(i, 0))
        self._filling = False
        if self.report and self._baseline_name():
            self.report = build_report(self.report.runs, baseline=self._baseline_name())
        self.summary.set_report(self.report)
        self.table.resizeColumnsToContents()
        self.notes.setText(self._notes_html())
        self._draw_charts()
        self.export_button.setEnabled(self.report is not None)
        self.selection_changed.emit()

    def _notes_html(self) -> str:
        from html import escape

        if self.report is None:
            return "Tick runs in the Runs list to compare them, or tick implementations and press Compare."
        if not self.report.flags:
            return (
                "<span style='color:#2e7d4f'>No suspect numbers: no recompiles after warm-up, steady iterations "
                f"(p95 within {NOISY_RATIO:g}x the median), the same configuration for every run.</span>"
            )
        lines = []
        for f in self.report.flags:
            color = "#a05a00" if f.level == "warning" else "#3a5a9a"
            lines.append(
                f"<b style='color:{color}'>{'Warning' if f.level == 'warning' else 'Note'}:</b> {escape(f.text)}"
            )
        return "<br>".join(lines)

    def _draw_charts(self) -> None:
        from som_studio.qt.report_render import LAYOUTS

        for key, holder in self._chart_widgets.items():
            lay = holder.layout()
            assert lay is not None  # each holder is built with its layout
            while (item := lay.takeAt(0)) is not None:
                if (w := item.widget()) is not None:
                    w.deleteLater()
            if self.report is None:
                lay.addWidget(QLabel("Nothing ticked."))
                continue
            options = {"fixed": False} if key == "maps" else {}
            widget, _, _ = LAYOUTS[key](self.report, **options)
            lay.addWidget(widget)

    # -- export ---------------------------------------------------------------------------------
    def export(self, kind: str, path: str | None = None, force: bool = True) -> bool:
        """Write the comparison of the ticked runs as ``kind`` (see :data:`EXPORTS`).

        Without ``path`` a file dialog asks (and asks before replacing a file,
        so then ``force`` holds); errors are shown in a dialog.
        """
        if self.report is None:
            self.show_error("Nothing to export", "Tick the runs to compare first.")
            return False
        title, filt, suffix = EXPORTS[kind]
        if path is None:
            if kind == "maps":
                path = QFileDialog.getExistingDirectory(self, "Folder for the final maps")
            else:
                path, _ = QFileDialog.getSaveFileName(self, title.rstrip("…"), f"som-comparison{suffix}", filt)
            if not path:
                return False
        try:
            written = self._write(kind, path, force)
        except (OutputError, ValueError) as exc:
            self.show_error("Export failed", str(exc))
            return False
        self.status.emit(f"Wrote {written}")
        return True

    def _write(self, kind: str, path: str, force: bool) -> str:
        report = self.report
        assert report is not None
        records = [r.record for r in report.runs]
        if kind == "json":
            return str(write_json(path, runs_document(records), force=force))
        if kind == "csv":
            from som_studio.report.tables import chunks_csv

            return str(write_atomic(path, chunks_csv(records), force=force))
        if kind == "maps":
            return self._write_maps(Path(path), force)
        if kind == "animation":
            from som_studio.report.animation import AnimationError, animation_format, compose_frames, encode

            try:
                fmt = animation_format(path)
                data = encode(compose_frames(report.runs), fmt)
            except AnimationError as exc:
                raise ValueError(str(exc)) from None
            return str(write_atomic(path, data, force=force))
        from som_studio.qt.report_render import pdf_bytes, render_charts

        charts = render_charts(report)
        if kind == "html":
            from som_studio.report.html import report_html

            return str(write_atomic(path, report_html(report, charts), force=force))
        return str(write_atomic(path, pdf_bytes(report, charts), force=force))

    def _write_maps(self, folder: Path, force: bool) -> str:
        from som_studio.report.tables import png_bytes, safe_file_stem, upscale

        assert self.report is not None
        if not folder.is_dir():
            raise OutputError(f"{folder}: not a folder")
        runs = [r for r in self.report.runs if r.final_image is not None]
        if not runs:
            raise ValueError("none of the ticked runs has a final map")
        paths = {r.name: folder / f"{safe_file_stem(r.name)}.png" for r in runs}
        existing = [p for p in paths.values() if p.exists()]
        if existing and not force:
            raise OutputError(f"{existing[0]}: exists")
        for r in runs:
            assert r.final_image is not None  # kept by the filter above
            write_atomic(paths[r.name], png_bytes(upscale(r.final_image)), force=True)
        return f"{len(runs)} map(s) to {folder}{os.sep}"

    # -- dialogs ---------------------------------------------------------------------------------
    def show_error(self, title: str, message: str) -> None:
        """A window-modal, non-blocking dialog naming the problem."""
        dialogs.show_error(self, title, message)


def history_folder(settings: Any) -> Path:
    """Where the app keeps its runs: beside a settings file given explicitly (tests), else the user's data folder."""
    from PySide6.QtCore import QSettings, QStandardPaths

    qs = settings.qsettings
    if qs.format() == QSettings.Format.IniFormat and qs.fileName():
        return Path(qs.fileName()).with_name("history")
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".local" / "share" / "som-studio") / "history"


def install(window: Any) -> ComparisonView:
    """Add the comparison view and the Compare menu to the main window; record every run into its run list."""
    from PySide6.QtGui import QAction, QKeySequence

    view = ComparisonView(
        window.runs,
        launch=window.run_config,
        ended=window.controller.run_ended,
        stop=window.controller.stop,
        base_config=lambda: window.panel.state.config,
        iterations=window.panel.iterations_memory,
    )
    recorder = RunRecorder(window.controller, parent=view)
    recorder.run_recorded.connect(lambda run: view.note_recorded(window.runs_panel.add_run(run)))
    view.status.connect(window.status_label.setText)
    view.recorder = recorder  # type: ignore[attr-defined]
    dock = window._add_dock("compare", "Compare", view, Qt.DockWidgetArea.BottomDockWidgetArea)
    window.tabifyDockWidget(window.docks["runs"], dock)

    menu = window.menuBar().addMenu("&Compare")
    compare = QAction("&Compare ticked implementations", window)
    compare.setShortcut(QKeySequence("Ctrl+Shift+R"))

    def show_dock() -> None:
        dock.show()
        dock.raise_()
        if dock.height() < 420 and not dock.isFloating():  # room for the charts
            window.resizeDocks([dock], [460], Qt.Orientation.Vertical)

    def show_and_compare() -> None:
        show_dock()
        view.compare_ticked()

    compare.triggered.connect(show_and_compare)
    if view.queue is not None:
        view.queue.finished.connect(lambda _impls: show_dock())
    cancel = QAction("Ca&ncel comparison", window)
    cancel.triggered.connect(view.cancel_compare)
    # Stop (Esc) during a comparison stops the comparison, not just its current
    # run: the next implementation starting right after a Stop surprises.
    window.stop_action.triggered.connect(view.cancel_compare)
    menu.addAction(compare)
    menu.addAction(cancel)
    menu.addSeparator()
    export = menu.addMenu("&Export comparison")
    for key, (text, _, _) in EXPORTS.items():
        action = export.addAction(text)
        action.triggered.connect(lambda _=False, k=key: view.export(k))
    window.menuBar().insertMenu(window.menuBar().actions()[-1], menu)  # before Help
    view_menu = next((a.menu() for a in window.menuBar().actions() if a.text() == "&View"), None)
    if view_menu is not None:
        view_menu.addAction(dock.toggleViewAction())
    return view


def _preview() -> None:  # python -m som_studio.qt.comparison
    import tempfile

    from som_studio.config import DataSpec
    from som_studio.qt.report_render import ensure_app
    from som_studio.session.capture import RunCapture
    from som_studio.session.session import Session

    app = ensure_app()
    history = RunHistory(tempfile.mkdtemp(prefix="som-history-"))
    base = RunConfig(width=24, height=16, data=DataSpec(samples=300), epochs=6)
    for impl in ("numpy-batch", "jax-vmap-batch"):
        cap = RunCapture.new()
        cap.feed_all(Session(base.replace(impl=impl), snapshot_interval_s=0.0).run())
        history.add(StoredRun.from_capture(cap))
    from som_studio.qt.runs import RunsModel

    view = ComparisonView(RunsModel(history))
    view.set_checked([r.id for r in history.runs])
    view.resize(1300, 800)
    view.show()
    app.exec()


if __name__ == "__main__":
    _preview()
