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

from som_studio import i18n, resources
from som_studio.qt import app as appmod

pytestmark = [
    pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints", "This plugin does not support raise"),
    # These tests listen on, and probe, the same X11 ports (6040-6089) and display numbers: on
    # two xdist workers at once one would find the other's server where it expects none.
    pytest.mark.xdist_group("x11-displays"),
]


# -- no display, or one that does not answer ----------------------------------------------------
def _free_x_display() -> int:
    """A display number no X server has taken: no socket file, and none answering on Linux's abstract socket."""
    return next(
        n
        for n in range(600, 700)
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not appmod.x_server_reachable(f":{n}")
    )


def _refusing_x_display() -> tuple[socket.socket, str]:
    """A display, ``127.0.0.1:n``, whose TCP port this test holds without listening: every connection is
    refused, and no X server started meanwhile can take it (a free ``:n`` found by looking is not safe:
    another test run on the machine may start its Xvfb there a moment later)."""
    for n in range(100, 200):
        held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            held.bind(("127.0.0.1", 6000 + n))
            return held, f"127.0.0.1:{n}"
        except OSError:
            held.close()
    pytest.skip("no free X11 TCP port (6100-6199) to hold")


def test_unreachable_display_is_reported_before_qt_aborts(tmp_path):
    held, display = _refusing_x_display()
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = display
    with held:
        out = subprocess.run(
            [sys.executable, "-m", "som_studio"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
    assert out.returncode == 2, out.stderr
    assert f"DISPLAY={display} set, but no display server answers there" in out.stderr
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


# -- a display that answers, but Qt's platform plugin cannot start on it ---------------------------
class RefusingXServer:
    """Listens on an X11 TCP port and hangs up on every client: reachable, yet xcb cannot connect.

    Qt's xcb plugin then aborts the process (SIGABRT), as it does when a library it needs is missing.
    """

    def __enter__(self) -> str:
        import threading

        for n in range(40, 90):
            self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                self.server.bind(("127.0.0.1", 6000 + n))
                break
            except OSError:
                self.server.close()
        else:
            pytest.skip("no free X11 TCP port (6040-6089) to listen on")
        self.server.listen(8)
        self.server.settimeout(0.1)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        return f"127.0.0.1:{n}"

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            conn.close()

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.server.close()


def _env_with(display: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["DISPLAY"] = display
    return env


def test_a_platform_plugin_that_cannot_start_is_exit_2_not_an_abort(tmp_path):
    with RefusingXServer() as display:
        env = _env_with(display)
        out = subprocess.run(
            [sys.executable, "-m", "som_studio"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path
        )
    assert out.returncode == 2, out.stderr
    assert f"Qt's xcb platform plugin cannot start on DISPLAY={display}" in out.stderr
    assert "(Qt aborted)" in out.stderr
    # The remedy: the packages to install where ldd finds the plugin's libraries missing (a machine
    # without libxcb-icccm4), else the doctor, which says more.
    assert "Install what it needs: sudo apt-get install" in out.stderr or "som-studio doctor" in out.stderr
    assert "Traceback" not in out.stderr


def test_the_doctor_reports_it_as_an_error_with_the_same_check():
    from som_studio import doctor
    from som_studio.display import check_display

    with RefusingXServer() as display:
        env = _env_with(display)
        check = check_display(env)
        facts = doctor.collect(doctor.Probes(environ=env, jax=lambda: doctor.JaxFacts(error="not asked")))
    assert check.kind == "plugin" and facts.display_check == check
    errors = [f for f in doctor.diagnose(facts) if f.severity == "error"]
    assert any("Qt's platform plugin cannot load" in f.title and display in f.title for f in errors)
    assert doctor.exit_status(doctor.diagnose(facts)) == 1


def test_a_display_that_works_passes_the_plugin_check(tmp_path):
    import shutil

    if shutil.which("Xvfb") is None:
        pytest.skip("no Xvfb here to stand in for a real display")
    n = _free_x_display()
    server = subprocess.Popen(["Xvfb", f":{n}", "-nolisten", "tcp"], stderr=subprocess.DEVNULL)
    try:
        import time

        end = time.monotonic() + 30
        while not appmod.x_server_reachable(f":{n}") and time.monotonic() < end:
            time.sleep(0.05)
        from som_studio.display import check_display

        assert check_display(_env_with(f":{n}")).ok
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_missing_libraries_are_named_as_the_packages_that_ship_them():
    from som_studio.display import debian_package, missing_libraries

    # ldd's report on Qt 6.12's libqxcb.so on an Ubuntu 24.04 without libxcb-cursor0 and libxkbcommon-x11-0
    ldd = (
        "\tlinux-vdso.so.1 (0x00007ffd)\n"
        "\tlibQt6XcbQpa.so.6 => /venv/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)\n"
        "\tlibxcb-cursor.so.0 => not found\n"
        "\tlibxkbcommon-x11.so.0 => not found\n"
        "\tlibxcb-cursor.so.0 => not found\n"
    )
    assert missing_libraries(ldd) == ["libxcb-cursor.so.0", "libxkbcommon-x11.so.0"]
    assert [debian_package(s) for s in missing_libraries(ldd)] == ["libxcb-cursor0", "libxkbcommon-x11-0"]
    assert debian_package("libxcb-icccm.so.4") == "libxcb-icccm4"


def test_the_display_problems_are_said_in_korean(monkeypatch):
    """The reasons the app prints and the doctor shows are in the user's language (names stay)."""
    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    i18n.install("ko")
    try:
        assert appmod.display_problem() == "DISPLAY, WAYLAND_DISPLAY 변수가 모두 미설정입니다"
        monkeypatch.setenv("QT_QPA_PLATFORM", "xcb")
        assert appmod.display_problem() == "QT_QPA_PLATFORM=xcb 설정이지만 DISPLAY 변수는 미설정입니다"
    finally:
        i18n.install("en")


def test_a_platform_plugin_that_cannot_start_is_said_in_korean(tmp_path):
    with RefusingXServer() as display:
        env = _env_with(display)
        out = subprocess.run(
            [sys.executable, "-m", "som_studio", "--lang", "ko"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            cwd=tmp_path,
        )
    assert out.returncode == 2, out.stderr
    assert f"Qt xcb 플랫폼 플러그인을 DISPLAY={display}에서 시작할 수 없습니다" in out.stderr
    assert "(Qt가 비정상 종료됨)" in out.stderr and "platform plugin" not in out.stderr
