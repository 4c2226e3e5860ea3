"""Drawing the report offscreen: charts as PNG, the PDF's pages, runs that failed or were cancelled."""

from __future__ import annotations

import io

import numpy as np
import pytest

pytest.importorskip("pyqtgraph")

from PIL import Image

from som_studio.qt import report_render
from som_studio.report.content import build_report
from som_studio.session.record import Chunk, RunRecord
from som_studio.storage.runfile import StoredRun


def _runs() -> list[StoredRun]:
    rng = np.random.default_rng(1)
    ok = RunRecord(
        impl="numpy-batch",
        kind="batch",
        config={"impl": "numpy-batch", "grid": [8, 5], "epochs": 6},
        status="ok",
        chunks=[Chunk(i, 1, 0.01 + 0.001 * i) for i in range(6)],
        compile_s=0.0,
        qe=0.1,
        te=0.02,
        samples=50,
        history=[{"iteration": i, "qe": 0.3 - 0.03 * i, "te": 0.1} for i in (0, 3, 6)],
    )
    cancelled = RunRecord(
        impl="jax-vmap-batch",
        kind="batch",
        config={"impl": "jax-vmap-batch", "grid": [8, 5], "epochs": 6},
        status="cancelled",
        chunks=[Chunk(0, 1, 0.004), Chunk(1, 2, 0.007)],
        compile_s=0.8,
        qe=0.2,
        te=0.05,
        samples=50,
        history=[{"iteration": 0, "qe": 0.3, "te": 0.1}],
    )
    failed = RunRecord(
        impl="jax-jit-online",
        kind="online",
        config={"impl": "jax-jit-online", "grid": [8, 5], "steps": 100},
        status="failed",
        message="memory: too big",
    )
    img = (rng.random((5, 8, 3)) * 255).astype(np.uint8)
    return [
        StoredRun(ok, name="numpy-batch", final_image=img, frames=[(0, img), (6, img)], iterations=6),
        StoredRun(cancelled, name="jax-vmap-batch", final_image=img, frames=[(0, img), (3, img)], iterations=6),
        StoredRun(failed, name="jax-jit-online"),
    ]


def test_charts_are_pngs_even_with_failed_and_cancelled_runs(qapp) -> None:
    report = build_report(_runs())
    charts = report_render.render_charts(report)
    assert set(charts) == {"maps", "timing", "quality"}
    for key, png in charts.items():
        assert png is not None
        im = Image.open(io.BytesIO(png))
        assert im.format == "PNG" and im.width == report_render.CHART_WIDTH * report_render.EXPORT_SCALE, key
        pixels = np.asarray(im.convert("RGB"))
        assert pixels.std() > 5, f"{key} chart is blank"
    # the run colours appear in the timing chart: the first run's curve was drawn
    timing = np.asarray(Image.open(io.BytesIO(charts["timing"])).convert("RGB")).reshape(-1, 3)
    blue = np.array([0x00, 0x72, 0xB2])
    assert (np.abs(timing.astype(int) - blue).sum(axis=1) < 30).sum() > 100


def test_pdf_pages(qapp) -> None:
    from pypdf import PdfReader

    report = build_report(_runs())
    pdf = report_render.pdf_bytes(report, report_render.render_charts(report))
    assert pdf.startswith(b"%PDF")
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) >= 1 + len(report.sections)
    text = " ".join(" ".join(p.extract_text().split()) for p in reader.pages)
    for run in report.runs:
        assert run.name in text
    assert "jax-jit-online failed: memory: too big" in text
    assert "was cancelled after 3 of 6 iterations" in text
    assert reader.metadata.title == report.title


def test_runs_that_recorded_their_inside_get_a_roofline_chart_and_table(qapp) -> None:
    from som_studio.core.inspection import inside
    from som_studio.report.html import report_html

    runs = _runs()
    ceiling = {"matmul_flops_per_s": 5e10, "bandwidth_bytes_per_s": 2e10, "measured_with": {"matmul": "by hand"}}
    for run, (flops, nbytes) in zip(runs[:2], ((4e8, 1e8), (8e8, 2e9))):
        static = {"xla_flops_per_iteration": flops, "xla_bytes_per_iteration": nbytes, "kernels_per_iteration": 9}
        run.record.extra["inside"] = inside.assemble(
            static, {"flops": flops, "bytes": nbytes}, ceiling=ceiling, seconds_per_iteration=run.record.median_s
        )
    report = build_report(runs)
    assert "roofline" in [s.key for s in report.sections]
    charts = report_render.render_charts(report)
    pixels = np.asarray(Image.open(io.BytesIO(charts["roofline"])).convert("RGB"))
    assert pixels.std() > 5
    page = report_html(report, charts)
    assert "FLOPs / it" in page and "by hand" in page
    assert page.count("<tr>") >= 3  # the roofline table's heading and its two runs, at least
    assert report_render.pdf_bytes(report, charts).startswith(b"%PDF")
    # Runs without it get no such section.
    for run in runs:
        run.record.extra.pop("inside", None)
    assert "roofline" not in [s.key for s in build_report(runs).sections]


