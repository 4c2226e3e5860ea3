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
    with qtbot.waitSignal(view.result_ready, timeout=WAIT_MS) as got:
        view.train_button.click()
    result = got.args[0]
    assert len(result.rows) == 3 and len(view.points.points()) == 3
    assert "3 maps trained together" in view.caption.text()
    assert not view.keep_button.isEnabled()
    view.select(1)
    assert view.picture.pixmap() is not None and not view.picture.pixmap().isNull()
    assert "sigma_end [1.0, 0.6]" in view.detail.text()
    kept_before = len(window.runs.runs)
    view.keep_button.click()
    assert len(window.runs.runs) == kept_before + 1
    kept = window.runs.runs[-1]
    assert kept.record.impl == "jax-fused-batch" and kept.record.qe == pytest.approx(result.rows[1]["qe"])
    qtbot.waitUntil(lambda: view.train_button.isEnabled(), timeout=WAIT_MS)


def test_the_sweep_page_refuses_what_cannot_vary(qtbot, window):
    view = window.sweep_view
    view.train_button.click()
    assert "at least one setting" in view.detail.text()
    view.values["seed"].setText("a")
    view.train_button.click()
    assert "expected a whole number" in view.detail.text()
