"""Python's cycle collector, run on the GUI thread only while a window is open.

Python collects cycles in whichever thread happens to allocate past a threshold. The app's own threads
(the history's writer, the data reader, the map's inspections, the projection) allocate, and the cycles
they would collect include Qt objects (pyqtgraph's items, menus, actions) that must be destroyed on the
GUI thread: seen as a hang, the history's writer deleting a menu's action under a Qt lock while the GUI
thread held the interpreter and waited for that lock. pyqtgraph's ``GarbageCollector`` does the same
(automatic collection off, a timer collecting by generation); this one also turns it back on when the
last window goes, so a process that opens a window and goes on without one (a notebook, a test) is left
as it was.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread looks at the collector's counts (it collects only what the thresholds ask).
INTERVAL_MS = 500


class GuiThreadCollector(QObject):
    """Collects cycles on the GUI thread at :data:`INTERVAL_MS`, generation by generation as Python would."""

    def __init__(self) -> None:
        super().__init__()
        self._timer = QTimer(self)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.collect)
        self._holders = 0
        self._was_enabled = False

    def hold(self) -> None:
        """One more window open: from the first, automatic collection is off and the timer runs."""
        if self._holders == 0:
            self._was_enabled = gc.isenabled()
            gc.disable()
            self._timer.start()
        self._holders += 1

    def release(self) -> None:
        """One window fewer: after the last, collection is as it was (what is left, it collects in its time: a
        full collection here cost 0.1-0.3 s a window)."""
        if self._holders == 0:
            return
        self._holders -= 1
        if self._holders == 0:
            self._timer.stop()
            if self._was_enabled:
                gc.enable()

    def collect(self) -> None:
        """What automatic collection would have done by now (the youngest generations most often)."""
        thresholds, counts = gc.get_threshold(), gc.get_count()
        if counts[0] <= thresholds[0]:
            return
        generation = 0
        if counts[1] > thresholds[1]:
            generation = 2 if counts[2] > thresholds[2] else 1
        gc.collect(generation)


_collector: GuiThreadCollector | None = None


def collector() -> GuiThreadCollector:
    """The process's one collector (made on first use, on the GUI thread)."""
    global _collector
    if _collector is None:
        _collector = GuiThreadCollector()
    return _collector
