"""Every run the app trains, kept: the controller's signals fed to the one run recorder.

:class:`LiveRecorder` connects a run controller's signals to a Qt-free
:class:`~som_studio.storage.RunRecorder` (the same one ``som-studio compare``
feeds with a session's events) and emits the kept run when it ends.
:func:`history_folder` says where the app keeps its runs.

Threads: GUI thread only (the controller's signals arrive there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from som_studio.session.events import Failed, Finished
from som_studio.storage import DEFAULT_FRAMES, FinalMap, RunRecorder


class LiveRecorder(QObject):
    """Keeps each run of ``controller`` as a :class:`~som_studio.storage.StoredRun`; emits ``run_recorded``.

    The map frames it keeps are those the worker sent for display (the view the
    user chose, coalesced to what the window could draw), thinned to at most
    ``frames``, evenly spread.
    """

    run_recorded = Signal(object)  # StoredRun

    def __init__(self, controller: Any, frames: int = DEFAULT_FRAMES, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._frames = frames
        self.recorder = RunRecorder(frames=frames)
        controller.run_started.connect(self._on_event)
        controller.frame_ready.connect(self._on_event)
        controller.final_map.connect(self._on_final_map)
        controller.run_finished.connect(self._on_run_finished)
        controller.run_failed.connect(self._on_run_failed)

    def _on_event(self, event: Any) -> None:
        self.recorder.feed(event)

    def _on_final_map(self, weights: Any) -> None:
        self.recorder.feed(FinalMap(weights))

    def _on_run_finished(self, record: Any) -> None:
        self._end(Finished(record))

    def _on_run_failed(self, _message: str, record: Any) -> None:
        self._end(Failed(record))

    def _end(self, event: Finished | Failed) -> None:
        self.recorder.feed(event)
        run = self.recorder.stored()
        self.recorder = RunRecorder(frames=self._frames)  # a run refused before it started has no Started
        self.run_recorded.emit(run)


def history_folder(settings: Any) -> Path:
    """Where the app keeps its runs: beside a settings file given explicitly (tests), else the user's data folder."""
    from PySide6.QtCore import QSettings, QStandardPaths

    qs = settings.qsettings
    if qs.format() == QSettings.Format.IniFormat and qs.fileName():
        return Path(qs.fileName()).with_name("history")
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(base or Path.home() / ".local" / "share" / "som-studio") / "history"
