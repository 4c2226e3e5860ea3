"""Take the README's iris screenshot: the app trained on the iris example, labels view, one unit's details open.

*File > Open example data* (a 12x8 hex map, PCA start, z-scored, species as
labels), Run, then the *Labels* view with its legend (and label purity) and
the details of the busiest unit whose flowers are of more than one species::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/iris_screenshot.py resources/iris-screenshot.png
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from _common import app_window


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", default="resources/iris-screenshot.png", help="the PNG to write")
    ap.add_argument("--lang", default=None, help="ko or en, as som-studio --lang (default: the environment's)")
    args = ap.parse_args()
    out = args.out
    from PySide6.QtCore import QEventLoop, QPointF, QTimer

    from som_studio import picture
    from som_studio.picture.raster import unit_centre

    app, win = app_window(args.lang)

    def settle(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    win.resize(1580, 960)
    win.show()
    win.example_action.trigger()
    while not win.panel.state.runnable:  # the file is read off the GUI thread
        settle(50)
    loop = QEventLoop()
    win.controller.run_ended.connect(loop.quit)
    assert win.start_run()
    loop.exec()
    settle(200)  # the window's own layout: the map page between the run panel and the plots
    view = win.map_view
    view.set_choice(picture.LABELS, 0)
    while view.last_frame is None or view.last_frame.view.mode != picture.LABELS:
        settle(50)
    # The busiest unit whose flowers are not all of one species (its label counts say more), else the busiest.
    v = view.inspector.views
    mixed = np.nan_to_num(v.unit_purity, nan=1.0) < 1.0
    score = np.where(mixed, v.hits + 10_000, v.hits) if mixed.any() else v.hits
    row, col = divmod(int(score.argmax()), v.hits.shape[1])
    view.inspector.select(row, col)  # its examples' rows are searched for now, off the GUI thread
    while view.inspector.index is None:
        settle(50)
    details = view.inspector.select(row, col)
    view.inspector._on_moved(
        view.image.mapToScene(QPointF(*unit_centre(row, col, view.last_frame.topology, view.last_frame.scale)))
    )
    settle(300)
    app.processEvents()
    win.grab().save(out)
    print(f"saved {out}: unit ({details.row}, {details.col}), {details.hits} hits; {view.inspector.legend.text()!r}")
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
