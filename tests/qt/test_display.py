"""Starting the app: a display that is missing or does not answer, the desktop identity and icon (qt/app.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtGui import QGuiApplication

from som_studio import resources
from som_studio.qt import app as appmod

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)


# -- no display, or one that does not answer ----------------------------------------------------
def _free_x_display() -> int:
    return next(n for n in range(600, 700) if not os.path.exists(f"/tmp/.X11-unix/X{n}"))


def test_unreachable_display_is_reported_before_qt_aborts(tmp_path):
    n = _free_x_display()
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = f":{n}"
    out = subprocess.run(
        [sys.executable, "-m", "som_studio"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert out.returncode == 2, out.stderr
    assert f"DISPLAY=:{n} set, but no display server answers there" in out.stderr
    assert "som-studio bench" in out.stderr and "xvfb-run" in out.stderr
    assert "Traceback" not in out.stderr and "Aborted" not in out.stderr


def test_x_display_over_tcp_is_reachable_only_while_a_server_listens():
    for n in range(40, 90):
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            server.bind(("127.0.0.1", 6000 + n))
            break
        except OSError:
            server.close()
    else:
        pytest.skip("no free X11 TCP port (6040-6089) to listen on")
    with server:
        server.listen(1)
        assert appmod.x_server_reachable(f"127.0.0.1:{n}.0")
    assert not appmod.x_server_reachable(f"127.0.0.1:{n}")
    assert not appmod.x_server_reachable("not a display")
    assert not appmod.x_server_reachable(f":{_free_x_display()}")


def test_wayland_socket_is_found_under_the_runtime_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WAYLAND_DISPLAY", "wayland-test")
    assert "WAYLAND_DISPLAY=wayland-test set, but no display server answers" in appmod.display_problem()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        server.bind(str(tmp_path / "wayland-test"))
        server.listen(1)
        assert appmod.display_problem() == ""
    monkeypatch.delenv("WAYLAND_DISPLAY")
    assert appmod.display_problem() == "DISPLAY and WAYLAND_DISPLAY are unset"
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert appmod.display_problem() == ""


def test_desktop_identity_and_icon(window):
    assert QGuiApplication.desktopFileName() == resources.APP_ID
    icon = QGuiApplication.windowIcon()
    assert not icon.isNull()
    assert {s.width() for s in icon.availableSizes()} >= {16, 48, 256}
