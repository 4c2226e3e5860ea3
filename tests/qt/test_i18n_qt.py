"""Qt's half of Korean: Qt's own and the app's translators, the Language menu, the font."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from som_studio import i18n
from som_studio.qt import i18n as qt_i18n
from som_studio.qt.settings import Settings


@pytest.fixture
def korean(qapp):
    """Korean translators installed for one test, removed after (the other tests read English)."""
    installed = qt_i18n.install_translators(qapp, "ko")
    yield installed
    for tr in installed:
        qapp.removeTranslator(tr)
    i18n.install("en")


def test_qt_and_app_catalogues_load_and_translate(korean, qtbot):
    assert [t.objectName() for t in korean] == ["qtbase_ko", "som_studio_ko"]
    assert QCoreApplication.translate("LanguageMenu", "Follow the system") == "시스템 설정 따르기"
    # Qt's own buttons come from qtbase_ko.
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
    qtbot.addWidget(box)
    assert box.button(QDialogButtonBox.StandardButton.Cancel).text() not in ("Cancel", "&Cancel")
    assert qt_i18n.restart_note("ko") == "다음 실행부터 SOM Studio가 한국어로 표시됩니다."


def test_english_installs_nothing(qapp):
    assert qt_i18n.install_translators(qapp, "en") == []
    assert QCoreApplication.translate("LanguageMenu", "Follow the system") == "Follow the system"


def test_the_language_menu_remembers_the_choice(qtbot, tmp_path):
    settings = Settings(tmp_path / "settings.ini")
    assert qt_i18n.saved_language(settings) == ""
    menu = qt_i18n.LanguageMenu(settings)
    qtbot.addWidget(menu)
    assert menu.actions_by_code[""].isChecked()
    assert [a.text() for a in menu.actions()] == ["Follow the system", "English", "한국어"]
    with qtbot.waitSignal(menu.language_chosen) as blocker:
        menu.actions_by_code["ko"].trigger()
    assert blocker.args == ["ko"]
    assert qt_i18n.saved_language(Settings(tmp_path / "settings.ini")) == "ko"
    again = qt_i18n.LanguageMenu(settings)
    qtbot.addWidget(again)
    assert again.actions_by_code["ko"].isChecked() and not again.actions_by_code[""].isChecked()


def test_a_language_chosen_in_a_newer_versions_settings_file_is_not_saved_and_the_note_says_so(qtbot, tmp_path):
    path = tmp_path / "settings.ini"
    path.write_text("[settings]\nversion=999\n")
    settings = Settings(path)
    menu = qt_i18n.LanguageMenu(settings)
    qtbot.addWidget(menu)
    menu.actions_by_code["ko"].trigger()
    assert menu.saved is False
    assert path.read_text() == "[settings]\nversion=999\n"  # the newer file is left as it is
    note = qt_i18n.restart_note("ko", menu.saved)
    assert "could not be remembered" in note and "--lang ko" in note
    assert "next start" in qt_i18n.restart_note("ko", True)


def test_apply_language_follows_flag_then_menu_then_environment(qapp, tmp_path, monkeypatch):
    settings = Settings(tmp_path / "settings.ini")
    monkeypatch.setenv("SOM_STUDIO_LANG", "en")
    font = QApplication.font()
    try:
        qt_i18n.set_saved_language(settings, "ko")
        assert qt_i18n.apply_language(qapp, None, settings) == "ko"  # the menu over the environment
        assert i18n.current_language() == "ko"
        assert qt_i18n.apply_language(qapp, "en", settings) == "en"  # --lang over the menu
        qt_i18n.set_saved_language(settings, "")
        assert qt_i18n.apply_language(qapp, None, settings) == "en"  # then the environment
    finally:
        for tr in qapp.findChildren(qt_i18n.QTranslator):
            qapp.removeTranslator(tr)
            tr.deleteLater()
        QApplication.setFont(font)
        i18n.install("en")


def test_the_hangul_font_is_the_best_one_installed():
    assert qt_i18n.hangul_family(["Baekmuk Dotum", "NanumGothic", "Noto Sans CJK KR"]) == "Noto Sans CJK KR"
    assert qt_i18n.hangul_family(["Baekmuk Dotum"]) == "Baekmuk Dotum"
    assert qt_i18n.hangul_family([]) is None


def test_a_newer_versions_settings_file_keeps_its_language_and_its_bytes(qapp, tmp_path):
    path = tmp_path / "settings.ini"
    path.write_text("[settings]\nversion=99\n\n[view]\nlanguage=en\nsomething_new=kept\n")
    before = path.read_bytes()
    settings = Settings(path)
    assert settings.read_only and str(path) in settings.problems[0]
    assert qt_i18n.saved_language(settings) == "en"  # what this version understands is used
    assert qt_i18n.set_saved_language(settings, "ko") is False  # not remembered, and says so
    menu = qt_i18n.LanguageMenu(settings)
    menu.actions_by_code[""].trigger()
    settings.sync()
    assert path.read_bytes() == before
    assert qt_i18n.set_saved_language(Settings(tmp_path / "mine.ini"), "ko") is True
    menu.deleteLater()
