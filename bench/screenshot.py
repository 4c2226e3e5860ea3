"""Screenshots of the real app mid-training, saved by the app itself.

(The README's screenshots, of finished states at three sizes, come from ``bench/ui_review.py``.)

Runs a short NumPy run first (so the run list has a row), then the playbook
map with the jit-compiled online implementation, and grabs the window when
the run is about half way. With a second file, it then compares three batch
implementations on the playbook map (the Compare menu's queue) and grabs the
comparison view::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/screenshot.py \
        resources/screenshot.png resources/compare-screenshot.png

The Korean ones: the app as ``som-studio --lang ko`` starts it, at 1600x1000,
comparing two implementations::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/screenshot.py --lang ko \
        --size 1600x1000 --compare-size 1600x1000 --compare numpy-batch,jax-fused-batch \
        resources/screenshot-ko.png resources/comparison-ko.png
"""

from __future__ import annotations

import sys

from _common import app_window


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Take the README's screenshots of the real app.")
    ap.add_argument("out", nargs="?", default="resources/screenshot.png")
    ap.add_argument("compare_out", nargs="?", default=None)
    ap.add_argument("--lang", default=None, help="ko or en, as som-studio --lang (default: the environment's)")
    ap.add_argument("--size", default="1400x860", help="the window's size, WxH")
    ap.add_argument("--compare-size", default="1400x640", help="the comparison view's size, WxH")
    ap.add_argument("--compare", default="numpy-batch,jax-vmap-batch,jax-fused-batch", help="implementations")
    args = ap.parse_args()
    out = args.out
    from PySide6.QtCore import QEventLoop

    _app, win = app_window(args.lang)  # the app kept referenced while the window lives
    width, height = (int(v) for v in args.size.split("x"))
    win.resize(width, height)
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
    if args.compare_out:
        cw, ch = (int(v) for v in args.compare_size.split("x"))
        compare(win, args.compare_out, args.compare.split(","), cw, ch)
    win.close()
    return 0


def compare(win: object, out: str, impls: list[str], width: int = 1400, height: int = 860) -> None:
    """Compare batch implementations ``impls`` on the playbook map and grab the comparison view."""
    from PySide6.QtCore import QEventLoop, QTimer

    p = win.panel  # type: ignore[attr-defined]
    p.impl.setCurrentIndex(p.impl.findData("numpy-batch"))
    p.grid.setCurrentText("240x135")
    p.iterations.setValue(10)
    view = win.comparison  # type: ignore[attr-defined]
    view.set_ticked_impls(impls)
    loop = QEventLoop()
    view.queue.finished.connect(loop.quit)
    assert view.compare_ticked()
    loop.exec()
    win.pages.show_page("compare")  # type: ignore[attr-defined]
    win.resize(width, height)  # type: ignore[attr-defined]
    view.charts.setCurrentIndex(0)
    QTimer.singleShot(500, loop.quit)
    loop.exec()
    view.grab().save(out)
    print(f"saved {out}: {', '.join(r.name for r in view.checked_runs())}")
    win.pages.show_page("map")  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
