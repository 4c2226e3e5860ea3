"""One run list: the runs dock and the comparison share it, and it outlives the window."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

WAIT_MS = 60_000  # guards against a hang on a loaded machine, not a timing assertion


def test_one_run_list_shared_by_the_runs_dock_and_the_comparison(qtbot, window):
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
