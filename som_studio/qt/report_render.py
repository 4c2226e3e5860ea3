"""Drawing a comparison report with Qt: the charts (pyqtgraph, offscreen) and the PDF.

:class:`QtRenderer` is the comparison pipeline's
:class:`~som_studio.report.Renderer`: the pipeline (Qt-free) asks it for the
charts of a report and for the PDF, and writes the files itself. The charts
are laid out by :mod:`som_studio.qt.report_charts`. It runs headless: with no ``QApplication`` yet it makes
one on Qt's ``offscreen`` platform, so ``som-studio compare`` works over SSH.
Charts are exported as PNG with pyqtgraph's ``ImageExporter`` (not SVG:
pyqtgraph's SVG export is broken on PySide6 >= 6.11). The PDF is the report's
rich text laid out by ``QTextDocument`` and printed with ``QPdfWriter``.

Thread: everything here runs on the thread that owns the ``QApplication`` (the
GUI thread in the app, the main thread in the CLI).

Run alone for a preview with made-up runs::

    python -m som_studio.qt.report_render /tmp/preview
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import numpy as np

from som_studio.i18n import _
from som_studio.qt.report_charts import (
    CHART_WIDTH,
    EXPORT_LEGEND_PX,
    EXPORT_SCALE,
    LAYOUTS,
    PALETTE,
    maps_layout,
    quality_layout,
    timing_layout,
)
from som_studio.report.content import VIEWS_PREFIX, Report


def ensure_app():  # type: ignore[no-untyped-def]
    """The running ``QApplication``, or a new one on the offscreen platform."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        # We never show a window here: draw offscreen even where a display
        # exists, so a headless run never needs one.
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        app = QApplication(["som-studio"])
    return app


def _png(image) -> bytes:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import QBuffer, QIODevice

    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buf, "PNG")
    return bytes(buf.data().data())


def _export(widget, width: int, height: int) -> bytes:  # type: ignore[no-untyped-def]
    """PNG of a ``GraphicsLayoutWidget`` laid out at ``width`` x ``height``, exported at :data:`EXPORT_SCALE`."""
    from pyqtgraph.exporters import ImageExporter
    from PySide6.QtCore import QRectF

    widget.resize(width, height)
    for _pass in range(2):
        # Axes size themselves to their tick labels when first drawn: lay out, draw, lay out again,
        # so no label is cut and no axis title lies over the labels.
        widget.ci.setGeometry(QRectF(0, 0, width, height))
        widget.scene().setSceneRect(QRectF(0, 0, width, height))
        ensure_app().processEvents()
        widget.grab()
    ensure_app().processEvents()
    exporter = ImageExporter(widget.ci)
    exporter.parameters()["width"] = width * EXPORT_SCALE
    exporter.parameters()["antialias"] = True
    image = exporter.export(toBytes=True)
    widget.deleteLater()  # drawn once; do not keep a widget per chart alive
    return _png(image)


def maps_chart(report: Report) -> bytes | None:
    """PNG of the final maps side by side, titled with their run and final QE/TE."""
    if not report.runs:
        return None
    return _export(*maps_layout(report))


def timing_chart(report: Report) -> bytes | None:
    """PNG of the seconds per iteration of every run, overlaid, log scale, compile marked with a star."""
    return _export(*timing_layout(report, legend_px=EXPORT_LEGEND_PX))


def quality_chart(report: Report) -> bytes | None:
    """PNG of QE and TE over each run's iterations, overlaid, side by side."""
    return _export(*quality_layout(report, legend_px=EXPORT_LEGEND_PX))


def roofline_chart(report: Report) -> bytes | None:
    """PNG of the roofline: achieved FLOP/s against FLOPs per byte under the device's two ceilings."""
    from som_studio.qt.report_charts import roofline_layout

    return _export(*roofline_layout(report, legend_px=EXPORT_LEGEND_PX))


def views_chart(report: Report, key: str) -> bytes | None:
    """PNG of one run's map views (section ``views-<index>``): U-matrix, hits, labels, clusters, planes."""
    from som_studio.qt.report_views import views_layout

    return _export(*views_layout(report, key))


def render_charts(report: Report) -> dict[str, bytes | None]:
    """PNG bytes of every chart section of ``report``, by section key."""
    ensure_app()
    drawers = {"maps": maps_chart, "timing": timing_chart, "quality": quality_chart, "roofline": roofline_chart}
    out: dict[str, bytes | None] = {}
    for sec in report.sections:
        if sec.key in drawers:
            out[sec.key] = drawers[sec.key](report)
        elif sec.key.startswith(VIEWS_PREFIX):
            out[sec.key] = views_chart(report, sec.key)
    return out


