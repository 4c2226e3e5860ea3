"""Quality: quantization error and topographic error against iteration.

Drawn as the timing plot is: the measurements arriving are kept, and the plot redrawn when its pacer allows
(:class:`~som_studio.app_model.pacing.DrawPacer`, within its share of a core), and not while it is hidden. A
short run measures its quality ten times in a second or two; each redraw of three axes cost the training's
cores more than the map's frames.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from som_studio.app_model.pacing import DrawPacer
from som_studio.qt.chart_style import legend_above, readable_axes, restyle_legend, style_plot, style_widget, theme_of
from som_studio.qt.widgets.canvas import PacedRedraw, PlotCanvas
from som_studio.qt.widgets.timing_plot import MAX_REDRAW_MS, REDRAW_MS, REDRAW_SHARE
from som_studio.session.decimate import MinMaxSeries
from som_studio.session.events import QualityMeasured

HISTORY_POINTS = 2000  # the most points a curve keeps, whatever the run's length


class QualityPlot(QWidget):
    """QE (left axis) and TE (right axis, a fraction on its own range) of the current run.

    Threads: GUI thread only.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        # Bounded: old measurements fold into min/max buckets, the whole run stays visible.
        self._qe = MinMaxSeries(HISTORY_POINTS)
        self._te = MinMaxSeries(HISTORY_POINTS)
        self.caption = QLabel(self.tr("No run yet"))
        self.caption.setWordWrap(True)  # a long summary wraps, never widening the dock
        self.plot = PlotCanvas(axisItems=readable_axes(whole=("bottom",)))
        self.redraw = PacedRedraw(
            self, self.plot, self._draw, DrawPacer(REDRAW_SHARE, REDRAW_MS / 1000, MAX_REDRAW_MS / 1000)
        )
        self._latest: QualityMeasured | None = None  # the newest measurement: the caption's
        self.qe_curve = self.plot.plot(symbol="o", symbolSize=5, name="QE")
        # TE is a fraction, on its own axis on the right, linked in x and ranged to its own values:
        # on a fixed 0-1 axis a TE of 0.02-0.06 lies flat along the bottom.
        self.te_view = pg.ViewBox()
        self.plot.showAxis("right")
        self.plot.scene().addItem(self.te_view)
        self.plot.getAxis("right").linkToView(self.te_view)
        self.te_view.setXLink(self.plot.getPlotItem())
        self.te_view.enableAutoRange(axis=pg.ViewBox.YAxis)
        self.te_curve = pg.PlotDataItem(symbol="t", symbolSize=6, name="TE")
        self.te_view.addItem(self.te_curve)
        self.legend = legend_above(self.plot.getPlotItem(), theme_of(self), columns=2)
        self.legend.addItem(self.qe_curve, "QE")
        self.legend.addItem(self.te_curve, "TE")
        self._apply_theme()
        self.plot.getPlotItem().vb.sigResized.connect(self._sync_views)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.caption)
        lay.addWidget(self.plot, 1)

    def _apply_theme(self) -> None:
        """The plot in the palette's colours (light or dark), as the app's other charts."""
        theme = theme_of(self)
        style_widget(self.plot, theme)
        item = self.plot.getPlotItem()
        style_plot(item, theme, self.tr("iteration"), self.tr("quantization error"), sides=("left", "bottom", "right"))
        item.getAxis("right").setLabel(self.tr("topographic error"), color=theme.text)
        qe, te = theme.colour(0), theme.colour(1)
        self.qe_curve.setPen(pg.mkPen(qe, width=2))
        self.qe_curve.setSymbolBrush(qe)
        self.qe_curve.setSymbolPen(None)
        self.te_curve.setPen(pg.mkPen(te, width=2))
        self.te_curve.setSymbolBrush(te)
        self.te_curve.setSymbolPen(None)
        restyle_legend(self.legend, theme)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_theme()
        super().changeEvent(event)

    def _sync_views(self) -> None:
        self.te_view.setGeometry(self.plot.getPlotItem().vb.sceneBoundingRect())
        self.te_view.linkedViewChanged(self.plot.getPlotItem().vb, self.te_view.XAxis)

    def begin(self) -> None:
        """A new run: clear the curves and the previous run's range."""
        from som_studio.qt.widgets.timing_plot import reset_range

        reset_range(self.plot)
        self.redraw.stop()
        self._qe.clear()
        self._te.clear()
        self._latest = None
        self.qe_curve.setData([], [])
        self.te_curve.setData([], [])
        self._fit_axes()
        self.caption.setText(self.tr("waiting for the first measurement…"))

    def add(self, q: QualityMeasured) -> None:
        """A measurement: kept now, drawn when the pacer allows (:meth:`flush` draws at once)."""
        self._qe.append(q.iteration, q.qe)
        self._te.append(q.iteration, q.te)
        self._latest = q
        self.redraw.ask()

    def flush(self) -> None:
        """Draw what has arrived now, shown or not (a run's end, a kept run replayed)."""
        self.redraw.flush()

    def ended(self) -> None:
        """The run ended: drawn as it stands; with no measurement, the caption says none was taken (it waited for
        one that would never come: a big run stopped before its first)."""
        self.flush()
        if self._latest is None:
            self.caption.setText(self.tr("no quality measured: the run ended before its first measurement"))

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.redraw.shown()

    def _draw(self) -> bool:
        q = self._latest
        if q is None:
            return False
        self.qe_curve.setData(*self._qe.arrays())
        self.te_curve.setData(*self._te.arrays())
        self._fit_axes()
        # Each figure kept with its name when the caption wraps (no "TE" at a line's end, "0.020" on the next).
        figures = f"  QE\u00a0{q.qe:.4f}   TE\u00a0{q.te:.3f}"
        self.caption.setText(self.tr("iteration {n:,}:").format(n=q.iteration) + figures)
        return True

    def _fit_axes(self) -> None:
        """Auto-range from two iterations on; before that, fixed axes from 0 (pyqtgraph would centre a
        lone point in a range of its own making, -400 to 400, and none at all for no point). The iteration
        axis then ends at 2 at least and starts left of 0: from 0 to 1 it had no whole iteration far enough
        from its ends to label (the initial map's point stood over a bare axis)."""
        xs, qe = self._qe.arrays()
        if len(np.unique(xs)) >= 2:
            self.plot.enableAutoRange()
            self.te_view.enableAutoRange(axis=pg.ViewBox.YAxis)
            return
        top = float(np.nanmax(qe)) if len(qe) and np.isfinite(qe).any() else 0.0
        end = max(float(xs.max()) if len(xs) else 0.0, 2.0)
        self.plot.setXRange(-0.15 * end, 1.15 * end, padding=0.0)  # room for the lone point and its label
        self.plot.setYRange(0.0, top * 1.5 if top > 0 else 1.0, padding=0.0)
        te = self._te.arrays()[1]
        te_top = float(np.nanmax(te)) if len(te) and np.isfinite(te).any() else 0.0
        self.te_view.setYRange(0.0, te_top * 1.5 if te_top > 0 else 1.0, padding=0.0)


def _preview() -> None:  # python -m som_studio.qt.widgets.quality_plot
    from PySide6.QtWidgets import QApplication

    app = QApplication([])
    plot = QualityPlot()
    plot.begin()
    state = {"i": 0}

    def tick() -> None:
        i = state["i"]
        plot.add(QualityMeasured(i * 5, 0.3 * np.exp(-i / 5) + 0.02, 0.5 * np.exp(-i / 3) + 0.05))
        state["i"] += 1

    timer = QTimer()
    timer.timeout.connect(tick)
    timer.start(300)
    plot.resize(600, 350)
    plot.show()
    app.exec()


if __name__ == "__main__":
    _preview()
