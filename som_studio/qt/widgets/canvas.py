"""Canvases that say what each of their paints cost, so that live views can pace themselves.

A live view (the map, the timing plot) draws at most as often as keeps its cost within its share of
a core (:class:`~som_studio.app_model.pacing.DrawPacer`); most of that cost is the paint that follows
a change, not the change itself. A picture set now is painted when Qt next updates the window:
painting it at once (``repaint``) paints it twice, as the scene's own update of the new picture
follows. So these canvases time their paints (``painted(seconds)``), in the process's CPU time, as
Qt's raster engine spreads a large fill over threads of its own.

Threads: GUI thread only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QPaintEvent


def _timed(paint: Callable[[QPaintEvent], None], ev: QPaintEvent, painted: Any) -> None:
    """Run one paint and emit its process CPU time on ``painted``."""
    t0 = time.process_time()
    paint(ev)
    painted.emit(time.process_time() - t0)


class MapCanvas(pg.GraphicsView):
    """A bare graphics view (no axes) that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        _timed(super().paintEvent, ev, self.painted)


class PlotCanvas(pg.PlotWidget):
    """A plot widget that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        _timed(super().paintEvent, ev, self.painted)
