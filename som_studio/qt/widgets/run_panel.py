"""The run panel: choose the implementation, the map, the data, the schedules and the devices.

A thin view over :class:`~som_studio.config.RunConfig`: it builds a config from
its fields and checks it with the same code the CLI uses
(:meth:`RunConfig.validate`, the implementation's memory estimate), so the
reason shown under the form is the CLI's error message, word for word.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from som_studio import config as cfgmod
from som_studio.config import ConfigError, DataSpec, RunConfig
from som_studio.core import memory, registry
from som_studio.core.data import DataError, load_data

GRID_PRESETS = ("60x34", "240x135", "512x512", "1024x1024")
LAYOUT_PRESETS = ("1x1", "2x1", "1x2", "2x2", "4x1", "1x4", "4x2", "2x4", "8x1", "1x8")
MAX_SIMULATED_DEVICES = 64


@dataclass(frozen=True)
class PanelState:
    """The panel's verdict: a runnable config, or the reason it is not runnable."""

    config: RunConfig | None
    reason: str
    memory_text: str
    cpu_devices: int | None
    features: int = 3
    samples: int = 0

    @property
    def runnable(self) -> bool:
        return self.config is not None and not self.reason


def _parse_radii(text: str, field: str) -> tuple[float, float] | None:
    text = text.strip().lower()
    if not text or text == "auto":
        return None
    parts = [p for p in text.replace("x", ",").replace(" ", ",").split(",") if p]
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise ConfigError(field, f"expected a radius or X,Y radii, got {text!r}") from None
    if len(vals) == 1:
        vals *= 2
    if len(vals) != 2:
        raise ConfigError(field, f"expected a radius or X,Y radii, got {text!r}")
    return vals[0], vals[1]


