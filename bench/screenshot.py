"""Take the README's screenshot: the real app, mid-training, saved by the app itself.

Runs a short NumPy run first (so the run list has a row), then the playbook
map with the jit-compiled online implementation, and grabs the window when
the run is about half way. With a second file, it then compares three batch
implementations on the playbook map (the Compare menu's queue) and grabs the
comparison view::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/screenshot.py \
        resources/screenshot.png resources/compare-screenshot.png
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else "resources/screenshot.png"
    compare_out = sys.argv[2] if len(sys.argv) > 2 else None
    os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
    from PySide6.QtCore import QEventLoop
    from PySide6.QtWidgets import QApplication

    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    app = QApplication.instance() or QApplication([])  # noqa: F841 (keeps Qt alive)
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

    run("numpy-online", "60x34", 5_000)
    run("jax-jit-online", "240x135", 50_000, shot_at=0.5)
    if compare_out:
        compare(win, compare_out)
    win.close()
    return 0


def compare(win: object, out: str) -> None:
    """Compare three batch implementations on the playbook map and grab the comparison view."""
    from PySide6.QtCore import QEventLoop, QTimer

    p = win.panel  # type: ignore[attr-defined]
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("240x135")
    p.iterations.setValue(10)
    view = win.comparison  # type: ignore[attr-defined]
    view.set_ticked_impls(["numpy-batch", "jax-vmap-batch", "jax-fused-batch"])
    loop = QEventLoop()
    view.queue.finished.connect(loop.quit)
    assert view.compare_ticked()
    loop.exec()
    dock = win.docks["compare"]  # type: ignore[attr-defined]
    dock.setFloating(True)
    dock.resize(1400, 640)
    view.charts.setCurrentIndex(0)
    QTimer.singleShot(500, loop.quit)
    loop.exec()
    view.grab().save(out)
    print(f"saved {out}: {', '.join(r.name for r in view.checked_runs())}")
    dock.setFloating(False)


if __name__ == "__main__":
    sys.exit(main())
