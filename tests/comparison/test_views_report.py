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
