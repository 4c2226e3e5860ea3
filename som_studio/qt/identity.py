"""The app's name and icon as the desktop sees them (the window applies them when it opens).

Threads: GUI thread only.
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QGuiApplication, QIcon

from som_studio import resources


def app_icon() -> QIcon:
    """The application icon (a ``QIcon`` with every shipped PNG size), or a null icon if they are missing."""
    icon = QIcon()
    try:
        for size in resources.ICON_SIZES:
            icon.addFile(str(resources.icon_png(size)))
    except resources.ResourceError as exc:
        print(f"som-studio: {exc}", file=sys.stderr)  # a broken install still runs, without its icon
    return icon


def apply_identity(app: QGuiApplication) -> None:
    """Name the app to the desktop: the desktop entry it belongs to (Wayland, X11 taskbars) and its icon."""
    # Without it a Wayland compositor cannot match the window to the
    # launcher: no icon in the dock, a separate taskbar entry.
    app.setDesktopFileName(resources.APP_ID)
    app.setWindowIcon(app_icon())
