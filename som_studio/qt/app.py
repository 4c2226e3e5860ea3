"""``som-studio`` with no command: open the desktop app.

Without a display it says so and points to the headless commands, instead of
letting Qt abort the process.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from som_studio import display
from som_studio.display import wayland_reachable, x_server_reachable  # noqa: F401  (the app's names for them)
from som_studio.i18n import N_, _

if TYPE_CHECKING:
    from som_studio.qt.main_window import MainWindow

# Printed before Qt starts (gettext: the language of --lang or the environment).
NO_DISPLAY = N_("""\
som-studio: the desktop app needs a display, and none was found ({reason}).
The headless commands work without one, e.g. over SSH:
  som-studio list                     the implementations
  som-studio devices                  the devices JAX sees
  som-studio bench --grid 60x34       train and time implementations
Or forward a display (ssh -X), or run under a virtual one: xvfb-run -a som-studio""")

PLUGIN_FAILS = N_("""\
som-studio: the desktop app cannot open a window: {reason}.
{fix}
The headless commands work meanwhile: som-studio list | devices | bench | compare | doctor""")


def display_problem() -> str:
    """Why no display server answers here, or ``""`` (see :func:`som_studio.display.display_problem`)."""
    return display.display_problem()


def has_display() -> bool:
    """Whether Qt can open windows here (a platform plugin was chosen, or a reachable display exists)."""
    return not display_problem()


def startup_problem(env: Mapping[str, str] | None = None) -> str:
    """What stops the app from opening a window here, as the message to print, or ``""``.

    The one check the doctor makes too (:func:`som_studio.display.check_display`):
    run before the ``QApplication`` exists, because Qt aborts the process when
    its platform plugin cannot connect or load.
    """
    check = display.check_display(env)
    if check.ok:
        return ""
    if check.kind == "plugin":
        if check.packages:
            fix = _("Install what it needs: {install}").format(install=check.install)
        else:
            fix = _("See {command}.").format(command="`som-studio doctor`")
        return _(PLUGIN_FAILS).format(reason=check.reason, fix=fix)
    return _(NO_DISPLAY).format(reason=check.reason)


def main(args: argparse.Namespace | None = None) -> int:
    """Run the app until its window closes; returns the exit status."""
    problem = startup_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    try:
        from PySide6.QtWidgets import QApplication

        from som_studio.qt.main_window import MainWindow
        from som_studio.qt.settings import Settings
    except ImportError as exc:
        text = _(
            "som-studio: the desktop app cannot start: {error}.\n"
            "Install its libraries ({pip}), or use the headless commands: {commands}"
        )
        pip, commands = "pip install PySide6-Essentials pyqtgraph", "som-studio list | devices | bench"
        print(text.format(error=exc, pip=pip, commands=commands), file=sys.stderr)
        return 2

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("SOM Studio")
    app.setOrganizationName("som-studio")
    QApplication.setApplicationDisplayName("SOM Studio")  # a QGuiApplication static, as are the two above
    cpu_devices = getattr(args, "cpu_devices", None) if args is not None else None
    settings = Settings()
    # i18n: --lang, else View > Language, else the environment; Qt's strings, a Hangul font.
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
            from PySide6.QtCore import QCoreApplication

            note = QCoreApplication.translate("App", "The app goes on; the details were printed on the terminal.")
            window.show_error(
                QCoreApplication.translate("App", "Unexpected error"), f"{kind.__name__}: {exc}\n\n{note}"
            )
        except Exception:
            pass

    sys.excepthook = hook