def report_font_families() -> list[str]:
    """The PDF's font families, first choice first.

    Under Korean the best Hangul font (:func:`som_studio.qt.i18n.hangul_family`) comes
    second, for the characters DejaVu Sans lacks: the PDF embeds it, so the Korean is text
    a reader can search and copy, whatever font Qt's own fallback would have found. Not
    first: Qt's PDF writer maps the digits and spaces of a CID-keyed CJK font (Noto Sans
    CJK) back to the wrong characters, so Latin text and numbers stay in DejaVu Sans.
    """
    from som_studio import i18n

    families = ["DejaVu Sans"]
    if i18n.current_language() == "ko":
        from som_studio.qt.i18n import hangul_family

        family = hangul_family()
        if family:
            families.append(family)
    return families


def report_document(report: Report, charts: Mapping[str, bytes | None]):  # type: ignore[no-untyped-def]
    """The report laid out for A4 landscape pages: ``(QTextDocument, QPageLayout)``."""
    from PySide6.QtCore import QMarginsF, QSizeF, QUrl
    from PySide6.QtGui import QFont, QImage, QPageLayout, QPageSize, QTextDocument

    from som_studio.report.html import report_html

    ensure_app()
    doc = QTextDocument()
    font = QFont()
    font.setFamilies(report_font_families())
    font.setPointSizeF(9.5)
    doc.setDefaultFont(font)
    doc.setDefaultStyleSheet(
        "h1 { font-size: 17pt; } h2 { font-size: 13pt; color: #1d2330; } h3 { font-size: 10pt; }"
        "th { background-color: #eef1f6; font-weight: 600; } td, th { padding: 3px; white-space: nowrap; }"
        ".meta { color: #5b6475; } .status-failed { color: #b3261e; } .status-cancelled { color: #a05a00; }"
        "footer { color: #7a8294; }"
    )
    layout = QPageLayout(
        QPageSize(QPageSize.PageSizeId.A4),
        QPageLayout.Orientation.Landscape,
        QMarginsF(14, 12, 14, 12),
        QPageLayout.Unit.Millimeter,
    )
    # Lay the document out on the page's printable area, in the document's
    # pixels (1/96 inch): print_ then scales it to the writer, with our margins
    # instead of its default 2 cm.
    area = layout.paintRect(QPageLayout.Unit.Point)
    page_w, page_h = area.width() * 96 / 72, area.height() * 96 / 72
    doc.setPageSize(QSizeF(page_w, page_h))
    doc.setDocumentMargin(0)
    widths = {}
    for key, png in charts.items():
        if png:
            image = QImage.fromData(png)
            doc.addResource(QTextDocument.ResourceType.ImageResource, QUrl(f"chart-{key}.png"), image)
            # As wide as the page, but at most under half its height: a chart that does not fit
            # where it falls moves to the next page, and leaves no more than half a page empty. A run's map
            # views (a U-matrix, hits, labels and a plane per feature) get more: at under half a page their
            # planes' titles and scales could not be read in print.
            fit_h = page_h * (0.62 if key.startswith(VIEWS_PREFIX) else 0.45)
            widths[key] = int(min(page_w * 0.98, fit_h * image.width() / max(image.height(), 1)))
    doc.setHtml(report_html(report, charts, for_qt=True, image_widths=widths))
    _keep_titles_with_charts(doc, page_h)
    _keep_last_paragraph_whole(doc, page_h)
    return doc, layout


