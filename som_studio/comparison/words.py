"""How a comparison says its figures: durations, statuses and kinds in the user's language.

One set of words for every place a comparison is shown: the report (HTML, PDF, CSV), the app's
comparison view and run list, and the command line's tables.
"""

from __future__ import annotations

import math

from som_studio.i18n import _


def format_seconds(v: float | None) -> str:
    """A duration with a unit that keeps 3-4 significant digits (``-`` for none)."""
    if v is None or not math.isfinite(v):
        return "-"
    if v >= 1:
        return f"{v:.2f} s"
    if v >= 1e-3:
        return f"{v * 1e3:.2f} ms"
    return f"{v * 1e6:.1f} µs"


def status_text(status: str) -> str:
    """A run's status (``ok``, ``failed``, ``cancelled``) in the user's language; records keep the key."""
    return {"ok": _("ok"), "failed": _("failed"), "cancelled": _("cancelled")}.get(status, status)


def kind_text(kind: str) -> str:
    """``online``/``batch`` in the user's language."""
    return {"online": _("online"), "batch": _("batch")}.get(kind, kind)


def number_cell(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def level_text(level: str) -> str:
    """A flag's level (``warning``, ``note``) in the user's language."""
    return {"warning": _("warning"), "note": _("note")}.get(level, level)


#: A record's configuration keys, flattened (``sigma.end``), of the settings whose field has another name.
_KEY_SETTINGS = {
    "sigma.start": "sigma_start",
    "sigma.end": "sigma_end",
    "learning_rate.start": "lr_start",
    "learning_rate.end": "lr_end",
}


def setting_of_key(key: str) -> str:
    """The setting a record's flattened configuration key holds (``sigma.end`` -> ``sigma_end``); else the key."""
    return _KEY_SETTINGS.get(key, key)


def key_words(key: str) -> str:
    """A record's flattened configuration key in the user's words: its setting's label (``Radius σ (end)``), else
    the key itself."""
    from som_studio import config

    try:
        setting = config.setting_named(setting_of_key(key))
    except KeyError:
        return key
    return _(setting.label) if setting.label else key
