"""The test suite never writes into the real home folder: each test has its own."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REAL_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)
_seen: list[Path] = []


# Both attempts in one process (one xdist worker), so the second sees the first's home in _seen.
@pytest.mark.xdist_group("home-attempts")
@pytest.mark.parametrize("attempt", [1, 2])
def test_every_test_has_its_own_temporary_home(attempt, temporary_home) -> None:
    home = Path.home()
    assert home == temporary_home and home.is_relative_to(tempfile.gettempdir())
    assert not home.is_relative_to(REAL_HOME) or REAL_HOME == Path(tempfile.gettempdir())
    assert Path(os.environ["XDG_DATA_HOME"]).is_relative_to(home)
    assert Path(os.environ["XDG_CONFIG_HOME"]).is_relative_to(home)
    assert home not in _seen  # not shared with the test before
    _seen.append(home)


def test_the_apps_data_and_settings_folders_are_in_it(temporary_home) -> None:
    """Where the app would keep its runs and settings, asked of Qt in a fresh process as the app does."""
    pytest.importorskip("PySide6")
    code = (
        "from PySide6.QtCore import QCoreApplication, QSettings, QStandardPaths\n"
        "app = QCoreApplication([]); app.setOrganizationName('som-studio'); app.setApplicationName('SOM Studio')\n"
        "print(QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation))\n"
        "print(QSettings().fileName())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    data, settings = (Path(line) for line in out.stdout.splitlines())
    assert data.is_relative_to(temporary_home) and settings.is_relative_to(temporary_home)
