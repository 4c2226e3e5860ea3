"""The comparison pipeline without Qt: runs -> a comparison -> files, and what it refuses."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from som_studio.config import DataSpec, RunConfig
from som_studio.report import EXPORTS, Exporter, ExportError, compare
from som_studio.session.session import Session
from som_studio.storage import RunRecorder
from som_studio.storage.writers import OutputError


@pytest.fixture(scope="module")
def comparison():
    base = RunConfig(width=8, height=5, data=DataSpec(samples=40), seed=1, steps=200)
    runs = []
    for impl in ("numpy-online", "jax-jit-online"):
        events = Session(base.replace(impl=impl), snapshot_interval_s=0.0, quality_points=3, quality_share=None).run()
        runs.append(RunRecorder(frames=6).feed_all(events).stored())
    return compare(runs)


def test_a_comparison_aligns_runs_and_measures_speed_ups(comparison) -> None:
    assert [r.name for r in comparison.runs] == ["numpy-online", "jax-jit-online"]
    assert comparison.baseline_of == ["numpy-online", "numpy-online"]
    values = comparison.summary_values()
    assert values[0]["speed-up"] == pytest.approx(1.0)
    ref, other = comparison.runs
    assert values[1]["speed-up"] == pytest.approx(ref.record.median_s / other.record.median_s)
    # Quality curves on one x axis (iterations), one series per run.
    qe = comparison.quality_series("qe")
    assert [s.name for s in qe] == ["numpy-online", "jax-jit-online"]
    np.testing.assert_array_equal(qe[0].x, qe[1].x)


def test_files_without_drawing(comparison, tmp_path) -> None:
    ex = Exporter(comparison)
    doc = json.loads(ex.write("json", tmp_path / "r.json").read_text())
    assert [r["impl"] for r in doc["runs"]] == ["numpy-online", "jax-jit-online"]
    assert ex.write("csv", tmp_path / "r.csv").read_text().startswith("impl,kind,status,chunk")
    assert Image.open(ex.write("animation", tmp_path / "a.gif")).n_frames >= 2
    written, missing = ex.write_maps(tmp_path / "maps", create=True)
    assert [p.name for p in written] == ["numpy-online.png", "jax-jit-online.png"] and missing == []
    # The report needs drawing: without a renderer it says so, and writes nothing.
    with pytest.raises(ExportError, match="need a renderer"):
        ex.write("html", tmp_path / "r.html")
    assert not (tmp_path / "r.html").exists()
    # Nothing is replaced unless forced; a bad animation format is named.
    with pytest.raises(OutputError, match="exists; use --force"):
        ex.write("csv", tmp_path / "r.csv")
    with pytest.raises(OutputError, match="exists; use --force"):
        ex.write_maps(tmp_path / "maps")
    with pytest.raises(ExportError, match="unknown animation format '.avi'"):
        ex.write("animation", tmp_path / "a.avi")
    assert Exporter(comparison, force=True).write_maps(tmp_path / "maps")[0]
    assert set(EXPORTS) == {"html", "pdf", "csv", "json", "maps", "animation"}


def test_the_pipelines_import_no_qt() -> None:
    code = (
        "import sys; import som_studio.comparison, som_studio.report, som_studio.picture, som_studio.storage; "
        "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
