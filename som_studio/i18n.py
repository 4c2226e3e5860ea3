"""Korean and English for the Qt-free layers: which language, its catalogue, Hangul fonts.

SOM Studio speaks English (the source strings) and Korean. The Qt-free layers
(CLI, validation, session, doctor, report) translate through stdlib
:mod:`gettext` with the catalogue ``som_studio/locale/ko/LC_MESSAGES/som_studio.mo``,
compiled from its ``.po`` source and committed beside it (``tools/catalogues.py
check`` and ``tests/test_i18n.py`` fail when they drift apart). Being files inside
the package, the catalogues work from a plain checkout (``PYTHONPATH=.``), an
editable install and a wheel alike. The widgets translate with Qt's ``tr()`` and
``.ts``/``.qm`` catalogues (:mod:`som_studio.qt.i18n`).

Which language, first match wins:

1. the global ``--lang ko|en`` flag;
2. the app's *View > Language* choice, remembered in its settings (the app only);
3. ``SOM_STUDIO_LANG``;
4. the locale: ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` (the first one set), with
   ``LANGUAGE`` ahead of it as GNU gettext does, unless the locale is ``C``/``POSIX``;
   ``ko*`` gives Korean;
5. English.

``setlocale`` is never called: many machines have no Korean locale installed,
and the language of the messages needs none.

Mark strings with :func:`_` (or :func:`ngettext` for counts) where they are
shown, not at import time: the language is installed after the command line is
read. For strings defined at import time, mark them with :func:`N_` and pass
them through :func:`_` where they are shown.
"""

from __future__ import annotations

import gettext as _gettext
import os
import re
import shutil
import subprocess
import unicodedata
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = [
    "DOMAIN",
    "ENV_VAR",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LOCALE_DIR",
    "N_",
    "LanguageError",
    "_",
    "current_language",
    "font_package",
    "hangul_font_problem",
    "hangul_fonts",
    "install",
    "language_flag",
    "language_from_env",
    "ljust",
    "ngettext",
    "normalize",
    "parse_fc_list",
    "rank_fonts",
    "resolve_language",
    "text_width",
]

DOMAIN = "som_studio"
ENV_VAR = "SOM_STUDIO_LANG"
LANGUAGES = ("en", "ko")
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGE_NAMES = {"en": "English", "ko": "한국어"}  # each in its own language: never translated


