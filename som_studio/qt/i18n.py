"""Qt's half of Korean and English: translators, a Hangul font, the *View > Language* menu.

The widgets translate with ``tr()`` (or ``QCoreApplication.translate`` outside a
QObject) from ``som_studio/locale/som_studio_ko.qm``, compiled with
``pyside6-lrelease`` from its ``.ts`` source (``tools/catalogues.py``); Qt's own
buttons and dialogs ("OK", "Cancel", the file dialog) from Qt's ``qtbase_ko``.
The Qt-free layers' messages come from :mod:`som_studio.i18n`, installed here
in the same language.

The language is chosen once, at start (:func:`apply_language`): a change in the
*Language* menu is remembered and takes effect at the next start, rather than
re-translating every open widget in place.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QTranslator, Signal
from PySide6.QtGui import QAction, QActionGroup, QFont, QFontDatabase
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from som_studio import i18n


def QT_TRANSLATE_NOOP(context: str, text: str) -> str:
    """Mark ``text`` for the catalogue in ``context`` without translating it (typed ``str``, unlike Qt's)."""
    return text


SETTINGS_KEY = "view/language"  # "ko", "en", or "" (follow the system)


def saved_language(settings: Any) -> str:
    """The remembered *View > Language* choice: ``"ko"``, ``"en"`` or ``""`` (follow the system).

    ``settings`` is a :class:`som_studio.qt.settings.Settings` (or anything with ``qsettings``).
    """
    value = settings.qsettings.value(SETTINGS_KEY, "")
    return i18n.normalize(str(value or "")) or ""


def set_saved_language(settings: Any, language: str) -> bool:
    """Remember ``language`` (``"ko"``, ``"en"``, or ``""`` to follow the system) for the next start.

    Through :meth:`Settings.set_value <som_studio.qt.settings.Settings.set_value>`, as every
    setting: a file written by a newer SOM Studio is left as it is, and this returns ``False``
    (nothing remembered); ``True`` when remembered.
    """
    settings.set_value(SETTINGS_KEY, language)
    return not getattr(settings, "read_only", False)


def install_translators(app: QCoreApplication, language: str) -> list[QTranslator]:
    """Install Qt's (``qtbase_*``) and the app's translators for ``language``; returns those installed.

    A missing catalogue (Qt built without translations, a broken install) leaves
    those strings in English: never an error.
    """
    if language == "en":
        return []
    installed = []
    qt_dir = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for name, directory in ((f"qtbase_{language}", qt_dir), (f"som_studio_{language}", str(i18n.LOCALE_DIR))):
        tr = QTranslator(app)  # parented: it lives as long as the app
        tr.setObjectName(name)
        if tr.load(name, directory) and app.installTranslator(tr):
            installed.append(tr)
        else:
            tr.deleteLater()
    return installed


def hangul_family(families: list[str] | None = None) -> str | None:
    """The best installed font family with Hangul glyphs, or ``None`` (asks ``QFontDatabase``)."""
    if families is None:
        families = list(QFontDatabase.families(QFontDatabase.WritingSystem.Korean))
    ranked = i18n.rank_fonts(families)
    return ranked[0] if ranked else None


def apply_language(app: QCoreApplication, flag: str | None, settings: Any) -> str:
    """Choose the language at start and set the app up for it; returns it (``"ko"``/``"en"``).

    ``--lang`` (``flag``) wins, then the remembered menu choice, then the environment
    (:func:`som_studio.i18n.resolve_language`). Under Korean the app's font becomes
    a Hangul-capable one when one is installed, and a warning naming the package to
    install is printed when none is.
    """
    try:
        language = i18n.resolve_language(flag, os.environ, saved_language(settings))
    except i18n.LanguageError as exc:  # the CLI refuses these before; a direct call falls back
        print(f"som-studio: {exc}", file=sys.stderr)
        language = "en"
    i18n.install(language)
    # The app's worker processes (runs, the device probe, the doctor) speak it too.
    os.environ[i18n.ENV_VAR] = language
    install_translators(app, language)
    if language == "ko":
        family = hangul_family()
        if family:
            font = QFont(QApplication.font())
            # The Hangul font first: Latin and Hangul then share one design and line height.
            font.setFamilies([family, *font.families()])
            QApplication.setFont(font)
        else:
            print(f"som-studio: {i18n.hangul_font_problem('ko', fonts=[])}", file=sys.stderr)
    return language


def restart_note(language: str, saved: bool = True) -> str:
    """What the app says when the language changes: it takes effect at the next start.

    ``saved`` false: the settings file is a newer SOM Studio's and was left as it is, so the
    choice could not be remembered; the note says so, and how to choose the language anyway.
    """
    if not saved:
        return QCoreApplication.translate(
            "LanguageMenu",
            "The language choice could not be remembered: the settings file was written by a newer "
            "SOM Studio and is left as it is. Start SOM Studio with --lang {code} to choose it.",
        ).format(code=language or "en")
    if not language:
        return QCoreApplication.translate(
            "LanguageMenu", "SOM Studio will follow the system's language from its next start."
        )
    return QCoreApplication.translate("LanguageMenu", "SOM Studio will speak {language} from its next start.").format(
        language=i18n.LANGUAGE_NAMES[language]
    )


class LanguageMenu(QMenu):
    """*View > Language*: follow the system, English or 한국어; remembered in the settings.

    Language names are written in their own language (never translated), so a
    user who cannot read the current one still finds theirs.

    Threads: GUI thread only. ``language_chosen(str)`` (``"ko"``, ``"en"``, or ``""``
    for the system's) is emitted after the choice was saved; show :func:`restart_note`.
    """

    language_chosen = Signal(str)

    def __init__(self, settings: Any, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("&Language"), parent)
        self._settings = settings
        self.saved = True  # whether the last choice was remembered (not in a newer version's file)
        self._group = QActionGroup(self)
        self._group.setExclusive(True)
        current = saved_language(settings)
        entries = [("", self.tr("Follow the system"))] + [(code, i18n.LANGUAGE_NAMES[code]) for code in ("en", "ko")]
        self.actions_by_code: dict[str, QAction] = {}
        for code, label in entries:
            act = QAction(label, self, checkable=True)
            act.setData(code)
            act.setChecked(code == current)
            self._group.addAction(act)
            self.addAction(act)
            self.actions_by_code[code] = act
        self._group.triggered.connect(self._on_triggered)

    def _on_triggered(self, action: QAction) -> None:
        code = str(action.data() or "")
        self.saved = set_saved_language(self._settings, code)
        self.language_chosen.emit(code)
