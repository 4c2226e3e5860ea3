"""Take the README's screenshot: the real app, mid-training, saved by the app itself.

Runs a short NumPy run first (so the runs table has a row), then the playbook
map with the jit-compiled online implementation, and grabs the window when
the run is about half way::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/screenshot.py resources/screenshot.png
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "resources/screenshot.png"
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    app = QApplication.instance() or QApplication([])
    win = MainWindow(Settings(Path(tempfile.mkdtemp()) / "shot.ini"))
    win.resize(1400, 860)
    win.show()

    def run(impl: str, grid: str, iterations: int, shot_at: float | None = None) -> None:
        p = win.panel
        p.impl.setCurrentIndex(p.impl.findData(impl))
        p.grid.setCurrentText(grid)
        p.iterations.setValue(iterations)
        assert p.state.runnable, p.state.reason
        loop = QEventLoop()

        def on_chunks(chunks) -> None:
            if shot_at is not None and chunks[-1].end >= iterations * shot_at:
                win.controller.chunks_timed.disconnect(on_chunks)
                win.grab().save(out)
                print(f"saved {out} at iteration {chunks[-1].end:,} of {iterations:,}")

        win.controller.chunks_timed.connect(on_chunks)
        win.controller.run_ended.connect(loop.quit)
        win.start_run()
        loop.exec()
        win.controller.run_ended.disconnect(loop.quit)
        if shot_at is None:
            win.controller.chunks_timed.disconnect(on_chunks)

    run("numpy-batch", "60x34", 20)
    run("jax-jit-online", "240x135", 50_000, shot_at=0.5)
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
