"""Keep the translation catalogues in step with the sources: update, compile, check.

    .venv/bin/python tools/catalogues.py update    # new strings into the catalogues (untranslated)
    .venv/bin/python tools/catalogues.py compile   # .po -> .mo (Babel), .ts -> .qm (pyside6-lrelease)
    .venv/bin/python tools/catalogues.py check     # exit 1, saying what is wrong, when they drift

Two catalogues per language (``docs/glossary-ko.md`` has the recipe):

- ``som_studio/locale/ko/LC_MESSAGES/som_studio.po``: the Qt-free layers' strings,
  marked ``_("...")``, ``N_("...")`` or ``ngettext("...", "...", n)`` anywhere in
  ``som_studio/``; read at run time by stdlib :mod:`gettext` from the ``.mo``
  beside it.
- ``som_studio/locale/som_studio_ko.ts``: the widgets' strings, ``self.tr("...")``
  or ``QCoreApplication.translate("Context", "...")`` in ``som_studio/qt/``
  (found by ``pyside6-lupdate``); read by Qt from the ``.qm`` beside it.

``check`` fails when a marked string has no translation (unfinished), a
translated one is no longer in the sources (obsolete), a ``.po`` entry is fuzzy,
or a committed ``.mo``/``.qm`` is not what its source compiles to. Babel is a
development dependency (the ``test`` extra); the app itself needs only the
compiled files.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "som_studio"
LOCALE = PACKAGE / "locale"
LANGUAGES = ("ko",)
DOMAIN = "som_studio"
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
QT_DIR = PACKAGE / "qt"


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def ts_path(lang: str) -> Path:
    return LOCALE / f"{DOMAIN}_{lang}.ts"


# -- gettext (.po/.mo) ------------------------------------------------------------------
def extract_template():  # -> babel.messages.Catalog
    """Every string marked for gettext in ``som_studio/`` (Babel's Python extractor)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir

    template = Catalog(project="SOM Studio", domain=DOMAIN, charset="utf-8")
    found = extract_from_dir(
        str(PACKAGE), method_map=[("**.py", "python")], keywords=KEYWORDS, comment_tags=("TRANSLATORS:",)
    )
    for filename, lineno, message, comments, context in found:
        template.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return template


def read_po(path: Path):  # -> babel.messages.Catalog
    from babel.messages.pofile import read_po as _read

    with path.open("rb") as f:
        return _read(f, domain=DOMAIN)


def mo_bytes(catalog) -> bytes:
    from babel.messages.mofile import write_mo

    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    return buf.getvalue()


def mo_content(data: bytes) -> tuple:
    """What a compiled catalogue says, as gettext reads it: its messages and plural rule.

    Not its bytes: Babel writes its own version into the header ("Generated-By"), so the
    same catalogue compiled by another Babel differs there and nowhere else."""
    from babel.messages.mofile import read_mo

    catalog = read_mo(io.BytesIO(data))

    def flat(text):  # a plural entry holds its forms in a list
        return tuple(text) if isinstance(text, (list, tuple)) else text

    return catalog.plural_forms, {(flat(m.id), m.context): flat(m.string) for m in catalog if m.id}


def _key(message) -> tuple:
    return (message.id, message.context)


def po_problems(lang: str) -> list[str]:
    """What is wrong with the ``.po``/``.mo`` pair of ``lang`` against the sources ("" when all is well)."""
    path = po_path(lang)
    if not path.exists():
        return [f"{path.relative_to(ROOT)}: missing (run: tools/catalogues.py update)"]
    catalog = read_po(path)
    rel = path.relative_to(ROOT)
    problems = []
    wanted = {_key(m) for m in extract_template() if m.id}
    have = {_key(m) for m in catalog if m.id}
    for mid, _ctx in sorted(wanted - have, key=str):
        problems.append(f"{rel}: not in the catalogue (run update, then translate): {mid!r}")
    for mid, _ctx in sorted(have - wanted, key=str):
        problems.append(f"{rel}: obsolete, no longer in the sources: {mid!r}")
    for m in catalog.obsolete.values():
        problems.append(f"{rel}: obsolete entry kept as a comment (#~), delete it: {m.id!r}")
    for m in catalog:
        if not m.id:
            continue
        if m.fuzzy:
            problems.append(f"{rel}: fuzzy, check and clear the flag: {m.id!r}")
        strings = m.string if isinstance(m.string, (tuple, list)) else (m.string,)
        if not all(strings):
            problems.append(f"{rel}: unfinished, no translation: {m.id!r}")
    mo = path.with_suffix(".mo")
    if not mo.exists() or mo_content(mo.read_bytes()) != mo_content(mo_bytes(catalog)):
        problems.append(f"{mo.relative_to(ROOT)}: not what {rel} compiles to (run: tools/catalogues.py compile)")
    return problems


def update_po(lang: str) -> None:
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    path = po_path(lang)
    template = extract_template()
    if path.exists():
        catalog = read_po(path)
    else:
        catalog = Catalog(locale=lang, domain=DOMAIN, project="SOM Studio", charset="utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
    template.creation_date = catalog.creation_date  # no date churn when nothing changed
    # No fuzzy guesses: a new string is untranslated until someone translates it.
    catalog.update(template, no_fuzzy_matching=True)
    catalog.fuzzy = False
    catalog.header_comment = (
        f"# {lang} translations of SOM Studio's messages (the Qt-free layers).\n"
        "# Edit the msgstr lines; then: tools/catalogues.py compile. Words: docs/glossary-ko.md."
    )
    catalog.copyright_holder = catalog.last_translator = "SOM Studio developers"
    catalog.language_team = f"{lang} (docs/glossary-{lang}.md)"
    catalog.msgid_bugs_address = ""
    catalog.obsolete.clear()  # gone from the sources: drop, do not keep as #~ comments
    with path.open("wb") as f:
        write_po(f, catalog, width=120, omit_header=False, sort_output=True, include_lineno=False)


def compile_po(lang: str) -> None:
    path = po_path(lang)
    path.with_suffix(".mo").write_bytes(mo_bytes(read_po(path)))


# -- Qt (.ts/.qm) -----------------------------------------------------------------------
def _qt_tool(name: str) -> str:
    exe = Path(sys.executable).parent / name
    found = str(exe) if exe.exists() else shutil.which(name)
    if not found:
        raise SystemExit(
            f"tools/catalogues.py: {name} not found (it ships with PySide6: pip install PySide6-Essentials)"
        )
    return found


def qt_sources() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in QT_DIR.rglob("*.py"))


def run_lupdate(ts: Path) -> None:
    subprocess.run(
        [_qt_tool("pyside6-lupdate"), *qt_sources(), "-locations", "none", "-ts", str(ts)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )


def run_lrelease(ts: Path, qm: Path) -> None:
    subprocess.run(
        [_qt_tool("pyside6-lrelease"), "-nounfinished", str(ts), "-qm", str(qm)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )


def ts_messages(ts: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """``(context, source) -> (translation, type)`` of a ``.ts`` file (type "" when finished)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for ctx in ET.parse(ts).getroot().iter("context"):
        name = ctx.findtext("name") or ""
        for msg in ctx.iter("message"):
            tr = msg.find("translation")
            forms = [n.text or "" for n in tr.iter("numerusform")] if tr is not None else []
            text = "\n".join(forms) if forms else (tr.text or "") if tr is not None else ""
            out[(name, msg.findtext("source") or "")] = (text, tr.get("type", "") if tr is not None else "")
    return out


def ts_problems(lang: str) -> list[str]:
    ts = ts_path(lang)
    rel = ts.relative_to(ROOT)
    if not ts.exists():
        return [f"{rel}: missing (run: tools/catalogues.py update)"]
    problems = []
    committed = ts_messages(ts)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / ts.name
        shutil.copyfile(ts, fresh)
        run_lupdate(fresh)
        updated = ts_messages(fresh)
        qm = Path(tmp) / "fresh.qm"
        run_lrelease(ts, qm)
        committed_qm = ts.with_suffix(".qm")
        if not committed_qm.exists() or committed_qm.read_bytes() != qm.read_bytes():
            problems.append(f"{committed_qm.relative_to(ROOT)}: not what {rel} compiles to (run compile)")
    for key in sorted(set(updated) - set(committed)):
        problems.append(f"{rel}: not in the catalogue (run update, then translate): {key[0]}: {key[1]!r}")
    for key, (text, kind) in sorted(updated.items()):
        if kind in ("vanished", "obsolete"):
            problems.append(f"{rel}: obsolete, no longer in the sources: {key[0]}: {key[1]!r}")
        elif kind == "unfinished" or not text:
            problems.append(f"{rel}: unfinished, no translation: {key[0]}: {key[1]!r}")
    return problems


def update_ts(lang: str) -> None:
    ts = ts_path(lang)
    if not ts.exists():
        ts.write_text(
            f'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="{lang}_KR"></TS>\n'
            if lang == "ko"
            else f'<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE TS>\n<TS version="2.1" language="{lang}"></TS>\n'
        )
    run_lupdate(ts)
    # Vanished strings: dropped, as in the .po (lupdate -no-obsolete on a second pass).
    subprocess.run(
        [_qt_tool("pyside6-lupdate"), *qt_sources(), "-locations", "none", "-no-obsolete", "-ts", str(ts)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )


def compile_ts(lang: str) -> None:
    ts = ts_path(lang)
    run_lrelease(ts, ts.with_suffix(".qm"))


def problems() -> list[str]:
    out: list[str] = []
    for lang in LANGUAGES:
        out += po_problems(lang)
        out += ts_problems(lang)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("update", "compile", "check"))
    args = ap.parse_args()
    for lang in LANGUAGES:
        if args.action == "update":
            update_po(lang)
            update_ts(lang)
            print(f"updated {po_path(lang).relative_to(ROOT)} and {ts_path(lang).relative_to(ROOT)}")
        elif args.action == "compile":
            compile_po(lang)
            compile_ts(lang)
            print(f"compiled {lang}: .mo and .qm")
    if args.action == "check":
        found = problems()
        for p in found:
            print(p)
        print("catalogues: " + (f"{len(found)} problem(s)" if found else "complete and up to date"))
        return 1 if found else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
