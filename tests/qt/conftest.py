"""Fixtures of the Qt tier: the real main window, with its own settings file."""

from __future__ import annotations

import gc
import multiprocessing
import threading

import pytest


@pytest.fixture
def qtbot(qtbot):
    """pytest-qt's bot, whose ``addWidget`` also keeps each widget alive until the bot has closed it.

    pytest-qt holds the widgets by weak reference. A shown widget that its test no longer holds is
    reachable only through pyqtgraph's reference cycles once the test function returns, and the cycle
    collector, run by whatever allocates during the paints pytest-qt makes after the test, deleted it
    in the middle of its own paint: a worker crashed with "Internal C++ object (PlotCanvas) already
    deleted" inside ``paintEvent`` (1 in ~8 full runs).
    """
    kept: list = []
    add = qtbot.addWidget

    def add_kept(widget, *, before_close_func=None):  # type: ignore[no-untyped-def]
        kept.append(widget)
        add(widget, before_close_func=before_close_func)

    qtbot.addWidget = qtbot.add_widget = add_kept
    yield qtbot  # pytest-qt closes the widgets before any fixture is torn down; then they may go
    kept.clear()


@pytest.fixture(autouse=True)
def _collection_back_on(qtbot):
    """Every window a test opened is closed by its end, so cycles are collected anywhere again (a window
    left open would leave automatic collection off for the rest of the worker's tests)."""
    yield
    assert gc.isenabled(), "a main window was left open: automatic garbage collection is still off"


@pytest.fixture
def window(qtbot, tmp_path):
    """A shown main window; closing it must leave no worker process or thread behind."""
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings
    from som_studio.worker import start

    start.warm(120)  # the fork server's start (a thread and a first process, once per process) is not the window's
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
