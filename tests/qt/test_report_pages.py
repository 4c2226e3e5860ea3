"""The report as a reader gets it: the PDF's text and pages (poppler), the HTML in a real browser (Chromium).

These run the real tools and skip, saying why, where a tool is missing (``.ci/run`` installs
``poppler-utils`` and ``chromium``).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

pytest.importorskip("pyqtgraph")

from PIL import Image

from som_studio.qt import report_render
from som_studio.report.content import build_report
from som_studio.report.html import report_html
from som_studio.session.record import Chunk, RunRecord
from som_studio.storage.runfile import StoredRun

IMPLS = ("numpy-batch", "jax-vmap-batch", "jax-fused-batch", "jax-shardmap-batch", "jax-pmap-batch")


def _report():
    rng = np.random.default_rng(0)
    runs = []
    for i, impl in enumerate(IMPLS):
        per = 0.3 / (1 + 9 * i)
        rec = RunRecord(
            impl=impl,
            kind="batch",
            config={"impl": impl, "grid": [40, 30], "epochs": 20, "topology": "hex"},
            status="ok",
            compile_s=0.0 if i == 0 else 0.8,
            chunks=[Chunk(k, 1, per * (1 + 0.05 * rng.random())) for k in range(20)],
            total_s=20 * per + (0.0 if i == 0 else 0.8),
            qe=0.05,
            te=0.02,
            samples=1000,
            history=[{"iteration": k, "qe": 0.3 / (k + 1), "te": 0.05 / (k + 1)} for k in range(0, 21, 5)],
            peak_bytes=123_456_789,
        )
        img = (rng.random((30, 40, 3)) * 255).astype(np.uint8)
        runs.append(StoredRun(rec, name=impl, final_image=img, frames=[(0, img), (20, img)], iterations=20))
    return build_report(runs)


@pytest.fixture(scope="module")
def written(tmp_path_factory, qapp):
    report = _report()
    charts = report_render.render_charts(report)
    folder = tmp_path_factory.mktemp("report")
    (folder / "report.pdf").write_bytes(report_render.pdf_bytes(report, charts))
    (folder / "report.html").write_text(report_html(report, charts), encoding="utf-8")
    return report, folder


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed here (Debian: apt-get install poppler-utils / chromium)")
    return path


def test_the_pdf_opens_with_the_headline_and_breaks_no_table_word_or_number(written):
    report, folder = written
    pdftotext = _tool("pdftotext")
    first = subprocess.run(
        [pdftotext, "-layout", "-f", "1", "-l", "1", folder / "report.pdf", "-"], capture_output=True, text=True
    ).stdout
    headline = report.headline()
    assert headline and headline.startswith("jax-pmap-batch: ") and headline in " ".join(first.split())
    lines = [line.strip() for line in first.splitlines() if line.strip()]
    assert headline in lines and lines.index(headline) < lines.index("Summary")  # under the title, first
    # Every heading of the summary is whole on one line, each run's name too.
    for label in report.summary_labels()[1:]:
        assert any(re.match(rf"{re.escape(label)}(\s|$)", line) for line in lines), label
    header = next(line for line in lines if line.startswith(report.summary_labels()[0]))
    assert header.split()[1:] == list(IMPLS)
    # No number parted from its unit ("31.34 / ms") and no line that is a unit alone.
    assert not any(re.fullmatch(r"(ms|µs|s|MiB|x|it)", w) for line in lines for w in line.split()[:1])
    assert re.search(r"\d+\.\d\d ms", first)


def test_no_pdf_page_is_more_than_half_empty_before_the_last(written):
    _, folder = written
    pdftoppm = _tool("pdftoppm")
    subprocess.run([pdftoppm, "-r", "30", "-png", folder / "report.pdf", folder / "page"], check=True)
    pages = sorted(folder.glob("page-*.png"))
    assert len(pages) >= 3
    for page in pages[:-1]:
        grey = np.asarray(Image.open(page).convert("L"))
        inked = np.nonzero((grey < 235).any(axis=1))[0]
        # The lowest ink on the page, as a share of its height: at least half of it is used.
        assert inked.max() / grey.shape[0] > 0.5, page.name


def test_chromium_renders_the_html_report(written, tmp_path):
    _, folder = written
    chromium = shutil.which("chromium") or shutil.which("chromium-headless-shell") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("Chromium is not installed here (Debian: apt-get install chromium)")
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1280,1600",
            f"--screenshot={shot}",
            (folder / "report.html").as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    png = np.asarray(Image.open(shot).convert("RGB"))
    assert png.shape[:2] == (1600, 1280)
    # A page was drawn (not a blank or an error page): the charts' colours are there.
    assert len(np.unique(png.reshape(-1, 3), axis=0)) > 500
    # The headline's blue, right under the title, in the upper part of the page.
    blue = (np.abs(png[:300].astype(int) - (11, 79, 138)).sum(axis=-1) < 40).sum()
    assert blue > 200


def test_a_long_text_cell_wraps_inside_the_pdf_page(tmp_path, qapp):
    """A configuration's list of feature names is longer than a page is wide: its cell wraps, every name on
    the page (Qt cuts a cell that does not wrap at the page's edge)."""
    pdftotext = _tool("pdftotext")
    names = [f"feature_number_{k}" for k in range(16)]
    rec = RunRecord(
        impl="numpy-batch",
        kind="batch",
        config={"impl": "numpy-batch", "grid": [10, 7], "epochs": 2, "feature_names": names},
        status="ok",
        chunks=[Chunk(0, 1, 0.01), Chunk(1, 1, 0.01)],
        total_s=0.02,
        samples=100,
    )
    report = build_report([StoredRun(rec, name="run")])
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(report_render.pdf_bytes(report, report_render.render_charts(report)))
    text = subprocess.run([pdftotext, pdf, "-"], capture_output=True, text=True).stdout
    assert all(name in text for name in names)


def test_the_footer_starts_a_page_rather_than_leave_its_last_words_alone(qapp):
    from PySide6.QtCore import QSizeF
    from PySide6.QtGui import QTextDocument

    page_h = 300.0
    footer = "SOM Studio. " + "The raw numbers behind this report are in the JSON file and the CSV file. " * 5

    def laid_out(filler: int):
        doc = QTextDocument()
        doc.setPageSize(QSizeF(400, page_h))
        doc.setDocumentMargin(0)
        doc.setHtml("".join(f"<p>line {k}</p>" for k in range(filler)) + f"<footer>{footer}</footer>")
        doc.size()
        return doc

    def pages(doc) -> tuple[int, int]:
        box = doc.documentLayout().blockBoundingRect(doc.lastBlock())
        return int(box.top() // page_h), int((box.bottom() - 1) // page_h)

    # The shortest report whose footer the page's end splits.
    doc = next(d for d in map(laid_out, range(40)) if len(set(pages(d))) == 2)
    report_render._keep_last_paragraph_whole(doc, page_h)
    doc.size()
    first, last = pages(doc)
    assert first == last == 1
