"""The legend beside the map: a colour bar for a scalar view, swatches for labels and clusters.

It draws what the picture pipeline hands over as data (:class:`~som_studio.picture.ColourBar`,
:class:`~som_studio.picture.Swatches`, and a planes grid's per-plane bars in its
tiles), in the pipeline's own colours, so the app and the report agree.

Threads: GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter, QPaintEvent
from PySide6.QtWidgets import QSizePolicy, QWidget

from som_studio import picture

BAR_WIDTH = 18
ROW = 18  # pixels per swatch or per plane's bar


class LegendView(QWidget):
    """Shows one frame's legend: a vertical colour bar, a list of swatches, or one small bar per plane."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.legend: picture.Legend | None = None
        self.tiles: tuple[picture.Tile, ...] = ()
        self.setMinimumWidth(150)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.hide()  # until a frame has a legend

    def set_frame(self, frame: picture.MapFrame | None) -> None:
        """Show ``frame``'s legend (``None``: none)."""
        legend = frame.legend if frame is not None else None
        # A planes grid whose bars are drawn in the picture under each plane needs none here.
        tiles = tuple(t for t in frame.tiles if t.bar is not None and not t.bar_height) if frame is not None else ()
        if _same(legend, self.legend) and _same_tiles(tiles, self.tiles):
            return  # a live run's frames mostly keep their legend: no repaint
        self.legend, self.tiles = legend, tiles
        self.setToolTip(self.text())
        # Nothing to show (the RGB view): no empty column beside the map; the map takes its width.
        self.setVisible(legend is not None or bool(tiles))
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(170, 260)

    def text(self) -> str:
        """The legend as plain text (tool tip, tests)."""
        lg = self.legend
        if isinstance(lg, picture.ColourBar):
            lo, hi = lg.ends()
            return f"{lg.label}: {lo} – {hi}"
        if isinstance(lg, picture.Swatches):
            lines = [lg.title] + [name for name, _ in lg.entries] + ([lg.note] if lg.note else [])
            return "\n".join(line for line in lines if line)
        if self.tiles:
            return "\n".join(f"{t.title}: {' – '.join(t.bar.ends())}" for t in self.tiles if t.bar is not None)
        return ""

    # -- drawing -------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        try:
            lg = self.legend
            if isinstance(lg, picture.ColourBar):
                self._bar(p, lg)
            elif isinstance(lg, picture.Swatches):
                self._swatches(p, lg)
            elif self.tiles:
                self._plane_bars(p)
        finally:
            p.end()

    def _bar(self, p: QPainter, bar: picture.ColourBar) -> None:
        fm = p.fontMetrics()
        top, bottom = fm.height() * 2 + 6, self.height() - fm.height() - 6
        if bottom - top < 20:
            return
        p.drawText(QRectF(4, 2, self.width() - 8, fm.height() * 2 + 4), Qt.TextFlag.TextWordWrap, bar.label)
        grad = QLinearGradient(0, bottom, 0, top)  # the low end at the bottom
        _fill(grad, bar)
        p.fillRect(QRectF(8, top, BAR_WIDTH, bottom - top), grad)
        p.setPen(QColor(80, 80, 80))
        p.drawRect(QRectF(8, top, BAR_WIDTH, bottom - top))
        lo, hi = bar.ends()
        x = 8 + BAR_WIDTH + 6
        p.drawText(int(x), int(top + fm.ascent()), hi)
        p.drawText(int(x), int(bottom), lo)

    def _swatches(self, p: QPainter, sw: picture.Swatches) -> None:
        fm = p.fontMetrics()
        y = 4
        if sw.title:
            p.drawText(4, y + fm.ascent(), sw.title)
            y += ROW + 2
        for name, (r, g, b) in sw.entries:
            if y + ROW > self.height() - ROW:
                p.drawText(4, y + fm.ascent(), "…")
                y += ROW
                break
            p.fillRect(QRectF(6, y + 2, ROW - 4, ROW - 4), QColor(r, g, b))
            p.setPen(QColor(60, 60, 60))
            p.drawRect(QRectF(6, y + 2, ROW - 4, ROW - 4))
            p.drawText(6 + ROW + 4, y + fm.ascent() + 1, fm.elidedText(name, Qt.TextElideMode.ElideRight, 130))
            y += ROW
        if sw.note:
            p.drawText(QRectF(4, y + 4, self.width() - 8, fm.height() * 2 + 4), Qt.TextFlag.TextWordWrap, sw.note)

    def _plane_bars(self, p: QPainter) -> None:
        """A grid of planes on per-plane scales: one small horizontal bar per plane, with its ends."""
        fm = p.fontMetrics()
        y = 4
        width = max(40, self.width() - 12)
        for t in self.tiles:
            bar = t.bar
            if bar is None:
                continue
            if y + 2 * ROW > self.height():
                p.drawText(4, y + fm.ascent(), "…")
                break
            p.drawText(4, y + fm.ascent(), fm.elidedText(t.title, Qt.TextElideMode.ElideRight, width))
            y += fm.height()
            grad = QLinearGradient(6, 0, 6 + width, 0)
            _fill(grad, bar)
            p.fillRect(QRectF(6, y, width, 8), grad)
            y += 9
            lo, hi = bar.ends()
            p.drawText(6, y + fm.ascent(), lo)
            p.drawText(int(6 + width - fm.horizontalAdvance(hi)), y + fm.ascent(), hi)
            y += fm.height() + 4


def _fill(grad: QLinearGradient, bar: picture.ColourBar) -> None:
    colours = bar.colours
    n = len(colours)
    for i in range(0, n, max(1, n // 16)):
        r, g, b = (int(v) for v in colours[i][:3])
        grad.setColorAt(i / (n - 1), QColor(r, g, b))
    r, g, b = (int(v) for v in colours[-1][:3])
    grad.setColorAt(1.0, QColor(r, g, b))


def _same(a: picture.Legend | None, b: picture.Legend | None) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, picture.ColourBar) and isinstance(b, picture.ColourBar):
        return (a.lo, a.hi, a.label, a.integer) == (b.lo, b.hi, b.label, b.integer)
    return a == b


def _same_tiles(a: tuple[picture.Tile, ...], b: tuple[picture.Tile, ...]) -> bool:
    return len(a) == len(b) and all(x.title == y.title and _same(x.bar, y.bar) for x, y in zip(a, b))
