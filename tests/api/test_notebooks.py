"""The notebooks under docs/notebooks run headless: their cells, in order, as one script."""

from __future__ import annotations

import ast
import json
import sys
import types
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[2] / "docs" / "notebooks"

pytest.importorskip("pandas")


def test_the_jupyter_notebook_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = json.loads((NOTEBOOKS / "iris.ipynb").read_text())
    namespace: dict = {"__name__": "__notebook__"}
    shown = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:  # the cell's value, as Jupyter would display it
            assign = ast.Assign([ast.Name("_shown", ast.Store())], last.value)
            tree.body[-1] = ast.fix_missing_locations(ast.copy_location(assign, last))
        exec(compile(tree, "iris.ipynb", "exec"), namespace)
        if last is not None:
            shown.append(namespace["_shown"])
    runs = [v for v in shown if hasattr(v, "_repr_html_") and type(v).__name__ == "SomRun"]
    assert len(runs) == 3 and all("data:image/png;base64," in r._repr_html_() for r in runs)


def test_the_marimo_notebook_runs(tmp_path, monkeypatch):
    """Each ``@app.cell`` function's body runs in order in one namespace (marimo itself is not needed)."""
    monkeypatch.chdir(tmp_path)
    source = (NOTEBOOKS / "iris_marimo.py").read_text()
    tree = ast.parse(source)
    cells = [
        f
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and any(ast.unparse(d) == "app.cell" for d in f.decorator_list)
    ]
    assert len(cells) == 7
    # marimo's own module is replaced by the few names the cells use: mo.md shows text.
    fake = types.ModuleType("marimo")
    fake.md = lambda text: text
    monkeypatch.setitem(sys.modules, "marimo", fake)
    namespace: dict = {"__name__": "__notebook__"}
    for cell in cells:
        body = [s for s in cell.body if not isinstance(s, ast.Return)]
        module = ast.Module(body=body, type_ignores=[])
        exec(compile(module, "iris_marimo.py", "exec"), namespace)
    assert namespace["again"].codebook.shape == (6, 8, 4)
    assert len(namespace["rows"]) == 4
