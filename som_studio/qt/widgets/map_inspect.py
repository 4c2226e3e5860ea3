"""Reading the map view: hover read-out, unit details on a click, the legend, and drawing off the GUI thread.

:class:`MapInspector` belongs to a :class:`~som_studio.qt.widgets.map_view.MapView`:
it maps the cursor to a unit (a hexagon on a hex map, by the lattice's
geometry, :meth:`~som_studio.picture.MapFrame.unit_at`), says the unit and the
value under it (:func:`~som_studio.app_model.units.readout`), shows a clicked
unit's details (:func:`~som_studio.app_model.units.unit_details`) in a
:class:`~som_studio.qt.widgets.unit_panel.UnitPanel`, and each frame's legend in
a :class:`~som_studio.qt.widgets.legend.LegendView`.

Whatever costs a pass over a map or its data runs on :class:`MapJobs`' one
thread, never the GUI's: a view of the finished map drawn again in another
choice, its U-matrix (exact hover values) and which unit each training row
landed on (the details' rows). On a 1024x1024 map the GUI thread then only
sets the finished picture.

Threads: GUI thread, but for :class:`MapJobs`' thread, which only runs the jobs
and emits ``_finished``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsEllipseItem, QLabel, QWidget

from som_studio import picture
from som_studio.app_model.units import UnitDetails, UnitIndex, readout, unit_details
from som_studio.core.som import metrics
from som_studio.picture.raster import unit_centre
from som_studio.qt.widgets.legend import LegendView
from som_studio.qt.widgets.unit_panel import UnitPanel


class MapJobs(QObject):
    """The map's slow work off the GUI thread: one thread per kind of job; of each kind only the newest
    is run and answered.

    ``submit(kind, job, done)``: ``job()`` runs on that kind's thread, ``done(result)`` on the GUI
    thread, unless a newer job of the same kind was submitted meanwhile. Kinds do not wait for each
    other (a view drawn again does not queue behind the index of a large map's examples). A thread
    ends when its kind has nothing to do; ``wait()`` (closing the window) joins those under way.
    """

    _finished = Signal(str, int, object)  # kind, generation, result; emitted on the job's thread

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[int, Callable[[], Any]]] = {}
        self._latest: dict[str, int] = {}
        self._done: dict[str, Callable[[Any], None]] = {}
        self._generation = 0
        self._threads: dict[str, threading.Thread] = {}
        self._running: set[str] = set()  # kinds whose thread has not yet decided to end (under the lock)
        self._finished.connect(self._on_finished)

    def submit(self, kind: str, job: Callable[[], Any], done: Callable[[Any], None]) -> None:
        with self._lock:
            self._generation += 1
            self._latest[kind] = self._generation
            self._pending[kind] = (self._generation, job)
            self._done[kind] = done
            if kind not in self._running:
                self._running.add(kind)
                thread = threading.Thread(target=self._run, args=(kind,), name=f"som-map-{kind}", daemon=True)
                self._threads[kind] = thread
                thread.start()

    def forget(self, *kinds: str) -> None:
        """Drop the answers of these kinds still to come (a new run: the last one's are out of date)."""
        for kind in kinds:
            self._latest.pop(kind, None)

    def busy(self) -> bool:
        return any(t.is_alive() for t in list(self._threads.values()))

    def _run(self, kind: str) -> None:
        while True:
            with self._lock:
                item = self._pending.pop(kind, None)
                if item is None:
                    self._running.discard(kind)  # under the lock: a job submitted from now on starts a new thread
                    return
            generation, job = item
            try:
                result = job()
            except Exception as exc:  # a bad map must not end the thread silently: say it where it is shown
                result = exc
            try:
                self._finished.emit(kind, generation, result)
            except RuntimeError:  # its view was deleted meanwhile (a page rebuilt, a test ended): nobody waits
                return

    def _on_finished(self, kind: str, generation: int, result: Any) -> None:
        if self._latest.get(kind) == generation:
            self._done[kind](result)

    def wait(self) -> None:
        """Wait for the jobs under way (closing the window); later answers are dropped."""
        for thread in list(self._threads.values()):
            thread.join()
        with self._lock:
            self._threads = {k: t for k, t in self._threads.items() if t.is_alive()}
        self._latest.clear()


class MapInspector(QObject):
    """The map view's read-out, legend and unit details.

    Parameters
    ----------
    image : the view's ``ImageItem`` (scene positions map to its pixels).
    scene : the view's graphics scene (``sigMouseMoved``, ``sigMouseClicked``).
    """

    details_shown = Signal(object)  # UnitDetails

    def __init__(self, image: Any, scene: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._image = image
        self.jobs = MapJobs(self)
        self.legend = LegendView()
        self.panel = UnitPanel()
        self.readout = QLabel(" ")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.frame: picture.MapFrame | None = None
        self.views = picture.MapViews()
        self.weights: np.ndarray | None = None
        self.config: Any = None
        self.index: UnitIndex | None = None
        self.umatrix: np.ndarray | None = None
        self.selected: tuple[int, int] | None = None
        self._indexing = False
        self._index_asked = False  # once per map: data that cannot be read again is not read again per click
        # A ring around the selected unit, in the picture's pixels: the view places it, over the map's shapes.
        self.marker = QGraphicsEllipseItem()
        pen = QPen(QColor(20, 20, 20))
        pen.setCosmetic(True)
        pen.setWidth(3)
        self.marker.setPen(pen)
        self.marker.setZValue(10)
        self.marker.hide()
        scene.sigMouseMoved.connect(self._on_moved)
        scene.sigMouseClicked.connect(self._on_clicked)
        self.panel.closed.connect(self._on_panel_closed)

    # -- what is shown -----------------------------------------------------------------------
    def begin(self, views: picture.MapViews | None, config: Any = None) -> None:
        """A new run (or a kept one): forget the last map, its index and the selected unit."""
        self.views = views or picture.MapViews()
        self.config = config
        self.jobs.forget("render", "umatrix", "index")
        self.weights = self.index = self.umatrix = None
        self.frame = None
        self._indexing = self._index_asked = False
        self.selected = None
        self.panel.hide()
        self.marker.hide()
        self.legend.set_frame(None)
        self.readout.setText(" ")

    def set_views(self, views: picture.MapViews) -> None:
        """The run's views' inputs changed (its model arrived with its record)."""
        self.views = views
        self._refresh()

    def frame_shown(self, frame: picture.MapFrame) -> None:
        self.frame = frame
        self.legend.set_frame(frame)
        self._place_marker()

    def _place_marker(self) -> None:
        f = self.frame
        if f is None or self.selected is None or f.tiles or f.grid is None:
            self.marker.hide()  # a planes grid: which plane's unit would it ring?
            return
        x, y = unit_centre(*self.selected, f.topology, f.scale)
        r = max(0.6 * f.scale, 1.5)
        self.marker.setRect(QRectF(x - r, y - r, 2 * r, 2 * r))
        self.marker.show()

    def set_map(self, weights: np.ndarray) -> None:
        """The run's final map is here: exact values and, off the GUI thread, its U-matrix.

        Its examples' units (:class:`UnitIndex`: the run's data read again and searched on the host, seconds
        on a large table) are found when a unit's details first ask for them, not at the run's end, where they
        would take the cores from the next run.
        """
        self.weights = weights
        self.jobs.forget("index")  # another map's examples' units
        self.index = None
        self._indexing = self._index_asked = False
        views = self.views

        def job() -> np.ndarray:
            return metrics.u_matrix(np.asarray(weights, dtype=np.float64), views.topology, views.toroid)

        self.jobs.submit("umatrix", job, self._on_umatrix)
        self._refresh()

    def _on_umatrix(self, result: Any) -> None:
        if isinstance(result, np.ndarray):
            self.umatrix = result

    def _find_examples(self) -> None:
        """Start the search of the run's examples' units, once a map and its data are known."""
        weights, config = self.weights, self.config
        if weights is None or config is None or self._index_asked:
            return
        self._index_asked = self._indexing = True
        self.jobs.submit("index", lambda: UnitIndex.for_config(weights, config), self._on_indexed)

    def _on_indexed(self, result: Any) -> None:
        self._indexing = False
        if isinstance(result, UnitIndex):
            self.index = result
        self._refresh()

    # -- the cursor ----------------------------------------------------------------------------
    def unit_at_scene(self, pos: QPointF) -> tuple[tuple[int, int], int | None] | None:
        """The unit (and plane of a planes grid) under scene position ``pos``, or ``None``."""
        if self.frame is None:
            return None
        p = self._image.mapFromScene(pos)
        x, y = float(p.x()), float(p.y())
        unit = self.frame.unit_at(x, y)
        return None if unit is None else (unit, self.frame.tile_at(x, y))

    def _on_moved(self, pos: QPointF) -> None:
        hit = self.unit_at_scene(pos)
        if hit is None or self.frame is None:
            self.readout.setText(" ")
            return
        (row, col), tile = hit
        self.readout.setText(readout(self.frame, row, col, self.weights, self.views, tile, self.umatrix))

    def _on_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        hit = self.unit_at_scene(event.scenePos())
        if hit is not None:
            self.select(*hit[0])

    # -- the details -------------------------------------------------------------------------
    def select(self, row: int, col: int) -> UnitDetails:
        """Show unit (``row``, ``col``)'s details (a click does this)."""
        self.selected = (row, col)
        self._place_marker()
        return self._show(row, col)

    def _show(self, row: int, col: int) -> UnitDetails:
        if self.weights is None:
            details = UnitDetails(row, col, ())
            note = self.tr("Its codebook, hits and examples show when the run ends.")
        else:
            self._find_examples()
            details = unit_details(self.weights, self.views, row, col, self.index)
            note = ""
            if self.index is None and self._indexing:
                note = self.tr("Finding its examples…")
            elif self.index is None and self.config is not None:
                note = self.tr("Its examples' rows are not known: the run's data cannot be read again.")
        self.panel.show_details(details, note)
        self.details_shown.emit(details)
        return details

    def _refresh(self) -> None:
        if self.selected is not None and self.panel.isVisible():
            self._show(*self.selected)

    def _on_panel_closed(self) -> None:
        self.selected = None
        self.marker.hide()
