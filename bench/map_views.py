"""How long the GUI thread is busy when the map view changes view on a large finished map.

A finished 1024x1024 map (hex and rect, 3 features, hits known) is shown in a
map view; for each view (U-matrix, planes grid, hits) it prints, side by side:

* ``before``: drawing the whole view on the GUI thread, the cost a map view
  without a jobs thread would pay (``picture.make_frame`` then ``show_frame``, then one paint);
* ``GUI now``: the GUI thread's share with the jobs thread: the choice returning (the picture is
  drawn on the map view's jobs thread) plus setting the finished picture and one paint;
* ``drawn``: the jobs thread's time, off the GUI thread;
* the hover read-out and a click's details on that map (GUI thread).

Run it under a real or virtual display for honest paint costs::

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python bench/map_views.py

Measurements, printed; nothing here asserts.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np


def main() -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QPointF
    from PySide6.QtWidgets import QApplication

    from som_studio import picture
    from som_studio.app_model.units import unit_details
    from som_studio.picture.raster import unit_centre
    from som_studio.qt.widgets.map_view import MapView

    app = QApplication.instance() or QApplication([])
    size = 1024
    rng = np.random.default_rng(0)
    weights = rng.random((size, size, 3)).astype(np.float32)
    hits = rng.integers(0, 4, (size, size))
    print(f"{size}x{size} map, 3 features; milliseconds, median of 3 (GUI thread unless said)")
    print(f"{'lattice':8} {'view':16} {'before':>8} {'GUI now':>8} {'drawn':>8} {'ratio':>7}")
    kept = []  # views stay alive to the end (dropping a shown pyqtgraph view mid-script can crash the process)
    for topology in os.environ.get("LATTICES", "rect,hex").split(","):
        view = MapView()
        kept.append(view)
        view.resize(1200, 800)
        view.show()
        views = picture.MapViews(topology=topology, hits=hits)
        view.begin(3, "bench", views)
        view.keep_final(weights)
        app.processEvents()
        lo, hi = picture.colour_range(weights)
        for mode in (picture.UMATRIX, picture.PLANES, picture.HITS):
            before, now, drawn = [], [], []
            for _ in range(3):
                t0 = time.perf_counter()
                frame = picture.make_frame(0, weights, picture.ViewChoice(mode), lo, hi, views)
                view.show_frame(frame, force=True)
                view.plot.viewport().repaint()
                before.append(time.perf_counter() - t0)

                view.set_choice(picture.RGB, 0)  # another choice first, so the next one is a change
                view.redraw()  # (the choice may have been RGB already: no change, no drawing)
                _wait(app, view, picture.RGB)
                gui = 0.0
                t0 = time.perf_counter()
                view.set_choice(mode, 0)  # returns once the jobs thread has the work
                gui += time.perf_counter() - t0
                t1 = time.perf_counter()
                shown = _wait(app, view, mode, timed=True)
                drawn.append(time.perf_counter() - t1 - shown)
                gui += shown
                now.append(gui)
            b, n, d = (statistics.median(v) * 1000 for v in (before, now, drawn))
            print(f"{topology:8} {mode:16} {b:8.1f} {n:8.1f} {d:8.1f} {b / n:6.1f}x")
        f = view.last_frame
        scene = view.image.mapToScene(QPointF(*unit_centre(500, 500, f.topology, f.scale)))
        t0 = time.perf_counter()
        for _ in range(100):
            view.inspector._on_moved(scene)
        hover = (time.perf_counter() - t0) * 10
        t0 = time.perf_counter()
        unit_details(weights, views, 500, 500)
        click = (time.perf_counter() - t0) * 1000
        print(f"{topology:8} hover read-out {hover:.3f} ms, a click's details {click:.3f} ms")
        view.inspector.jobs.wait()
        view.close()


def _wait(app: object, view: object, mode: str, timed: bool = False) -> float:
    """Process events until ``view`` shows ``mode``; with ``timed``, the GUI time spent setting and painting it."""
    spent = 0.0
    while view.last_frame is None or view.last_frame.view.mode != mode:  # type: ignore[attr-defined]
        t0 = time.perf_counter()
        app.processEvents()  # type: ignore[attr-defined]
        dt = time.perf_counter() - t0
        if view.last_frame is not None and view.last_frame.view.mode == mode:  # type: ignore[attr-defined]
            spent += dt  # the event that set the picture
        time.sleep(0.001)
    t0 = time.perf_counter()
    view.plot.viewport().repaint()  # type: ignore[attr-defined]
    return spent + (time.perf_counter() - t0) if timed else 0.0


if __name__ == "__main__":
    main()
