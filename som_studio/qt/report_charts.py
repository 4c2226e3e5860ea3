"""The report's charts as pyqtgraph widgets: final maps, time per iteration, quality.

Each ``*_layout(report)`` returns ``(GraphicsLayoutWidget, width, height)``:
the app's comparison view shows the widget, and
:mod:`som_studio.qt.report_render` exports it as PNG for the report. The data
comes from the report (:mod:`som_studio.report`), already aligned; this
module only draws it.

Thread: the thread that owns the ``QApplication``.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QCoreApplication

from som_studio.report.content import Report, status_text

PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#8C564B")
"""Okabe-Ito colours (told apart with colour-blindness too), one per run."""

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


def _duration_axis():  # type: ignore[no-untyped-def]
    """A log-scale axis whose ticks read as durations (``10 ms``), labelled at 1, 2 and 5 only."""
    import pyqtgraph as pg

    from som_studio.report.content import format_seconds

    class DurationAxis(pg.AxisItem):
        def logTickStrings(self, values, scale, spacing):  # type: ignore[no-untyped-def]
            out = []
            for v in values:
                s = 10.0 ** float(v)
                mantissa = round(s / 10.0 ** np.floor(np.log10(s)), 6) if s > 0 else 0
                out.append(_short_seconds(s) if mantissa in (1.0, 2.0, 5.0) else "")
            return out

    def _short_seconds(s: float) -> str:
        text = format_seconds(s)
        num, unit = text.split(" ")
        return f"{float(num):g} {unit}"

    return DurationAxis("left")


def _style_plot(plot, x_label: str = "", y_label: str = "", title: str = "") -> None:  # type: ignore[no-untyped-def]
    import pyqtgraph as pg

    for side in ("left", "bottom"):
        ax = plot.getAxis(side)
        ax.setPen(pg.mkPen("#4a5060"))
        ax.setTextPen(pg.mkPen("#2a2f3a"))
        ax.enableAutoSIPrefix(False)  # "(x0.001)" on an axis label reads badly; units are in the label
        ax.setStyle(tickFont=_font(11))
    if x_label:
        plot.setLabel("bottom", x_label, color="#2a2f3a", **{"font-size": "12pt"})
    if y_label:
        plot.setLabel("left", y_label, color="#2a2f3a", **{"font-size": "12pt"})
    if title:
        plot.setTitle(title, color="#1d2330", size="12pt")
    plot.showGrid(x=True, y=True, alpha=0.18)


def _font(points: float):  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QFont

    f = QFont()
    f.setPointSizeF(points)
    return f


def _legend(win, plot, row: int, columns: int = 1, extra: int = 0, text_px: int = 15):  # type: ignore[no-untyped-def]
    """A legend in its own row of the layout, under the plots: never over a curve.

    Items named on ``plot`` before this call are listed, four to a line;
    ``extra`` items the caller adds afterwards are counted in the height.
    """
    import pyqtgraph as pg

    items = [item for item in plot.listDataItems() if item.name()]
    per_line = 4
    lines = max(1, -(-(len(items) + extra) // per_line))
    legend = pg.LegendItem(labelTextColor="#1d2330", labelTextSize=f"{text_px}px", colCount=per_line, horSpacing=28)
    win.addItem(legend, row=row, col=0, colspan=columns)
    win.ci.layout.setRowFixedHeight(row, 16 + (text_px + 8) * lines)
    for item in items:
        legend.addItem(item, item.name())
    return legend


def maps_layout(report: Report, legend_px: int = 15, fixed: bool = True):  # type: ignore[no-untyped-def]
    """(widget, width, height): the final maps side by side, for export or for the app to show.

    ``fixed`` sizes every panel equally for a picture of ``width`` x ``height``;
    otherwise the panels share whatever room the widget gets (in the app).
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

        class MapsWidget(pg.GraphicsLayoutWidget):  # type: ignore[misc]
            """Rows no taller than their maps need at this width, at the top: titles stay on their maps."""

            def resizeEvent(self, ev):  # type: ignore[no-untyped-def]
                need = self.width() / per_row * aspect + 72  # the two-line title
                ci = getattr(self, "ci", None)  # not yet while pyqtgraph builds the widget
                if ci is not None:
                    for row in range(rows):
                        ci.layout.setRowMaximumHeight(row, need)
                super().resizeEvent(ev)

        win = MapsWidget()
    win.setBackground("w")
    for i, run in enumerate(runs):
        r = run.record
        sub = f"QE {r.qe:.4f} · TE {r.te:.3f}" if r.qe is not None and r.te is not None else status_text(r.status)
        color = PALETTE[i % len(PALETTE)]  # the run's colour in the other charts
        title = (
            f"<span style='font-size:13pt; font-weight:600; color:{color}'>{_esc(run.name)}</span><br>"
            f"<span style='font-size:10pt; color:#5b6475'>{_esc(sub)}</span>"
        )
        plot = win.addPlot(row=i // per_row, col=i % per_row)
        plot.setTitle(title, color="#1d2330")
        plot.vb.setDefaultPadding(0.0)
        plot.hideAxis("left")
        plot.hideAxis("bottom")
        plot.setMouseEnabled(False, False)
        plot.hideButtons()
        if run.final_image is not None:
            img = pg.ImageItem(run.final_image, axisOrder="row-major")
            plot.addItem(img)
            plot.invertY(True)
            plot.setAspectLocked(True)
            h, w = run.final_image.shape[:2]
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
        win.addLabel("", row=rows, col=0)  # ...this empty row takes the height left over
        grid.setRowStretchFactor(rows, 1)
    return win, CHART_WIDTH, panel_h * rows


def _esc(text: str) -> str:
    from html import escape

    return escape(text)


def timing_layout(report: Report, legend_px: int = 15):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the timing chart."""
    import pyqtgraph as pg

    series = report.timing_series()
    sec = report.section("timing")
    win = pg.GraphicsLayoutWidget()
    win.setBackground("w")
    plot = win.addPlot(axisItems={"left": _duration_axis()})
    _style_plot(plot, sec.x_label, sec.y_label)
    plot.getAxis("left").setWidth(110)
    plot.setLogMode(x=False, y=True)
    index = {run.name: i for i, run in enumerate(report.runs)}
    for s, compile_s in series:
        color = PALETTE[index[s.name] % len(PALETTE)]
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
                symbolPen=pg.mkPen("#ffffff", width=1),
            )
            plot.addItem(star)
    marked = any(c and c >= MIN_MARKED_COMPILE_S for _, c in series)
    legend = _legend(win, plot, 1, extra=int(marked), text_px=legend_px)
    if marked:
        marker = pg.PlotDataItem(
            [],
            [],
            pen=None,
            symbol="star",
            symbolSize=22,
            symbolBrush=pg.mkBrush("#6b7280"),
            symbolPen=pg.mkPen("#ffffff"),
        )
        legend.addItem(marker, sec.marker)
    if not series:
        plot.addItem(pg.TextItem(sec.empty, color="#b3261e"))
    return win, CHART_WIDTH, 580


def quality_layout(report: Report, legend_px: int = 15):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the quality charts."""
    import pyqtgraph as pg

    sec = report.section("quality")
    win = pg.GraphicsLayoutWidget()
    win.setBackground("w")
    index = {run.name: i for i, run in enumerate(report.runs)}
    for col, (which, label) in enumerate(zip(("qe", "te"), sec.panels)):
        plot = win.addPlot(row=0, col=col)
        _style_plot(plot, sec.x_label, label)
        for s in report.quality_series(which):
            color = PALETTE[index[s.name] % len(PALETTE)]
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
    _legend(win, plot, 1, columns=2, text_px=legend_px)
    return win, CHART_WIDTH, 480


def roofline_layout(report: Report, legend_px: int = 15):  # type: ignore[no-untyped-def]
    """(widget, width, height) of the roofline: the Inside page's chart (:func:`draw_roofline`)."""
    import pyqtgraph as pg

    from som_studio.qt.widgets.inside_view import draw_roofline

    win = pg.GraphicsLayoutWidget()
    win.setBackground("w")
    plot = win.addPlot()
    line = report.roofline()
    if line is not None:
        draw_roofline(plot, line)
    sec = report.section("roofline")
    _style_plot(plot, sec.x_label, sec.y_label)
    return win, CHART_WIDTH, 560


LAYOUTS = {"maps": maps_layout, "timing": timing_layout, "quality": quality_layout, "roofline": roofline_layout}
"""The chart builders by section key: each returns (GraphicsLayoutWidget, width, height)."""
