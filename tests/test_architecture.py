"""The core never imports Qt (import-linter contracts in pyproject.toml).

The tool is part of the ``test`` extra: when it is missing this test fails, because a
contract nobody checks is no contract (a skip would pass CI unnoticed).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
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
