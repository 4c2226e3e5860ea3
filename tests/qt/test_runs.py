"""One run list: the Runs page and the comparison share it, and it outlives the window."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def test_one_run_list_shared_by_the_runs_page_and_the_comparison(qtbot, window):
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("10x7")
    p.random_data.setChecked(True)
    p.samples.setValue(80)
    p.iterations.setValue(4)
    p.simulate.setChecked(False)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.start_run()
    runs = window.runs
    assert window.runs_panel.table.model() is runs
    assert window.comparison.runs_view.model() is runs
    assert runs.rowCount() == 1 and runs.records[0].status == "ok"
    run = runs.runs[0]
    # Ticking in the one list is what the comparison compares.
    assert runs.setData(runs.index(0, 0), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert [r.name for r in window.comparison.report.runs] == ["numpy-batch"]
    # Show it again: the live views take the kept run's map, timings and quality.
    window.map_view.begin(3, "something else")
    window.timing_plot.begin("online", 1)
    window.runs_panel.select(run.id)
    window.runs_panel.show_selected()
    qtbot.waitUntil(lambda: window.map_view.last_frame is not None, timeout=WAIT_MS)  # drawn off the GUI thread
    assert window.map_view.last_frame.image.shape == (7, 10, 3)
    assert len(window.timing_plot._points) == len(run.record.chunks) > 0
    assert len(window.quality_plot._qe) == len(run.record.history) > 0
    # Re-run: the kept configuration, not the form's; the second run gets a name of its own
    # (names title the comparison, pick its baseline and name exported map files).
    p.grid.setCurrentText("12x9")
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.runs_panel.rerun_selected()
    assert runs.runs[1].record.config == run.record.config and p.grid.currentText() == "10x7"
    assert [r.name for r in runs.runs] == ["numpy-batch", "numpy-batch (2)"]
    assert not runs.setData(runs.index(1, 0), "numpy-batch")
    assert "already called 'numpy-batch'" in window.runs_panel.error_dialog.text()
    window.runs_panel.error_dialog.close()
    runs.remove(runs.runs[1].id)
    window.close()
    # The list is the history: a restarted app lists the same run.
    again = MainWindow(Settings(window.settings.qsettings.fileName()))
    qtbot.addWidget(again)
    try:
        assert [r.id for r in again.runs.runs] == [run.id]
        assert again.runs_panel.table.model().rowCount() == 1
    finally:
        again.close()


def test_project_data_on_a_stored_run_shows_the_hit_map_and_names_mismatched_columns(qtbot, window, tmp_path):
    import csv

    import numpy as np

    from som_studio.qt.project_dialog import HITS_ITEM
    from som_studio.resources import resource

    iris = resource("data", "iris.csv")
    window.example_action.trigger()
    p = window.panel
    p.iterations.setValue(5)
    p.simulate.setChecked(False)
    qtbot.waitUntil(lambda: p.state.runnable, timeout=WAIT_MS)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.start_run()
    panel = window.runs_panel
    run = window.runs.runs[-1]
    assert run.record.status == "ok"
    p.iterations.setValue(2)  # another run after it: the docks describe that one now
    qtbot.waitUntil(lambda: p.state.runnable, timeout=WAIT_MS)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        assert window.start_run()
    panel.select(run.id)
    with qtbot.waitSignal(panel.projector.projected, timeout=WAIT_MS) as got:
        panel.projector.project(str(iris))  # off the GUI thread, through som_studio.trained
    result = got.args[0]
    # The run the rows went onto is the one its docks describe (they kept the other run's timings and quality).
    assert f"iteration {run.record.iterations_done:,}:" in window.quality_plot.caption.text()
    assert result.rows == 150 and result.hits.shape == (8, 12)
    view = window.map_view
    assert view.mode.currentText() == HITS_ITEM and view.last_frame.grid == (8, 12)
    assert view.inspector.legend.text() == f"examples per unit: 0 – {result.hits.max()}"
    assert "150 rows" in view.caption.text() and "150 rows" in window.status_label.text()
    assert view.iteration.text() == ""  # new rows' hits have no iteration
    assert np.array_equal(view.last_frame.image, result.frame().image)
    # A file whose columns do not match is refused, naming them; the map view keeps the last picture.
    bad = tmp_path / "bad.csv"
    bad.write_text("sepal_length,sepal_width,petal_width,extra\n5,3,0.2,1\n")
    panel.projector.project(str(bad))
    qtbot.waitUntil(lambda: panel.error_dialog is not None, timeout=WAIT_MS)
    text = panel.error_dialog.text()
    assert "missing petal_length" in text and "unexpected extra" in text
    panel.error_dialog.accept()
    # Export units…: the per-unit CSV som_studio.trained writes.
    out = panel.projector.export_units(str(tmp_path / "units.csv"))
    rows = list(csv.reader(out.open()))
    assert rows[0][:4] == ["unit", "row", "col", "hits"] and len(rows) == 97
    assert sum(int(r[3]) for r in rows[1:]) == 150


def test_stop_keeps_a_checkpoint_and_resume_goes_on_to_the_uninterrupted_map(qtbot, window):
    import numpy as np

    from som_studio.config import RunConfig
    from som_studio.session.events import Snapshot
    from som_studio.session.session import Session

    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("10x7")
    p.random_data.setChecked(True)
    p.samples.setValue(800)
    p.iterations.setValue(150)
    p.simulate.setChecked(False)
    assert window.start_run()
    qtbot.waitUntil(lambda: window.controller._so_far.iterations_done >= 3, timeout=WAIT_MS)
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.controller.stop()
    stopped = window.runs.runs[0]
    assert stopped.record.status == "cancelled"
    kept = stopped.record.extra["checkpoint"]
    assert 3 <= kept["iteration"] < 150
    window.runs_panel.select(stopped.id)
    assert window.runs_panel.resume_button.isEnabled()
    with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
        window.runs_panel.resume_button.click()
    resumed = window.runs.runs[1]
    assert resumed.record.status == "ok", resumed.record.message
    assert resumed.record.extra["resumed"]["iteration"] == kept["iteration"]
    # Listed as what it is, beside the stopped run (it read "numpy-batch (2)").
    assert resumed.name == f"{stopped.record.impl}, resumed at {kept['iteration']:,}"
    final = None
    for ev in Session(RunConfig.from_dict(stopped.record.config), snapshot_interval_s=None, quality_points=0).run():
        if isinstance(ev, Snapshot):
            final = ev.map
    np.testing.assert_array_equal(resumed.final_map, final)
    # It ended: its checkpoint went with it, and the stopped run has nothing left to resume.
    window.runs_panel.select(stopped.id)
    assert not window.runs_panel.resume_button.isEnabled()


def test_a_run_resumed_and_stopped_again_stands_where_it_reached_and_is_the_one_to_resume(qtbot, window):
    from som_studio.app_model.runs import COLUMNS, row_texts

    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("10x7")
    p.random_data.setChecked(True)
    p.samples.setValue(800)
    p.iterations.setValue(100_000)
    p.simulate.setChecked(False)
    for resume in (False, True):
        if resume:
            window.runs_panel.select(window.runs.runs[0].id)
            window.runs_panel.resume_button.click()
        else:
            assert window.start_run()
        done = window.controller._so_far.iterations_done if resume else 0
        qtbot.waitUntil(lambda d=done: window.controller._so_far.iterations_done >= d + 3, timeout=WAIT_MS)
        with qtbot.waitSignal(window.controller.run_ended, timeout=WAIT_MS):
            window.controller.stop()
    first, again = window.runs.runs
    assert first.record.status == again.record.status == "cancelled"
    start = again.record.extra["resumed"]["iteration"]
    assert start == first.record.iterations_done
    # The continuation stands at the iteration it reached, not at what it trained since it resumed.
    assert again.record.reached == start + again.record.iterations_done > first.record.reached
    column = COLUMNS.index("iterations")
    assert row_texts(again)[column] == f"{again.record.reached:,}"
    # Its checkpoint is the one both share now: the continuation goes on, the first run no longer does.
    window.runs_panel.select(first.id)
    assert not window.runs_panel.resume_button.isEnabled()
    window.runs_panel.select(again.id)
    assert window.runs_panel.resume_button.isEnabled()
