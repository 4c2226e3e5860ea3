"""Runs kept: the ``.somrun`` file, the history folder, the one recorder and the replay. Qt-free."""

from som_studio.storage.history import RunHistory
from som_studio.storage.recorder import DEFAULT_FRAMES, FinalMap, FrameKeeper, RecordSoFar, RunRecorder
from som_studio.storage.replay import replay
from som_studio.storage.runfile import FORMAT, SUFFIX, VERSION, HistoryError, StoredRun

__all__ = [
    "DEFAULT_FRAMES",
    "FORMAT",
    "SUFFIX",
    "VERSION",
    "FinalMap",
    "FrameKeeper",
    "HistoryError",
    "RecordSoFar",
    "RunHistory",
    "RunRecorder",
    "StoredRun",
    "replay",
]
