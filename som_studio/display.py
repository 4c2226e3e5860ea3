"""Can the desktop app open a window here? One check for the app and the doctor. Qt-free.

Two ways a window fails to open, both of which make Qt abort the whole process
(SIGABRT: no exception to catch) once ``QApplication`` is created:

1. no display, or one that does not answer (checked with sockets, instantly);
2. a display that answers, but Qt's platform plugin cannot load: typically a
   system library it needs is missing (a fresh Ubuntu without ``libxcb-cursor0``).

The second is checked by creating a ``QGuiApplication`` in a child process: if
Qt aborts there, the app (or the doctor) reports it, naming the packages to
install, found with ``ldd`` on the plugin.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from som_studio.i18n import _, ngettext

# Platforms whose plugin needs a display server; others (offscreen, minimal, vnc, eglfs...) are Qt's business.
_WINDOWED = ("xcb", "wayland", "wayland-egl")

_PROBE = (
    "import sys\n"
    "from PySide6.QtGui import QGuiApplication\n"
    "app = QGuiApplication(sys.argv[:1])\n"
    "print(app.platformName())\n"
)


@dataclass(frozen=True)
class DisplayCheck:
    """Whether the app can open a window, and if not why and what to install.

    ``kind``: ``"ok"``; ``"none"`` (no display set); ``"unreachable"`` (set,
    but no server answers); ``"plugin"`` (it answers, but Qt's platform plugin
    cannot load: an error, the app would abort).
    """

    kind: str
    reason: str = ""
    display: str = ""
    packages: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.kind == "ok"

    @property
    def install(self) -> str:
        """The command that installs the missing packages (Debian/Ubuntu), or ``""``."""
        return f"sudo apt-get install {' '.join(self.packages)}" if self.packages else ""


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


def wayland_reachable(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether a Wayland compositor answers at ``$WAYLAND_DISPLAY`` (absolute, or under ``$XDG_RUNTIME_DIR``)."""
    env = os.environ if env is None else env
    path = name if os.path.isabs(name) else os.path.join(env.get("XDG_RUNTIME_DIR") or "/run/user/0", name)
    return _connects(socket.AF_UNIX, path)


def _platform(env: Mapping[str, str]) -> str:
    return env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()


def _displays(env: Mapping[str, str]) -> tuple[str, str]:
    platform_name = _platform(env)
    x, wl = env.get("DISPLAY", ""), env.get("WAYLAND_DISPLAY", "")
    if platform_name == "xcb":
        wl = ""
    elif platform_name.startswith("wayland"):
        x = ""
    return x, wl


def display_problem(env: Mapping[str, str] | None = None) -> str:
    """Why no display server answers here, or ``""`` when one does (or Qt needs none). Instant: sockets only."""
    env = os.environ if env is None else env
    platform_name = _platform(env)
    if platform_name and platform_name not in _WINDOWED:
        return ""  # offscreen, minimal, vnc, eglfs...: Qt's own business
    if not (sys.platform.startswith("linux") or "bsd" in sys.platform):
        return ""  # macOS and Windows always have their window system
    x, wl = _displays(env)
    if not x and not wl:
        if not platform_name:
            return _("{x} and {wayland} are unset").format(x="DISPLAY", wayland="WAYLAND_DISPLAY")
        return _("{setting} but {var} is unset").format(
            setting=f"QT_QPA_PLATFORM={platform_name}", var="DISPLAY" if platform_name == "xcb" else "WAYLAND_DISPLAY"
        )
    if (wl and wayland_reachable(wl, env)) or (x and x_server_reachable(x)):
        return ""
    unreachable = [f"{k}={v}" for k, v in (("WAYLAND_DISPLAY", wl), ("DISPLAY", x)) if v]
    if len(unreachable) == 2:
        return _("{wayland} and {x} set, but no display server answers there").format(
            wayland=unreachable[0], x=unreachable[1]
        )
    return _("{var} set, but no display server answers there").format(var=unreachable[0])


