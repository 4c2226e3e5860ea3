"""Reading the run panel's data files off the GUI thread.

Threads: :meth:`DataReader.read` and ``data_read`` on the GUI thread; each file
is read on a thread of its own, which only emits the private ``_read`` signal
(queued to the GUI thread).
"""

from __future__ import annotations

import logging
import threading

from PySide6.QtCore import QObject, Signal

from som_studio.app_model.form import DataInfo, DataKey, read_data
from som_studio.i18n import _


class DataReader(QObject):
    """Reads the files the form asks for, one thread each; ``data_read(key, info)`` gives each answer."""

    data_read = Signal(object, object)  # DataKey, DataInfo; on the GUI thread
    _read = Signal(object, object)  # emitted on the reader's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._threads: list[threading.Thread] = []
        self._reading: DataKey | None = None
        self._read.connect(self._on_read)

    def read(self, key: DataKey | None) -> None:
        """Read ``key`` unless it is ``None`` or already being read."""
        if key is None or key == self._reading:
            return
        self._threads = [t for t in self._threads if t.is_alive()]
        self._reading = key
        thread = threading.Thread(target=self._read_one, args=(key,), name="som-data-reader", daemon=True)
        self._threads.append(thread)
        thread.start()

    def _read_one(self, key: DataKey) -> None:
        try:
            info = read_data(key)
        except Exception as exc:  # a fault of ours: the form says so instead of reading "reading…" for ever
            logging.getLogger(__name__).exception("reading %s", key.path)
            info = DataInfo(error=_("{path}: could not be read ({why})").format(path=key.path, why=repr(exc)))
        self._read.emit(key, info)

    def _on_read(self, key: DataKey, info: DataInfo) -> None:
        if key == self._reading:
            self._reading = None
        self.data_read.emit(key, info)

    def wait(self) -> None:
        """Wait for the files being read (closing the window)."""
        for thread in self._threads:
            thread.join()
        self._threads = []