@pytest.mark.parametrize("layout", ["timing", "quality"])
def test_every_report_chart_axis_shows_three_labelled_ticks_and_its_title_clears_them(qapp, layout) -> None:
    from PySide6.QtCore import QRectF

    from som_studio.qt.chart_style import tick_labels
    from som_studio.qt.report_charts import LAYOUTS

    win, width, height = LAYOUTS[layout](build_report(_runs()))
    win.resize(width, height)
    for _ in range(2):  # as the export lays it out: axes size themselves to their labels once drawn
        win.ci.setGeometry(QRectF(0, 0, width, height))
        qapp.processEvents()
        win.grab()
    plots = [item for item in win.ci.items if hasattr(item, "getAxis")]
    assert plots
    for plot in plots:
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            assert len(tick_labels(axis)) >= 3, (layout, side, tick_labels(axis))
        # The left axis is wide enough for its widest label and its title beside it.
        left = plot.getAxis("left")
        fm_width = max(left.textWidth, 1)
        assert left.width() >= fm_width + left.label.boundingRect().height()
    win.deleteLater()


@pytest.mark.parametrize("width", [340, 560, 1100])
def test_the_app_s_final_maps_wrap_to_the_width_they_get_and_none_runs_past_its_edge(qapp, width) -> None:
    """As many maps a row as their titles leave room for: four long-titled ones in a narrow page ran past it."""
    from som_studio.qt.report_charts import LAYOUTS

    runs = [r for r in _runs() if r.final_image is not None] * 3  # six maps, titles ~150 px each
    for i, run in enumerate(runs):
        run.name = f"jax-fused-batch {i}"
    from PySide6.QtWidgets import QScrollArea

    win, _, _ = LAYOUTS["maps"](build_report(runs), fixed=False)
    page = QScrollArea()  # as the app holds it
    page.setWidgetResizable(True)
    page.setWidget(win)
    page.resize(width + 20, 900)
    page.show()
    for _ in range(3):
        qapp.processEvents()
    width = win.width()
    plots = [item for item in win.ci.items if hasattr(item, "titleLabel")]
    assert len(plots) == len(runs)
    cols = {int(p.geometry().x()) for p in plots}
    assert all(p.geometry().right() <= width + 1 for p in plots), [p.geometry() for p in plots]
    assert (len(cols) == 1) == (width < 400) and len(cols) <= 4  # one column in a narrow page, more when wider
    page.close()


@pytest.mark.parametrize("top", [2, 3, 7, 40])
def test_a_count_s_colour_bar_is_ticked_at_whole_numbers(qapp, top) -> None:
    """The report's hit map: "examples per unit" ticked 0.5, 1.5 under a bar of 0 to 3."""
    import pyqtgraph as pg

    from som_studio import picture
    from som_studio.qt.chart_style import tick_labels
    from som_studio.qt.report_views import _colour_bar

    win = pg.GraphicsLayoutWidget()
    _colour_bar(win, picture.ColourBar(0.0, float(top), "examples per unit", integer=True), 0, 0)
    win.resize(260, 90)
    win.show()
    for _ in range(3):
        qapp.processEvents()
    (plot,) = [item for item in win.ci.items if hasattr(item, "getAxis")]
    labels = tick_labels(plot.getAxis("bottom"))
    assert labels and all(float(t.replace(",", "")).is_integer() for t in labels), labels
    win.close()


def test_a_stopped_runs_map_says_the_iteration_it_stood_at(qapp) -> None:
    """Its map is where it stopped (a failed user's run: its last whole map), not where it was planned to end."""
    from som_studio.qt.report_charts import LAYOUTS

    win, _, _ = LAYOUTS["maps"](build_report(_runs()))
    titles = [item.titleLabel.text for item in win.ci.items if hasattr(item, "titleLabel")]
    assert "QE 0.1000 · TE 0.020" in titles[0]
    assert "cancelled: its map at iteration 3" in titles[1]
    assert ">failed<" in titles[2]  # it trained nothing: no map to date


def test_a_pages_table_of_long_configurations_stays_within_the_page(qapp) -> None:
    """Four runs to a table, each with a long path and feature names: sized to its content, the table ran past
    the page's edge, the third run cut off and the fourth not on the page at all."""
    names = ", ".join(f"feature_number_{j}" for j in range(8))
    path = "/home/someone/projects/cytometry/panels/2026/run_a/cells.csv"
    runs = []
    for i, impl in enumerate(["numpy-batch", "jax-vmap-batch", "jax-fused-batch", "jax-jit-batch", "numpy-online"]):
        config = {"impl": impl, "grid": [8, 5], "epochs": 6, "feature_names": names, "data": {"path": path}}
        record = RunRecord(impl=impl, kind="batch", config=config, status="ok", chunks=[Chunk(0, 6, 0.01 * (i + 1))])
        runs.append(StoredRun(record, name=impl))
    doc, _layout = report_render.report_document(build_report(runs), {})
    assert doc.size().width() <= doc.pageSize().width() + 1
