"""``som-studio`` with no command: open the desktop app.

Without a display it says so and points to the headless commands, instead of
letting Qt abort the process.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from som_studio.qt.main_window import MainWindow

NO_DISPLAY = """\
som-studio: the desktop app needs a display, and none was found ({reason}).
The headless commands work without one, e.g. over SSH:
  som-studio list                     the implementations
  som-studio devices                  the devices JAX sees
  som-studio bench --grid 60x34       train and time implementations
Or forward a display (ssh -X), or run under a virtual one: xvfb-run -a som-studio"""


def _connects(family: int, address: str | bytes | tuple[str, int], timeout_s: float = 1.0) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout_s)
            sock.connect(address)
        return True
    except OSError:
        return False


def x_server_reachable(display: str) -> bool:
    """Whether an X server answers at ``display`` (``[host]:n[.screen]``).

    The same places Xlib tries: the local socket ``/tmp/.X11-unix/X<n>`` (and
    its abstract twin on Linux) for ``:n`` and ``unix:n``, TCP port 6000+n for
    ``host:n``. A string that is no display name is not reachable.
    """
    host, sep, rest = display.rpartition(":")
    number = rest.split(".", 1)[0]
    if not sep or not number.isdigit():
        return False
    n = int(number)
    if host.startswith("/"):  # macOS launchd sockets: a path, not a host
        return _connects(socket.AF_UNIX, display)
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{n}"
        if os.path.exists(path) and _connects(socket.AF_UNIX, path):
            return True
        return sys.platform.startswith("linux") and _connects(socket.AF_UNIX, "\0" + path)
    return _connects(socket.AF_INET6 if ":" in host else socket.AF_INET, (host.strip("[]"), 6000 + n))


def wayland_reachable(name: str) -> bool:
    """Whether a Wayland compositor answers at ``$WAYLAND_DISPLAY`` (absolute, or under ``$XDG_RUNTIME_DIR``)."""
    path = name if os.path.isabs(name) else os.path.join(os.environ.get("XDG_RUNTIME_DIR") or "/run/user/0", name)
    return _connects(socket.AF_UNIX, path)


def display_problem() -> str:
    """Why Qt could not open a window here, or ``""`` when it can.

    Checked before the ``QApplication`` exists, because Qt aborts the process
    (no exception to catch) when its platform plugin cannot connect.
    """
    platform_name = os.environ.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if platform_name and platform_name not in ("xcb", "wayland", "wayland-egl"):
        return ""  # offscreen, minimal, vnc, eglfs...: Qt's own business
    if not (sys.platform.startswith("linux") or "bsd" in sys.platform):
        return ""  # macOS and Windows always have their window system
    x, wl = os.environ.get("DISPLAY", ""), os.environ.get("WAYLAND_DISPLAY", "")
    if platform_name == "xcb":
        wl = ""
    elif platform_name.startswith("wayland"):
        x = ""
    if not x and not wl:
        return (
            "DISPLAY and WAYLAND_DISPLAY are unset"
            if not platform_name
            else f"QT_QPA_PLATFORM={platform_name} "
            f"but {'DISPLAY' if platform_name == 'xcb' else 'WAYLAND_DISPLAY'} is unset"
        )
    if (wl and wayland_reachable(wl)) or (x and x_server_reachable(x)):
        return ""
    unreachable = [f"{k}={v}" for k, v in (("WAYLAND_DISPLAY", wl), ("DISPLAY", x)) if v]
    return f"{' and '.join(unreachable)} set, but no display server answers there"


def has_display() -> bool:
    """Whether Qt can open windows here (a platform plugin was chosen, or a reachable display exists)."""
    return not display_problem()


def main(args: argparse.Namespace | None = None) -> int:
    """Run the app until its window closes; returns the exit status."""
    problem = display_problem()
    if problem:
        print(NO_DISPLAY.format(reason=problem), file=sys.stderr)
        return 2
    try:
        from PySide6.QtWidgets import QApplication

        from som_studio.qt.main_window import MainWindow
        from som_studio.qt.settings import Settings
    except ImportError as exc:
        print(
            f"som-studio: the desktop app cannot start: {exc}.\n"
            "Install its libraries (pip install PySide6-Essentials pyqtgraph), or use the headless "
            "commands: som-studio list | devices | bench",
            file=sys.stderr,
        )
        return 2

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SOM Studio")
    app.setOrganizationName("som-studio")
    QApplication.setApplicationDisplayName("SOM Studio")  # a QGuiApplication static, as are the two above
    cpu_devices = getattr(args, "cpu_devices", None) if args is not None else None
    settings = Settings()
    # i18n (issue 14): --lang, else View > Language, else the environment; Qt's strings, a Hangul font.
    from som_studio.qt.i18n import apply_language

    apply_language(app, getattr(args, "lang", None), settings)
    window = MainWindow(settings, cpu_devices=cpu_devices)
    show_settings_problems(window, settings)
    _show_unexpected_errors(window)
    window.show()
    return int(app.exec())


def show_settings_problems(window: MainWindow, settings: object) -> None:
    """What is wrong with the settings file, on the terminal and in the status bar, after the runs' problems."""
    problems: list[str] = list(getattr(settings, "problems", []))
    for text in problems:
        print(f"som-studio: {text}", file=sys.stderr)
    if problems:
        before = window.status_label.text()
        window.status_label.setText("; ".join([*([before] if before else []), *problems]))


def app_icon() -> object:
    """The application icon (a ``QIcon`` with every shipped PNG size), or a null icon if they are missing."""
    from PySide6.QtGui import QIcon

    from som_studio import resources

    icon = QIcon()
    try:
        for size in resources.ICON_SIZES:
            icon.addFile(str(resources.icon_png(size)))
    except resources.ResourceError as exc:
        print(f"som-studio: {exc}", file=sys.stderr)  # a broken install still runs, without its icon
    return icon


def apply_identity(app: object) -> None:
    """Name the app to the desktop: the desktop entry it belongs to (Wayland, X11 taskbars) and its icon."""
    from som_studio import resources

    # Without it a Wayland compositor cannot match the window to the
    # launcher: no icon in the dock, a separate taskbar entry.
    app.setDesktopFileName(resources.APP_ID)  # type: ignore[attr-defined]
    app.setWindowIcon(app_icon())  # type: ignore[attr-defined]


def _show_unexpected_errors(window: MainWindow) -> None:
    """An exception that escapes a slot is shown in a dialog (and printed); the app goes on."""
    import traceback

    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(kind, KeyboardInterrupt):
            previous(kind, exc, tb)
            return
        traceback.print_exception(kind, exc, tb)
        try:
            window.show_error(
                "Unexpected error",
                f"{kind.__name__}: {exc}\n\nThe app goes on; the details were printed on the terminal.",
            )
        except Exception:
            pass

    sys.excepthook = hook
