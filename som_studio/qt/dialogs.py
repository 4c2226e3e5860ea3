"""Small dialogs and actions shared by the app's views (GUI thread only)."""

from __future__ import annotations

import platform
import sys
from importlib import metadata
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox, QScrollArea, QWidget

from som_studio.i18n import format_bytes

translate = QCoreApplication.translate


def action(owner: QWidget, text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
    """A menu action of ``owner`` calling ``slot``, with its shortcut and tooltip."""
    a = QAction(text, owner)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    if tip:
        a.setToolTip(tip)
    a.triggered.connect(slot)
    return a


def show_error(owner: QWidget, title: str, message: str, *, warning: bool = False) -> QMessageBox:
    """A window-modal, non-blocking dialog over ``owner`` naming the problem, so the app stays usable;
    ``warning``: what was done has a flaw worth knowing, nothing failed.

    Deleted when closed; an owner that keeps it (tests read it) forgets it on its ``finished``.
    """
    icon = QMessageBox.Icon.Warning if warning else QMessageBox.Icon.Critical
    box = QMessageBox(icon, title, message, QMessageBox.StandardButton.Ok, owner)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def about_text(info: dict[str, Any] | None) -> str:
    """The About box: versions, and the JAX backend and devices a worker reported (``None``: asking)."""
    import numpy as np
    import pyqtgraph as pg
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion

    from som_studio import __version__

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return translate("Dialogs", "not installed")

    if info is None:
        backend = translate("Dialogs", "asking a worker process…")
    elif "error" in info:
        backend = translate("Dialogs", "unavailable ({error})").format(error=info["error"])
    else:
        devs = info.get("devices") or []
        kinds = ", ".join(sorted({str(d.get("kind")) for d in devs}))
        if devs and devs[0].get("memory_limit"):
            each = format_bytes(devs[0]["memory_limit"])
            text = translate("Dialogs", "{backend} — {n} device(s): {kinds}, {memory} each")
        else:
            each, text = "", translate("Dialogs", "{backend} — {n} device(s): {kinds}")
        backend = text.format(backend=info.get("backend"), n=len(devs), kinds=kinds, memory=each)
    blurb = translate(
        "Dialogs", "Self-organizing maps from NumPy to fused, sharded JAX, timed honestly and watched live."
    )
    jax_backend = translate("Dialogs", "JAX backend")
    return (
        f"<h3>SOM Studio {__version__}</h3>"
        f"<p>{blurb}</p>"
        "<table>"
        f"<tr><td>Python</td><td>{platform.python_version()} ({sys.platform})</td></tr>"
        f"<tr><td>NumPy</td><td>{np.__version__}</td></tr>"
        f"<tr><td>JAX / jaxlib</td><td>{version('jax')} / {version('jaxlib')}</td></tr>"
        f"<tr><td>{jax_backend}</td><td>{backend}</td></tr>"
        f"<tr><td>Qt / PySide6</td><td>{qVersion()} / {pyside_version}</td></tr>"
        f"<tr><td>pyqtgraph</td><td>{pg.__version__}</td></tr>"
        "</table>"
    )


def show_about(owner: QWidget, info: dict[str, Any] | None) -> QMessageBox:
    """The About box over ``owner``, non-blocking, deleted when closed (its owner sets its text as answers come)."""
    box = QMessageBox(
        QMessageBox.Icon.Information,
        translate("Dialogs", "About SOM Studio"),
        about_text(info),
        QMessageBox.StandardButton.Ok,
        owner,
    )
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    box.open()
    return box


def scrolled(panel: QWidget) -> QScrollArea:
    """``panel`` in a scroll area that scrolls down, never sideways."""
    scroll = QScrollArea()
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setMinimumWidth(340)
    return scroll
