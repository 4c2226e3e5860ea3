"""What the app knows of the devices JAX sees: asked of short-lived worker processes, never of the GUI's own JAX.

:class:`DeviceWatch` asks a :class:`~som_studio.qt.controller.DeviceProbe` when
the user asks (Detect, About) or when a layout needs several devices and
nobody has asked yet with these settings, and gives every answer (and each
run's own description of its devices) to the form, which checks layouts and
memory against it.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from PySide6.QtCore import QObject, Signal

from som_studio.app_model.form import FormState, RunForm
from som_studio.config import ConfigError, parse_layout
from som_studio.core.impls import registry
from som_studio.qt.probe import DeviceProbe


class DeviceWatch(QObject):
    """Asks which devices there are and tells the form.

    ``info_ready(dict)`` repeats the probe's answer once the form has it.

    Parameters
    ----------
    form : the configuration being edited.
    show : called with ``(info, simulated)`` to show what was seen (``info`` ``None``: asking).
    """

    info_ready = Signal(dict)
    # Device settings already asked about automatically: a failed probe is not repeated on every edit.
    _auto_detected: ClassVar[set[int | None]] = set()

    def __init__(self, form: RunForm, show: Any, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.form = form
        self._show = show
        self.probe = DeviceProbe(self)
        self.probe.info_ready.connect(self._on_probe_info)
        self.env_info: dict[str, Any] | None = None  # the last good description of JAX's devices
        self._probe_cpu: int | None = None

    def detect(self) -> None:
        """Ask a short-lived worker which devices JAX sees with the form's settings."""
        if not self.probe.running:
            self._probe_cpu = self.form.fields.simulated
            self._show(None, self._probe_cpu)
            self.probe.start(self._probe_cpu)

    def run_env(self, env: dict[str, Any], simulated: int | None) -> None:
        """A run's worker described its devices."""
        if env.get("backend") not in (None, "numpy"):
            self.env_info = env
            self._show(env, simulated)

    def _on_probe_info(self, info: dict[str, Any]) -> None:
        self._show(info, self._probe_cpu)
        if "error" not in info:
            self.env_info = info
        self.info_ready.emit(info)

    def detect_if_layout_needs_it(self, st: FormState) -> None:
        """Ask once a layout needs several devices and nobody asked yet with these settings.

        Otherwise a 2x2 layout on a one-GPU machine passes the form and fails in the worker.
        """
        cfg = st.config or st.candidate
        if cfg is None or st.cpu_devices is not None or self.probe.running:
            return  # simulated devices are checked against their count already
        if self.form.known_device_count() is not None or st.cpu_devices in self._auto_detected:
            return
        try:
            d, m = parse_layout(cfg.layout)
        except ConfigError:  # the form says what is wrong
            return
        if registry.get(cfg.impl).shards and d * m > 1:
            DeviceWatch._auto_detected = self._auto_detected | {st.cpu_devices}
            self.detect()

    def shutdown(self) -> None:
        self.probe.shutdown()
