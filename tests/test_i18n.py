"""Korean and English in the Qt-free layers: which language, the catalogue, Hangul fonts."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from som_studio import cli, i18n

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _english_after() -> object:
    yield
    i18n.install("en")  # a Korean test must not leave later tests' messages in Korean


# -- which language ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("flag", "env", "saved", "expected"),
    [
        (None, {}, None, "en"),
        (None, {"LANG": "ko_KR.UTF-8"}, None, "ko"),
        (None, {"LANG": "en_US.UTF-8", "LC_MESSAGES": "ko_KR.UTF-8"}, None, "ko"),
        (None, {"LC_ALL": "en_GB.UTF-8", "LC_MESSAGES": "ko_KR.UTF-8", "LANG": "ko_KR"}, None, "en"),
        (None, {"LANG": "en_US.UTF-8", "LANGUAGE": "ko:en"}, None, "ko"),  # GNU: LANGUAGE first
        (None, {"LANG": "C.UTF-8", "LANGUAGE": "ko"}, None, "en"),  # ...but not under the C locale
        (None, {"LANGUAGE": "fr:ko"}, None, "ko"),  # the first preference we speak
        (None, {"LANG": "fr_FR.UTF-8"}, None, "en"),  # nothing we speak: English
        (None, {"LANG": "ko_KR.UTF-8", "SOM_STUDIO_LANG": "en"}, None, "en"),
        (None, {"LANG": "ko_KR.UTF-8", "SOM_STUDIO_LANG": "en"}, "ko", "ko"),  # the menu wins over the environment
        (None, {"LANG": "ko_KR.UTF-8"}, "en", "en"),
        (None, {"LANG": "ko_KR.UTF-8"}, "", "ko"),  # "" = follow the system
        (None, {"LANG": "ko_KR.UTF-8"}, "klingon", "ko"),  # a newer version's saved value: ignored
        ("en", {"LANG": "ko_KR.UTF-8", "SOM_STUDIO_LANG": "ko"}, "ko", "en"),  # --lang wins over all
        ("ko", {}, "en", "ko"),
        ("ko_KR", {}, None, "ko"),
    ],
)
def test_the_language_is_resolved_in_the_contracts_order(flag, env, saved, expected):
    assert i18n.resolve_language(flag, env, saved) == expected


@pytest.mark.parametrize(("flag", "env"), [("fr", {}), ("", {}), (None, {"SOM_STUDIO_LANG": "de"})])
def test_a_language_we_do_not_speak_is_refused_by_name(flag, env):
    with pytest.raises(i18n.LanguageError, match="ko or en"):
        i18n.resolve_language(flag, env, None)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--lang", "ko", "bench"], "ko"),
        (["--lang=en", "list"], "en"),
        (["--cpu-devices", "8", "--lang", "ko", "devices"], "ko"),
        (["bench", "--lang", "ko"], None),  # after the command: not the global flag
        (["--cpu-devices", "8", "devices"], None),
        (["--lang"], ""),
        ([], None),
    ],
)
def test_the_global_flag_is_found_before_parsing(argv, expected):
    assert i18n.language_flag(argv) == expected


# -- the catalogue -------------------------------------------------------------------
def test_messages_follow_the_installed_language():
    msg = "som-studio {command}: interrupted"
    i18n.install("ko")
    assert i18n.current_language() == "ko"
    assert i18n._(msg) == "som-studio {command}: 중단됨"
    assert i18n._("a string nobody marked") == "a string nobody marked"
    assert i18n.ngettext("{n} run", "{n} runs", 2) == "{n} runs"  # untranslated: English plural rules
    i18n.install("en")
    assert i18n._(msg) == msg
    with pytest.raises(i18n.LanguageError):
        i18n.install("fr")


def test_cli_errors_and_flag_value_errors_speak_korean(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--lang", "ko", "bench", "--epochs", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "오류: 인자 --epochs:" in err
    with pytest.raises(SystemExit):
        cli.main(["--lang", "en", "bench", "--epochs", "x"])
    assert "error: argument --epochs:" in capsys.readouterr().err


def test_an_unknown_language_is_a_clear_error_not_a_traceback(capsys, monkeypatch):
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.delenv("SOM_STUDIO_LANG", raising=False)
    assert cli.main(["--lang", "fr", "list"]) == 2
    # Said in the environment's language, since the flag named none.
    assert (
        capsys.readouterr().err.strip()
        == "som-studio: 오류: --lang fr: SOM Studio가 지원하지 않는 언어입니다 (ko 또는 en)"
    )


def test_a_plain_checkout_finds_its_catalogue_from_the_environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "SOM_STUDIO_LANG"))}
    env.update(PYTHONPATH=str(ROOT), LANG="ko_KR.UTF-8")  # no Korean locale need be installed
    proc = subprocess.run(
        [sys.executable, "-m", "som_studio", "bench", "--grid", "1"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "som-studio bench: 오류: 인자 --grid:" in proc.stderr


def test_the_catalogues_ship_in_the_wheel():
    import tomllib
    from fnmatch import fnmatch

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["som_studio"]
    files = [p.relative_to(ROOT / "som_studio").as_posix() for p in (ROOT / "som_studio/locale").rglob("*.*")]
    assert {"locale/ko/LC_MESSAGES/som_studio.mo", "locale/som_studio_ko.qm"} <= set(files)
    assert all(any(fnmatch(f, pat) for pat in data) for f in files), files


# -- catalogues against their sources ----------------------------------------------------
def _catalogues():
    """``tools/catalogues.py`` as a module (it is a script, not part of the package)."""
    import importlib.util

    pytest.importorskip("babel", reason="Babel is in the test extra")
    spec = importlib.util.spec_from_file_location("catalogues", ROOT / "tools" / "catalogues.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_gettext_catalogue_is_complete_and_compiled():
    c = _catalogues()
    assert c.po_problems("ko") == []


def test_the_qt_catalogue_is_complete_and_compiled():
    c = _catalogues()
    if not (Path(sys.executable).parent / "pyside6-lupdate").exists():
        pytest.skip("pyside6-lupdate is not installed beside this Python")
    assert c.ts_problems("ko") == []


def test_a_new_string_without_a_translation_fails_the_check(monkeypatch):
    c = _catalogues()
    real = c.extract_template

    def with_a_new_string():
        template = real()
        template.add("a brand new message", None, [("som_studio/x.py", 1)])
        return template

    monkeypatch.setattr(c, "extract_template", with_a_new_string)
    problems = c.po_problems("ko")
    assert any("not in the catalogue" in p and "a brand new message" in p for p in problems)

    def without_one():
        template = real()
        template.delete("som-studio {command}: interrupted")
        return template

    monkeypatch.setattr(c, "extract_template", without_one)
    assert any("obsolete" in p and "interrupted" in p for p in c.po_problems("ko"))


# -- Hangul fonts --------------------------------------------------------------------
def test_hangul_fonts_are_read_from_fc_list_and_ranked():
    out = "DejaVu Sans\nNanumGothic,나눔고딕\nNoto Sans CJK KR,Noto Sans CJK KR Bold\nNoto Sans CJK JP\n"
    families = i18n.parse_fc_list(out)
    assert families[:2] == ["DejaVu Sans", "NanumGothic"]
    assert i18n.rank_fonts(families)[:2] == ["Noto Sans CJK KR", "NanumGothic"]
    # Of Nanum's, the one whose full stop reads as one at the app's 9 pt first.
    assert i18n.rank_fonts(["NanumGothic", "NanumSquare", "NanumBarunGothic"])[0] == "NanumBarunGothic"
    assert i18n.parse_fc_list("") == []


@pytest.mark.parametrize(
    ("release", "package"),
    [
        ({"ID": "ubuntu", "ID_LIKE": "debian"}, "fonts-noto-cjk"),
        ({"ID": "debian"}, "fonts-noto-cjk"),
        ({"ID": "linuxmint", "ID_LIKE": "ubuntu debian"}, "fonts-noto-cjk"),
        ({"ID": "fedora"}, "google-noto-sans-cjk-fonts"),
        ({"ID": "arch"}, "noto-fonts-cjk"),
        ({}, "Noto Sans CJK KR"),
    ],
)
def test_the_package_to_install_suits_the_system(release, package):
    assert package in i18n.font_package(release)


def test_a_missing_hangul_font_is_reported_only_for_korean():
    deb = {"ID": "debian"}
    assert "fonts-noto-cjk" in i18n.hangul_font_problem("ko", fonts=[], os_release=deb)
    assert i18n.hangul_font_problem("ko", fonts=["NanumGothic"], os_release=deb) == ""
    assert i18n.hangul_font_problem("en", fonts=[], os_release=deb) == ""
    i18n.install("ko")
    assert "다음 패키지를 설치하세요: fonts-noto-cjk" in i18n.hangul_font_problem("ko", fonts=[], os_release=deb)


# -- desktop entry and AppStream metadata -----------------------------------------------
def test_desktop_entry_and_appstream_metadata_speak_korean():
    import xml.etree.ElementTree as ET

    from som_studio import resources

    entry = resources.desktop_entry().read_text(encoding="utf-8")
    for key in ("Name[ko]=", "GenericName[ko]=", "Comment[ko]=", "Keywords[ko]="):
        assert any(line.startswith(key) and len(line) > len(key) for line in entry.splitlines()), key
    meta = ET.parse(resources.metainfo()).getroot()
    lang = "{http://www.w3.org/XML/1998/namespace}lang"
    for tag in ("name", "summary"):
        assert [e.get(lang) for e in meta.findall(tag)] == [None, "ko"], tag
    # Every paragraph and list item of every description has its Korean twin.
    for desc in meta.iter("description"):
        for tag in ("p", "li"):
            english = [e for e in desc.iter(tag) if e.get(lang) is None]
            korean = [e for e in desc.iter(tag) if e.get(lang) == "ko"]
            assert len(korean) == len(english), (tag, len(english), len(korean))
