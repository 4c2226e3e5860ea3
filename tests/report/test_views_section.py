"""A report's map-views section: one per run on a data file, saying what each view shows and the label purity."""

from __future__ import annotations

from pathlib import Path

import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.report.content import VIEWS_PREFIX, build_report
from som_studio.session.session import Session
from som_studio.storage import RunRecorder

IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"


@pytest.fixture(scope="module")
def runs() -> list:
    table = RunConfig(
        impl="numpy-batch",
        width=8,
        height=6,
        data=DataSpec(path=str(IRIS)),
        epochs=10,
        topology="hex",
        scaling="zscore",
        labels="species",
    )
    colours = RunConfig(impl="numpy-batch", width=8, height=6, data=DataSpec(samples=50), epochs=3)
    return [RunRecorder().feed_all(Session(c, quality_points=0).run()).stored() for c in (table, colours)]


def test_a_run_on_a_table_gets_a_views_section(runs) -> None:
    report = build_report(runs)
    views = [s for s in report.sections if s.key.startswith(VIEWS_PREFIX)]
    assert [s.key for s in views] == [f"{VIEWS_PREFIX}0"]  # the colours run has no table: no section
    sec = views[0]
    purity = runs[0].record.label_purity
    assert purity is not None and f"label purity {purity:.3f}" in sec.title
    text = " ".join(sec.paragraphs)
    assert "hexagonal lattice" in text and "setosa, versicolor, virginica" in text
    assert f"Label purity is {purity:.3f}" in text
    assert report.views_run(sec.key).name == "numpy-batch"


def test_the_summary_table_has_each_runs_label_purity(runs) -> None:
    report = build_report(runs)
    col = report.SUMMARY_HEADER.index("label purity")
    rows = report.summary_rows()
    assert rows[0][col] == f"{runs[0].record.label_purity:.3f}"
    assert rows[1][col] == "-"  # the colours run has no labels
