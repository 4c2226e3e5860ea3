"""A report's map-views chart: U-matrix, hit map, label overlay, clusters and every component plane of one run.

The pictures come from the picture pipeline (:mod:`som_studio.picture`), the
same renderers and colour maps as the app's map view, drawn as hexagons on a
hex map; this module lays them out with their titles and legends (colour bars
and swatches, which the pipeline gives as data) for the report's PNG and PDF.

Thread: the thread that owns the ``QApplication``.
"""

from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import QCoreApplication

from som_studio import picture
from som_studio.i18n import _
from som_studio.report.content import REPORT_PLANES, Report
from som_studio.storage.runfile import StoredRun

CHART_WIDTH = 1100
PANEL_TARGET_PX = 360
"""A map picture's longer side in the report, in pixels (pictures are drawn at a whole number of pixels per unit)."""
BAR_HEIGHT = 58
TOP_COLUMNS = 4
PLANE_COLUMNS = 4

translate = QCoreApplication.translate


def _map_plot(win, drawn: picture.Drawn, title: str, row: int, col: int):  # type: ignore[no-untyped-def]
    import pyqtgraph as pg
    from PySide6.QtCore import QRectF

    from som_studio.qt.chart_style import crisp
    from som_studio.qt.widgets.map_cells import CellsItem

    image = drawn.image

    plot = win.addPlot(row=row, col=col)
    plot.setTitle(f"<span style='font-size:12pt; font-weight:600; color:#1d2330'>{escape(title)}</span>")
    plot.hideAxis("left")
    plot.hideAxis("bottom")
    plot.setMouseEnabled(False, False)
    plot.hideButtons()
    plot.vb.setDefaultPadding(0.0)
    h, w = image.shape[:2]
    item = pg.ImageItem(crisp(picture.coloured(image), 600), axisOrder="row-major")
    item.setRect(QRectF(0, 0, w, h))  # in the picture's own pixels, whatever the enlargement
    plot.addItem(item)
    r = drawn.raster
    if r is not None:
        # The cells drawn as shapes over the picture, as the app draws them: outlines where cells are
        # large enough on the page, the map's outside in the page's white.
        cells = CellsItem()
        cells.setZValue(5)
        grid = (r.height, r.width)
        cells.set_frame(picture.MapFrame(0, picture.ViewChoice(), image, grid=grid, topology=r.topology, scale=r.scale))
        plot.addItem(cells)
    plot.invertY(True)
    plot.setAspectLocked(True)
    plot.setRange(xRange=(0, w), yRange=(0, h), padding=0.0)
    return plot


def _colour_bar(win, bar: picture.ColourBar, row: int, col: int) -> int:  # type: ignore[no-untyped-def]
    """The bar's colours from its low end to its high end, over an axis in the bar's values."""
    import pyqtgraph as pg
    from PySide6.QtCore import QRectF

    from som_studio.qt.chart_style import ReadableAxis

    # Counts (a hit map's examples per unit) ticked at whole numbers: pyqtgraph's own axis put 0.5 and 1.5 there.
    axes = {"bottom": ReadableAxis("bottom", whole=True)} if bar.integer else None
    plot = win.addPlot(row=row, col=col, axisItems=axes)
    plot.hideAxis("left")
    plot.setMouseEnabled(False, False)
    plot.hideButtons()
    ax = plot.getAxis("bottom")
    ax.setPen(pg.mkPen("#4a5060"))
    ax.setTextPen(pg.mkPen("#2a2f3a"))
    ax.enableAutoSIPrefix(False)
    plot.setLabel("bottom", escape(bar.label), color="#2a2f3a", **{"font-size": "10pt"})
    lo, hi = bar.lo, bar.hi if bar.hi > bar.lo else bar.lo + 1.0
    gradient = pg.ImageItem(np.ascontiguousarray(bar.colours[None, :, :]), axisOrder="row-major")
    gradient.setRect(QRectF(lo, 0.0, hi - lo, 1.0))
    plot.addItem(gradient)
    plot.setRange(xRange=(lo, hi), yRange=(0, 1), padding=0.0)
    return BAR_HEIGHT


