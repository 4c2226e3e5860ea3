"""The map's cells drawn as shapes over its picture: outlines, hexagons when zoomed in, borders, plane titles.

The picture pipeline (:mod:`som_studio.picture`) sends a small uint8 picture
and decides every colour; :class:`CellsItem` draws on top of it, in the
picture's pixels, what a picture of fixed resolution cannot keep sharp:

* each cell's outline, a thin line at any zoom where a cell is at least
  :data:`OUTLINE_MIN_PX` screen pixels wide (one ``QPainterPath`` of the visible
  cells' edges, built from arrays with pyqtgraph's ``arrayToQPath``);
* hexagons filled as polygons, in the picture's own colours, once the view
  magnifies the picture's pixels (there its stair-steps would show): one path
  per colour where the visible cells have few colours (a scalar view), else one
  by one where few enough are visible (:data:`FILL_MAX_CELLS`);
* the background outside the map's own edge (a hex map's zig-zag sides) in the
  view's background colour, so no corner of the picture's background shows;
* borders between groups of units (the clusters), over any view;
* a planes grid's titles and the two ends of each plane's colour bar, in the
  room the pipeline left for them (:attr:`~som_studio.picture.Tile.caption`).

A 1024x1024 map shown whole draws no outlines (its cells are under a pixel);
zoomed in, only the visible cells are drawn.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem, QWidget

from som_studio import picture
from som_studio.run_settings import Topology

OUTLINE_MIN_PX: dict[str, float] = {Topology.HEX: 3.0, Topology.RECT: 6.0}
"""Screen pixels per unit from which the cells' outlines are drawn (below, the cells are a texture)."""
OUTLINE_MAX_EDGES = 250_000
"""Most edges drawn in one paint (the visible ones); more: no outlines at this zoom."""
FILL_MIN_ZOOM = 1.5
"""Screen pixels per picture pixel from which hexagons are drawn as polygons instead of the picture's pixels."""
FILL_MAX_CELLS = 2_000
"""Most hexagons filled one by one in a paint (about 20 us each here), when their colours are many (RGB)."""
FILL_MAX_COLOURS = 400
"""Up to this many colours among the visible cells, they are filled one path per colour..."""
FILL_MAX_GROUPED = 6_000
"""... and up to this many cells (about 5 us a cell here, so a paint stays near 30 ms)."""
BORDER_PEN_PX = 2.0


