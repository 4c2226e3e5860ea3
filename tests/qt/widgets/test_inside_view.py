"""The Inside page: the roofline of the ticked runs, its table, the program folded and searchable."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import pyqtgraph as pg

from som_studio.core.inspection import inside
from som_studio.qt.widgets.inside_view import InsideView, draw_roofline
from som_studio.report.inside import Roofline, RooflinePoint
from som_studio.session.record import RunRecord
from som_studio.storage import StoredRun

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

HLO = """HloModule jit_chunk

%body (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %f = f32[4]{0} fusion(%p), kind=kLoop, calls=%fused
}

%fused (q: f32[4]) -> f32[4] {
  %q = f32[4]{0} parameter(0)
  ROOT %m = f32[4]{0} multiply(%q, %q)
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0)
  ROOT %w = f32[4]{0} while(%a), condition=%c, body=%body
}
"""
CEILING = {"matmul_flops_per_s": 5e10, "bandwidth_bytes_per_s": 2e10, "measured_with": {"matmul": "by hand"}}


def _record(name: str, flops: float, nbytes: float, seconds: float, kernels: float = 10) -> RunRecord:
    static = {"xla_flops_per_iteration": flops, "xla_bytes_per_iteration": nbytes, "kernels_per_iteration": kernels}
    got = inside.assemble(static, {"flops": flops, "bytes": nbytes}, ceiling=CEILING, seconds_per_iteration=seconds)
    got["programs"] = {"chunk": {"hlo": HLO, "jaxpr": "{ lambda ; a:f32[4]. let b = mul a a in (b,) }"}}
    return RunRecord(impl=name, kind="batch", config={}, extra={"inside": got})


def test_the_empty_page_says_how_runs_get_there(qtbot):
    view = InsideView()
    qtbot.addWidget(view)
    view.set_runs(["numpy-batch"], [RunRecord(impl="numpy-batch", kind="batch", config={})])
    assert view.stack.currentWidget() is view.empty
    assert "--inside" in view.empty.text()


def test_a_point_per_run_a_row_per_run_and_what_bounds_it(qtbot):
    view = InsideView()
    qtbot.addWidget(view)
    runs = [_record("fast", 4e8, 1e8, 0.01), _record("memory", 1e8, 1e9, 0.1), _record("tiny", 1e4, 1e5, 4e-4, 40)]
    view.set_runs([r.impl for r in runs], runs)
    view.resize(1000, 700)
    view.show()
    assert view.stack.currentIndex() == 1
    assert view.model.rowCount() == 3
    bound = {view.model.rows[i][0]: view.model.rows[i][8] for i in range(3)}
    assert bound == {"fast": "compute", "memory": "memory", "tiny": "launch overhead"}
    # Every run a point: the scatter items carry one point each, plus the ceilings' line.
    points = [i for i in view.plot.getPlotItem().listDataItems() if i.opts.get("symbol")]
    assert len(points) == 3
    assert "by hand" in view.notes.text()


def test_the_program_is_folded_by_computation_and_searchable(qtbot):
    view = InsideView()
    qtbot.addWidget(view)
    run = _record("fast", 4e8, 1e8, 0.01)
    view.set_runs(["fast"], [run])
    assert view.which.count() == 2  # the HLO and the jaxpr
    tree = view.program.tree
    heads = [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())]
    assert any(h.startswith("%body") for h in heads) and any(h.startswith("ENTRY") for h in heads)
    view.program.search.setText("multiply")
    shown = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount()) if not tree.topLevelItem(i).isHidden()]
    assert [s.text(0).split()[0] for s in shown] == ["%fused"]
    assert "multiply" in tree.currentItem().text(0)
    view.program.search.setText("")
    assert all(not tree.topLevelItem(i).isHidden() for i in range(tree.topLevelItemCount()))


def test_the_window_shows_the_ticked_runs_on_its_inside_page(window):
    view = window.findChild(InsideView, "insideView")
    assert view is not None
    kept = window.runs_panel.add_run(StoredRun(record=_record("jax-fused-batch", 4e8, 1e8, 0.01)), check=True)
    window.runs.set_checked({kept.id})
    assert view.model.rowCount() == 1 and view.model.rows[0][0] == kept.name


def test_a_run_made_in_the_app_records_its_inside_when_asked(window, qtbot, tmp_path, monkeypatch):
    """Ticked, the next run's worker records extra.inside with its programs; the run arrives ticked, so the
    page shows it at once."""
    from tests.qt.test_app import WAIT_MS, configure

    monkeypatch.setenv("SOM_STUDIO_CACHE_DIR", str(tmp_path / "cache"))  # the worker inherits it
    view = window.findChild(InsideView, "insideView")
    view.record.setChecked(True)
    configure(window, impl="jax-fused-batch", iterations=3)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.start_run()
    qtbot.waitUntil(lambda: len(window.runs.runs) == 1, timeout=WAIT_MS)
    run = window.runs.runs[0]
    got = run.record.extra["inside"]
    assert got["flops_per_iteration"] > 0 and got["ceilings"]["matmul_flops_per_s"] > 0
    assert [r.id for r in window.runs.checked_runs()] == [run.id]  # asked for: shown without a tick of one's own
    assert view.model.rowCount() == 1
    assert view.which.count() == 3  # its optimized HLO, StableHLO and jaxpr
    assert view.program.tree.topLevelItemCount() > 3


def test_the_page_links_each_rungs_source(qtbot):
    from som_studio.core.impls import registry

    view = InsideView()
    qtbot.addWidget(view)
    runs = [_record("fast", 4e8, 1e8, 0.01)]
    runs[0].impl = "jax-fused-batch"
    view.set_runs(["fast"], runs)
    source = registry.get("jax-fused-batch").source
    assert source is not None and source.endswith("jax_fused.py")
    assert Path(source).as_uri() in view.sources.text() and view.sources.openExternalLinks()


def test_recording_the_inside_is_remembered_across_restarts(window, qtbot, tmp_path):
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    assert not window.inside_view.record.isChecked()  # off until asked: it compiles once more
    window.inside_view.record.setChecked(True)
    window.save_settings()
    again = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(again)
    assert again.inside_view.record.isChecked() and again.inside_view.session_options()["inside"]
    again.close()


def test_every_points_name_lies_inside_the_plot(qtbot):
    # A point near the right edge was named to its right, and the plot's edge cut its name ("numpy-batc").
    points = (
        RooflinePoint("jax-vmap-batch", 0.5, 2e9, None, None),
        RooflinePoint("numpy-batch-named-long", 900.0, 0.9e9, None, None),
    )
    line = Roofline(points, 437e9, 20e9, ("jnp.dot",), "cpu")
    plot = pg.PlotWidget()
    qtbot.addWidget(plot)
    plot.resize(460, 500)
    plot.show()
    qtbot.waitExposed(plot)
    draw_roofline(plot, line)
    qtbot.wait(50)
    view = plot.getPlotItem().vb
    shown = view.sceneBoundingRect()
    names = [i for i in view.addedItems if isinstance(i, pg.TextItem) and i.toPlainText() in {p.name for p in points}]
    assert len(names) == 2
    for item in names:
        box = item.sceneBoundingRect()
        assert shown.left() <= box.left() and box.right() <= shown.right(), item.toPlainText()
