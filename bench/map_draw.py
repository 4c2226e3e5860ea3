"""Time the map view's paint: a hex map's frame shown whole and zoomed in, 240x135 and 1024x1024, RGB and U-matrix.

Each figure is the first and the median of the next ``--repeat`` paints of the map view's canvas (``grab()`` of its
graphics view, at 1000x700), after the frame is set: what a user waits for when a frame arrives
or the view is zoomed. Offscreen platform, one process::

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/map_draw.py
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--save", default="", help="folder to save one PNG per case")
    args = ap.parse_args()
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from som_studio import picture
    from som_studio.qt.widgets.map_view import MapView

    app = QApplication.instance() or QApplication([])
    rng = np.random.default_rng(0)
    print(f"{'map':>10} {'view':>8} {'zoom':>6} {'frame px':>10} {'first ms':>9} {'median ms':>9}")
    for (h, w), mode in itertools.product(((135, 240), (1024, 1024)), (picture.RGB, picture.UMATRIX)):
        weights = rng.random((h, w, 3))
        views = picture.MapViews(topology="hex")
        lo, hi = picture.colour_range(weights)
        frame = picture.make_frame(1, weights, picture.ViewChoice(mode), lo, hi, views)
        view = MapView()
        view.resize(1000, 700)
        view.show()
        view.begin(3, "bench", views)
        view.show_frame(frame, force=True)
        app.processEvents()
        rows, cols = frame.image.shape[:2]
        for zoom in (1, 3, 8):
            vb = view.view_box
            vb.autoRange(padding=0)
            if zoom > 1:
                vb.scaleBy((1 / zoom, 1 / zoom))
            app.processEvents()
            times = []
            for _ in range(args.repeat + 1):
                t0 = time.perf_counter()
                img = view.plot.grab()
                times.append(time.perf_counter() - t0)
            if args.save:
                os.makedirs(args.save, exist_ok=True)
                img.save(os.path.join(args.save, f"hex-{w}x{h}-{mode}-zoom{zoom}.png"))
            first, median = times[0] * 1e3, statistics.median(times[1:]) * 1e3
            print(f"{w}x{h:<5} {mode:>8} {zoom:>5}x {rows * cols:>10,} {first:>9.1f} {median:>9.1f}")
        view.close()
        view.deleteLater()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