def _keep_titles_with_charts(doc, page_h: float) -> None:  # type: ignore[no-untyped-def]
    """A title whose chart (or first line) is pushed to the next page goes with it: no title alone at a page's foot.

    The document flows from page to page; where a title and the image after it land on different
    pages, the title starts a page. Each move shifts what follows, so the check runs again.
    """
    from PySide6.QtGui import QTextCursor, QTextFormat

    layout = doc.documentLayout()
    for _move in range(32):  # at most one move per chart section; a bound against a layout that never settles
        # The layout is lazy: lay the whole document out before reading where its blocks fall.
        doc.markContentsDirty(0, doc.characterCount())
        doc.size()
        block = doc.begin()
        moved = False
        while block.isValid():
            after = block.next()
            # (A block in a table is placed within its cell: its position says nothing of the page.)
            if block.blockFormat().headingLevel() in (2, 3) and after.isValid() and not _in_table(after):
                top = layout.blockBoundingRect(block).top()
                below = layout.blockBoundingRect(after)
                # A chart goes whole with its title; text or a table at least by its first line.
                bottom = below.bottom() if _has_image(after) else below.top() + min(below.height(), 20.0)
                always = QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore
                # With a line's room to spare: the printer lays the pages out again, a little differently.
                split = int(top // page_h) != int((bottom + 24) // page_h)
                if split and block.blockFormat().pageBreakPolicy() != always:
                    fmt = block.blockFormat()
                    fmt.setPageBreakPolicy(always)
                    QTextCursor(block).setBlockFormat(fmt)
                    moved = True
                    break
            block = after
        if not moved:
            return


def _keep_last_paragraph_whole(doc, page_h: float) -> None:  # type: ignore[no-untyped-def]
    """The last paragraph (the footer: where the raw numbers are) starts a page rather than leave its last words
    alone on one."""
    from PySide6.QtGui import QTextCursor, QTextFormat

    block = doc.lastBlock()
    while block.isValid() and not block.text().strip():
        block = block.previous()
    if not block.isValid() or _in_table(block):
        return
    doc.markContentsDirty(0, doc.characterCount())
    doc.size()
    box = doc.documentLayout().blockBoundingRect(block)
    # With a line's room to spare, as for the titles: the printer lays the pages out again.
    if int(box.top() // page_h) != int((box.bottom() + 24) // page_h):
        fmt = block.blockFormat()
        fmt.setPageBreakPolicy(QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore)
        QTextCursor(block).setBlockFormat(fmt)


def _in_table(block) -> bool:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QTextCursor

    return QTextCursor(block).currentTable() is not None


def _has_image(block) -> bool:  # type: ignore[no-untyped-def]
    it = block.begin()
    while not it.atEnd():
        if it.fragment().charFormat().isImageFormat():
            return True
        it += 1
    return False


_HANGUL = re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7a3]")


def missing_glyphs(report: Report) -> str | None:
    """Why the PDF of ``report`` prints some of its text as empty boxes, or ``None``: it holds Hangul (the Korean
    interface, columns or labels named in Korean) and no installed font has it. The HTML report is drawn with
    the browser's fonts."""
    from som_studio.report.html import report_html

    ensure_app()
    if not _HANGUL.search(report_html(report, {}, for_qt=True)):
        return None
    from som_studio.qt.i18n import hangul_family

    if hangul_family() is not None:
        return None
    return _(
        "its Korean text shows as empty boxes: no font with Hangul glyphs is installed (Debian/Ubuntu: {packages}); "
        "the HTML report shows it"
    ).format(packages="fonts-noto-cjk")


def pdf_bytes(report: Report, charts: Mapping[str, bytes | None]) -> bytes:
    """The report as a PDF (A4 landscape): the headline and the summary first, then the charts, configurations
    and environment, flowing from page to page."""
    from PySide6.QtCore import QBuffer, QIODevice
    from PySide6.QtGui import QPdfWriter

    doc, layout = report_document(report, charts)
    buf = QBuffer()
    buf.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buf)
    writer.setTitle(report.title)
    writer.setCreator("SOM Studio")
    writer.setResolution(300)
    writer.setPageLayout(layout)
    doc.print_(writer)
    del writer  # finishes the PDF into the buffer
    return bytes(buf.data().data())


def _preview(folder: str) -> None:
    """Write a report on made-up runs into ``folder`` (for looking at the drawing alone)."""
    from pathlib import Path

    from som_studio.report.content import build_report
    from som_studio.report.html import report_html
    from som_studio.session.record import Chunk, ChunkLog, RunRecord
    from som_studio.storage.runfile import StoredRun

    rng = np.random.default_rng(0)
    runs: list[StoredRun] = []
    for name, per in (("numpy-batch", 0.02), ("jax-vmap-batch", 0.004)):
        chunks = [Chunk(i, 1, per * (1 + 0.1 * rng.random())) for i in range(20)]
        rec = RunRecord(
            impl=name,
            kind="batch",
            config={"impl": name, "grid": [40, 30], "epochs": 20},
            status="ok",
            compile_s=0.5 if "jax" in name else 0.0,
            chunks=ChunkLog(chunks),
            total_s=sum(c.seconds for c in chunks),
            qe=0.1,
            te=0.05,
            samples=1000,
            history=[{"iteration": i, "qe": 0.3 / (i + 1), "te": 0.5 / (i + 1)} for i in range(0, 21, 4)],
        )
        img = (rng.random((30, 40, 3)) * 255).astype(np.uint8)
        runs.append(StoredRun(rec, name=name, final_image=img, frames=[(0, img), (20, img)], iterations=20))
    report = build_report(runs)
    charts = render_charts(report)
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for key, png in charts.items():
        if png:
            (out / f"{key}.png").write_bytes(png)
    (out / "report.html").write_text(report_html(report, charts))
    (out / "report.pdf").write_bytes(pdf_bytes(report, charts))
    print(f"wrote {out}/report.html, report.pdf and the charts")


if __name__ == "__main__":
    import sys

    _preview(sys.argv[1] if len(sys.argv) > 1 else "report-preview")


class QtRenderer:
    """The comparison pipeline's renderer, drawn with Qt (offscreen when there is no ``QApplication``)."""

    def charts(self, report: Report) -> dict[str, bytes | None]:
        return render_charts(report)

    def pdf(self, report: Report, charts: Mapping[str, bytes | None]) -> bytes:
        return pdf_bytes(report, charts)


__all__ = [
    "CHART_WIDTH",
    "EXPORT_SCALE",
    "LAYOUTS",
    "PALETTE",
    "QtRenderer",
    "ensure_app",
    "maps_chart",
    "maps_layout",
    "pdf_bytes",
    "quality_chart",
    "quality_layout",
    "render_charts",
    "timing_chart",
    "timing_layout",
    "views_chart",
]
