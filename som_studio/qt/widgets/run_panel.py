"""The run panel: choose the implementation, the map, the data, the schedules and the devices.

A thin view over :class:`~som_studio.app_model.form.RunForm`: it renders the
form's fields and verdict and sends it every edit; the form builds the
:class:`~som_studio.config.RunConfig` and checks it with the preflight the
session and the CLI use, so a refusal here is the CLI's, named by this
panel's label instead of the CLI's flag. Data files are read on a thread of
their own, never on the GUI thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRegularExpression, Qt, Signal
from PySide6.QtGui import QPainter, QRegularExpressionValidator, QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from som_studio import config as cfgmod
from som_studio.app_model.form import (
    EXTRA_SETTINGS,
    MAX_SIMULATED_DEVICES,
    FormFields,
    FormState,
    RunForm,
    devices_text,
    labels,
)
from som_studio.config import RunConfig
from som_studio.core.impls import registry
from som_studio.qt.widgets.data_reader import DataReader
from som_studio.qt.widgets.setting_controls import SettingControls
from som_studio.qt.widgets.table_fields import TableFields, note

GRID_PRESETS = ("auto", "60x34", "240x135", "512x512", "1024x1024")
LAYOUT_PRESETS = ("1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "4x2", "2x4", "8x1", "1x8")


class RunPanel(QWidget):
    """The form that describes one run.

    Threads: GUI thread only (data files are read by a :class:`DataReader`).
    ``state_changed`` is emitted after every change of the form's verdict, with the new :class:`FormState`.

    Parameters
    ----------
    form : the configuration being edited (a new one by default).
    """

    state_changed = Signal(object)
    detect_requested = Signal()

    def __init__(self, parent: QWidget | None = None, form: RunForm | None = None) -> None:
        super().__init__(parent)
        self.form = form or RunForm()
        self._rendering = True
        self._force = True
        self._reader = DataReader(self)  # data files are read off the GUI thread
        self._asking = False
        self._ever_asked = False

        rows = QFormLayout()
        rows.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        # Narrow: a label goes above its field rather than being clipped ("Implementation" to "nplementation").
        rows.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        names = labels()  # the controls are named as the form names them in its refusals
        self._add_implementation_rows(rows, names)
        self._add_grid_rows(rows, names)
        self._add_data_rows(rows, names)
        self._add_training_rows(rows, names)
        self._add_device_rows(rows, names)
        self._lay_out(rows)
        self._connect_edits()
        self._rendering = False
        self._render(self.form.state, force=True)

    def _add_implementation_rows(self, rows: QFormLayout, names: dict[str, str]) -> None:
        """The implementation and what it is."""
        self.impl = QComboBox()
        self.impl.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.impl.setMinimumContentsLength(12)
        self._fill_implementations()
        self.impl.setItemDelegate(_IndentedItems(self.impl))  # in the list, names indented under their heading
        self.impl.view().setMinimumWidth(self.impl.view().sizeHintForColumn(0) + 24)  # headings whole
        self.impl_info = note()
        rows.addRow(names["impl"], self.impl)
        rows.addRow(self.impl_info)  # both columns: a long description wraps, it never widens the form

    def _add_grid_rows(self, rows: QFormLayout, names: dict[str, str]) -> None:
        """The map's grid (a preset, any WxH, or auto) and what it comes to."""
        self.grid = QComboBox()
        self.grid.setEditable(True)
        self.grid.addItems(GRID_PRESETS)
        self.grid.setToolTip(
            self.tr("width x height ({example}: 240 columns, 135 rows); {auto}: chosen for the data").format(
                example="240x135", auto="auto"
            )
        )
        self.grid_info = note()
        rows.addRow(names["grid"], self.grid)
        rows.addRow(self.grid_info)

    def _add_data_rows(self, rows: QFormLayout, names: dict[str, str]) -> None:
        """The data: random colours or a file, and the file's table settings."""
        self.random_data = QRadioButton(self.tr("Random colours"))
        self.samples = QSpinBox()
        self.samples.setRange(1, cfgmod.MAX_SAMPLES)
        self.samples.setGroupSeparatorShown(True)
        self.samples.setValue(cfgmod.DEFAULT_SAMPLES)
        self.file_data = QRadioButton(self.tr("File"))
        self.path = QLineEdit()
        self.path.setPlaceholderText(self.tr("{formats}, examples x features").format(formats=".csv / .npy / .parquet"))
        self.path.setMinimumWidth(60)
        self.browse = QPushButton("…")
        self.browse.setToolTip(self.tr("Choose a {formats} file").format(formats=".csv / .npy / .parquet / .arrow"))
        self.browse.setFixedWidth(28)
        self.data_info = note()
        row1 = QHBoxLayout()
        row1.addWidget(self.random_data)
        row1.addWidget(self.samples, 1)
        row2 = QHBoxLayout()
        row2.addWidget(self.file_data)
        row2.addWidget(self.path, 1)
        row2.addWidget(self.browse)
        data_box = QVBoxLayout()
        data_box.addLayout(row1)
        data_box.addLayout(row2)
        data_box.addWidget(self.data_info)
        self.random_data.setChecked(True)
        rows.addRow(names["data"], data_box)
        self.table = TableFields()
        self.table.add_rows(rows)

    def _add_training_rows(self, rows: QFormLayout, names: dict[str, str]) -> None:
        """Iterations, radius, learning rate, seed and precision."""
        self.iterations_label = QLabel(names["epochs"])
        self.iterations = QSpinBox()
        self.iterations.setRange(1, cfgmod.MAX_ITERATIONS)
        self.iterations.setGroupSeparatorShown(True)
        rows.addRow(self.iterations_label, self.iterations)

        self.sigma_start = QLineEdit()
        self.sigma_end = QLineEdit()
        tips = (
            self.tr("neighbourhood radius at the start, in grid units: one value or X,Y; empty for the default"),
            self.tr("neighbourhood radius at the end, in grid units: one value or X,Y; empty for the default"),
        )
        for w, tip in zip((self.sigma_start, self.sigma_end), tips):
            w.setPlaceholderText(self.tr("auto"))
            w.setToolTip(tip)
        sig = QHBoxLayout()
        sig.addWidget(self.sigma_start)
        sig.addWidget(QLabel("→"))
        sig.addWidget(self.sigma_end)
        rows.addRow(self.tr("Radius σ"), sig)
        self.lr_start = QDoubleSpinBox()
        self.lr_end = QDoubleSpinBox()
        for box, v in ((self.lr_start, cfgmod.DEFAULT_LR[0]), (self.lr_end, cfgmod.DEFAULT_LR[1])):
            box.setDecimals(4)
            box.setRange(0.0, 1.0)
            box.setSingleStep(0.01)
            box.setValue(v)
        lr = QHBoxLayout()
        lr.addWidget(self.lr_start)
        lr.addWidget(QLabel("→"))
        lr.addWidget(self.lr_end)
        self.lr_label = QLabel(self.tr("Learning rate"))
        rows.addRow(self.lr_label, lr)

        # Text, not a spin box: seeds go up to 2^63 - 1, beyond a spin box's 2^31 - 1.
        self.seed = QLineEdit("0")
        self.seed.setValidator(QRegularExpressionValidator(QRegularExpression(r"\d{0,19}")))
        self.precision = QComboBox()
        self.precision.addItems(cfgmod.PRECISIONS)
        # Rows of their own: beside the seed, in a dock of its usual width, the combo was squeezed
        # below its text and read "float3".
        rows.addRow(names["seed"], self.seed)
        rows.addRow(names["precision"], self.precision)

    def _add_device_rows(self, rows: QFormLayout, names: dict[str, str]) -> None:
        """The device layout, simulated CPU devices, and the devices JAX sees."""
        self.layout_box = QComboBox()
        self.layout_box.setEditable(True)
        self.layout_box.addItems(LAYOUT_PRESETS)
        self.layout_box.setToolTip(self.tr("device mesh: devices along the data axis x along the map axis"))
        self.simulate = QCheckBox(self.tr("simulate"))
        self.simulate.setToolTip(self.tr("use JAX's CPU backend with this many simulated devices (set per run)"))
        self.cpu_devices = QSpinBox()
        self.cpu_devices.setRange(1, MAX_SIMULATED_DEVICES)
        self.cpu_devices.setValue(8)
        self.cpu_devices.setSuffix(" " + self.tr("CPU devices"))
        rows.addRow(names["layout"], self.layout_box)
        sim = QHBoxLayout()  # a line of its own: beside the layout it made the panel wider than its dock
        sim.addWidget(self.simulate)
        sim.addWidget(self.cpu_devices, 1)
        rows.addRow("", sim)
        self.devices_label = QLabel()
        self.devices_label.setWordWrap(True)
        self.detect = QPushButton(self.tr("Detect"))
        self.detect.setToolTip(self.tr("ask a short-lived worker process which devices JAX sees with these settings"))
        dev = QHBoxLayout()
        dev.addWidget(self.devices_label, 1)
        dev.addWidget(self.detect, 0, Qt.AlignmentFlag.AlignTop)
        holder = QWidget()
        holder.setLayout(dev)
        dev.setContentsMargins(0, 0, 0, 0)
        rows.addRow(holder)  # both columns: the devices' line has the panel's width to wrap in

    def _lay_out(self, rows: QFormLayout) -> None:
        """The fields in a scroll area; the memory note, the verdict and Run below, always in sight."""
        # Settings declared with no control laid out above: one each, by their declared kind.
        self.more = SettingControls(EXTRA_SETTINGS)
        rows.addRow(self.more)

        self.memory_label = note()
        self.reason_label = note("color: #c0392b;")
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Starts the configuration shown, at once (the window connects it to Run, Ctrl+R).
        self.run_button = QPushButton(self.tr("Run"))
        self.run_button.setObjectName("runButton")
        self.run_button.setDefault(True)
        self.run_button.setToolTip(self.tr("Run this configuration ({shortcut})").format(shortcut="Ctrl+R"))

        # The fields scroll down (never sideways); the verdict stays below them, always in sight.
        fields = QWidget()
        inner = QVBoxLayout(fields)
        inner.addLayout(rows)
        inner.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidget(fields)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll, 1)
        for label in (self.memory_label, self.reason_label):
            label.setContentsMargins(9, 0, 9, 4)
            outer.addWidget(label)
        run_row = QHBoxLayout()
        run_row.setContentsMargins(9, 0, 9, 6)
        run_row.addStretch(1)
        run_row.addWidget(self.run_button)
        outer.addLayout(run_row)
        self.setMinimumWidth(280)  # at 1280 px the map keeps its share beside the panel and the plots
        # Where the data file dialog starts and what it remembers: ``folder(kind)``/``set_folder(kind, path)``
        # (the window's settings); ``None``: the data's own folder, else home.
        self.folders: Any = None

    def _connect_edits(self) -> None:
        """Every control's edit goes to the form; the form's verdict comes back to be shown."""
        self.detect.clicked.connect(self.detect_requested)
        self.browse.clicked.connect(self._on_browse)
        edits: list[tuple[Any, str, Any]] = [
            (self.impl.currentIndexChanged, "impl", lambda: self.impl.currentData()),
            (self.grid.currentTextChanged, "grid", None),
            (self.samples.valueChanged, "samples", None),
            (self.file_data.toggled, "file", None),
            (self.path.editingFinished, "path", lambda: self.path.text().strip()),
            (self.iterations.valueChanged, "iterations", None),
            (self.sigma_start.textChanged, "sigma_start", None),
            (self.sigma_end.textChanged, "sigma_end", None),
            (self.lr_start.valueChanged, "lr_start", None),
            (self.lr_end.valueChanged, "lr_end", None),
            (self.seed.textChanged, "seed", None),
            (self.precision.currentTextChanged, "precision", None),
            (self.layout_box.currentTextChanged, "layout", None),
            (self.simulate.toggled, "simulate", None),
            (self.cpu_devices.valueChanged, "cpu_devices", None),
        ]
        for signal, name, read in edits:
            signal.connect(lambda *args, n=name, r=read: self._edit(n, r() if r else args[0]))
        self.table.edited.connect(self._edit)
        self.more.edited.connect(self._edit)
        self._reader.data_read.connect(self.form.data_read)
        self.form.on_state(self._on_form_state)
        self.form.on_fields(lambda _f: self._render(self.form.state, force=True))

    # -- the form's state ------------------------------------------------------------------
    @property
    def state(self) -> FormState:
        return self.form.state

    def add_implementation(self, impl: Any) -> None:
        """List ``impl`` (a user's, added at run time) in the chooser, or update its entry."""
        i = self.impl.findData(impl.name)
        if i < 0:
            self.impl.addItem(impl.name, impl.name)
            i = self.impl.count() - 1
        self.impl.setItemData(i, impl.description_text, Qt.ItemDataRole.ToolTipRole)

    def selected_impl(self) -> Any:
        return registry.get(self.form.fields.impl)

    def _edit(self, name: str, value: Any) -> None:
        if not self._rendering:
            self.form.edit(**{name: value})

    def _on_form_state(self, st: FormState) -> None:
        self._render(st)
        self._reader.read(st.data_needed)
        self.state_changed.emit(st)

    def _render(self, st: FormState, force: bool = False) -> None:
        """Show the form's fields and verdict; the widgets' own signals are ignored meanwhile.

        A widget being typed in keeps its text unless ``force`` (a configuration
        loaded into the form): an edit elsewhere, or a device probe's answer,
        must not take a half-typed path or grid from under the user.
        """
        f = self.form.fields
        self._rendering = True
        self._force = force
        try:
            self._render_fields(f)
        finally:
            self._rendering = False
        self.data_info.setText(st.data_text)
        self.data_info.setVisible(bool(st.data_text))
        self.grid_info.setText(st.grid_text)
        self.grid_info.setVisible(bool(st.grid_text))
        self.reason_label.setText(st.reason)
        self.reason_label.setVisible(bool(st.reason))
        self.memory_label.setText("\n".join(t for t in (st.memory_text, st.time_text) if t))
        self._render_devices(f)

    def _render_fields(self, f: FormFields) -> None:
        i = self.impl.findData(f.impl)
        if i >= 0 and i != self.impl.currentIndex():
            self.impl.setCurrentIndex(i)
        impl = self.selected_impl()
        self.impl_info.setText(f"{impl.description_text}\n[{impl.supports()}]")
        self.impl.setToolTip(impl.description_text)
        online = impl.kind == "online"
        self.iterations_label.setText(labels()["steps" if online else "epochs"])
        self.lr_start.setEnabled(online)
        self.lr_end.setEnabled(online)
        self.lr_label.setToolTip("" if online else self.tr("batch training does not use a learning rate"))
        for combo, text in ((self.grid, f.grid), (self.layout_box, f.layout), (self.precision, f.precision)):
            if combo.currentText() != text and self._may_set(combo):
                combo.setCurrentText(text)
        for edit, text in ((self.sigma_start, f.sigma_start), (self.sigma_end, f.sigma_end), (self.seed, f.seed)):
            if edit.text() != text and self._may_set(edit):
                edit.setText(text)
        if self.path.text().strip() != f.path and self._may_set(self.path):
            self.path.setText(f.path)
        for spin, n in ((self.samples, f.samples), (self.iterations, f.iterations), (self.cpu_devices, f.cpu_devices)):
            if spin.value() != n and self._may_set(spin):
                spin.setValue(n)
        for box, x in ((self.lr_start, f.lr_start), (self.lr_end, f.lr_end)):
            if box.value() != x and self._may_set(box):
                box.setValue(x)  # shown to the box's 4 decimals; the form keeps the exact value
        (self.file_data if f.file else self.random_data).setChecked(True)
        self.simulate.setChecked(f.simulate)
        self.samples.setEnabled(not f.file)
        for w in (self.path, self.browse):
            w.setEnabled(f.file)
        self.table.show_fields(f, self.form.columns())
        self.more.show_values(f.extra)
        self.cpu_devices.setEnabled(f.simulate)

    def _may_set(self, w: QWidget) -> bool:
        """Whether rendering may write ``w``: forced, or nobody is typing in it."""
        return self._force or not (w.hasFocus() or any(c.hasFocus() for c in w.findChildren(QWidget)))

    def _render_devices(self, f: FormFields) -> None:
        text, tip = devices_text(self.form.devices_info(), self._asking, self._ever_asked)
        self.devices_label.setText(text)
        self.devices_label.setToolTip(tip)

    # -- intents from the window ------------------------------------------------------------
    def set_devices(self, info: dict[str, Any] | None, simulated: int | None) -> None:
        """Show the devices a worker reported (``env`` of a run, or the probe's answer); ``None``: asking."""
        self._asking = info is None
        self._ever_asked = True
        self.form.set_devices(info, simulated)

    def set_cpu_devices(self, n: int | None) -> None:
        if n:
            self.form.edit(simulate=True, cpu_devices=min(int(n), MAX_SIMULATED_DEVICES))
        else:
            self.form.edit(simulate=False)

    def open_example(self) -> None:
        """File > Open example data: iris on a 12x8 hex map, shown in the form ready to run."""
        from som_studio.app_model.examples import iris_config

        self.form.set_config(iris_config(self.form.fields.epochs))

    def load_config(self, cfg: RunConfig) -> None:
        """Show ``cfg`` in the form (unknown implementations keep the current choice)."""
        self.form.set_config(cfg)

    def wait_for_readers(self) -> None:
        """Wait for the data files being read (closing the window)."""
        self._reader.wait()

    def _fill_implementations(self) -> None:
        """The implementations by kind, under a heading per group (not choosable): NumPy, then JAX;
        online, then batch; the sharded ones last. Each tool tip is its description."""
        groups: dict[tuple[bool, bool, bool], list[Any]] = {}
        for impl in registry.all_implementations():
            key = (impl.backend != "numpy", bool(impl.shards), impl.kind != "online")
            groups.setdefault(key, []).append(impl)
        model = self.impl.model()
        assert isinstance(model, QStandardItemModel)  # a combo box's own model
        for group in sorted(groups):
            self.impl.addItem(self._group_title(groups[group][0]))
            heading = model.item(self.impl.count() - 1)
            heading.setEnabled(False)  # a heading, never chosen
            heading.setSelectable(False)
            font = self.impl.font()
            font.setBold(True)
            heading.setFont(font)
            for impl in groups[group]:
                self.impl.addItem(impl.name, impl.name)
                self.impl.setItemData(self.impl.count() - 1, impl.description_text, Qt.ItemDataRole.ToolTipRole)

    def _group_title(self, impl: Any) -> str:
        backend = "NumPy" if impl.backend == "numpy" else "JAX"
        if impl.shards:
            return self.tr("{backend} · sharded over devices").format(backend=backend)
        if impl.kind == "online":
            return self.tr("{backend} · online (one example a step)").format(backend=backend)
        return self.tr("{backend} · batch (all examples an epoch)").format(backend=backend)

    def _on_browse(self) -> None:
        self.choose_data_file()

    def choose_data_file(self) -> str:
        """File > Open data…: ask for a table and make it the run's data; the path, or ``""`` if none chosen.

        The dialog starts in the folder it last chose in (remembered with the settings)."""
        from som_studio.core.data.files import DATA_PATTERNS

        filters = self.tr("Data ({patterns});;All files (*)").format(patterns=DATA_PATTERNS)
        start = self.folders.folder("data") if self.folders is not None else ""
        if not start:
            start = str(Path(self.path.text()).parent) if self.path.text() else str(Path.home())
        path, _filter = QFileDialog.getOpenFileName(self, self.tr("Training data"), start, filters)
        if path:
            if self.folders is not None:
                self.folders.set_folder("data", str(Path(path).parent))
            self.form.edit(path=path, file=True)
        return path

    def choose_data_folder(self) -> str:
        """File > Open data folder…: a folder of data files (one format, read in file-name order, streamed when
        too large for memory) as the run's data; the path, or ``""`` if none chosen."""
        start = self.folders.folder("data") if self.folders is not None else ""
        if not start:
            start = str(Path(self.path.text()).parent) if self.path.text() else str(Path.home())
        path = QFileDialog.getExistingDirectory(self, self.tr("Folder of training data"), start)
        if path:
            if self.folders is not None:
                self.folders.set_folder("data", str(Path(path).parent))
            self.form.edit(path=path, file=True)
        return path


class _IndentedItems(QStyledItemDelegate):
    """Draws a combo box's choosable items indented, its headings (items without data) flush left."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Any) -> None:
        if index.data(Qt.ItemDataRole.UserRole) is not None:
            option = QStyleOptionViewItem(option)
            option.rect.adjust(14, 0, 0, 0)  # type: ignore[attr-defined]
        super().paint(painter, option, index)


def _preview() -> None:  # python -m som_studio.qt.widgets.run_panel
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    panel = RunPanel()
    panel.state_changed.connect(lambda s: print("runnable" if s.runnable else s.reason))
    panel.show()
    app.exec()


if __name__ == "__main__":
    _preview()
