"""The report's charts as pyqtgraph widgets: final maps, time per iteration, quality.

Each ``*_layout(report)`` returns ``(GraphicsLayoutWidget, width, height)``:
the app's comparison view shows the widget, and
:mod:`som_studio.qt.report_render` exports it as PNG for the report. The data
comes from the report (:mod:`som_studio.report`), already aligned; this
module only draws it.

Thread: the thread that owns the ``QApplication``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QCoreApplication, QRectF

from som_studio.comparison.words import status_text
from som_studio.i18n import _
from som_studio.qt.chart_style import (
    LIGHT,
    OKABE_ITO,
    ChartTheme,
    ReadableAxis,
    crisp,
    readable_axes,
    style_plot,
    style_widget,
)
from som_studio.report.content import Report

PALETTE = OKABE_ITO
"""Okabe-Ito colours (told apart with colour-blindness too), one per run (:data:`LIGHT`'s)."""

CHART_WIDTH = 1100
"""Width of a chart as laid out, in pixels; exported at :data:`EXPORT_SCALE` times that."""
EXPORT_SCALE = 2
EXPORT_LEGEND_PX = 24
"""Legend text size when exporting: pixel-sized rich text is not enlarged by the exporter's scale."""

SYMBOLS = ("o", "s", "t", "d", "h", "p", "t1", "x")

translate = QCoreApplication.translate


def _width(index: int) -> float:
    """Line width of the ``index``-th run: earlier runs are drawn wider, so where
    two runs give the same curve (they should, for the same SOM) both stay visible."""
    return max(1.5, 5.0 - 1.2 * index)


MIN_MARKED_COMPILE_S = 1e-3
"""Warm-ups shorter than this (nothing compiled) get no star: it would only stretch the log axis."""


def _duration_axis() -> ReadableAxis:
    """A log-scale axis whose ticks read as durations (``10 ms``), at least three of them."""
    from som_studio.comparison.words import format_seconds

    def short(s: float) -> str:
        num, unit = format_seconds(s).split(" ")
        return f"{float(num):g} {unit}"

    return ReadableAxis("left", short)


def _style_plot(plot, x_label: str = "", y_label: str = "", title: str = "", theme: ChartTheme = LIGHT) -> None:  # type: ignore[no-untyped-def]
    style_plot(plot, theme, x_label, y_label, title, points=11)


#: Legend names up to this many characters go four to a line; up to the next, three; longer ones two.
LEGEND_SHORT, LEGEND_MEDIUM = 16, 22


def _legend(  # type: ignore[no-untyped-def]
    win, plot, row: int, columns: int = 1, extra: int = 0, text_px: int = 15, theme: ChartTheme = LIGHT, most: int = 4
):
    """A legend in its own row of the layout, under the plots: never over a curve.

    Items named on ``plot`` before this call are listed, ``most`` (four) to a line, fewer where the names are
    long (a line as wide as the names needs is the chart's least width: four of "sweep sigma_end=0.5, seed=0"
    cut the chart off at the page's right edge); ``extra`` items the caller adds afterwards are counted in the
    height.
    """
    import pyqtgraph as pg

    items = [item for item in plot.listDataItems() if item.name()]
    longest = max((len(item.name()) for item in items), default=0)
    per_line = min(most, 4 if longest <= LEGEND_SHORT else 3 if longest <= LEGEND_MEDIUM else 2)
    lines = max(1, -(-(len(items) + extra) // per_line))
    legend = pg.LegendItem(labelTextColor=theme.text, labelTextSize=f"{text_px}px", colCount=per_line, horSpacing=28)
    win.addItem(legend, row=row, col=0, colspan=columns)
    win.ci.layout.setRowFixedHeight(row, 16 + (text_px + 8) * lines)
    for item in items:
        legend.addItem(item, item.name())
    return legend


#: The least height of a row of final maps in the app: its two-line title and a map still worth looking at.
MAP_ROW_MIN_PX = 200


def maps_layout(report: Report, legend_px: int = 15, fixed: bool = True, theme: ChartTheme = LIGHT):  # type: ignore[no-untyped-def]
    """(widget, width, height): the final maps side by side, for export or for the app to show.

    ``fixed`` sizes every panel equally for a picture of ``width`` x ``height``;
    otherwise the panels share whatever room the widget gets (in the app). ``theme``: the
    chart's colours (the report's :data:`~som_studio.qt.chart_style.LIGHT`, or the app's palette).
    """
    import pyqtgraph as pg

    runs = report.runs
    per_row = min(len(runs), 4)
    rows = -(-len(runs) // per_row)
    shapes = [r.final_image.shape[:2] for r in runs if r.final_image is not None] or [(1, 1)]
    aspect = max(h / w for h, w in shapes)
    panel_w = CHART_WIDTH // per_row
    panel_h = int(min(panel_w * aspect, 520)) + 56
    if fixed:
        win = pg.GraphicsLayoutWidget()
    else:
        win = _app_maps_widget(per_row, aspect)
        win.setMinimumHeight(rows * MAP_ROW_MIN_PX)
    win.setBackground(theme.background)
    for i, run in enumerate(runs):
        r = run.record
        sub = f"QE {r.qe:.4f} · TE {r.te:.3f}" if r.qe is not None and r.te is not None else status_text(r.status)
        if r.status in ("failed", "cancelled") and r.reached:  # the map it stood at, not its last planned one
            sub = _("{status}: its map at iteration {n:,}").format(status=status_text(r.status), n=r.reached)
        color = theme.colour(i)  # the run's colour in the other charts
        title = (
            f"<span style='font-size:13pt; font-weight:600; color:{color}'>{_esc(run.name)}</span><br>"
            f"<span style='font-size:10pt; color:{theme.muted}'>{_esc(sub)}</span>"
        )
        plot = win.addPlot(row=i // per_row, col=i % per_row)
        if not fixed:
            win.plots.append(plot)
        plot.setTitle(title, color=theme.text)
        plot.vb.setDefaultPadding(0.0)
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        if run.final_image is not None:
            img = pg.ImageItem(crisp(run.final_image), axisOrder="row-major")
            h, w = run.final_image.shape[:2]
            img.setRect(QRectF(0, 0, w, h))  # in the map's own pixels, whatever the enlargement
            plot.addItem(img)
            plot.invertY(True)
            plot.setAspectLocked(True)
            plot.setRange(xRange=(0, w), yRange=(0, h), padding=0.0)
        else:
            text = pg.TextItem(
                report.section("maps").empty.format(status=status_text(r.status)), color="#b3261e", anchor=(0.5, 0.5)
            )
            plot.addItem(text)
            plot.setRange(xRange=(-1, 1), yRange=(-1, 1))
    # Equal columns whatever the titles' lengths, so equal maps are drawn equally large.
    grid = win.ci.layout
    for c in range(per_row):
        if fixed:
            grid.setColumnFixedWidth(c, panel_w - 12)
        else:
            grid.setColumnStretchFactor(c, 1)
    for row in range(rows):
        if fixed:
            grid.setRowFixedHeight(row, panel_h - 12)
        else:
            grid.setRowStretchFactor(row, 100)  # the maps grow first, up to what they need...
    if not fixed:
        win.filler = win.addLabel("", row=rows, col=0)  # ...this empty row takes the height left over
        grid.setRowStretchFactor(rows, 1)
    return win, CHART_WIDTH, panel_h * rows


def _app_maps_widget(per_row: int, aspect: float):  # type: ignore[no-untyped-def]
    """The app's final maps: as many a row as their titles leave room for (a title is as wide as its text: four in
    a narrow page ran past its edge), rows no taller than their maps need (``aspect``: height over width), at the
    top; ``per_row`` a row to begin with."""
    import pyqtgraph as pg
    from shiboken6 import isValid

    class MapsWidget(pg.GraphicsLayoutWidget):  # type: ignore[misc]
        def __init__(self) -> None:
            self.plots: list = []
            self.filler: object = None
            self.per_row = per_row
            super().__init__()

        @property
        def rows(self) -> int:
            return -(-len(self.plots) // self.per_row)

        def arrange(self, cols: int) -> None:
            ci = self.ci
            for item in [*self.plots, self.filler]:
                if item is not None and item in ci.items:
                    ci.removeItem(item)
            for i, plot in enumerate(self.plots):
                ci.addItem(plot, row=i // cols, col=i % cols)
            self.per_row = cols
            grid = ci.layout
            for c in range(cols):
                grid.setColumnStretchFactor(c, 1)
            for row in range(self.rows):
                grid.setRowStretchFactor(row, 100)  # the maps grow first, up to what they need...
            self.filler = ci.addLabel("", row=self.rows, col=0)  # ...this empty row takes the height left over
            grid.setRowStretchFactor(self.rows, 1)
            self.setMinimumHeight(self.rows * MAP_ROW_MIN_PX)  # in a narrow page the maps scroll, not shrink

        def resizeEvent(self, ev):  # type: ignore[no-untyped-def]
            ci = getattr(self, "ci", None)  # not yet while pyqtgraph builds the widget
            # ...and no longer while Qt takes it down (a resize as it closes).
            if ci is not None and self.plots and all(isValid(plot.titleLabel) for plot in self.plots):
                widest = max(plot.titleLabel.minimumWidth() for plot in self.plots) + 16
                cols = max(1, min(len(self.plots), 4, int(self.width() // widest)))
                if cols != self.per_row:
                    self.arrange(cols)
                need = self.width() / self.per_row * aspect + 72  # the two-line title
                for row in range(self.rows):
                    ci.layout.setRowMaximumHeight(row, need)
            super().resizeEvent(ev)

    return MapsWidget()


def _esc(text: str) -> str:
    from html import escape

    return escape(text)


def timing_layout(report: Report, legend_px: int = 15, theme: ChartTheme = LIGHT, legend_most: int = 4):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the timing chart; ``legend_most``: the most runs its legend lists to a line."""
    import pyqtgraph as pg

    series = report.timing_series()
    sec = report.section("timing")
    win = pg.GraphicsLayoutWidget()
    win.setBackground(theme.background)
    plot = win.addPlot(axisItems={"left": _duration_axis(), "bottom": ReadableAxis("bottom", whole=True)})
    _style_plot(plot, sec.x_label, sec.y_label, theme=theme)
    plot.setLogMode(x=False, y=True)
    index = {run.name: i for i, run in enumerate(report.runs)}
    for s, compile_s in series:
        color = theme.colour(index[s.name])
        curve = pg.PlotDataItem(
            s.x, s.y, stepMode="center", pen=pg.mkPen(color, width=_width(index[s.name])), name=s.name
        )
        plot.addItem(curve)
        if compile_s and compile_s >= MIN_MARKED_COMPILE_S:
            star = pg.PlotDataItem(
                [0.0],
                [compile_s],
                pen=None,
                symbol="star",
                symbolSize=18,
                symbolBrush=pg.mkBrush(color),
                symbolPen=pg.mkPen(theme.background, width=1),
            )
            plot.addItem(star)
    marked = any(c and c >= MIN_MARKED_COMPILE_S for _, c in series)
    legend = _legend(win, plot, 1, extra=int(marked), text_px=legend_px, theme=theme, most=legend_most)
    if marked:
        marker = pg.PlotDataItem(
            [],
            [],
            pen=None,
            symbol="star",
            symbolSize=22,
            symbolBrush=pg.mkBrush(theme.muted),
            symbolPen=pg.mkPen(theme.background),
        )
        legend.addItem(marker, sec.marker)
    if not series:
        plot.addItem(pg.TextItem(sec.empty, color=theme.colour(1)))
    return win, CHART_WIDTH, 580


def quality_layout(report: Report, legend_px: int = 15, theme: ChartTheme = LIGHT, legend_most: int = 4):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the quality charts: QE and TE side by side, each on its own values' range;
    ``legend_most``: the most runs its legend lists to a line."""
    import pyqtgraph as pg

    sec = report.section("quality")
    win = pg.GraphicsLayoutWidget()
    win.setBackground(theme.background)
    index = {run.name: i for i, run in enumerate(report.runs)}
    for col, (which, label) in enumerate(zip(("qe", "te"), sec.panels)):
        axes = readable_axes(whole=("bottom",))
        plot = win.addPlot(row=0, col=col, axisItems={"left": axes["left"], "bottom": axes["bottom"]})
        _style_plot(plot, sec.x_label, label, theme=theme)
        for s in report.quality_series(which):
            color = theme.colour(index[s.name])
            i = index[s.name]
            item = pg.PlotDataItem(
                s.x,
                s.y,
                pen=pg.mkPen(color, width=_width(i)),
                symbol=SYMBOLS[i % len(SYMBOLS)],
                symbolSize=_width(i) * 3 + 2,
                symbolBrush=pg.mkBrush(color),
                symbolPen=None,
                name=s.name,
            )
            plot.addItem(item)
    _legend(win, plot, 1, columns=2, text_px=legend_px, theme=theme, most=legend_most)
    return win, CHART_WIDTH, 480


def roofline_layout(report: Report, legend_px: int = 15):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the roofline: the Inside page's chart (:func:`draw_roofline`)."""
    import pyqtgraph as pg

    from som_studio.qt.widgets.inside_view import draw_roofline

    win = pg.GraphicsLayoutWidget()
    style_widget(win, LIGHT)
    plot = win.addPlot(axisItems=readable_axes(("left", "bottom")))
    line = report.roofline()
    if line is not None:
        draw_roofline(plot, line, theme=LIGHT)
    sec = report.section("roofline")
    _style_plot(plot, sec.x_label, sec.y_label)
    return win, CHART_WIDTH, 560


LAYOUTS: dict[str, Callable[..., Any]] = {
    "maps": maps_layout,
    "timing": timing_layout,
    "quality": quality_layout,
    "roofline": roofline_layout,
}
"""The chart builders by section key: each returns (GraphicsLayoutWidget, width, height)."""
