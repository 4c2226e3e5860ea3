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

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QPaintEvent


class MapCanvas(pg.GraphicsView):
    """A bare graphics view (no axes) that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        t0 = time.process_time()
        super().paintEvent(ev)
        self.painted.emit(time.process_time() - t0)


class PlotCanvas(pg.PlotWidget):
    """A plot widget that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        t0 = time.process_time()
        super().paintEvent(ev)
        self.painted.emit(time.process_time() - t0)
