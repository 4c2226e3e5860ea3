"""Rules on the code's shape: the core never imports Qt (import-linter contracts in
pyproject.toml), and the package's comments say why, not which issue asked.

The tool is part of the ``test`` extra: when it is missing this test fails, because a
contract nobody checks is no contract (a skip would pass CI unnoticed). The one exception
is the Qt-free tier on JAX's default backend (``SOM_STUDIO_TEST_DEFAULT_BACKEND=1``, run
by ``bench/gpu_check.py`` on a GPU machine with only jax and numpy installed): it checks
the numerics on another device, and the contracts do not change with the device.
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

import pytest

from tests.conftest import DEFAULT_BACKEND

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    exe = Path(sys.executable).with_name("lint-imports")
    if exe.exists():
        return str(exe)
    found = shutil.which("lint-imports")
    if found is None and DEFAULT_BACKEND:
        pytest.skip("import-linter is not installed (the default-backend tier checks devices, not imports)")
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


# -- the code's shape: no import circles, modules and functions of a readable size --------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(tops: tuple[str, ...] = ("som_studio", "bench")) -> dict[str, set[str]]:
    """Module -> the project's modules it imports: every import, inside functions and under TYPE_CHECKING too."""
    paths = {_module_name(p): p for top in tops for p in sorted((ROOT / top).rglob("*.py"))}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                # "from package import module" imports the module; "from module import name", the module.
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in paths:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_circles_through_function_level_imports():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_in_a_circle():
    # A circle makes two modules one in all but name: neither can be read, tested or moved without the other.
    circles = _circles(_import_graph())
    assert circles == [], "import circles (every import counted): " + "; ".join(" <-> ".join(c) for c in circles)


MAX_MODULE_LINES = 800
MAX_FUNCTION_LINES = 100


def test_modules_and_functions_stay_readable():
    too_long = []
    for path in sorted((ROOT / "som_studio").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT)
        if (lines := len(source.splitlines())) > MAX_MODULE_LINES:
            too_long.append(f"{where}: {lines} lines (at most {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(
                        f"{where}:{node.lineno}: {node.name} is {length} lines (at most {MAX_FUNCTION_LINES})"
                    )
    assert too_long == [], "\n".join(too_long)
