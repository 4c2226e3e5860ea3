"""The Sweep page: many maps of the form's SOM trained together, QE against TE, one map kept as a run.

The values to vary are typed per setting (the settings the declaration marks ``sweep``, with the
labels the form gives them); *Train together* trains every combination as one batched program
(:mod:`som_studio.sweeps`), run like every run: a session in a worker process that its own
:class:`~som_studio.qt.controller.RunController` starts and stops (*Stop* ends it between chunks).
The GUI process never starts JAX. Each map is a point of the QE-TE chart, the frontier joined;
clicking a point shows that map and offers to keep it as a run.

Threads: everything here runs on the GUI thread; the controller's signals bring the sweep's events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from som_studio import config as cfgmod
from som_studio.app_model.form import app_message, app_text
from som_studio.config import ConfigError
from som_studio.i18n import _
from som_studio.qt.chart_style import readable_axes, style_plot, style_widget, theme_of
from som_studio.session.sweep import settings_text

# The chart's two colours, the theme's first two: every map (blue), and the frontier (orange).
DOT, FRONT = 0, 1


class SweepView(QWidget):
    """The Sweep page (object name ``sweepView``).

    ``base_config()`` gives the form's configuration (the SOM every map shares); ``keep(run)``
    keeps a :class:`~som_studio.storage.StoredRun` in the run list; ``controller`` (a
    :class:`~som_studio.qt.controller.RunController` of the page's own) runs the sweep in a worker
    process, on ``cpu_devices()`` simulated CPU devices (``None``: the machine's devices).
    """

    result_ready = Signal(object)
    status = Signal(str)
    #: How far the sweep in progress is, 0 to 1 (the window's progress bar shows it).
    progress = Signal(float)

    def __init__(
        self,
        base_config: Callable[[], Any],
        keep: Callable[[Any], Any],
        controller: Any,
        cpu_devices: Callable[[], int | None] = lambda: None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("sweepView")
        self._base_config, self._keep = base_config, keep
        self.result: Any = None
        self.selected: int | None = None
        self.controller = controller
        self._cpu_devices = cpu_devices
        self._combos: list[dict[str, Any]] = []
        self._started: Any = None
        self._done: list[Any] = []
        controller.run_started.connect(self._on_started)
        controller.combination_trained.connect(self._done.append)
        controller.run_finished.connect(self._on_finished)
        controller.run_failed.connect(self._on_failed)
        controller.run_ended.connect(self._on_ended)
        controller.chunks_timed.connect(self._on_chunks)

        from som_studio.sweeps import varied_settings

        self.values: dict[str, QLineEdit] = {}
        form = QFormLayout()
        hints = {"seed": "0, 1, 2", "sigma_start": "2, 3", "sigma_end": "0.5, 0.75, 1, 2"}
        for name in varied_settings():
            edit = QLineEdit()
            edit.setObjectName(f"sweep_{name}")
            edit.setPlaceholderText(hints.get(name, ""))
            edit.setToolTip(self.tr("Values separated by commas; a radius may be SXxSY per axis. Empty: not varied."))
            self.values[name] = edit
            form.addRow(_(cfgmod.setting_named(name).label), edit)
        self.train_button = QPushButton(self.tr("Train together"))
        self.train_button.setObjectName("sweepTrain")
        self.train_button.clicked.connect(self._on_train_clicked)
        from som_studio.sweeps import IMPL as SWEEP_IMPL

        self.caption = QLabel(
            self.tr(
                "Type the values to try, then press Train together: every combination of them trains as one "
                "program on the form's data and map, with {impl}'s batch epochs whichever implementation the "
                "form names, and each map appears here as a point, its quantization error against its "
                "topographic error."
            ).format(impl=SWEEP_IMPL)
        )
        self.caption.setWordWrap(True)
        self.plot = pg.PlotWidget(axisItems=readable_axes(("left", "bottom")))
        theme = theme_of(self)
        style_widget(self.plot, theme)
        style_plot(self.plot.getPlotItem(), theme, self.tr("quantization error"), self.tr("topographic error"))
        self.frontier_line = self.plot.plot(pen=pg.mkPen(theme.colour(FRONT), width=2))
        self.points = pg.ScatterPlotItem(size=10, hoverable=True)
        self.points.sigClicked.connect(self._on_clicked)
        self.plot.addItem(self.points)
        # A ring around the point whose map is shown beside the plot: which of the points it is.
        self.mark = pg.ScatterPlotItem(size=18, brush=None, pen=pg.mkPen(theme.text, width=2))
        self.plot.addItem(self.mark)
        self.picture = QLabel()
        self.picture.setFixedHeight(160)
        self.picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.picture.setObjectName("sweepMap")
        self.detail = QLabel(self.tr("Click a point to see its map"))
        self.detail.setWordWrap(True)
        self.keep_button = QPushButton(self.tr("Keep as a run"))
        self.keep_button.setObjectName("sweepKeep")
        self.keep_button.setEnabled(False)
        self.keep_button.clicked.connect(self.keep_selected)

        side = QVBoxLayout()
        side.addLayout(form)
        side.addWidget(self.train_button)
        side.addWidget(self.picture, 1)
        side.addWidget(self.detail)
        side.addWidget(self.keep_button)
        side_box = QWidget()
        side_box.setLayout(side)
        side_box.setMaximumWidth(320)  # the chart takes what is left
        body = QHBoxLayout()
        body.addWidget(self.plot, 1)
        body.addWidget(side_box)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.caption)
        lay.addLayout(body, 1)

    # -- training ----------------------------------------------------------------------
    def vary(self) -> dict[str, list[Any]]:
        """The typed values per setting (empty fields left out); raises ``ValueError`` naming a bad one."""
        from som_studio.sweeps import read_vary

        out: dict[str, list[Any]] = {}
        for name, edit in self.values.items():
            text = edit.text().strip()
            if not text:
                continue
            try:
                out[name] = read_vary(f"{name}={text}")[1]
            except ConfigError as exc:  # the field named by its label, as beside it, not by its key
                label = _(cfgmod.setting_named(name).label)
                raise ConfigError(name, f"{label}: " + exc.refusal.reason.removeprefix(f"{name}: ")) from None
        return out

    def _on_train_clicked(self) -> None:
        """*Train together*, or *Stop* while a sweep runs."""
        if self.controller.busy:
            self.stop()
        else:
            self.start()

    def start(self) -> None:
        """Train the typed combinations on the form's SOM (refused with a message when there are none)."""
        from som_studio.sweeps import combinations, for_config

        if self.controller.busy:
            return
        try:
            vary = self.vary()
        except ConfigError as exc:
            self._say(exc.refusal.reason)
            return
        if not vary:
            self._say(self.tr("Type the values of at least one setting to vary"))
            return
        config = self._base_config()
        if config is None:
            self._say(self.tr("The Run panel's settings are refused: the sweep trains its SOM; fix them there first"))
            return
        try:
            combos = combinations(vary)
            base = for_config(config)
        except ConfigError as exc:  # its setting named by its label here, as the form names it
            self._on_failed(app_text(exc.refusal), None)
            return
        self._combos, self._started, self._done[:] = combos, None, []
        try:
            self.controller.start(
                base, self._cpu_devices(), session_options={"sweep": combos, "snapshot_interval_s": None}
            )
        except OSError as exc:  # no process could be started (limits, memory)
            self._on_failed(str(exc), None)
            return
        self.train_button.setText(self.tr("Stop"))
        self._say(self.tr("Training the maps together…"))

    def stop(self) -> None:
        """Stop the sweep in progress (between chunks; its maps are not kept)."""
        self.controller.stop()

    def _on_started(self, started: Any) -> None:
        self._started = started
        self.progress.emit(0.0)

    def _on_chunks(self, chunks: Any) -> None:
        if self._started is not None and chunks and self._started.iterations:
            self.progress.emit(min(1.0, chunks[-1].end / self._started.iterations))

    def _on_ended(self) -> None:
        self.train_button.setText(self.tr("Train together"))
        self.train_button.setEnabled(True)

    def _on_failed(self, message: str, record: Any) -> None:
        if record is not None:  # a refusal of the worker's session: in the form's words
            message = app_message(record)
        self._say(self.tr("The sweep failed: {message}").format(message=message))

    def _on_finished(self, record: Any) -> None:
        from som_studio.sweeps import assemble

        if record.status != "ok" or self._started is None:
            self._say(self.tr("The sweep was stopped: {message}").format(message=record.message))
            return
        result = assemble(self._started, record, self._done, self._combos)
        self.progress.emit(1.0)
        self.show_result(result)
        self.result_ready.emit(result)

    def wait(self) -> None:
        """End a sweep in progress and wait for its process (closing the window)."""
        self.controller.shutdown()

    # -- the chart ---------------------------------------------------------------------
    def show_result(self, result: Any) -> None:
        """Plot ``result``'s maps, the frontier joined; select none."""
        from som_studio.comparison.words import format_seconds

        self.result = result
        front = result.frontier()
        qe = np.array([r["qe"] for r in result.rows])
        te = np.array([r["te"] for r in result.rows])
        on = set(front)
        order = sorted(range(len(result.rows)), key=lambda i: i in on)  # the frontier drawn over maps alike
        self.points.setData(
            x=qe[order],
            y=te[order],
            data=order,
            brush=[pg.mkBrush(theme_of(self).colour(FRONT if i in on else DOT)) for i in order],
            pen=None,
        )
        self.frontier_line.setData(qe[front], te[front])
        t = result.timings
        self.status.emit(self.tr("{n} maps trained together").format(n=len(result.rows)))
        self.caption.setText(
            self.tr(
                "{n} maps trained together in {wall} (compile {compile}); the orange points are the frontier"
            ).format(n=len(result.rows), wall=format_seconds(t["wall_s"]), compile=format_seconds(t["compile_s"]))
            + "".join(f"\n{note}" for note in result.notes)
        )
        self.selected = None
        self.mark.setData([], [])
        self.keep_button.setEnabled(False)
        self.picture.clear()
        self.detail.setText(self.tr("Click a point to see its map"))

    def _on_clicked(self, _item: Any, points: Any, *_rest: Any) -> None:
        if len(points):
            self.select(int(points[0].data()))

    def select(self, i: int) -> None:
        """Show row ``i``'s map and offer to keep it."""
        from som_studio.sweeps import stored_run

        r = self.result.rows[i]
        self.selected = i
        self.mark.setData([r["qe"]], [r["te"]])
        self._stored = stored_run(self.result, i)
        img = np.ascontiguousarray(self._stored.final_image)
        h, w = img.shape[:2]
        qimg = QImage(img.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()
        room = QSize(max(self.picture.width(), 160), self.picture.height())
        self.picture.setPixmap(QPixmap.fromImage(qimg).scaled(room, Qt.AspectRatioMode.KeepAspectRatio))
        # Each varied setting by its label, as its field beside the plot says it (not its key: "sigma_end").
        settings = settings_text(r["settings"])
        purity = self.tr(", label purity {p:.3f}").format(p=r["label_purity"]) if r["label_purity"] is not None else ""
        self.detail.setText(f"{settings}: QE {r['qe']:.4f}, TE {r['te']:.3f}{purity}")
        self.keep_button.setEnabled(True)

    def keep_selected(self) -> None:
        """Keep the shown map as a run in the run list."""
        if self.selected is None:
            return
        self._keep(self._stored)
        self.keep_button.setEnabled(False)
        self._say(self.tr("Kept as a run: {name}").format(name=self._stored.name))

    def _say(self, text: str) -> None:
        self.status.emit(text)
        self.detail.setText(text)