def debian_package(soname: str) -> str:
    """The Debian/Ubuntu package that ships a library: ``libxcb-cursor.so.0`` → ``libxcb-cursor0``."""
    base, _, version = soname.partition(".so")
    version = version.lstrip(".").split(".")[0]
    if not version:
        return base
    return f"{base}-{version}" if base[-1:].isdigit() else f"{base}{version}"


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries ``ldd`` could not find (``libfoo.so.1 => not found``), in order, once each."""
    found = re.findall(r"^\s*(\S+)\s*=>\s*not found", ldd_output, flags=re.MULTILINE)
    return list(dict.fromkeys(found))


def _qt_dir() -> Path | None:
    spec = importlib.util.find_spec("PySide6")  # found, not imported: this module stays Qt-free
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "Qt"


def _plugin_libraries(platform_name: str) -> list[str]:
    """What the platform plugin's shared objects need and the system lacks (``ldd``), as sonames."""
    qt, ldd = _qt_dir(), shutil.which("ldd")
    if qt is None or ldd is None:
        return []
    files = [qt / "plugins" / "platforms" / f"libq{platform_name.replace('-egl', '')}.so"]
    files += sorted((qt / "lib").glob("libQt6XcbQpa.so*" if platform_name == "xcb" else "libQt6WaylandClient.so*"))
    missing: list[str] = []
    for f in files:
        if not f.is_file():
            continue
        try:
            out = subprocess.run([ldd, str(f)], capture_output=True, text=True, timeout=20).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        missing += [m for m in missing_libraries(out) if m not in missing]
    return missing


def plugin_problem(env: Mapping[str, str] | None = None, timeout_s: float = 60) -> DisplayCheck | None:
    """Create a ``QGuiApplication`` in a child process; the problem if Qt could not, else ``None``.

    ``None`` too where PySide6 is not installed (the app says so itself).
    """
    env = dict(os.environ if env is None else env)
    if importlib.util.find_spec("PySide6") is None:
        return None
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        return None  # slow, not broken: let the app try
    except OSError:
        return None
    if proc.returncode == 0:
        return None
    platform_name = _platform(env) or ("wayland" if _displays(env)[1] and not _displays(env)[0] else "xcb")
    x, wl = _displays(env)
    where = f"WAYLAND_DISPLAY={wl}" if wl and platform_name.startswith("wayland") else f"DISPLAY={x}"
    libs = _plugin_libraries(platform_name)
    packages = [debian_package(lib) for lib in libs]
    err = proc.stderr
    # Qt's own hint ("xcb-cursor0 or libxcb-cursor0 is needed") comes with every xcb failure, even when
    # the server refused the connection: only ldd's answer names packages, and only when it can't run.
    if not libs and shutil.which("ldd") is None and "xcb-cursor0" in err and "could not connect" not in err:
        packages = ["libxcb-cursor0"]
    how = _("Qt aborted") if proc.returncode < 0 else _("Qt exited with status {code}").format(code=proc.returncode)
    if libs:
        why = ngettext(
            "it needs {libs}, which is not installed", "it needs {libs}, which are not installed", len(libs)
        ).format(libs=", ".join(libs))
    else:
        lines = [ln.strip() for ln in err.splitlines() if ln.strip() and not ln.startswith("Available")]
        why = lines[0] if lines else how  # Qt's own words, as it printed them
    reason = _("Qt's {platform} platform plugin cannot start on {where}: {why} ({how})").format(
        platform=platform_name, where=where, why=why, how=how
    )
    return DisplayCheck("plugin", reason, where, tuple(packages))


def check_display(env: Mapping[str, str] | None = None, *, plugin: bool = True) -> DisplayCheck:
    """The one display check: sockets first, then (``plugin``) Qt's platform plugin in a child process."""
    env = os.environ if env is None else env
    problem = display_problem(env)
    x, wl = _displays(env)
    shown = f"WAYLAND_DISPLAY={wl}" if wl else f"DISPLAY={x}" if x else ""
    if problem:
        return DisplayCheck("none" if not (x or wl) else "unreachable", problem, shown)
    platform_name = _platform(env)
    needs_server = (not platform_name or platform_name in _WINDOWED) and (
        sys.platform.startswith("linux") or "bsd" in sys.platform
    )
    if plugin and needs_server:
        failed = plugin_problem(env)
        if failed is not None:
            return failed
    return DisplayCheck("ok", "", shown or (f"QT_QPA_PLATFORM={platform_name}" if platform_name else ""))
