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

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings

from som_studio.app_model.form import MAX_SIMULATED_DEVICES, RunForm
from som_studio.config import ConfigError, RunConfig, setting_named
from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.session.resolve import AUTO, count_name

VERSION = 1
"""The settings format this SOM Studio writes (``settings/version``); a newer file is not overwritten."""

LAYOUT = 2
"""The window's arrangement of docks (``window/layout``): a state saved for another arrangement is not restored."""


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
        # What is wrong with the settings file: (template, fields), put into words when read, since
        # the language is chosen after the settings are opened (the Language menu's choice is in them).
        self._problems: list[tuple[str, dict[str, object]]] = []
        #: A file written by a newer SOM Studio is read (every value is validated) but never written.
        self.read_only = False
        where = self._qs.fileName()
        if self._qs.status() == QSettings.Status.FormatError:
            damaged = QT_TRANSLATE_NOOP(
                "Settings", "{file}: the settings file is damaged; SOM Studio starts with its defaults"
            )
            self._problems.append((damaged, {"file": where}))
        elif self._qs.status() == QSettings.Status.AccessError:
            unreadable = QT_TRANSLATE_NOOP(
                "Settings", "{file}: the settings file cannot be read; SOM Studio starts with its defaults"
            )
            self._problems.append((unreadable, {"file": where}))
        version = self._int("settings/version", VERSION)
        if version > VERSION:
            self.read_only = True
            newer = QT_TRANSLATE_NOOP(
                "Settings",
                "{file}: written by a newer SOM Studio (settings version {version}, this one reads {reads}); "
                "what this version understands is used, and the file is left as it is",
            )
            self._problems.append((newer, {"file": where, "version": version, "reads": VERSION}))

    @property
    def problems(self) -> list[str]:
        """What is wrong with the settings file, for the user to read (the app starts anyway)."""
        return [QCoreApplication.translate("Settings", text).format(**fields) for text, fields in self._problems]

    @property
    def qsettings(self) -> QSettings:
        return self._qs

    def sync(self) -> None:
        self._qs.sync()

    # -- the run configuration -------------------------------------------------------
    def restore_form(self, form: RunForm, cpu_devices: int | None = None) -> None:
        """Give ``form`` the remembered counts, configuration and device setting (``cpu_devices`` wins)."""
        form.set_counts(self.iterations())
        cfg = self.run_config()
        if cfg is not None:
            form.set_config(cfg)
            if self._auto().get("grid"):  # left to "auto": it follows the data again
                form.edit(grid=AUTO)
        n = cpu_devices or self.cpu_devices()
        if n:
            form.edit(simulate=True, cpu_devices=min(int(n), MAX_SIMULATED_DEVICES))
        else:
            form.edit(simulate=False)

    def save_form(self, form: RunForm) -> None:
        """Remember ``form``'s runnable configuration, its counts and its device setting."""
        if form.state.config is not None:
            self.set_run_config(form.state.config, grid_auto=form.fields.grid_auto)
        for kind, n in form.counts().items():
            self.set_iterations(kind, n)
        self.set_cpu_devices(form.fields.simulated)

    def run_config(self) -> RunConfig | None:
        """The last configuration, or ``None`` when none was saved or it no longer parses."""
        text = self._qs.value("run/config", None)
        if not text:
            return None
        try:
            return RunConfig.from_dict(json.loads(str(text)))  # radii and init left to "auto" stay so
        except (ValueError, ConfigError, TypeError):
            return None

    def set_run_config(self, config: RunConfig, grid_auto: bool = False) -> None:
        d = config.to_dict()
        d["grid_auto"] = grid_auto  # the form's: a config always has its grid
        self._set("run/config", json.dumps(d))

    def _auto(self) -> dict[str, bool]:
        try:
            d = json.loads(str(self._qs.value("run/config", "") or "{}"))
        except ValueError:
            return {}
        return {"grid": bool(d.get("grid_auto"))} if isinstance(d, dict) else {}

    def iterations(self) -> dict[str, int]:
        """The last steps (online) and epochs (batch) chosen, kept apart."""
        counts = {kind: setting_named(count_name(kind)).fallback for kind in ("online", "batch")}
        return {kind: self._int(f"run/{kind}_iterations", default) for kind, default in counts.items()}

    def set_iterations(self, kind: str, value: int) -> None:
        self._set(f"run/{kind}_iterations", int(value))

    def cpu_devices(self) -> int | None:
        """Simulated CPU devices for runs, or ``None`` for the machine's own devices."""
        v = self._int("run/cpu_devices", 0)
        return v or None

    def set_cpu_devices(self, n: int | None) -> None:
        self._set("run/cpu_devices", int(n or 0))

    def view(self) -> tuple[str, int]:
        return str(self._qs.value("view/mode", "rgb")), self._int("view/component", 0)

    def set_view(self, mode: str, component: int) -> None:
        self._set("view/mode", mode)
        self._set("view/component", int(component))

    def log_timing(self) -> bool:
        return str(self._qs.value("view/log_timing", "true")).lower() == "true"

    def set_log_timing(self, on: bool) -> None:
        self._set("view/log_timing", "true" if on else "false")

    def record_inside(self) -> bool:
        """The Inside page's "Record the inside of the next runs" (off until ticked)."""
        return str(self._qs.value("inside/record", "false")).lower() == "true"

    def set_record_inside(self, on: bool) -> None:
        self._set("inside/record", "true" if on else "false")

    # -- the window --------------------------------------------------------------------
    def geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def set_geometry(self, value: QByteArray) -> None:
        self._set("window/geometry", value)

    def window_state(self) -> QByteArray | None:
        """The docks as last saved, or ``None`` (none saved, or saved for another arrangement of docks)."""
        if self._int("window/layout", 0) != LAYOUT:
            return None
        return self._bytes("window/state")

    def set_window_state(self, value: QByteArray) -> None:
        self._set("window/state", value)
        self._set("window/layout", LAYOUT)

    def columns(self, table: str) -> QByteArray | None:
        """A table's columns (``runs``, ``compare``): order, widths and hidden ones, as last left."""
        return self._bytes(f"{table}/columns")

    def set_columns(self, table: str, value: QByteArray) -> None:
        self._set(f"{table}/columns", value)

    def folder(self, kind: str) -> str:
        """The folder the ``kind`` file dialog (``data``, ``runs``) last chose in; ``""`` for none yet."""
        return str(self._qs.value(f"folders/{kind}", "") or "")

    def set_folder(self, kind: str, path: str) -> None:
        self._set(f"folders/{kind}", path)

    # -- helpers -----------------------------------------------------------------------
    def set_value(self, key: str, value: object) -> None:
        """Remember ``value`` under ``key``: every write goes here, so a newer version's file stays as it is."""
        self._set(key, value)

    def _set(self, key: str, value: object) -> None:
        if self.read_only:
            return
        if self._qs.value("settings/version") is None:
            self._qs.setValue("settings/version", VERSION)
        self._qs.setValue(key, value)

    def _int(self, key: str, default: int) -> int:
        try:
            return int(self._qs.value(key, default))  # type: ignore[call-overload]
        except (TypeError, ValueError):
            return default

    def _bytes(self, key: str) -> QByteArray | None:
        v: Any = self._qs.value(key, None)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None