class CellsItem(QGraphicsItem):
    """Draws one :class:`~som_studio.picture.MapFrame`'s cells as shapes, in the frame's pixel coordinates.

    ``set_frame(frame)``: the frame under it; ``set_borders(segments)``: border segments
    (``(n, 4)``, from :func:`~som_studio.picture.cell_edges` with groups at one pixel per unit,
    drawn on every plane at the frame's scale) or ``None``; ``set_colours``: the view's
    background (outside the map) and text colours.
    """

    def __init__(self, parent: QGraphicsItem | None = None) -> None:
        super().__init__(parent)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self.frame: picture.MapFrame | None = None
        self.background = QColor(255, 255, 255)
        self.outline_colour = QColor(30, 30, 30)
        self.text_colour = QColor(30, 30, 30)
        self._rect = QRectF()
        self._colours: dict[int | None, np.ndarray | None] = {}
        self._edges: tuple[Any, QPainterPath] | None = None
        self._outside: tuple[Any, QPainterPath] | None = None
        self._borders: QPainterPath | None = None
        self.drawn: dict[str, int] = {}  # what the last paint drew: "outlines" edges, "filled" cells, "titles"

    # -- feeding ---------------------------------------------------------------------------------
    def set_frame(self, frame: picture.MapFrame | None) -> None:
        rows, cols = frame.image.shape[:2] if frame is not None else (0, 0)
        rect = QRectF(0, 0, cols, rows)
        if rect != self._rect:
            self.prepareGeometryChange()
            self._rect = rect
        if frame is None or self.frame is None or _geometry(frame) != _geometry(self.frame):
            self._edges = self._outside = None
        self.frame = frame
        self._colours = {}
        self.update()

    def set_borders(self, segments: np.ndarray | None) -> None:
        self._borders = None if segments is None or not len(segments) else _segments_path(segments)
        self.update()

    def set_colours(self, background: QColor, ink: QColor) -> None:
        """The view's background (outside the map) and its text colour (titles, numbers)."""
        self.background = QColor(background)
        self.text_colour = QColor(ink)
        self.update()

    # -- QGraphicsItem ---------------------------------------------------------------------------
    def boundingRect(self) -> QRectF:
        return self._rect

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, widget: QWidget | None = None) -> None:
        f = self.frame
        self.drawn = {"outlines": 0, "filled": 0, "titles": 0}
        if f is None or f.grid is None:
            return
        h, w = f.grid
        zoom = abs(painter.worldTransform().m11()) or 1.0  # screen pixels per picture pixel (aspect locked)
        per_unit = zoom * f.scale
        exposed = option.exposedRect if not option.exposedRect.isEmpty() else self._rect  # type: ignore[attr-defined]
        tiles = f.tiles or (None,)
        for k, tile in enumerate(tiles):
            dx, dy = (tile.x, tile.y) if tile is not None else (0, 0)
            plane = QRectF(0, 0, *(_plane_size(f, tile)))
            seen = exposed.translated(-dx, -dy).intersected(plane)
            if seen.isEmpty():
                continue
            painter.save()
            painter.translate(dx, dy)
            painter.setClipRect(plane)
            box = picture.window(h, w, f.topology, f.scale, seen.left(), seen.top(), seen.right(), seen.bottom())
            cells = (box[1] - box[0]) * (box[3] - box[2])
            if f.topology == Topology.HEX:
                if zoom >= FILL_MIN_ZOOM and 0 < cells <= FILL_MAX_GROUPED:
                    self._fill(painter, f, box, k if tile is not None else None)
                painter.fillPath(self._outside_path(f, plane), self.background)
            if per_unit >= OUTLINE_MIN_PX.get(f.topology, 3.0) and cells * 3 <= OUTLINE_MAX_EDGES:
                self._outline(painter, f, box, per_unit)
            if self._borders is not None:
                pen = QPen(QColor(0, 0, 0))
                pen.setCosmetic(True)
                pen.setWidthF(BORDER_PEN_PX)
                painter.setPen(pen)
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.scale(f.scale, f.scale)  # the borders are in units (one pixel per unit)
                painter.drawPath(self._borders)
            painter.restore()
            if tile is not None and tile.caption:
                self._captions(painter, tile)

    # -- parts ---------------------------------------------------------------------------------
    def _fill(self, painter: QPainter, f: picture.MapFrame, box: tuple[int, int, int, int], tile: int | None) -> None:
        if tile not in self._colours:
            self._colours[tile] = f.unit_colours(tile)
        colours = self._colours[tile]
        if colours is None:
            return
        corners, units = picture.cell_polygons(*_grid(f), f.topology, f.scale, box)
        c = colours[units].astype(np.int64)
        packed = (c[:, 0] << 16) | (c[:, 1] << 8) | c[:, 2]
        kinds, inverse = np.unique(packed, return_inverse=True)
        painter.setPen(Qt.PenStyle.NoPen)
        if len(kinds) <= FILL_MAX_COLOURS:
            # Few colours (a scalar view has at most 256): one path per colour, built from arrays.
            order = np.argsort(inverse, kind="stable")
            starts = np.searchsorted(inverse[order], np.arange(len(kinds) + 1))
            closed = np.concatenate([corners, corners[:, :1]], axis=1)
            for k, rgb in enumerate(kinds.tolist()):
                cells = closed[order[starts[k] : starts[k + 1]]]
                connect = np.ones(cells.shape[:2], dtype=bool)
                connect[:, -1] = False
                path = pg.arrayToQPath(cells[..., 0].ravel(), cells[..., 1].ravel(), connect=connect.ravel())
                painter.fillPath(path, QColor((rgb >> 16) & 255, (rgb >> 8) & 255, rgb & 255))
            self.drawn["filled"] += len(units)
            return
        if len(units) > FILL_MAX_CELLS:
            return
        centre = corners.mean(axis=1)
        shape = QPolygonF([QPointF(float(x), float(y)) for x, y in corners[0] - centre[0]]) if len(units) else None
        for (cx, cy), u in zip(centre.tolist(), units.tolist()):
            r, g, b = colours[u]
            painter.setBrush(QColor(int(r), int(g), int(b)))
            painter.drawConvexPolygon(shape.translated(cx, cy))  # type: ignore[union-attr]
        self.drawn["filled"] += len(units)

    def _outline(self, painter: QPainter, f: picture.MapFrame, box: tuple[int, int, int, int], per_unit: float) -> None:
        key = (_geometry(f), box)
        if self._edges is None or self._edges[0] != key:
            segments = picture.cell_edges(*_grid(f), f.topology, f.scale, box)
            self._edges = (key, _segments_path(segments))
            self._edge_count = len(segments)
        # Fainter on small cells, so a zoomed-out map is not veiled by its own lines.
        alpha = int(np.clip(40 + 6 * per_unit, 40, 120))
        pen = QPen(QColor(self.outline_colour.red(), self.outline_colour.green(), self.outline_colour.blue(), alpha))
        pen.setCosmetic(True)
        pen.setWidthF(1.0)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._edges[1])
        self.drawn["outlines"] += self._edge_count

    def _outside_path(self, f: picture.MapFrame, plane: QRectF) -> QPainterPath:
        key = (_geometry(f), plane.width(), plane.height())
        if self._outside is None or self._outside[0] != key:
            path = QPainterPath()
            path.setFillRule(Qt.FillRule.OddEvenFill)
            path.addRect(plane)
            pts = picture.outline(*_grid(f), f.topology, f.scale)
            path.addPolygon(QPolygonF([QPointF(float(x), float(y)) for x, y in pts]))
            self._outside = (key, path)
        return self._outside[1]

    def _captions(self, painter: QPainter, tile: picture.Tile) -> None:
        painter.save()
        font = QFont(painter.font())
        font.setPixelSize(max(1, round(tile.caption * 0.8)))
        painter.setFont(font)
        painter.setPen(self.text_colour)
        x, y, w, h = tile.title_box()
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        title = painter.fontMetrics().elidedText(tile.title, Qt.TextElideMode.ElideRight, w)
        painter.drawText(QRectF(x, y, w, h), flags, title)
        self.drawn["titles"] += 1
        if tile.bar is not None and tile.bar_height:
            x, y, w, h = tile.ends_box()
            lo, hi = tile.bar.ends()
            painter.drawText(QRectF(x, y, w, h), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, lo)
            painter.drawText(QRectF(x, y, w, h), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignTop, hi)
            painter.setPen(QPen(QColor(120, 120, 120), 0))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(QRectF(tile.x, tile.bar_y, tile.width, tile.bar_height))
        painter.restore()


def _grid(f: picture.MapFrame) -> tuple[int, int]:
    h, w = f.grid if f.grid is not None else f.image.shape[:2]
    return int(h), int(w)


def _geometry(f: picture.MapFrame) -> tuple[Any, ...]:
    return (f.grid, f.topology, f.scale, f.image.shape[:2], len(f.tiles))


def _plane_size(f: picture.MapFrame, tile: picture.Tile | None) -> tuple[float, float]:
    if tile is not None:
        return float(tile.width), float(tile.height)
    return float(f.image.shape[1]), float(f.image.shape[0])


def _segments_path(segments: np.ndarray) -> QPainterPath:
    """One path of disjoint line segments ``(n, 4)``, built from arrays (no Python loop per segment)."""
    x = np.ascontiguousarray(segments[:, [0, 2]]).reshape(-1)
    y = np.ascontiguousarray(segments[:, [1, 3]]).reshape(-1)
    return pg.arrayToQPath(x, y, connect="pairs")
