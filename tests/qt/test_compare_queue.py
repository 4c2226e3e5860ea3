"""The app's race starts each run once the app is done with the one before, never before it ended."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from som_studio.config import RunConfig
from som_studio.qt.comparison import queue as q


class _Controller(QObject):
    run_ended = Signal()


def test_the_next_run_waits_until_the_app_has_settled(qtbot):
    controller = _Controller()
    launched: list[str] = []
    busy = [True]  # the map view's jobs on the last run's final map
    race = q.CompareQueue(
        lambda cfg: launched.append(cfg.impl) or "", controller.run_ended, lambda: None, settled=lambda: not busy[0]
    )
    race.start([RunConfig(impl="numpy-online", steps=10), RunConfig(impl="jax-scan-online", steps=10)])
    assert launched == ["numpy-online"]
    controller.run_ended.emit()
    qtbot.wait(3 * q.SETTLE_POLL_MS)
    assert launched == ["numpy-online"]  # the app is still busy with the first run
    busy[0] = False
    qtbot.waitUntil(lambda: launched == ["numpy-online", "jax-scan-online"], timeout=5000)
    with qtbot.waitSignal(race.finished, timeout=5000) as done:
        controller.run_ended.emit()
    assert done.args == [["numpy-online", "jax-scan-online"]]


def test_an_app_that_never_settles_delays_the_next_run_only_so_long(qtbot, monkeypatch):
    monkeypatch.setattr(q, "SETTLE_MAX_S", 0.1)
    controller = _Controller()
    launched: list[str] = []
    race = q.CompareQueue(
        lambda cfg: launched.append(cfg.impl) or "", controller.run_ended, lambda: None, settled=lambda: False
    )
    race.start([RunConfig(impl="numpy-online", steps=10), RunConfig(impl="numpy-batch", epochs=2)])
    controller.run_ended.emit()
    qtbot.waitUntil(lambda: len(launched) == 2, timeout=5000)


def test_compare_is_off_while_a_run_of_the_run_panel_is_in_progress(qtbot):
    # Pressed then, it queued the ticked runs and skipped every one: "a run is already in progress".
    picker = q.ImplementationPicker()
    qtbot.addWidget(picker)
    picker.set_ticked(["numpy-batch", "jax-fused-batch"])
    assert picker.compare_button.isEnabled()
    picker.set_busy(True)
    assert not picker.compare_button.isEnabled()
    assert "in progress" in picker.compare_button.toolTip()
    picker.set_busy(False)
    assert picker.compare_button.isEnabled() and "one after another" in picker.compare_button.toolTip()