def _swatches(win, sw: picture.Swatches, row: int, col: int) -> int:  # type: ignore[no-untyped-def]
    """A legend of categories as coloured squares and names, with the swatches' note under it."""
    items = [
        f"<span style='color:#{r:02x}{g:02x}{b:02x}; font-size:14pt'>&#9632;</span> {escape(name)}"
        for name, (r, g, b) in sw.entries[:16]
    ]
    # Three to a line, so a long legend does not widen its column past its map's.
    entries = "<br>".join(" &nbsp; ".join(items[i : i + 3]) for i in range(0, len(items), 3))
    more = f" … (+{len(sw.entries) - 16})" if len(sw.entries) > 16 else ""
    note = f"<br><b>{escape(sw.note)}</b>" if sw.note else ""
    win.addLabel(f"<span style='font-size:10pt; color:#1d2330'>{entries}{more}{note}</span>", row=row, col=col)
    lines = -(-min(len(sw.entries), 16) // 3) + bool(sw.note)
    return max(BAR_HEIGHT, 12 + 24 * lines)


def _legend(win, legend: picture.Legend | None, row: int, col: int) -> int:  # type: ignore[no-untyped-def]
    """Draw ``legend`` in cell (``row``, ``col``); the height it needs."""
    if isinstance(legend, picture.ColourBar):
        return _colour_bar(win, legend, row, col)
    if isinstance(legend, picture.Swatches):
        return _swatches(win, legend, row, col)
    win.addLabel("", row=row, col=col)
    return BAR_HEIGHT


def views_layout(report: Report, key: str):  # type: ignore[no-untyped-def]
    """(widget, width, height): run ``key``'s map views (section ``views-<index>``)."""
    import pyqtgraph as pg

    run = report.views_run(key)
    return run_views_layout(run, pg.GraphicsLayoutWidget())


def _pictures(run: StoredRun) -> tuple[list[tuple[str, picture.Drawn]], list[tuple[str, picture.Drawn]]]:
    """(the map-wide views, one component plane per feature, the first :data:`REPORT_PLANES`), drawn at the report's
    scale."""
    weights = np.asarray(run.final_map, dtype=np.float64)
    h, w, d = weights.shape
    views = picture.MapViews.from_record(run.record)
    lo, hi = picture.colour_range(weights)
    scale = picture.report_scale(h, w, PANEL_TARGET_PX)
    top = []
    for kind in picture.REPORT_VIEWS:
        if kind.report and picture.available(kind.mode, d, views):
            drawn = picture.draw(weights, picture.ViewChoice(kind.mode), lo, hi, views, scale)
            top.append((_(kind.report), drawn))
    plane_scale = picture.report_scale(h, w, PANEL_TARGET_PX * 3 // 4)
    planes = [
        (
            views.feature_name(k),
            picture.draw(weights, picture.ViewChoice(picture.COMPONENT, k), lo, hi, views, plane_scale),
        )
        for k in range(min(d, REPORT_PLANES))  # the section's text says how many of how many
    ]
    return top, planes


def run_views_layout(run: StoredRun, win):  # type: ignore[no-untyped-def]
    """Lay ``run``'s views out on ``win`` (a ``GraphicsLayoutWidget``): (win, width, height)."""
    win.setBackground("w")
    top, planes = _pictures(run)
    grid = win.ci.layout
    cols = max(TOP_COLUMNS, PLANE_COLUMNS)
    col_w = CHART_WIDTH // cols
    height = 0
    row = 0
    for start in range(0, len(top), TOP_COLUMNS):
        chunk = top[start : start + TOP_COLUMNS]
        aspect = max(d.image.shape[0] / d.image.shape[1] for _, d in chunk)
        panel_h = int(col_w * aspect) + 40
        legend_h = BAR_HEIGHT
        for c, (title, drawn) in enumerate(chunk):
            _map_plot(win, drawn, title, row, c)
            legend_h = max(legend_h, _legend(win, drawn.legend, row + 1, c))
        grid.setRowFixedHeight(row, panel_h)
        grid.setRowFixedHeight(row + 1, legend_h)
        height += panel_h + legend_h + 12
        row += 2
    planes_title = translate("ReportViews", "Component planes")
    win.addLabel(
        f"<span style='font-size:13pt; font-weight:600; color:#1d2330'>{planes_title}</span>",
        row=row,
        col=0,
        colspan=cols,
    )
    grid.setRowFixedHeight(row, 30)
    height += 36
    row += 1
    for start in range(0, len(planes), PLANE_COLUMNS):
        chunk = planes[start : start + PLANE_COLUMNS]
        aspect = max(d.image.shape[0] / d.image.shape[1] for _, d in chunk)
        panel_h = int(col_w * aspect) + 40
        legend_h = BAR_HEIGHT
        for c, (title, drawn) in enumerate(chunk):
            _map_plot(win, drawn, title, row, c)
            legend_h = max(legend_h, _legend(win, drawn.legend, row + 1, c))
        grid.setRowFixedHeight(row, panel_h)
        grid.setRowFixedHeight(row + 1, legend_h)
        height += panel_h + legend_h + 12
        row += 2
    for c in range(cols):
        grid.setColumnFixedWidth(c, col_w - 12)
    return win, CHART_WIDTH, height
