"""Comparing implementations in the app: pick them in order, run them one after another, cancel.

:class:`ImplementationPicker` is the list of implementations to tick (in the
order they should run) with Compare and Cancel; :class:`CompareQueue` runs one
configuration per ticked implementation, one after another, through the
controller the view is given.

Threads: GUI thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QVBoxLayout

from som_studio.config import RunConfig
from som_studio.core.impls import registry
from som_studio.qt.i18n import QT_TRANSLATE_NOOP

#: The longest the queue waits for the app to be done with one run (its views' work off the GUI
#: thread) before it starts the next, and how often it looks.
SETTLE_MAX_S = 2.0
SETTLE_POLL_MS = 20

HINT = QT_TRANSLATE_NOOP("ImplementationPicker", "Tick implementations in the order they should run.")


class CompareQueue(QObject):
    """Runs configurations one after another; cancel stops the current run and drops the rest.

    ``launch(config) -> str`` starts one run and returns ``""``, or says why it
    could not start (that configuration is then skipped). ``ended`` is the
    controller's ``run_ended`` signal. ``settled() -> bool`` says whether the app
    is done with the last run (the map view's work on its final map): the next run
    starts then, or after :data:`SETTLE_MAX_S`, so that work does not share the
    cores with a short run being timed.
    """

    progress = Signal(str)
    finished = Signal(list)  # the implementations that ran, in order

    def __init__(
        self,
        launch: Callable[[RunConfig], str],
        ended: Any,
        stop: Callable[[], None],
        parent: QObject | None = None,
        settled: Callable[[], bool] | None = None,
    ) -> None:
        super().__init__(parent)
        self._launch = launch
        self._stop = stop
        self._settled = settled or (lambda: True)
        self._settle = QTimer(self)
        self._settle.setInterval(SETTLE_POLL_MS)
        self._settle.timeout.connect(self._next_when_settled)
        self._ended_at = 0.0
        self._queue: list[RunConfig] = []
        self._done: list[str] = []
        self._active = False
        self._skipped: list[str] = []
        self._current = ""
        ended.connect(self._on_ended)

    @property
    def active(self) -> bool:
        return self._active

    def start(self, configs: list[RunConfig]) -> None:
        if self._active:
            raise RuntimeError("a comparison is already running")
        self._queue, self._done, self._skipped = list(configs), [], []
        self._active = True
        self._next()

    def cancel(self) -> None:
        if not self._active:
            return
        self._queue.clear()
        self.progress.emit(self.tr("Comparison cancelled"))
        self._stop()

    def _next(self) -> None:
        while self._queue:
            cfg = self._queue.pop(0)
            n = len(self._done) + len(self._skipped) + 1
            total = n + len(self._queue)
            reason = self._launch(cfg)
            if not reason:
                self.progress.emit(
                    self.tr("Comparing: {impl} ({n} of {total})").format(impl=cfg.impl, n=n, total=total)
                )
                self._current = cfg.impl
                return
            self._skipped.append(f"{cfg.impl}: {reason}")
        self._active = False
        text = self.tr("Compared {n} run(s)").format(n=len(self._done))
        if self._skipped:
            text += "; " + self.tr("skipped {runs}").format(runs="; ".join(self._skipped))
        self.progress.emit(text)
        self.finished.emit(list(self._done))

    def _on_ended(self) -> None:
        if not self._active:
            return
        self._done.append(self._current)
        self._ended_at = time.perf_counter()
        self._next_when_settled()

    def _next_when_settled(self) -> None:
        if self._active and not self._settled() and time.perf_counter() - self._ended_at < SETTLE_MAX_S:
            if not self._settle.isActive():
                self._settle.start()
            return
        self._settle.stop()
        if self._active:
            self._next()


class ImplementationPicker(QGroupBox):
    """The implementations to compare, ticked in the order they run, with Compare and Cancel."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__()
        self.setTitle(self.tr("Compare implementations"))
        self.impl_list = QListWidget()
        for impl in registry.all_implementations():
            self.add_implementation(impl)
        self._tick_order: list[str] = []  # the queue runs in the order implementations were ticked
        self.impl_list.itemChanged.connect(self._on_impl_ticked)
        self.compare_button = QPushButton(self.tr("Compare"))
        self.compare_button.setToolTip(
            self.tr(
                "Run the ticked implementations one after another on the Run panel's "
                "configuration (same data, seed and schedules)"
            )
        )
        self.compare_button.setEnabled(False)  # until an implementation is ticked
        self._compare_tip = self.compare_button.toolTip()
        self.busy = False  # a run of the Run panel's in progress: the queue could start none of its runs
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setEnabled(False)
        self.queue_label = QLabel(self.tr(HINT))
        self.queue_label.setWordWrap(True)
        self.running = False
        g = QVBoxLayout(self)
        g.addWidget(self.impl_list)
        row = QHBoxLayout()
        row.addWidget(self.compare_button)
        row.addWidget(self.cancel_button)
        g.addLayout(row)
        g.addWidget(self.queue_label)

    def add_implementation(self, impl: Any) -> None:
        """List ``impl`` to tick (a user's is added at run time), or update its tooltip."""
        item = next((it for it in self._items() if it.data(Qt.ItemDataRole.UserRole) == impl.name), None)
        if item is None:
            item = QListWidgetItem(impl.name)
            item.setData(Qt.ItemDataRole.UserRole, impl.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Unchecked)
            self.impl_list.addItem(item)
        item.setToolTip(f"{impl.description_text}\n[{impl.supports()}]")

    def _items(self) -> list[QListWidgetItem]:
        return [self.impl_list.item(i) for i in range(self.impl_list.count())]

    def _on_impl_ticked(self, item: QListWidgetItem) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        ticked = item.checkState() == Qt.CheckState.Checked
        if ticked and name not in self._tick_order:
            self._tick_order.append(name)
        elif not ticked and name in self._tick_order:
            self._tick_order.remove(name)
        else:
            return  # a change of text, not of the tick
        self._show_tick_order()

    def _show_tick_order(self) -> None:
        """Number the ticked implementations in the order they will run."""
        self.impl_list.blockSignals(True)
        try:
            for it in self._items():
                name = it.data(Qt.ItemDataRole.UserRole)
                it.setText(f"{self._tick_order.index(name) + 1}. {name}" if name in self._tick_order else name)
        finally:
            self.impl_list.blockSignals(False)
        if not self.running:
            order = self.tr("Runs in the order ticked: {order}").format(order=" → ".join(self._tick_order))
            self.queue_label.setText(order if self._tick_order else self.tr(HINT))
        self._update_compare()

    def ticked(self) -> list[str]:
        """The ticked implementations, in the order they were ticked (the order they run in)."""
        return list(self._tick_order)

    def set_ticked(self, names: list[str]) -> None:
        """Tick ``names`` in this order (and untick the others)."""
        self.impl_list.blockSignals(True)
        try:
            for it in self._items():
                it.setCheckState(
                    Qt.CheckState.Checked if it.data(Qt.ItemDataRole.UserRole) in names else Qt.CheckState.Unchecked
                )
        finally:
            self.impl_list.blockSignals(False)
        known = {it.data(Qt.ItemDataRole.UserRole) for it in self._items()}
        self._tick_order = [n for n in dict.fromkeys(names) if n in known]
        self._show_tick_order()

    def set_running(self, running: bool) -> None:
        self.running = running
        self._update_compare()
        self.cancel_button.setEnabled(running)

    def set_busy(self, busy: bool) -> None:
        """Whether a run started from the Run panel is in progress (pressed then, Compare skipped every run)."""
        self.busy = busy
        self._update_compare()

    def _update_compare(self) -> None:
        # Nothing ticked, nothing to compare: pressed, it opened an error dialog saying to tick some.
        self.compare_button.setEnabled(bool(self._tick_order) and not self.running and not self.busy)
        busy = self.busy and not self.running
        self.compare_button.setToolTip(
            self.tr("A run is in progress: compare when it has ended") if busy else self._compare_tip
        )
