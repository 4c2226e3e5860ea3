"""The report of a run on a table, drawn: its map-views chart in the HTML page and the PDF."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.report import Exporter, compare
from som_studio.session.session import Session
from som_studio.storage import RunRecorder

pytest.importorskip("pyqtgraph")
IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"


@pytest.mark.parametrize("topology", ["hex", "rect"])
def test_the_views_chart_is_drawn_into_the_html_and_the_pdf(topology, tmp_path) -> None:
    from PIL import Image

    from som_studio.qt.report_render import QtRenderer

    cfg = RunConfig(
        impl="numpy-batch",
        width=10,
        height=6,
        data=DataSpec(path=str(IRIS)),
        epochs=10,
        topology=topology,
        scaling="zscore",
        labels="species",
        clusters=3,
    )
    run = RunRecorder().feed_all(Session(cfg, quality_points=0).run()).stored()
    ex = Exporter(compare([run]), QtRenderer())
    charts = ex.charts()
    png = charts["views-0"]
    assert png is not None
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    # Drawn, not blank: the label colours (Okabe-Ito blue for the first species) are in it.
    assert img.shape[1] >= 2000 and (np.abs(img.astype(int) - (0, 114, 178)).sum(axis=-1) < 6).sum() > 500
    html = ex.write("html", tmp_path / "r.html").read_text()
    assert "Map views: numpy-batch (label purity" in html and "Component planes: one per feature" in html
    pdf = ex.write("pdf", tmp_path / "r.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and len(pdf) > 50_000


def test_a_wide_runs_report_draws_its_first_planes_and_says_how_many_of_how_many(tmp_path) -> None:
    """A chart per plane, each with its bar: 200 features' took 40 s to draw, 1,000 features' over ten minutes."""
    from som_studio.qt import report_views
    from som_studio.report.content import REPORT_PLANES

    rows = np.random.default_rng(0).random((40, REPORT_PLANES + 4))
    data = tmp_path / "wide.csv"
    names = [f"f{j}" for j in range(rows.shape[1])]
    data.write_text(",".join(names) + "\n" + "\n".join(",".join(f"{v:.4f}" for v in r) for r in rows) + "\n")
    cfg = RunConfig(impl="numpy-batch", width=4, height=3, data=DataSpec(path=str(data)), epochs=2)
    run = RunRecorder().feed_all(Session(cfg, quality_points=0).run()).stored()
    _top, planes = report_views._pictures(run)
    assert [title for title, _ in planes] == names[:REPORT_PLANES]
    words = " ".join(p for s in compare([run]).sections for p in s.paragraphs)
    assert f"Here the first {REPORT_PLANES} of its {REPORT_PLANES + 4} features" in words
