"""Persistent settings behind one typed helper.

Everything the app remembers goes through :class:`Settings`: the last run
configuration (as :meth:`RunConfig.to_dict` JSON, so it is readable and
validated again on load), the simulated device count, the map view, window
geometry and dock layout. Tests give each app its own settings file
(mne-qt-browser's habit), so nothing leaks between tests or into the user's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from som_studio.config import ConfigError, RunConfig


class Settings:
    """Typed access to the app's QSettings.

    Threads: GUI thread only.

    Parameters
    ----------
    path : an INI file to use instead of the user's settings (tests, benchmarks).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        if path is None:
            self._qs = QSettings("som-studio", "SOM Studio")
        else:
            self._qs = QSettings(str(path), QSettings.Format.IniFormat)

    @property
    def qsettings(self) -> QSettings:
        return self._qs

    def sync(self) -> None:
        self._qs.sync()

    # -- the run configuration -------------------------------------------------------
    def run_config(self) -> RunConfig | None:
        """The last configuration, or ``None`` when none was saved or it no longer parses."""
        text = self._qs.value("run/config", None)
        if not text:
            return None
        try:
            d = json.loads(str(text))
            cfg = RunConfig.from_dict(d)
        except (ValueError, ConfigError, TypeError):
            return None
        # Radii left to their defaults stay "auto": they follow the grid size.
        auto = d.get("sigma_auto") or {}
        return cfg.replace(
            sigma_start=None if auto.get("start") else cfg.sigma_start,
            sigma_end=None if auto.get("end") else cfg.sigma_end,
        )

    def set_run_config(self, config: RunConfig) -> None:
        d = config.to_dict()
        d["sigma_auto"] = {"start": config.sigma_start is None, "end": config.sigma_end is None}
        self._qs.setValue("run/config", json.dumps(d))

    def iterations(self) -> dict[str, int]:
        """The last steps (online) and epochs (batch) chosen, kept apart."""
        return {
            kind: self._int(f"run/{kind}_iterations", default) for kind, default in (("online", 50_000), ("batch", 50))
        }

    def set_iterations(self, kind: str, value: int) -> None:
        self._qs.setValue(f"run/{kind}_iterations", int(value))

    def cpu_devices(self) -> int | None:
        """Simulated CPU devices for runs, or ``None`` for the machine's own devices."""
        v = self._int("run/cpu_devices", 0)
        return v or None

    def set_cpu_devices(self, n: int | None) -> None:
        self._qs.setValue("run/cpu_devices", int(n or 0))

    def view(self) -> tuple[str, int]:
        return str(self._qs.value("view/mode", "rgb")), self._int("view/component", 0)

    def set_view(self, mode: str, component: int) -> None:
        self._qs.setValue("view/mode", mode)
        self._qs.setValue("view/component", int(component))

    def log_timing(self) -> bool:
        return str(self._qs.value("view/log_timing", "true")).lower() == "true"

    def set_log_timing(self, on: bool) -> None:
        self._qs.setValue("view/log_timing", "true" if on else "false")

    # -- the window --------------------------------------------------------------------
    def geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def set_geometry(self, value: QByteArray) -> None:
        self._qs.setValue("window/geometry", value)

    def window_state(self) -> QByteArray | None:
        return self._bytes("window/state")

    def set_window_state(self, value: QByteArray) -> None:
        self._qs.setValue("window/state", value)

    # -- helpers -----------------------------------------------------------------------
    def _int(self, key: str, default: int) -> int:
        try:
            v: Any = self._qs.value(key, default)
            return int(v)
        except (TypeError, ValueError):
            return default

    def _bytes(self, key: str) -> QByteArray | None:
        v: Any = self._qs.value(key, None)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None
