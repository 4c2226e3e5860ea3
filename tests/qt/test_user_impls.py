"""File > Add implementation…: a user's file in the app, remembered across restarts, refused in a dialog."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QFileDialog, QMessageBox

from som_studio.core.impls import registry
from som_studio.qt.main_window import MainWindow
from som_studio.qt.settings import Settings
from tests.core.test_user_impl import GOOD, RUN_LOOP
from tests.qt.test_app import WAIT_MS, configure, run_and_wait

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

CLOSE = "    def close(self):\n        pass\n"


def test_add_implementation_runs_it_and_remembers_it(qtbot, window, tmp_path, monkeypatch, forget):
    path = tmp_path / "good.py"
    path.write_text(GOOD)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    (item,) = [a for a in window.menus["&File"].actions() if a is window.add_impl_action]
    item.trigger()
    assert window.panel.impl.findData("good.py:Good") >= 0
    assert window.form.fields.impl == "good.py:Good"
    assert "good.py:Good" in [
        window.comparison.impl_list.item(i).text() for i in range(window.comparison.impl_list.count())
    ]
    configure(window, impl="good.py:Good", grid="8x6", samples=60, iterations=3)
    run_and_wait(qtbot, window)
    record = window.runs.records[-1]
    assert record.status == "ok", record.message
    assert record.extra["agreement"]["agrees"] is True and record.extra["user_impl"]["class"] == "Good"
    assert "agrees with numpy-batch" in window.status_label.text()
    window.save_settings()

    # Edited on disk: loaded again (the description is the class's docstring).
    path.write_text(GOOD.replace("Vectorised NumPy batch SOM.", "Edited."))
    qtbot.waitUntil(lambda: registry.get("good.py:Good").description == "Edited.", timeout=WAIT_MS)

    # The next start loads it again, from the settings.
    registry.unregister("good.py:Good")
    again = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(again)
    assert again.panel.impl.findData("good.py:Good") >= 0
    assert again.user_impls.specs == [f"{path.resolve()}:Good"]
    again.close()


def test_a_broken_file_is_refused_in_a_dialog_and_the_app_goes_on(qtbot, window, tmp_path, monkeypatch, forget):
    path = tmp_path / "broken.py"
    path.write_text("class Broken:\n    kind = 'batch'\n")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.add_impl_action.trigger()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox) is not None, timeout=WAIT_MS)
    box = window.findChild(QMessageBox)
    assert f"{path.resolve()}: Broken lacks the method(s) warmup, run, get_map, close" in box.text()
    assert window.panel.impl.findData("broken.py:Broken") < 0
    box.close()
    configure(window)  # the app goes on
    run_and_wait(qtbot, window)
    assert window.runs.records[-1].status == "ok"


@pytest.mark.parametrize(
    ("text", "said"),
    [("class A:\n    def __init__(self, problem)\n        pass\n", "SyntaxError"), ("x = 1\n", "defines no")],
)
def test_a_file_without_a_class_to_offer_is_refused_saying_why(
    qtbot, window, tmp_path, monkeypatch, forget, text, said
):
    # A syntax error or no class at all: the app asked for a class from an empty list and said nothing.
    path = tmp_path / "mine.py"
    path.write_text(text)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.add_impl_action.trigger()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox) is not None, timeout=WAIT_MS)
    box = window.findChild(QMessageBox)
    assert said in box.text() or said in box.detailedText()
    box.close()


def test_an_error_in_the_users_run_is_shown_with_their_lines_and_the_app_goes_on(qtbot, window, tmp_path, forget):
    # Passes the checks (a few epochs), fails in the app's run past them: in the worker, with the user's lines.
    # Its close takes a while, as releasing a device's resources may: the worker outlives the failure's event.
    path = tmp_path / "late.py"
    late = GOOD.replace(RUN_LOOP, "        assert first < 12, 'too far'\n" + RUN_LOOP)
    assert CLOSE in late
    path.write_text(late.replace(CLOSE, "    def close(self):\n        import time\n\n        time.sleep(0.5)\n"))
    assert window.user_impls.add(f"{path}:Good") is not None
    configure(window, impl="late.py:Good", grid="8x6", samples=60, iterations=40)
    with qtbot.waitSignal(window.controller.run_failed, timeout=WAIT_MS):
        assert window.start_run()
    qtbot.waitUntil(lambda: window.findChild(QMessageBox) is not None, timeout=WAIT_MS)
    assert not window.controller.busy  # told once its worker is gone: the next run can start at once
    shown = window.findChild(QMessageBox).text() + window.findChild(QMessageBox).detailedText()
    assert "late.py" in shown and "assert first < 12" in shown and "AssertionError: too far" in shown
    assert "som_studio" not in shown
    window.findChild(QMessageBox).close()
    configure(window)  # the app goes on
    run_and_wait(qtbot, window)
    assert window.runs.records[-1].status == "ok"
