"""Reads a worker's pipe on a thread of its own and hands the GUI thread what arrived.

Threads: :meth:`PipeReader.run` runs on the reader's thread and emits
``events_ready`` and ``ended`` from it; :meth:`PipeReader.take` is called from
the GUI thread. The reader keeps what arrives in a list (and only the latest
map frame) and wakes the GUI thread once; the GUI thread takes everything when
it gets to it. So a fast worker can never flood the event loop, and nothing is
dropped except out-of-date frames.
"""

from __future__ import annotations

import threading
from multiprocessing.connection import Connection, wait
from typing import Any

from PySide6.QtCore import QThread, Signal

from som_studio.worker.messages import FrameMessage, Message, ProtocolError, WorkerError, decode


class PipeReader(QThread):
    """Turns the worker's messages into one ``events_ready`` signal per batch, until the worker ends.

    Parameters
    ----------
    conn : the read end of the worker's events pipe.
    process : the worker (its ``sentinel`` says when it ended).
    """

    events_ready = Signal()
    ended = Signal(int)

    def __init__(self, conn: Connection, process: Any) -> None:
        super().__init__()
        self._conn = conn
        self._process = process
        self._lock = threading.Lock()
        self._pending: list[Message] = []
        self._frame: FrameMessage | None = None
        self._signalled = False

    def take(self) -> tuple[list[Message], FrameMessage | None]:
        """Everything that arrived since the last call, and the latest frame (GUI thread)."""
        with self._lock:
            items, frame = self._pending, self._frame
            self._pending, self._frame, self._signalled = [], None, False
        return items, frame

    def _push(self, msg: Message) -> None:
        with self._lock:
            if isinstance(msg, FrameMessage):
                self._frame = msg  # an older frame not yet drawn is out of date
            else:
                self._pending.append(msg)
            wake = not self._signalled
            self._signalled = True
        if wake:
            self.events_ready.emit()

    def run(self) -> None:
        conn, sentinel = self._conn, self._process.sentinel
        done = False
        while not done:
            ready = wait([conn, sentinel], timeout=0.5)
            if not ready:
                continue
            # Read whatever is there (also after the process ended), until EOF.
            while conn.poll():
                try:
                    self._push(decode(conn.recv()))
                except (EOFError, OSError):
                    done = True
                    break
                except ProtocolError as exc:
                    self._push(WorkerError(f"unreadable message from the worker ({exc})"))
                except Exception as exc:  # a message cut short by a crash
                    self._push(WorkerError(f"unreadable message from the worker ({exc})"))
                    done = True
                    break
            if sentinel in ready:
                done = True
        self._process.join(5)
        code = self._process.exitcode
        self.ended.emit(-999 if code is None else int(code))
