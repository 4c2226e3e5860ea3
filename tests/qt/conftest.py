"""Fixtures of the Qt tier: the real main window, with its own settings file."""

from __future__ import annotations

import multiprocessing
import threading

import pytest


@pytest.fixture
def window(qtbot, tmp_path):
    """A shown main window; closing it must leave no worker process or thread behind."""
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    threads_before = set(threading.enumerate())
    win = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()
    qtbot.waitUntil(lambda: not win.isVisible(), timeout=30_000)  # a run still going is stopped first
    assert multiprocessing.active_children() == []
    assert win.controller._reader is None and win.controller.process is None
    leaked = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    assert leaked == []
