"""The app under Korean: no English left in the window, its menus, plots, dialogs and comparison.

Korean is set up as ``som-studio --lang ko`` does (:func:`som_studio.qt.i18n.apply_language`),
then every widget, action, tooltip, model heading and cell, plot title and axis, and text the
sharding view paints is read (``tests/qt/i18n_walk.py``); a word of English left fails the
test, unless it is a name, a unit or one of the configuration's own values.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog, QMessageBox

from som_studio import i18n
from som_studio.config import DataSpec, RunConfig
from som_studio.qt import dialogs
from som_studio.qt import i18n as qt_i18n
from som_studio.qt.doctor_dialog import DoctorDialog
from som_studio.session.session import Session
from som_studio.storage import RunRecorder
from tests.qt.i18n_walk import HANGUL, clipped, english_left, painted_texts, widget_texts

QT_OWN = ("QLabel", "QPushButton", "QToolButton", "QHeaderView", "QFileDialog")
pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)


@pytest.fixture
def korean(qapp, tmp_path, monkeypatch):
    """Korean for one test, chosen as ``--lang ko`` chooses it; English again after."""
    from som_studio.qt.settings import Settings

    monkeypatch.setenv(i18n.ENV_VAR, "en")  # apply_language hands the language down in it: restored after
    font = QApplication.font()
    assert qt_i18n.apply_language(qapp, "ko", Settings(tmp_path / "lang.ini")) == "ko"
    yield
    for tr in qapp.findChildren(qt_i18n.QTranslator):
        qapp.removeTranslator(tr)
        tr.deleteLater()
    QApplication.setFont(font)
    i18n.install("en")


@pytest.fixture(scope="module")
def two_runs():
    """Two small kept runs (online and batch) of one problem, for the comparison view."""
    base = RunConfig(width=9, height=6, data=DataSpec(samples=60), seed=4, steps=300)
    out = []
    for impl in ("numpy-online", "numpy-batch"):
        cfg = base.replace(impl=impl)
        if impl.endswith("batch"):
            cfg = cfg.replace(steps=None, epochs=4)
        rec = RunRecorder(frames=4)
        rec.feed_all(Session(cfg, snapshot_interval_s=0.0, quality_points=3).run())
        out.append(rec.stored())
    return out


def test_the_main_window_menus_plots_and_comparison_speak_korean(korean, window, qtbot, two_runs, monkeypatch):
    window.resize(1600, 1000)
    for run in two_runs:  # two kept runs, ticked: the comparison shows its table, notes and charts
        window.runs_panel.add_run(run, check=True)
    window.live.show_run(window.runs.runs[0])  # the live views with a run's plots and captions
    window.pages.show_page("compare")
    qtbot.wait(50)
    assert window.comparison.report is not None and window.comparison.summary.rowCount() == 2

    texts = list(widget_texts(window))
    texts += [("ShardingView (painted)", t) for t in painted_texts(window.sharding_view, monkeypatch)]
    left = english_left(texts)
    assert left == [], "English left under Korean:\n" + "\n".join(left)
    # It is Korean, not nothing: the menus, docks and plots read in Hangul.
    titles = [window.menus[k].title() for k in ("&File", "&Run", "&View", "&Help")]
    assert titles == ["파일(&F)", "실행(&R)", "보기(&V)", "도움말(&H)"]
    assert window.comparison.menu.title() == "비교(&C)"
    assert window.docks["timings"].windowTitle() == "시간"
    assert window.pages.tabText(window.pages.keys.index("runs")) == "실행 목록"
    assert window.timing_plot.plot.getAxis("left").labelText == "반복당 시간"
    assert window.quality_plot.plot.getAxis("right").labelText == "위상 오차"
    assert window.comparison.summary.headerData(0, Qt.Orientation.Horizontal) == "구현"
    assert sum(1 for _, t in texts if HANGUL.search(t)) > 150
    # View > Language is there, the language names in their own words.
    labels = [a.text() for a in window.language_menu.actions()]
    assert labels == ["시스템 설정 따르기", "English", "한국어"]
    view = window.menus["&View"].actions()
    assert view[-1] is window.language_menu.menuAction() and view[-2].isSeparator()
    pages = [window.pages.tabText(i) for i in range(window.pages.count())]
    docks = [d.windowTitle() for d in window.docks.values()]
    shown = [a.text() for a in view[:-2] if not a.isSeparator()]
    assert shown == [*pages, *docks, window.reset_layout_action.text()]


@pytest.mark.parametrize("page", ["map", "runs", "compare", "sharding"])
def test_no_korean_label_or_button_is_cut_off(korean, window, qtbot, page):
    window.resize(1280, 800)  # the smallest size the layout is held to
    window.pages.show_page(page)
    qtbot.wait(50)
    for dock in ("run", "timings", "quality"):
        assert window.docks[dock].isVisible()
    assert clipped(window) == []


def test_dialogs_speak_korean_with_qts_own_buttons(korean, window, qtbot):
    about = dialogs.show_about(window, {"backend": "cpu", "devices": [{"id": 0, "kind": "cpu"}]})
    doctor = DoctorDialog(window)  # not asked to check: no worker process
    doctor.show()
    error = dialogs.show_error(window, window.tr("Cannot start the run"), "…")
    files = QFileDialog(window, "", "", "JSON (*.json)")
    files.setOption(QFileDialog.Option.DontUseNativeDialog)
    files.show()
    try:
        for box in (about, doctor, error, files):
            # The file dialog's lists show the file system's names: its labels and buttons are checked.
            texts = [(w, t) for w, t in widget_texts(box) if box is not files or w.startswith(QT_OWN)]
            left = english_left(texts)
            assert left == [], "English left under Korean:\n" + "\n".join(left)
        assert doctor.windowTitle() == "환경 진단" and about.windowTitle() == "SOM Studio 정보"
        assert "JAX 백엔드" in about.text()
        ok = error.button(QMessageBox.StandardButton.Ok).text()
        assert HANGUL.search(ok), ok  # Qt's own button, from qtbase_ko
        close = doctor.findChild(QDialogButtonBox).buttons()[0].text()
        assert HANGUL.search(close), close
    finally:
        for box in (about, doctor, error, files):
            box.close()
        doctor.probe.shutdown()


def test_the_doctor_dialog_shows_the_report_in_the_apps_language(korean, window, qtbot):
    """The report is made in a worker process: the app hands it the language (SOM_STUDIO_LANG)."""
    window.doctor_action.trigger()
    dialog = window.doctor_dialog
    try:
        with qtbot.waitSignal(dialog.report_ready, timeout=60_000):  # a guard on a loaded machine, not a timing
            pass
        text = dialog.text.toPlainText()
        assert text.startswith("SOM Studio") and "버전" in text and "진단 결과" in text, text
        assert "Versions" not in text and "Findings" not in text
    finally:
        dialog.close()


def test_choosing_a_language_says_it_takes_effect_at_the_next_start(korean, window, qtbot):
    window.language_menu.actions_by_code["en"].trigger()
    note = window.language_note
    assert note is not None and note.text() == "다음 실행부터 SOM Studio가 English로 표시됩니다."
    assert qt_i18n.saved_language(window.settings) == "en"
    note.close()


def test_english_is_the_default(qapp, tmp_path, monkeypatch, qtbot):
    """With no --lang, no saved choice and an English or unset locale, the app speaks English."""
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    for var in ("LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", i18n.ENV_VAR):
        monkeypatch.delenv(var, raising=False)
    settings = Settings(tmp_path / "settings.ini")
    try:
        assert qt_i18n.apply_language(qapp, None, settings) == "en"
        win = MainWindow(settings)
        qtbot.addWidget(win)
        assert [win.menus[k].title() for k in ("&File", "&Run", "&View", "&Help")] == [
            "&File",
            "&Run",
            "&View",
            "&Help",
        ]
        hangul = [t for _, t in widget_texts(win) if HANGUL.search(t) and t != "한국어"]
        assert hangul == []
        win.close()
    finally:
        i18n.install("en")
