"""``som-studio`` with no command: open the desktop app.

Without a display it says so and points to the headless commands, instead of
letting Qt abort the process.
"""

from __future__ import annotations

import argparse
import os
import sys

NO_DISPLAY = """\
som-studio: the desktop app needs a display, and none was found (DISPLAY and WAYLAND_DISPLAY are unset).
The headless commands work without one, e.g. over SSH:
  som-studio list                     the implementations
  som-studio devices                  the devices JAX sees
  som-studio bench --grid 60x34       train and time implementations
Or forward a display (ssh -X), or run under a virtual one: xvfb-run -a som-studio"""


def has_display() -> bool:
    """Whether Qt can open windows here (a platform plugin was chosen, or a display exists)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux") or "bsd" in sys.platform:
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True  # macOS and Windows always have their window system


def main(args: argparse.Namespace | None = None) -> int:
    """Run the app until its window closes; returns the exit status."""
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    try:
        from PySide6.QtWidgets import QApplication

        from som_studio.qt.main_window import MainWindow
        from som_studio.qt.settings import Settings
    except ImportError as exc:
        print(f"som-studio: the desktop app cannot start: {exc}.\n"
              "Install its libraries (pip install PySide6-Essentials pyqtgraph), or use the headless "
              "commands: som-studio list | devices | bench", file=sys.stderr)
        return 2

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SOM Studio")
    app.setOrganizationName("som-studio")
    app.setApplicationDisplayName("SOM Studio")
    cpu_devices = getattr(args, "cpu_devices", None) if args is not None else None
    window = MainWindow(Settings(), cpu_devices=cpu_devices)
    _show_unexpected_errors(window)
    window.show()
    return int(app.exec())


def _show_unexpected_errors(window: object) -> None:
    """An exception that escapes a slot is shown in a dialog (and printed); the app goes on."""
    import traceback

    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: object) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, exc, tb)  # type: ignore[arg-type]
            return
        traceback.print_exception(kind, exc, tb)  # type: ignore[arg-type]
        try:
            window.show_error("Unexpected error", f"{kind.__name__}: {exc}\n\n"  # type: ignore[attr-defined]
                              "The app goes on; the details were printed on the terminal.")
        except Exception:
            pass

    sys.excepthook = hook