class LanguageError(ValueError):
    """A language SOM Studio does not speak was asked for by name.

    The message is translated when it is shown, not when it is raised: the
    language to say it in is often chosen after (from the environment).
    """

    def __init__(self, template: str, **fields: str) -> None:
        super().__init__(template.format(**fields))
        self.template, self.fields = template, fields

    def __str__(self) -> str:
        return _(self.template).format(**self.fields)


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it (strings built at import time)."""
    return message


# -- which language -----------------------------------------------------------------
def normalize(value: str | None) -> str | None:
    """``"ko"``/``"en"`` for a language or locale name (``ko_KR.UTF-8``, ``en-US``, ``C``), else ``None``."""
    if not value:
        return None
    v = value.strip().lower()
    base = re.split(r"[_.@-]", v, maxsplit=1)[0]
    if base in ("ko", "kor", "korean"):
        return "ko"
    if base in ("en", "eng", "english", "c", "posix"):
        return "en"
    return None


def language_from_env(env: Mapping[str, str]) -> str | None:
    """The language the locale variables ask for, or ``None`` when they say nothing we speak.

    The locale is the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set;
    ``LANGUAGE`` (a colon list of preferences) comes before it, as in GNU gettext,
    except under the ``C``/``POSIX`` locale, which means "untranslated".
    """
    locale = next((env[k] for k in ("LC_ALL", "LC_MESSAGES", "LANG") if env.get(k)), "")
    if locale.split(".", 1)[0].upper() in ("C", "POSIX"):
        return "en"
    for pref in env.get("LANGUAGE", "").split(":"):
        lang = normalize(pref)
        if lang:
            return lang
    return normalize(locale)


def resolve_language(flag: str | None, env: Mapping[str, str], saved: str | None = None) -> str:
    """The language to speak: ``"ko"`` or ``"en"`` (the order is in the module's docstring).

    Parameters
    ----------
    flag : the value of ``--lang``, or ``None`` when not given.
    env : the environment (``os.environ``).
    saved : the app's remembered *View > Language* choice; ``None`` or ``""`` means
        "follow the system" (and is what the CLI passes).

    Raises
    ------
    LanguageError
        ``--lang`` or ``SOM_STUDIO_LANG`` names a language SOM Studio does not speak.
        A saved choice that is not one (a newer version's settings) is ignored.
    """
    if flag is not None:
        lang = normalize(flag)
        if lang is None:
            raise LanguageError(N_("--lang {value}: not a language SOM Studio speaks (ko or en)"), value=flag or "''")
        return lang
    lang = normalize(saved)
    if lang:
        return lang
    if env.get(ENV_VAR):
        lang = normalize(env[ENV_VAR])
        if lang is None:
            raise LanguageError(
                N_("{var}={value}: not a language SOM Studio speaks (ko or en)"), var=ENV_VAR, value=env[ENV_VAR]
            )
        return lang
    return language_from_env(env) or "en"


def language_flag(argv: Iterable[str], valued: Iterable[str] = ("--cpu-devices",)) -> str | None:
    """The value of the global ``--lang`` in ``argv``, read before the command line is parsed.

    Only options before the command count (``som-studio --lang ko bench ...``), as for
    ``--cpu-devices``: the scan stops at ``--`` or at the first word that is neither an
    option nor the value of one of the global options in ``valued``. ``--lang`` with no
    value gives ``""`` (which :func:`resolve_language` refuses).
    """
    args = list(argv)
    takes_value = set(valued)
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--lang":
            return args[i + 1] if i + 1 < len(args) else ""
        if a.startswith("--lang="):
            return a.split("=", 1)[1]
        if a == "--" or not a.startswith("-"):
            return None
        i += 2 if a in takes_value else 1
    return None


# -- the catalogue ------------------------------------------------------------------
_translation: _gettext.NullTranslations = _gettext.NullTranslations()
_language = "en"


def install(language: str) -> None:
    """Speak ``language`` (``"ko"``/``"en"``) from now on in this process.

    Also routes :mod:`argparse`'s own messages ("invalid int value", "expected one
    argument") through the catalogue, so flag-value errors read in the same language.
    A missing catalogue (a broken install) leaves English, never an error.
    """
    global _translation, _language
    import argparse

    if language not in LANGUAGES:
        raise LanguageError(N_("--lang {value}: not a language SOM Studio speaks (ko or en)"), value=language)
    _language = language
    if language == "en":
        _translation = _gettext.NullTranslations()
        argparse._ = _gettext.gettext  # type: ignore[attr-defined]
        argparse.ngettext = _gettext.ngettext  # type: ignore[attr-defined]
        return
    _translation = _gettext.translation(DOMAIN, LOCALE_DIR, languages=[language], fallback=True)
    argparse._ = _  # type: ignore[attr-defined]
    argparse.ngettext = ngettext  # type: ignore[attr-defined]


def current_language() -> str:
    """The language installed by :func:`install` (``"en"`` until then)."""
    return _language


def _(message: str) -> str:
    """``message`` in the current language (itself when untranslated)."""
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for ``n``, in the current language (Korean has one form)."""
    return _translation.ngettext(singular, plural, n)


def text_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: East Asian wide characters (Hangul) take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def ljust(text: str, width: int) -> str:
    """``text`` padded to ``width`` terminal columns (:func:`text_width`): text tables line up in Korean too."""
    return text + " " * max(0, width - text_width(text))


# argparse's messages that a user of the CLI meets; its own strings, marked here so the
# catalogue carries their translations (see :func:`install`).
ARGPARSE_MESSAGES = (
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("expected one argument"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"),
)


# -- Hangul fonts -------------------------------------------------------------------
def parse_fc_list(output: str) -> list[str]:
    """Family names from ``fc-list :lang=ko family`` output (one font a line, families comma-separated)."""
    families: list[str] = []
    for line in output.splitlines():
        for name in line.split(","):
            name = name.strip().replace("\\-", "-")
            if name and name not in families:
                families.append(name)
    return families


# Preferred first: they are drawn for screens and cover Latin well too.
# NanumBarunGothic before NanumGothic, both of Debian's fonts-nanum: at 9 pt NanumGothic's full stop is drawn like a
# comma, and "432.84 ms" read "432,84".
_PREFERRED = (
    "Noto Sans CJK KR",
    "Noto Sans KR",
    "NanumBarunGothic",
    "NanumGothic",
    "Nanum Gothic",
    "Malgun Gothic",
    "Apple SD Gothic Neo",
)


def rank_fonts(families: Iterable[str]) -> list[str]:
    """``families`` with the fonts best suited to an interface first."""
    fams = list(families)
    return sorted(fams, key=lambda f: (_PREFERRED.index(f) if f in _PREFERRED else len(_PREFERRED), fams.index(f)))


def hangul_fonts(fc_list: str | None = None) -> list[str]:
    """The installed font families with Hangul glyphs (fontconfig's view), best first.

    ``[]`` when there are none, or when ``fc-list`` is not installed (not Linux,
    or no fontconfig): then the answer is not known here; the Qt layer asks
    ``QFontDatabase`` instead.
    """
    exe = fc_list or shutil.which("fc-list")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, ":lang=ko", "family"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return rank_fonts(parse_fc_list(out))


def _os_release(path: str = "/etc/os-release") -> dict[str, str]:
    try:
        text = Path(path).read_text()
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip(): v.strip().strip('"') for k, v in pairs}


def font_package(os_release: Mapping[str, str] | None = None) -> str:
    """What to install for Hangul glyphs on this system (a package name, or a hint)."""
    info = _os_release() if os_release is None else os_release
    ids = {info.get("ID", "").lower(), *info.get("ID_LIKE", "").lower().split()}
    if ids & {"debian", "ubuntu"}:
        return "fonts-noto-cjk (or fonts-nanum)"
    if ids & {"fedora", "rhel", "centos"}:
        return "google-noto-sans-cjk-fonts"
    if ids & {"arch"}:
        return "noto-fonts-cjk"
    if ids & {"opensuse", "suse", "opensuse-leap", "opensuse-tumbleweed"}:
        return "noto-sans-cjk-fonts"
    return "a Noto Sans CJK KR font"


def hangul_font_problem(
    language: str, fonts: list[str] | None = None, os_release: Mapping[str, str] | None = None
) -> str:
    """A warning when ``language`` needs Hangul and no font has it, else ``""``.

    ``fonts`` defaults to :func:`hangul_fonts`; the doctor shows the warning, and
    the app prints it once at start.
    """
    if language != "ko":
        return ""
    if (hangul_fonts() if fonts is None else fonts) or (fonts is None and not shutil.which("fc-list")):
        return ""
    return _("No font with Hangul glyphs is installed: Korean text shows as empty boxes. Install {package}.").format(
        package=font_package(os_release)
    )


def default_language() -> str:
    """The language from the environment alone (the headless commands): never raises."""
    try:
        return resolve_language(None, os.environ)
    except LanguageError:
        return "en"


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, as every view and message shows sizes (``1.5 GiB``)."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"
