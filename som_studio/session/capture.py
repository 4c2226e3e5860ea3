"""Moved: the recorder is :mod:`som_studio.storage.recorder`, pictures :mod:`som_studio.picture`.

Kept as a re-export until every caller has moved (``RunCapture`` is the recorder's old name).
"""

from __future__ import annotations

from som_studio.picture.views import feature_range, map_image
from som_studio.storage.recorder import DEFAULT_FRAMES, FrameKeeper
from som_studio.storage.recorder import RunRecorder as RunCapture

__all__ = ["DEFAULT_FRAMES", "FrameKeeper", "RunCapture", "feature_range", "map_image"]
