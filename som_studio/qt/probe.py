"""Short-lived worker processes that answer one question: which devices JAX sees, or the doctor's report.

The GUI process never starts JAX itself: the device count is chosen per run,
and starting JAX takes seconds the window must not wait for.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from som_studio.qt.pipe_reader import PipeReader
from som_studio.worker import start
from som_studio.worker.messages import Info
from som_studio.worker.process import describe_exit


class DeviceProbe(QObject):
    """Asks a short-lived worker process what JAX sees (backend, devices, memory, versions).

    The GUI process never starts JAX itself: the device count is chosen per run,
    and starting JAX takes seconds the window must not wait for.

    Threads: GUI thread; ``info_ready(dict)`` is emitted in the GUI thread.

    Parameters
    ----------
    target : the child's entry point in :mod:`som_studio.worker.process`,
        called as ``target(cpu_devices, conn)``; it sends one :class:`~som_studio.worker.messages.Info`.
        ``"probe"`` (devices) or ``"doctor_report"`` (the environment doctor).
    """

    info_ready = Signal(dict)

    def __init__(self, parent: QObject | None = None, target: str = "probe") -> None:
        super().__init__(parent)
        self._target = target
        self._process: Any = None
        self._reader: PipeReader | None = None
        self._info: dict[str, Any] | None = None

    @property
    def running(self) -> bool:
        return self._process is not None

    def start(self, cpu_devices: int | None) -> None:
        from som_studio.worker import process as worker_process

        if self._process is not None:
            return
        self._info = None
        ctx = start.context()
        r, w = ctx.Pipe(duplex=False)
        self._process = start.process(
            ctx,
            getattr(worker_process, self._target),
            (cpu_devices, w),
            name=f"som-studio-{self._target}",
            daemon=True,
        )
        self._process.start()
        w.close()
        self._reader = PipeReader(r, self._process)
        self._reader.events_ready.connect(self._on_events_ready)
        self._reader.ended.connect(self._on_ended)
        self._reader.start()

    def _on_events_ready(self) -> None:
        if self._reader is None:
            return
        items, _ = self._reader.take()
        for msg in items:
            if isinstance(msg, Info):
                self._info = dict(msg.info)

    def _on_ended(self, code: int) -> None:
        self._on_events_ready()
        info = self._info or {"error": describe_exit(code)}
        self.shutdown()
        self.info_ready.emit(info)

    def shutdown(self) -> None:
        """End the probe now: kill its process, wait for the reader thread to finish, free both.

        The waits are not bounded, as the run controller's are not: once the process is killed its
        sentinel ends the reader within one poll. A bounded wait (2 s) that gives up on a loaded
        machine goes on to delete a running QThread, which Qt answers with a fatal error ("QThread:
        Destroyed while thread is still running", SIGABRT), and closes the process under the
        reader's last ``join``.
        """
        proc, reader = self._process, self._reader
        if proc is not None and proc.is_alive():
            proc.kill()
        if reader is not None:
            reader.events_ready.disconnect(self._on_events_ready)
            reader.ended.disconnect(self._on_ended)
            reader.wait()
            reader.deleteLater()
            self._reader = None
        if proc is not None:
            proc.join()
            proc.close()
            self._process = None
