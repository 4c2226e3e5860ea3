"""The Sweep page: the form's SOM trained together, QE against TE, a clicked map kept as a run."""

from __future__ import annotations

import pytest

WAIT_MS = 120_000
pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)


def test_the_sweep_page_trains_shows_and_keeps_a_map(qtbot, window):
    view = window.findChild(type(window.sweep_view), "sweepView")
    assert view is window.sweep_view
    assert set(view.values) == {"sigma_start", "sigma_end", "seed"}  # the declared sweep settings
    window.example_action.trigger()  # iris: a data table on the form
    window.panel.iterations.setValue(5)
    window.panel.simulate.setChecked(False)
    qtbot.waitUntil(lambda: window.panel.state.runnable, timeout=WAIT_MS)
    view.values["sigma_end"].setText("0.5, 1x0.6, 2")
    window.live.progress.setValue(52)  # as a run stopped half way leaves it
    window.live.time_label.setText("elapsed  10.5 s")
    with qtbot.waitSignal(view.result_ready, timeout=WAIT_MS) as got:
        view.train_button.click()
    result = got.args[0]
    # The status bar's clock was the last run's, not the sweep's (whose page says how it goes); its bar is the
    # sweep's, full once it ends (it stood at 0 % beside "3 maps trained together").
    assert window.live.progress.value() == window.live.progress.maximum() and window.live.time_label.text() == ""
    # Nor did the Timings and Quality docks keep showing the last run beside the sweep: they say where it is.
    assert "on the Sweep page" in window.quality_plot.caption.text() and not window.quality_plot._latest
    assert window.timing_plot.caption.parts()[-1].endswith("Sweep\u00a0page")  # kept whole on a line
    # ...and only that: not also what a run would draw there.
    assert window.empty.timing.isHidden() and window.empty.quality.isHidden()
    assert len(result.rows) == 3 and len(view.points.points()) == 3
    # The frontier's points drawn last, over any other map at the same place (one covered its end point).
    drawn = [int(p.data()) for p in view.points.points()]
    front = set(result.frontier())
    assert sorted(drawn) == [0, 1, 2] and [i in front for i in drawn] == sorted(i in front for i in drawn)
    assert "3 maps trained together" in view.caption.text()
    assert not view.keep_button.isEnabled()
    view.select(1)
    assert view.picture.pixmap() is not None and not view.picture.pixmap().isNull()
    # The point shown is ringed on the plot.
    (ring,) = view.mark.points()
    assert (ring.pos().x(), ring.pos().y()) == pytest.approx((result.rows[1]["qe"], result.rows[1]["te"]))
    assert "Radius σ (end) 1x0.6" in view.detail.text()  # the field's words, as typed there
    kept_before = len(window.runs.runs)
    view.keep_button.click()
    assert len(window.runs.runs) == kept_before + 1
    kept = window.runs.runs[-1]
    assert kept.record.impl == "jax-fused-batch" and kept.record.qe == pytest.approx(result.rows[1]["qe"])
    assert kept.name == "sweep: Radius σ (end) 1x0.6"  # named as the page names it, not by its key
    qtbot.waitUntil(lambda: view.train_button.isEnabled(), timeout=WAIT_MS)


def test_the_sweep_page_refuses_what_cannot_vary(qtbot, window):
    view = window.sweep_view
    view.train_button.click()
    assert "at least one setting" in view.detail.text()
    view.values["seed"].setText("a")
    view.train_button.click()
    assert "expected a whole number" in view.detail.text()
    view.values["seed"].setText("")
    view.values["sigma_end"].setText("1, 1")  # two maps alike: refused, the setting named by its label
    view.train_button.click()
    assert "Radius σ (end)" in view.detail.text() and "sigma_end" not in view.detail.text()
    assert "jax-fused-batch's batch epochs" in view.caption.text()  # whichever implementation the form names


def test_the_sweep_page_stops_its_sweep_and_keeps_no_map(qtbot, window):
    view = window.sweep_view
    window.example_action.trigger()
    window.panel.iterations.setValue(2_000_000)  # long enough to be stopped while it trains
    window.panel.simulate.setChecked(False)
    qtbot.waitUntil(lambda: window.panel.state.runnable, timeout=WAIT_MS)
    view.values["sigma_end"].setText("0.5, 1")
    ended = []
    view.controller.run_ended.connect(lambda: ended.append(True))
    view.train_button.click()
    assert view.train_button.text() == "Stop"
    qtbot.waitUntil(lambda: view.controller.state == "running", timeout=WAIT_MS)
    view.train_button.click()
    qtbot.waitUntil(lambda: bool(ended), timeout=WAIT_MS)
    assert "The sweep was stopped" in view.detail.text() and view.result is None
    assert view.train_button.text() == "Train together" and not view.controller.busy


SWEEP_IN_THE_APP = """
import sys, time
from PySide6.QtWidgets import QApplication
app = QApplication([])
from som_studio.qt.main_window import MainWindow
from som_studio.qt.settings import Settings

win = MainWindow(Settings(sys.argv[1]))
win.show()

def wait_until(ready):
    end = time.monotonic() + 120
    while not ready():
        assert time.monotonic() < end, "timed out"
        app.processEvents()
        time.sleep(0.01)

win.example_action.trigger()
win.panel.iterations.setValue(4)
win.panel.simulate.setChecked(False)
wait_until(lambda: win.panel.state.runnable)
got = []
win.sweep_view.result_ready.connect(got.append)
win.sweep_view.values["seed"].setText("0, 1")
win.sweep_view.train_button.click()
wait_until(lambda: bool(got) and not win.sweep_view.controller.busy)
print(len(got[0].rows), "jax" in sys.modules, "jaxlib" in sys.modules)
win.close()
"""


def test_a_sweep_in_the_app_never_imports_jax_in_the_gui_process(tmp_path):
    # A process of its own: other tests of this tier import JAX here on purpose.
    import os
    import subprocess
    import sys

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    out = subprocess.run(
        [sys.executable, "-c", SWEEP_IN_THE_APP, str(tmp_path / "settings.ini")],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "False", "False"]
