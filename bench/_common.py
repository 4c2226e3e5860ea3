"""Shared bits of the benchmark scripts: run implementations side by side, print tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from som_studio.comparison.words import format_seconds as fmt_s  # noqa: E402  (after the path is set)

__all__ = ["ROOT", "app_window", "bench_in_subprocess", "fmt_s", "table"]


def bench_in_subprocess(args: list[str], cpu_devices: int | None = None) -> list[dict]:
    """Run ``som-studio bench ARGS --json`` in a fresh process; return its runs.

    A fresh process per measurement keeps one run's allocations and compiled
    programs from colouring the next one's memory figures.
    """
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "runs.json"
        cmd = [sys.executable, "-m", "som_studio"]
        if cpu_devices:
            cmd += ["--cpu-devices", str(cpu_devices)]
        cmd += ["bench", *args, "--quiet", "--json", str(out)]
        proc = subprocess.run(
            cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}
        )
        if not out.exists():
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
        return json.loads(out.read_text())["runs"]


def table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(head)]
    lines = ["  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for r in rows:
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))
    return "\n".join(lines)


def app_window(lang: str | None = None):  # -> (QApplication, MainWindow)
    """The app's main window as ``som-studio [--lang LANG]`` starts it, on fresh settings (screenshot scripts).

    On the display when one is set, else offscreen.
    """
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
    from PySide6.QtWidgets import QApplication

    from som_studio.qt.i18n import apply_language
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    app = QApplication.instance() or QApplication([])
    settings = Settings(Path(tempfile.mkdtemp()) / "shot.ini")
    apply_language(app, lang, settings)  # as the app starts: --lang, else the environment
    return app, MainWindow(settings)
