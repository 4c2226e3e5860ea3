"""Cycles are collected on the GUI thread only while a window is open, and as before once it is closed."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")  # the offscreen platform's


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def _cycle_freed_on(collected: list[str]) -> None:
    cycle = _Cycle()
    weakref.finalize(cycle, lambda: collected.append(threading.current_thread().name))


def test_a_cycle_left_while_the_window_is_open_is_collected_on_the_gui_thread(window, qtbot):
    assert not gc.isenabled()
    collected: list[str] = []
    _cycle_freed_on(collected)

    def allocate() -> None:  # as the app's threads do: far past every threshold of the collector
        keep = [[object() for _ in range(100)] for _ in range(2_000)]
        del keep

    thread = threading.Thread(target=allocate, name="som-test-allocator")
    thread.start()
    thread.join()
    assert collected == []  # not there
    qtbot.waitUntil(lambda: collected != [], timeout=10_000)
    assert collected == [threading.main_thread().name]


def test_closing_the_last_window_turns_collection_back_on(qtbot, tmp_path):
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    assert gc.isenabled()
    wins = [MainWindow(Settings(tmp_path / f"settings{i}.ini")) for i in range(2)]
    for win in wins:
        qtbot.addWidget(win)
    assert not gc.isenabled()
    wins[0].close()
    assert not gc.isenabled()  # one window is still open
    wins[1].close()
    assert gc.isenabled()
    wins[1].close()  # closed again: nothing more
    assert gc.isenabled()
