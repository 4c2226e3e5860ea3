"""Rules on the code's shape: the core never imports Qt (import-linter contracts in
pyproject.toml), and the package's comments say why, not which issue asked.

The tool is part of the ``test`` extra: when it is missing this test fails, because a
contract nobody checks is no contract (a skip would pass CI unnoticed).
"""

from __future__ import annotations

import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    exe = Path(sys.executable).with_name("lint-imports")
    if exe.exists():
        return str(exe)
    found = shutil.which("lint-imports")
    assert found is not None, (
        "import-linter is not installed, so the layer contracts in pyproject.toml go unchecked: "
        "pip install -e '.[test]' (./dev.sh test does)"
    )
    return found


def test_import_contracts_hold():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    out = subprocess.run([_lint_imports()], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    # Every contract written down was checked and kept.
    assert f"Contracts: {len(contracts)} kept, 0 broken." in out.stdout, out.stdout


# "issue 14", "Issue 3's", "issues 13", "#12": a tracker reference. Colours ("#555") live in strings,
# not in comments and docstrings, which is all this reads.
ISSUE_REF = re.compile(r"\bissues?\s+#?\d+|(?<![\w&#])#\d+\b", re.IGNORECASE)


def _issue_refs(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each comment and docstring in ``source`` that names an issue."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and ISSUE_REF.search(tok.string.lstrip("#:")):
            found.append((tok.start[0], tok.string))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False)
            if doc and ISSUE_REF.search(doc):
                found.append((node.body[0].lineno, doc.splitlines()[0]))
    return found


def test_the_issue_finder_finds_issue_numbers_and_nothing_else():
    source = (
        '"""A module (issue 14)."""\n'
        "x = 1  # issue 3: the fast implementations\n"
        "# see #12\n"
        "def f():\n"
        '    """Per Issue 13\'s targets."""\n'
        '    return "color: #555;"  # 3 features, 24 bytes a chunk\n'
    )
    assert [line for line, _ in _issue_refs(source)] == [2, 3, 1, 5]


def test_comments_in_the_package_name_no_issue_numbers():
    # A comment says why the code is as it is; the tracker's number says only who asked, and when.
    found = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in sorted((ROOT / "som_studio").rglob("*.py"))
        for line, text in _issue_refs(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "\n".join(found)
