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
from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QWidget

from som_studio.app_model.pacing import DrawPacer


def _timed(view: QWidget, paint: Callable[[QPaintEvent], None], ev: QPaintEvent, painted: Any) -> None:
    """Run one paint of ``view`` and emit its process CPU time on ``painted``.

    The paint holds ``view``'s window: a window that Python holds only through pyqtgraph's reference
    cycles (one its maker let go of, still shown) is otherwise free to the cycle collector, which any
    allocation of the paint's Python code can run, and deleted in the middle of its own paint it
    crashes the process.
    """
    window = view.window()
    t0 = time.process_time()
    paint(ev)
    painted.emit(time.process_time() - t0)
    del window


class MapCanvas(pg.GraphicsView):
    """A bare graphics view (no axes) that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        _timed(self, super().paintEvent, ev, self.painted)


class PlotCanvas(pg.PlotWidget):
    """A plot widget that emits ``painted(seconds)`` after each paint."""

    painted = Signal(float)

    def paintEvent(self, ev: QPaintEvent) -> None:
        _timed(self, super().paintEvent, ev, self.painted)


class PacedRedraw(QObject):
    """A live plot's redraws: asked for as its data arrive (:meth:`ask`), made when ``pacer`` allows (within its
    share of a core), never while ``widget`` is hidden (made when it is shown again, :meth:`shown`); :meth:`flush`
    makes one now, shown or not. ``draw`` redraws and says whether there was anything to draw; its CPU time and
    that of the paint of ``canvas`` that follows are booked with the pacer together.
    """

    def __init__(self, widget: QWidget, canvas: PlotCanvas, draw: Callable[[], bool], pacer: DrawPacer) -> None:
        super().__init__(widget)
        self.widget, self.pacer, self._draw = widget, pacer, draw
        self.stale = False  # data arrived while hidden, not drawn yet
        self._last: float | None = None  # when the last redraw was made
        self._cost: float | None = None  # the last redraw's CPU time, until its paint is booked with it
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._run)
        canvas.painted.connect(self._painted)

    def ask(self) -> None:
        """New data: one redraw, when the pacer allows (asked again before it: still one)."""
        if not self._timer.isActive():
            wait_s = self.pacer.wait_s(self._last, time.perf_counter())
            self._timer.start(max(1, int(wait_s * 1000)))

    def stop(self) -> None:
        """Nothing waits to be drawn any more (a new run)."""
        self._timer.stop()
        self.stale = False

    def flush(self) -> None:
        """Redraw now, shown or not."""
        self._timer.stop()
        self._run(hidden_too=True)

    def shown(self) -> None:
        """The widget is shown: draw what arrived while it was hidden."""
        if self.stale:
            self._run()

    def _run(self, hidden_too: bool = False) -> None:
        self.stale = not hidden_too and not self.widget.isVisible()
        if self.stale:  # nobody sees it
            return
        started, t0 = time.perf_counter(), time.process_time()
        if self._draw():
            self._last, self._cost = started, time.process_time() - t0

    def _painted(self, seconds: float) -> None:
        if self._cost is not None:
            self.pacer.book(self._cost + seconds)
            self._cost = None