class RunPanel(QWidget):
    """The form that describes one run.

    Threads: GUI thread only. ``state_changed`` is emitted after every edit
    with the new :class:`PanelState`.

    Parameters
    ----------
    device_memory : callable giving (bytes, where) a JAX run can use, or ``None``
        when not known yet (the app learns it from a worker; the GUI process
        itself never starts JAX).
    """

    state_changed = Signal(object)
    detect_requested = Signal()

    def __init__(self, parent: QWidget | None = None, device_memory: Any = None) -> None:
        super().__init__(parent)
        self._device_memory = device_memory
        self._iterations = {"online": cfgmod.DEFAULT_STEPS, "batch": cfgmod.DEFAULT_EPOCHS}
        self._data_cache: dict[tuple[str, bool], tuple[tuple[int, ...] | None, str]] = {}
        self._kind = "batch"
        self._building = True
        self._state = PanelState(None, "", "", None)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)

        self.impl = QComboBox()
        for impl in registry.all_implementations():
            self.impl.addItem(impl.name, impl.name)
            self.impl.setItemData(self.impl.count() - 1, impl.description, Qt.ItemDataRole.ToolTipRole)
        self.impl_info = QLabel()
        self.impl_info.setWordWrap(True)
        self.impl_info.setStyleSheet("color: #555;")
        form.addRow("Implementation", self.impl)
        form.addRow("", self.impl_info)

        self.grid = QComboBox()
        self.grid.setEditable(True)
        self.grid.addItems(GRID_PRESETS)
        self.grid.setToolTip("width x height (240x135: 240 columns, 135 rows); pick a preset or type one")
        form.addRow("Grid", self.grid)

        self.random_data = QRadioButton("Random colours")
        self.samples = QSpinBox()
        self.samples.setRange(1, 100_000_000)
        self.samples.setGroupSeparatorShown(True)
        self.samples.setValue(cfgmod.DEFAULT_SAMPLES)
        self.file_data = QRadioButton("File")
        self.path = QLineEdit()
        self.path.setPlaceholderText(".npy or .csv, examples x features")
        self.browse = QPushButton("…")
        self.browse.setToolTip("Choose a .npy or .csv file")
        self.browse.setFixedWidth(28)
        self.scale = QCheckBox("scale to [0, 1]")
        self.data_info = QLabel()
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
        row3 = QHBoxLayout()
        row3.addWidget(self.scale)
        row3.addWidget(self.data_info, 1)
        data_box.addLayout(row3)
        self.random_data.setChecked(True)
        form.addRow("Data", data_box)

        self.iterations_label = QLabel("Epochs")
        self.iterations = QSpinBox()
        self.iterations.setRange(1, cfgmod.MAX_ITERATIONS)
        self.iterations.setGroupSeparatorShown(True)
        form.addRow(self.iterations_label, self.iterations)

        self.sigma_start = QLineEdit()
        self.sigma_end = QLineEdit()
        for w, what in ((self.sigma_start, "start"), (self.sigma_end, "end")):
            w.setPlaceholderText("auto")
            w.setToolTip(f"neighbourhood radius at the {what}, in grid units: one value or X,Y; empty for the default")
        sig = QHBoxLayout()
        sig.addWidget(self.sigma_start)
        sig.addWidget(QLabel("→"))
        sig.addWidget(self.sigma_end)
        form.addRow("Radius σ", sig)
        self.lr_start = QDoubleSpinBox()
        self.lr_end = QDoubleSpinBox()
        for spin, v in ((self.lr_start, cfgmod.DEFAULT_LR[0]), (self.lr_end, cfgmod.DEFAULT_LR[1])):
            spin.setDecimals(4)
            spin.setRange(0.0, 1.0)
            spin.setSingleStep(0.01)
            spin.setValue(v)
        lr = QHBoxLayout()
        lr.addWidget(self.lr_start)
        lr.addWidget(QLabel("→"))
        lr.addWidget(self.lr_end)
        self.lr_label = QLabel("Learning rate")
        form.addRow(self.lr_label, lr)

        self.seed = QSpinBox()
        self.seed.setRange(0, 2**31 - 1)
        self.precision = QComboBox()
        self.precision.addItems(cfgmod.PRECISIONS)
        sp = QHBoxLayout()
        sp.addWidget(self.seed, 1)
        sp.addWidget(QLabel("Precision"))
        sp.addWidget(self.precision, 1)
        form.addRow("Seed", sp)

        self.layout_box = QComboBox()
        self.layout_box.setEditable(True)
        self.layout_box.addItems(LAYOUT_PRESETS)
        self.layout_box.setToolTip("device mesh: devices along the data axis x along the map axis")
        self.simulate = QCheckBox("simulate")
        self.simulate.setToolTip("use JAX's CPU backend with this many simulated devices (set per run)")
        self.cpu_devices = QSpinBox()
        self.cpu_devices.setRange(1, MAX_SIMULATED_DEVICES)
        self.cpu_devices.setValue(8)
        self.cpu_devices.setSuffix(" CPU devices")
        lay = QHBoxLayout()
        lay.addWidget(self.layout_box, 1)
        lay.addWidget(self.simulate)
        lay.addWidget(self.cpu_devices, 1)
        form.addRow("Layout", lay)
        self.devices_label = QLabel("Devices: not asked yet")
        self.devices_label.setWordWrap(True)
        self.detect = QPushButton("Detect")
        self.detect.setToolTip("ask a short-lived worker process which devices JAX sees with these settings")
        dev = QHBoxLayout()
        dev.addWidget(self.devices_label, 1)
        dev.addWidget(self.detect)
        form.addRow("", dev)

        self.memory_label = QLabel()
        self.memory_label.setWordWrap(True)
        self.reason_label = QLabel()
        self.reason_label.setWordWrap(True)
        self.reason_label.setStyleSheet("color: #c0392b;")
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        outer = QVBoxLayout(self)
        outer.addLayout(form)
        outer.addWidget(self.memory_label)
        outer.addWidget(self.reason_label)
        outer.addStretch(1)

        self.detect.clicked.connect(self.detect_requested)
        self.impl.currentIndexChanged.connect(self._on_impl_changed)
        self.browse.clicked.connect(self._on_browse)
        self.file_data.toggled.connect(self._sync_data_enabled)
        self.simulate.toggled.connect(self.cpu_devices.setEnabled)
        # What a worker saw holds for the device settings it ran with, no others.
        self.simulate.toggled.connect(self._forget_devices)
        self.cpu_devices.valueChanged.connect(self._forget_devices)
        for sig_ in (
            self.grid.currentTextChanged,
            self.samples.valueChanged,
            self.random_data.toggled,
            self.path.editingFinished,
            self.scale.toggled,
            self.iterations.valueChanged,
            self.sigma_start.textChanged,
            self.sigma_end.textChanged,
            self.lr_start.valueChanged,
            self.lr_end.valueChanged,
            self.seed.valueChanged,
            self.precision.currentTextChanged,
            self.layout_box.currentTextChanged,
            self.simulate.toggled,
            self.cpu_devices.valueChanged,
        ):
            sig_.connect(self.revalidate)
        self.grid.setCurrentText("240x135")
        self._sync_data_enabled()
        self.cpu_devices.setEnabled(False)
        self._building = False
        self._on_impl_changed()

    # -- reading and writing the form ---------------------------------------------------
    @property
    def state(self) -> PanelState:
        return self._state

    def selected_impl(self) -> Any:
        return registry.get(self.impl.currentData())

    def set_devices(self, info: dict[str, Any] | None, simulated: int | None) -> None:
        """Show the devices a worker reported (``env`` of a run, or the probe's answer)."""
        self._devices_info = (info, simulated)
        if info is None:
            self.devices_label.setText("Devices: asking…")
        elif "error" in info:
            self.devices_label.setText(f"Devices: JAX cannot start here ({info['error']})")
        else:
            devs = info.get("devices") or []
            kinds = ", ".join(sorted({str(d.get("kind")) for d in devs}))
            sim = " (simulated)" if simulated else ""
            self.devices_label.setText(f"Devices: {len(devs)} × {kinds}{sim}")
            self.devices_label.setToolTip(f"JAX backend: {info.get('backend')}")
        self.revalidate()

    def _forget_devices(self) -> None:
        info, simulated = getattr(self, "_devices_info", (None, None))
        if info is None:
            return
        now = self.cpu_devices.value() if self.simulate.isChecked() else None
        if now != simulated:
            self._devices_info = (None, None)
            self.devices_label.setText("Devices: not asked yet for these settings")
            self.devices_label.setToolTip("")

    def _known_device_count(self) -> int | None:
        info, _simulated = getattr(self, "_devices_info", (None, None))
        if info is None or "error" in info:
            return None
        return len(info.get("devices") or []) or None

    def set_device_memory(self, device_memory: Any) -> None:
        self._device_memory = device_memory
        self.revalidate()

    def set_iterations_memory(self, iterations: dict[str, int]) -> None:
        """The last steps/epochs per kind (from settings); shows the current kind's."""
        self._iterations.update(iterations)
        self._building = True
        self.iterations.setValue(self._iterations[self._kind])
        self._building = False
        self.revalidate()

    def iterations_memory(self) -> dict[str, int]:
        return dict(self._iterations)

    def set_cpu_devices(self, n: int | None) -> None:
        self.simulate.setChecked(bool(n))
        if n:
            self.cpu_devices.setValue(min(int(n), MAX_SIMULATED_DEVICES))

    def load_config(self, cfg: RunConfig) -> None:
        """Show ``cfg`` in the form (unknown implementations keep the current choice)."""
        self._building = True
        try:
            i = self.impl.findData(cfg.impl)
            if i >= 0:
                self.impl.setCurrentIndex(i)
            self.grid.setCurrentText(cfg.grid)
            if cfg.data.path is None:
                self.random_data.setChecked(True)
                self.samples.setValue(max(1, min(cfg.data.samples, self.samples.maximum())))
            else:
                self.file_data.setChecked(True)
                self.path.setText(cfg.data.path)
                self.scale.setChecked(cfg.data.scale)
            if cfg.iterations:
                kind = "online" if cfg.steps is not None else "batch"
                self._iterations[kind] = cfg.iterations
            self.sigma_start.setText(",".join(f"{v:g}" for v in cfg.sigma_start) if cfg.sigma_start else "")
            self.sigma_end.setText(",".join(f"{v:g}" for v in cfg.sigma_end) if cfg.sigma_end else "")
            self.lr_start.setValue(cfg.lr_start)
            self.lr_end.setValue(cfg.lr_end)
            self.seed.setValue(min(cfg.seed, self.seed.maximum()))
            self.precision.setCurrentText(cfg.precision)
            self.layout_box.setCurrentText(cfg.layout)
        finally:
            self._building = False
        self._on_impl_changed()

    # -- slots ---------------------------------------------------------------------------
    def _on_impl_changed(self) -> None:
        impl = self.selected_impl()
        self.impl_info.setText(f"{impl.description}\n[{impl.supports()}]")
        self.impl.setToolTip(impl.description)
        if not self._building:
            self._iterations[self._kind] = self.iterations.value()
        self._kind = impl.kind
        self._building = True
        self.iterations_label.setText("Steps" if impl.kind == "online" else "Epochs")
        self.iterations.setValue(self._iterations[impl.kind])
        self.lr_start.setEnabled(impl.kind == "online")
        self.lr_end.setEnabled(impl.kind == "online")
        self.lr_label.setToolTip("" if impl.kind == "online" else "batch training does not use a learning rate")
        self._building = False
        self.revalidate()

    def _on_browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Training data", self.path.text() or str(Path.home()), "Data (*.npy *.csv *.txt);;All files (*)"
        )
        if path:
            self.path.setText(path)
            self.file_data.setChecked(True)
            self.revalidate()

    def _sync_data_enabled(self) -> None:
        file = self.file_data.isChecked()
        self.samples.setEnabled(not file)
        self.path.setEnabled(file)
        self.browse.setEnabled(file)
        self.scale.setEnabled(file)

    def _data_shape(self) -> tuple[tuple[int, ...] | None, str]:
        """(shape, error) of the chosen file, loaded once per (path, scale)."""
        key = (self.path.text().strip(), self.scale.isChecked())
        if key not in self._data_cache:
            if not key[0]:
                return None, "data: choose a .npy or .csv file"
            try:
                arr = load_data(key[0], scale=key[1])
                self._data_cache[key] = (tuple(arr.shape), "")
            except DataError as exc:
                self._data_cache[key] = (None, f"data: {exc}")
        return self._data_cache[key]

    def revalidate(self) -> None:
        if self._building:
            return
        self._iterations[self._kind] = self.iterations.value()
        self._state = self._evaluate()
        self.reason_label.setText(self._state.reason)
        self.reason_label.setVisible(bool(self._state.reason))
        self.memory_label.setText(self._state.memory_text)
        self.state_changed.emit(self._state)

    def _evaluate(self) -> PanelState:
        impl = self.selected_impl()
        cpu = self.cpu_devices.value() if self.simulate.isChecked() else None
        self.data_info.setText("")
        try:
            width, height = cfgmod.parse_grid(self.grid.currentText())
            if self.file_data.isChecked():
                shape, err = self._data_shape()
                if shape is None:
                    return PanelState(None, err, "", cpu)
                samples, features = shape[0], shape[1]
                self.data_info.setText(f"{samples:,} x {features} loaded")
                data = DataSpec(path=self.path.text().strip(), scale=self.scale.isChecked())
            else:
                samples, features = self.samples.value(), 3
                data = DataSpec(samples=samples)
            n = self.iterations.value()
            cfg = RunConfig(
                impl=impl.name,
                width=width,
                height=height,
                data=data,
                steps=n if impl.kind == "online" else None,
                epochs=n if impl.kind == "batch" else None,
                sigma_start=_parse_radii(self.sigma_start.text(), "sigma_start"),
                sigma_end=_parse_radii(self.sigma_end.text(), "sigma_end"),
                lr_start=self.lr_start.value(),
                lr_end=self.lr_end.value(),
                seed=self.seed.value(),
                precision=self.precision.currentText(),
                layout=self.layout_box.currentText().strip(),
            ).validate(impl.kind)
            if cfg.precision not in impl.precisions:
                raise ConfigError(
                    "precision", f"{impl.name} supports {', '.join(impl.precisions)}, not {cfg.precision}"
                )
            d, m = cfgmod.parse_layout(cfg.layout)
            if impl.shards and cpu is not None and d * m > cpu:
                raise ConfigError(
                    "layout", f"{cfg.layout} needs {d * m} devices, but {cpu} simulated CPU devices are set"
                )
            seen = self._known_device_count()
            if impl.shards and cpu is None and seen is not None and d * m > seen:
                raise ConfigError(
                    "layout", f"{cfg.layout} needs {d * m} devices, but JAX sees {seen}; simulate CPU devices to try it"
                )
        except ConfigError as exc:
            return PanelState(None, str(exc), "", cpu)
        from som_studio.session.session import problem_size

        need = impl.estimate(problem_size(cfg, samples, features))
        have, where = self._available(impl)
        text = f"Memory: about {memory.format_bytes(need)} of {memory.format_bytes(have)} {where} available"
        if need > have:
            return PanelState(
                None,
                (
                    f"memory: {impl.name} on a {cfg.grid} map with {samples:,} x {features} data needs about "
                    f"{memory.format_bytes(need)}, but only {memory.format_bytes(have)} of {where} is available"
                ),
                text,
                cpu,
                features,
                samples,
            )
        return PanelState(cfg, "", text, cpu, features, samples)

    def _available(self, impl: Any) -> tuple[int, str]:
        if impl.backend == "jax" and self._device_memory is not None:
            known = self._device_memory()
            if known is not None:
                return known
        return memory.host_available(), "host memory"


def _preview() -> None:  # python -m som_studio.qt.widgets.run_panel
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    panel = RunPanel()
    panel.state_changed.connect(lambda s: print("runnable" if s.runnable else s.reason))
    panel.show()
    app.exec()


if __name__ == "__main__":
    _preview()
