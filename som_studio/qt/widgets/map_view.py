"""The live map: one ImageItem, updated from the latest frame only.

Frames arrive already rendered (uint8, row-major) from the worker process by
the picture pipeline (:mod:`som_studio.picture`), so drawing one is a cheap
``setImage(..., autoLevels=False)``. The view choice (RGB, U-matrix, a
component plane) is sent to the worker; after a run the final map is kept so
another choice can still be shown, drawn by the same pipeline on the run's
colour range (the one the frames carried).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QImage, QPalette, QShowEvent
from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from som_studio import picture
from som_studio.app_model.pacing import DrawPacer
from som_studio.qt.widgets.canvas import MapCanvas
from som_studio.qt.widgets.map_cells import CellsItem
from som_studio.qt.widgets.map_inspect import MapInspector
from som_studio.qt.widgets.ticker import TickerLabel
from som_studio.run_settings import Topology

pg.setConfigOptions(imageAxisOrder="row-major")

# Least time between two draws: the worker already sends at most ~15 frames a
# second; this guards the GUI if frames bunch up.
MIN_DRAW_INTERVAL_S = 1 / 60
#: The share of one core that drawing live frames may take (a frame's whole cost: setting the picture, painting it,
#: its caption and the copy to the display, in the process's CPU time): a frame that costs more waits longer, and
#: the worker is asked for no more frames than are drawn. On a machine whose cores all train, the app's CPU time is
#: the training's: 1 % gives the playbook map 5-7 frames a second under Xvfb (1.5-2.4 ms a frame, 1280x800 to
#: 1920x1080).
DRAW_SHARE = 0.01
#: ... but the map still moves: at least 5 frames a second, whatever a frame costs (under load here a frame took
#: 2.3-2.8 ms, which 1 % alone would draw 4 times a second).
MAX_DRAW_INTERVAL_S = 0.2
#: While the map is hidden (another page in front) the worker sends a frame this often: the newest is drawn when
#: the map is shown again.
HIDDEN_INTERVAL_S = 1.0
#: A frame interval asked of the worker is asked again only when it changed by more than this factor.
ASK_AGAIN_RATIO = 1.25
# Largest picture set on the image item as it is; a larger one (the planes grid of a 1024x1024 hex map
# is 14 million pixels) is shown thinned, its pixels still addressed as the frame's.
MAX_SHOWN_PIXELS = 2_000_000


class MapImage(pg.ImageItem):
    """The map's picture, in the display's own pixel format once per frame rather than at every paint.

    pyqtgraph hands Qt a frame as it came (24-bit RGB, or 8-bit levels through a colour table), and Qt's raster
    engine converts every pixel again at every paint that scales a picture of another format: measured (the
    playbook map scaled to 900x506) 0.85 ms for RGB and 1.7 ms for levels against 0.26 ms for 32-bit RGB, whose
    conversion takes 5-12 us once.
    """

    def render(self) -> None:
        super().render()
        q: QImage | None = getattr(self, "qimage", None)
        if q is not None:
            fast = QImage.Format.Format_ARGB32_Premultiplied if q.hasAlphaChannel() else QImage.Format.Format_RGB32
            if q.format() != fast:
                self.qimage = q.convertToFormat(fast)


def _key(mode: str, component: int) -> str:
    """Item data for a view choice (a string: Qt stores tuples as lists, which findData misses)."""
    return f"{mode}:{component}"


class MapView(QWidget):
    """Shows the map of the current run.

    Threads: GUI thread only. ``view_changed(mode, component)`` is emitted when
    the user picks another picture of the map.
    """

    view_changed = Signal(str, int)
    #: The least seconds between frames worth sending to this view now (its draws' cost, or hidden).
    frame_interval_changed = Signal(float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._features = 3
        # The view last picked (in the list or by a setting): offered again once a run has its inputs (labels
        # come with the record); until then the list shows what is drawn, never another view.
        self._wanted: picture.ViewChoice | None = None
        self._final: np.ndarray | None = None
        self._views: picture.MapViews | None = None
        self._begun = False  # a run (live or kept) was shown: the box lists its views, not the form's
        self._range: tuple[np.ndarray, np.ndarray] | None = None
        self.frames_drawn = 0
        self._undrawn = False  # the last frame arrived while the view was hidden
        self.last_frame: picture.MapFrame | None = None
        self._last_draw: float | None = None
        self.pacer = DrawPacer(DRAW_SHARE, MIN_DRAW_INTERVAL_S, MAX_DRAW_INTERVAL_S)  # the live frames' costs
        self._asked_s: float | None = None  # the frame interval last asked of the worker
        self._frame_t0: float | None = None  # when the newest live frame began to be set, until it is shown
        self._pending = QTimer(self)  # draws a frame that came too soon once its time comes
        self._pending.setSingleShot(True)
        self._pending.timeout.connect(self._draw_pending)

        self.mode = QComboBox()
        self.caption = QLabel(self.tr("No run yet"))
        # The clusters' borders over whatever view is shown (once the run's model has clusters).
        self.borders = QCheckBox(self.tr("Cluster borders"))
        self.borders.setChecked(True)  # shown as soon as there are clusters; the box turns them off
        self.borders.setEnabled(False)
        self._borders_tip()
        self.caption.setWordWrap(True)  # a kept run's long name wraps, never narrowing the map
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Show")))
        top.addWidget(self.mode)
        top.addWidget(self.borders)
        # The caption takes the row's room (a wrapped label left to itself asks for little and wrapped
        # "jax-fused-batch (kept run): iteration 30" onto three lines beside an empty stretch).
        self.caption.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        top.addWidget(self.caption, 1)
        self.iteration = TickerLabel()  # a live frame's iteration, beside the run's title
        top.addWidget(self.iteration)

        # A bare view box, no axes: axes repaint whenever the view changes and
        # cost more than the image itself.
        self.plot = MapCanvas()
        self.plot.painted.connect(self._on_painted)
        self.view_box = pg.ViewBox(lockAspect=True, invertY=True)  # row 0 at the top, as the map is stored
        self.view_box.setMenuEnabled(False)
        self.plot.setCentralItem(self.view_box)
        self.image = MapImage()
        self.view_box.addItem(self.image)
        # The cells as shapes over the picture: outlines, hexagons when zoomed, borders, plane titles.
        self.cells = CellsItem()
        self.cells.setZValue(5)
        self.view_box.addItem(self.cells)
        self._follow_palette()
        self._lut = picture.VIRIDIS  # the report's colour map, so a plain frame looks as it does there

        # Hover read-out under the map; legend and a clicked unit's details beside it (map_inspect.py).
        self.inspector = MapInspector(self.image, self.plot.scene(), self)
        # The selected unit's ring over the cells' shapes (the image's child would be drawn under them), in the
        # view box's coordinates, which are the image's own pixels (its rect is its size).
        self.view_box.addItem(self.inspector.marker)
        # A planes grid of a wide run draws its first planes only: said beside it, where its legend would be.
        self.planes_note = QLabel()
        self.planes_note.setWordWrap(True)
        self.planes_note.hide()
        side = QVBoxLayout()
        side.addWidget(self.planes_note)
        side.addWidget(self.inspector.legend, 1)
        side.addWidget(self.inspector.panel, 2)
        middle = QHBoxLayout()
        middle.addWidget(self.plot, 1)
        middle.addLayout(side)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addLayout(middle, 1)
        lay.addWidget(self.inspector.readout)
        self._fill_modes(3, picture.ViewChoice())
        self.mode.currentIndexChanged.connect(self._on_mode_changed)
        self.borders.toggled.connect(self._on_borders_toggled)

    def _follow_palette(self) -> None:
        """The canvas in the window's colours: its background around the map and its text (plane titles)."""
        pal = self.palette()
        base, ink = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
        self.plot.setBackground(base)
        self.cells.set_colours(base, ink)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._follow_palette()
        super().changeEvent(event)

    # -- cluster borders -----------------------------------------------------------------------
    def _on_borders_toggled(self, on: bool) -> None:
        views = self._views
        if not on or views is None or views.clusters is None:
            self.cells.set_borders(None)
            return
        clusters = np.asarray(views.clusters)
        h, w = clusters.shape[:2]
        topology = views.topology
        # Found once per map, at one pixel per unit, off the GUI thread (a 1024x1024 map's borders take long).
        job = lambda: picture.cell_edges(h, w, topology, 1, groups=clusters)
        self.inspector.jobs.submit("borders", job, self._on_borders)

    def _on_borders(self, segments: object) -> None:
        if isinstance(segments, np.ndarray) and self.borders.isChecked():
            self.cells.set_borders(segments)

    def _borders_tip(self) -> None:
        """Ticked and greyed reads as on and broken: the tip says when it draws."""
        if self.borders.isEnabled():
            self.borders.setToolTip(self.tr("Draw the borders between the map's clusters over the view shown"))
        else:
            self.borders.setToolTip(
                self.tr(
                    "Drawn once the map has clusters: a run on a data file with Clusters set in the Run panel has "
                    "them when it ends"
                )
            )

    def _offer_borders(self) -> None:
        has = self._views is not None and self._views.clusters is not None
        self.borders.setEnabled(has)
        self._borders_tip()
        if not has:
            self.cells.set_borders(None)
        elif self.borders.isChecked():
            self._on_borders_toggled(True)

    # -- choice of picture ------------------------------------------------------------
    def _fill_modes(self, features: int, choice: picture.ViewChoice) -> None:
        """List the views this run has inputs for, the one picked last selected where it is among them, else
        ``choice`` (what is drawn now); a selection that changes is drawn (and the worker told)."""
        drawn = self.choice().key if self.mode.count() else None
        self.mode.blockSignals(True)
        self.mode.clear()
        # The picture pipeline's listing: the views this run has inputs for, planes by feature name.
        for view, text in picture.choices(features, self._views):
            self.mode.addItem(text, _key(view.mode, view.component))
        fitted = choice.fit(features, self._views)
        keys = [c.key for c in (self._wanted, choice, fitted) if c is not None]
        i = next((i for i in map(self.mode.findData, keys) if i >= 0), 0)
        self.mode.setCurrentIndex(i)
        self.mode.blockSignals(False)
        if drawn is not None and self.choice().key != drawn:
            self._show_choice()

    def choice(self) -> picture.ViewChoice:
        mode, _, comp = str(self.mode.currentData() or _key(picture.UMATRIX, 0)).partition(":")
        return picture.ViewChoice(mode, int(comp))

    def set_choice(self, mode: str, component: int) -> None:
        self._wanted = picture.ViewChoice(mode, component)
        i = self.mode.findData(_key(mode, component))
        if i >= 0:
            self.mode.setCurrentIndex(i)

    def _on_mode_changed(self) -> None:
        self._wanted = self.choice()
        self._show_choice()

    def _show_choice(self) -> None:
        """Draw the selected view: the worker's next frames, and the kept final map now."""
        c = self.choice()
        self.view_changed.emit(c.mode, c.component)
        if self._final is not None and self._range is not None:
            self.redraw()
        elif self.last_frame is not None and self.last_frame.view.mode != c.mode:
            # No map kept (a run killed before it could send one): say when the choice shows.
            caption = self.tr("iteration {n:,} (the new view shows from the next frame)")
            self.caption.setText(caption.format(n=self.last_frame.iteration))

    def redraw(self, iteration: int | None = None) -> None:
        """Draw the kept final map in the current choice, off the GUI thread (a 1024x1024 map takes long).

        ``iteration``: the map's (default: the last frame's)."""
        if self._final is None or self._range is None:
            return
        it = iteration if iteration is not None else self.last_frame.iteration if self.last_frame else 0
        final, choice, rng, views = self._final, self.choice(), self._range, self._views
        self.caption.setText(self.tr("drawing…"))
        h, w = final.shape[:2]
        # A finished hex map is drawn as finely as in a report (smooth hexagons on a small map); rect: as frames are.
        hexagons = views is not None and views.topology == Topology.HEX
        scale = max(picture.frame_scale(h, w, Topology.HEX), picture.report_scale(h, w)) if hexagons else None
        job = lambda: picture.make_frame(it, final, choice, *rng, views, scale)
        self.inspector.jobs.submit("render", job, self._on_redrawn)

    def _on_redrawn(self, frame: object) -> None:
        if isinstance(frame, picture.MapFrame):
            caption = self.caption.text()
            self.show_frame(frame, force=True)
            if caption != self.tr("drawing…"):  # a kept run's caption stays
                self.caption.setText(caption)
        else:
            self.caption.setText(self.tr("Cannot draw this view: {error}").format(error=frame))

    def set_views(self, views: picture.MapViews) -> None:
        """The run's views' inputs grew (its model came with its record): offer the views they allow."""
        self._views = views
        self._fill_modes(self._features, self.choice())
        self.inspector.set_views(views)
        self._offer_borders()

    def expect(self, features: int, views: picture.MapViews) -> None:
        """Before the first run: offer the views a run of the form's configuration will have (no RGB colours
        for 21 features). Once a run began, the box lists that run's."""
        if not self._begun:
            self._views, self._features = views, features
            self._fill_modes(features, self.choice())

    # -- feeding -------------------------------------------------------------------------
    def begin(self, features: int, title: str, views: picture.MapViews | None = None, config: object = None) -> None:
        """A new run with ``features`` features starts; ``views``: its lattice, names and extra inputs;
        ``config``: its configuration (a clicked unit's examples are found in its data)."""
        self._begun = True
        self._views = views
        self.inspector.begin(views, config)
        self.inspector.jobs.forget("borders")
        self._offer_borders()
        self._features = features
        self._final = None
        self._range = None
        self.last_frame = None  # the last run's frame (and its colour range) is not this run's
        self._pending.stop()
        self._undrawn = False
        self._fill_modes(features, self.choice())
        self.caption.setText(title)
        self.iteration.setText("")
        self._asked_s = None  # a new worker: tell it how often frames are worth sending
        self._ask_frames()

    def show_frame(self, frame: picture.MapFrame, force: bool = False) -> None:
        """Draw ``frame``; a live one (not ``force``) waits while the view is hidden or was just drawn."""
        now = time.perf_counter()
        wait_s = self.pacer.wait_s(self._last_draw, now)
        if not force and (wait_s > 0 or not self.isVisible()):
            # Drawn when its time comes (unless a newer one replaces it), when the view is shown again
            # (another page was in front), or at the end.
            self.last_frame = frame
            self._undrawn = True
            if wait_s > 0 and self.isVisible() and not self._pending.isActive():
                self._pending.start(max(1, math.ceil(wait_s * 1000)))
            return
        self._pending.stop()
        self._undrawn = False
        self._last_draw = now
        t0 = time.process_time()
        img = frame.image
        if img.ndim == 2:
            self.image.setLookupTable(self._lut)
        else:
            self.image.setLookupTable(None)
        rows, cols = img.shape[:2]
        step = math.ceil(math.sqrt(rows * cols / MAX_SHOWN_PIXELS))
        if step > 1:  # more pixels than a screen shows: every step-th, so the GUI thread's paint stays short
            img = np.ascontiguousarray(img[::step, ::step])
        self.image.setImage(img, autoLevels=False, levels=(0, 255))
        self.image.setRect(QRectF(0, 0, cols, rows))  # item coordinates stay the frame's pixels (unit_at)
        self.cells.set_frame(frame)
        self.last_frame = frame
        self.inspector.frame_shown(frame)
        self.frames_drawn += 1
        said = self.tr("iteration {n:,}").format(n=frame.iteration)
        self._say_planes_shown(frame)
        if self._final is not None:  # the run's last frame, or its final map drawn again: the caption says which
            self.caption.setText(said)
            self.iteration.setText("")
        else:
            self.iteration.setText(said)
        if not force:  # a live frame's cost: from here to the end of its paint and display (_on_painted)
            self._frame_t0 = t0

    def _say_planes_shown(self, frame: picture.MapFrame) -> None:
        features = np.size(frame.range.lo) if frame.range is not None else 0
        note = ""
        if frame.tiles and len(frame.tiles) < features:
            note = self.tr("The first {shown} of {n:,} feature planes. Any one is drawn whole under Feature plane.")
            note = note.format(shown=len(frame.tiles), n=features)
        if note != self.planes_note.text():  # a live frame's cost stays a comparison
            self.planes_note.setText(note)
            self.planes_note.setVisible(bool(note))

    def _on_painted(self, seconds: float) -> None:
        if self._frame_t0 is not None:
            # Booked once the window's paint is over: the caption's repaint and the copy to the display come after
            # the canvas's paint, in the same pass (about a third of a frame's cost under Xvfb).
            QTimer.singleShot(0, self._book_frame)

    def _book_frame(self) -> None:
        if self._frame_t0 is not None:
            self.pacer.book(time.process_time() - self._frame_t0)
            self._frame_t0 = None
            self._ask_frames()

    def draw_interval_s(self) -> float:
        """Least time between two live frames: more than :data:`MIN_DRAW_INTERVAL_S` when frames cost more
        than their :data:`DRAW_SHARE` of a core (a large hex map, a grid of planes, a slow display),
        at most :data:`MAX_DRAW_INTERVAL_S`."""
        return self.pacer.interval_s()

    def _ask_frames(self) -> None:
        """Say how often frames are worth sending (``frame_interval_changed``) when that changed enough."""
        want = self.draw_interval_s() if self.isVisible() else HIDDEN_INTERVAL_S
        asked = self._asked_s
        if asked is None or not asked / ASK_AGAIN_RATIO <= want <= asked * ASK_AGAIN_RATIO:
            self._asked_s = want
            self.frame_interval_changed.emit(want)

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        self._ask_frames()

    def _draw_pending(self) -> None:
        if self._undrawn and self.last_frame is not None and self.isVisible():
            self.show_frame(self.last_frame)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._undrawn and self.last_frame is not None:
            self.show_frame(self.last_frame, force=True)
        self._ask_frames()

    def keep_final(self, weights: np.ndarray) -> None:
        """Keep the final map so the view can still change after the run."""
        self._final = weights
        # The run's colour range, as its frames were drawn; a frame without one: the rule's fallback.
        carried = self.last_frame.range if self.last_frame is not None else None
        self._range = carried if carried is not None else picture.colour_range(weights)
        self.inspector.set_map(weights)
        if self.last_frame is not None:
            self.show_frame(self.last_frame, force=True)


def _preview() -> None:  # python -m som_studio.qt.widgets.map_view
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    view = MapView()
    view.begin(3, "fake data")
    rng = np.random.default_rng(0)
    weights = rng.random((135, 240, 3))
    lo, hi = picture.colour_range(weights)
    state = {"i": 0}

    def tick() -> None:
        nonlocal weights
        # Smooth the map a little each tick, as training does.
        weights = (weights + np.roll(weights, 1, 0) + np.roll(weights, 1, 1)) / 3
        state["i"] += 1
        view.show_frame(picture.make_frame(state["i"], weights, view.choice(), lo, hi))

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(33)
    view.resize(800, 500)
    view.show()
    app.exec()


if __name__ == "__main__":
    _preview()
