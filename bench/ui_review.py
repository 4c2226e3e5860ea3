"""Review the window as a user meets it: screenshots of every state at three sizes, measured.

Drives the real window (the offscreen platform, or a display when one is set) through:

- ``first_launch``: fresh settings, nothing run yet;
- ``default_run``: the default configuration (jax-fused-batch, the 240x135 map of 1,000 random
  colours, 50 epochs) run to its end;
- ``comparison``: numpy-batch and jax-fused-batch compared (60x34 map, 20 epochs), the Compare page;
- ``sharding``: jax-shardmap-batch on 4 simulated CPU devices (layout 2x2), run, the Sharding page;
- ``wine_umatrix``, ``wine_planes``, ``wine_labels``: the 13-feature wine table
  (``resources/data/wine.csv``) on a hex map: the U-matrix, all feature planes, the labels with one
  unit clicked;
- ``sweep``: the wine map's end radius and start radius swept together (8 maps), the Sweep page
  with the frontier's first map shown;
- ``inside``: numpy-batch, jax-vmap-batch and jax-fused-batch recorded with their inside (60x34,
  5 epochs), ticked, the Inside page;
- ``stream``: a folder of four Parquet files (10^6 rows x 20 features, written once into a temporary
  folder) streamed by jax-fused-batch on a 40x30 map, shot in the middle of its second epoch (the run panel's
  preflight, the status bar's rows, rate, time left and disk share), then stopped;
- ``korean``, ``korean_compare``: the app in Korean after comparing two implementations, its map
  and its Compare page (a second process: the language is chosen as the app starts).

Each state is saved as ``DIR/<state>-<W>x<H>.png`` at 1280x800, 1600x1000 and 1920x1080, and
``DIR/ui_review.json`` holds, per screenshot, the map view's share of the window's area (0 where
another page is shown) and the texts cut off (labels and buttons narrower than their one-line
text; empty when none)::

    .venv/bin/python bench/ui_review.py --out ui-review
    .venv/bin/python bench/ui_review.py --out ui-review --readme   # also retake the README's screenshots

Nothing here asserts; ``tests/qt/test_layout.py`` holds the rules.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import ROOT

SIZES = ((1280, 800), (1600, 1000), (1920, 1080))
ENGLISH = (
    "first_launch",
    "default_run",
    "comparison",
    "sharding",
    "wine_umatrix",
    "wine_planes",
    "wine_labels",
    "sweep",
    "inside",
    "stream",
)
KOREAN = ("korean", "korean_compare")
README_SHOTS = {  # state at 1600x1000 -> the README's and the guide's picture
    "default_run": "screenshot.png",
    "comparison": "compare-screenshot.png",
    "wine_labels": "wine-screenshot.png",
    "sweep": "sweep-screenshot.png",
    "inside": "inside-screenshot.png",
    "korean": "screenshot-ko.png",
    "korean_compare": "comparison-ko.png",
}


class Review:
    """One window, driven from state to state; each state shot at every size."""

    def __init__(self, out: Path, lang: str | None) -> None:
        os.environ.setdefault("QT_QPA_PLATFORM", "xcb" if os.environ.get("DISPLAY") else "offscreen")
        from PySide6.QtWidgets import QApplication

        from som_studio.qt.i18n import apply_language
        from som_studio.qt.main_window import MainWindow
        from som_studio.qt.settings import Settings

        self.out = out
        self.app = QApplication.instance() or QApplication([])
        settings = Settings(Path(tempfile.mkdtemp(prefix="som-ui-review-")) / "review.ini")
        apply_language(self.app, lang, settings)
        self.win = MainWindow(settings)
        self.win.resize(*SIZES[0])
        self.win.show()
        self.shots: list[dict[str, Any]] = []

    # -- waiting ---------------------------------------------------------------------------
    def settle(self, ms: int = 200) -> None:
        from PySide6.QtCore import QEventLoop, QTimer

        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    def until(self, ready: Any, what: str, timeout_s: float = 300) -> None:
        import time

        t0 = time.monotonic()
        while not ready():
            if time.monotonic() - t0 > timeout_s:
                raise RuntimeError(f"ui_review: gave up waiting for {what}")
            self.settle(50)

    def run(self) -> None:
        """Start the Run panel's configuration (its Run button) and wait for the run's end."""
        from PySide6.QtCore import QEventLoop

        loop = QEventLoop()
        self.win.controller.run_ended.connect(loop.quit)
        self.until(lambda: self.win.panel.run_button.isEnabled(), "the Run button")
        self.win.panel.run_button.click()
        loop.exec()
        self.win.controller.run_ended.disconnect(loop.quit)
        self.until(lambda: not self.win.map_view.inspector.jobs.busy(), "the map's drawing")

    def run_config(self, cfg: Any) -> None:
        """Run ``cfg`` as the window runs a configuration it is given (Runs > Run again) and wait for its end."""
        from PySide6.QtCore import QEventLoop

        reason = self.win.run_config(cfg)
        assert not reason, reason
        loop = QEventLoop()
        self.win.controller.run_ended.connect(loop.quit)
        if self.win.controller.busy:
            loop.exec()
        self.win.controller.run_ended.disconnect(loop.quit)

    def compare(self, impls: list[str]) -> None:
        from PySide6.QtCore import QEventLoop

        view = self.win.comparison
        view.set_ticked_impls(impls)
        loop = QEventLoop()
        view.queue.finished.connect(loop.quit)
        assert view.compare_ticked(), "the comparison did not start"
        loop.exec()
        view.queue.finished.disconnect(loop.quit)

    # -- shooting ----------------------------------------------------------------------------
    def shoot(self, state: str) -> None:
        from som_studio.qt.layout_check import clipped_texts

        win = self.win
        for w, h in SIZES:
            win.resize(w, h)
            self.settle(300)
            path = self.out / f"{state}-{w}x{h}.png"
            win.grab().save(str(path))
            shot = {
                "state": state,
                "size": [w, h],
                "file": path.name,
                "page": win.pages.current_key(),
                "map_share": round(win.map_share(), 4),
                "clipped": clipped_texts(win),
            }
            self.shots.append(shot)
            print(f"{path.name}: page {shot['page']}, map {shot['map_share']:.1%}, clipped {shot['clipped'] or 'none'}")

    # -- the states --------------------------------------------------------------------------
    def first_launch(self) -> None:
        self.shoot("first_launch")

    def default_run(self) -> None:
        self.run()  # the form as a first start fills it
        self.win.pages.show_page("map")
        self.shoot("default_run")

    def comparison(self) -> None:
        p = self.win.panel
        p.grid.setCurrentText("60x34")
        p.iterations.setValue(20)
        self.compare(["numpy-batch", "jax-fused-batch"])
        self.win.comparison.charts.setCurrentIndex(0)
        self.win.pages.show_page("compare")
        self.shoot("comparison")

    def sharding(self) -> None:
        p = self.win.panel
        p.impl.setCurrentIndex(p.impl.findData("jax-shardmap-batch"))
        p.grid.setCurrentText("60x34")
        p.iterations.setValue(10)
        p.layout_box.setCurrentText("2x2")
        p.set_cpu_devices(4)
        self.until(lambda: p.state.runnable, f"a runnable sharded configuration ({p.state.reason})", 60)
        self.run()
        self.win.pages.show_page("sharding")
        self.shoot("sharding")

    def wine(self) -> None:
        from som_studio import picture
        from som_studio.config import DataSpec, RunConfig

        p = self.win.panel
        p.set_cpu_devices(None)
        cfg = RunConfig(
            impl="numpy-batch",
            width=10,
            height=7,
            data=DataSpec(path=str(ROOT / "resources" / "data" / "wine.csv")),
            epochs=40,
            topology="hex",
            init="pca",
            scaling="zscore",
            labels="cultivar",
        )
        self.run_config(cfg)
        view = self.win.map_view
        self.win.pages.show_page("map")
        for mode, state in ((picture.UMATRIX, "wine_umatrix"), (picture.PLANES, "wine_planes")):
            view.set_choice(mode, 0)
            self.until(lambda m=mode: view.last_frame is not None and view.last_frame.view.mode == m, mode)
            self.shoot(state)
        view.set_choice(picture.LABELS, 0)
        self.until(
            lambda: view.last_frame is not None and view.last_frame.view.mode == picture.LABELS, "the labels view"
        )
        v = view.inspector.views
        row, col = divmod(int(v.hits.argmax()), v.hits.shape[1])  # the busiest unit
        view.inspector.select(row, col)  # its examples' rows asked for by the click, found off the GUI thread
        self.until(lambda: view.inspector.index is not None, "the unit's examples")
        view.inspector.select(row, col)
        self.shoot("wine_labels")

    def sweep(self) -> None:
        """The form's SOM (the wine map when it ran before) swept over its radii, on the Sweep page."""
        view = self.win.sweep_view
        view.values["sigma_start"].setText("1.5, 2.5")
        view.values["sigma_end"].setText("0.5, 0.75, 1, 2")
        self.win.pages.show_page("sweep")
        view.start()
        self.until(lambda: view.result is not None and not view.controller.busy, "the sweep", 600)
        view.select(view.result.frontier()[0])
        self.shoot("sweep")

    def inside(self) -> None:
        from som_studio.config import RunConfig

        self.win.inside_view.record.setChecked(True)
        before = {run.id for run in self.win.runs.runs}
        for impl in ("numpy-batch", "jax-vmap-batch", "jax-fused-batch"):
            self.run_config(RunConfig(impl=impl, width=60, height=34, epochs=5))
        self.until(lambda: len({run.id for run in self.win.runs.runs} - before) == 3, "the kept runs")
        self.win.runs.set_checked({run.id for run in self.win.runs.runs} - before)
        self.win.pages.show_page("inside")
        self.shoot("inside")

    def stream(self) -> None:
        """Training from a folder of Parquet files, shot mid-epoch, then stopped (its checkpoint kept)."""
        from PySide6.QtCore import QEventLoop

        from som_studio.config import DataSpec, RunConfig

        folder = Path(tempfile.mkdtemp(prefix="som-ui-review-stream-"))
        try:
            _write_parquet_folder(folder, rows=1_000_000, features=20, files=4)
            p = self.win.panel
            p.set_cpu_devices(None)
            cfg = RunConfig(
                impl="jax-fused-batch",
                width=40,
                height=30,
                epochs=5,
                data=DataSpec(path=str(folder)),
                scaling="zscore",
                stream=True,
            )
            p.load_config(cfg)
            self.until(lambda: p.state.runnable, f"a runnable streamed configuration ({p.state.reason})", 300)
            self.win.pages.show_page("map")
            p.run_button.click()
            live = self.win.live.run
            # In the second epoch, so the map shown is a trained one (the first frame comes with the first epoch's end).
            self.until(
                lambda: live.epoch is not None and live.epoch.iteration >= 1 and live.epoch.row >= live.epoch.rows // 4,
                "the middle of the second epoch",
            )
            self.shoot("stream")
            loop = QEventLoop()
            self.win.controller.run_ended.connect(loop.quit)
            self.win.controller.stop()
            loop.exec()
            self.win.controller.run_ended.disconnect(loop.quit)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def korean(self) -> None:
        p = self.win.panel
        p.grid.setCurrentText("60x34")
        p.iterations.setValue(20)
        self.compare(["numpy-batch", "jax-fused-batch"])
        self.win.pages.show_page("map")
        self.until(lambda: not self.win.map_view.inspector.jobs.busy(), "the map's drawing")
        self.shoot("korean")
        self.win.comparison.charts.setCurrentIndex(0)
        self.win.pages.show_page("compare")
        self.shoot("korean_compare")

    def close(self) -> None:
        self.win.close()


def _write_parquet_folder(folder: Path, rows: int, features: int, files: int) -> None:
    """A seeded mixture of 8 blobs, ``rows`` x ``features``, in ``files`` Parquet files of row groups of 50,000."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    centres = rng.normal(0, 3, (8, features))
    for i in range(files):
        n = rows // files
        x = centres[rng.integers(0, 8, n)] + rng.normal(0, 1, (n, features))
        table = pa.table({f"f{j:02d}": x[:, j] for j in range(features)})
        pq.write_table(table, folder / f"part{i}.parquet", row_group_size=50_000)


def review(out: Path, states: list[str], lang: str | None) -> list[dict[str, Any]]:
    r = Review(out, lang)
    done = set()
    for state in states:
        method = "wine" if state.startswith("wine_") else state
        if method == "korean_compare" or method in done:
            continue  # shot with its state
        getattr(r, method)()
        done.add(method)
    r.close()
    return r.shots


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="ui-review", help="the folder for the PNGs and ui_review.json")
    ap.add_argument("--states", default=",".join(ENGLISH + KOREAN), help="which states, comma-separated")
    ap.add_argument("--readme", action="store_true", help="copy the README's screenshots (1600x1000) to resources/")
    ap.add_argument("--lang", default=None, help=argparse.SUPPRESS)  # the Korean child process
    ap.add_argument("--json", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    states = [s for s in args.states.split(",") if s]
    if args.lang:  # the child: its shots to --json
        Path(args.json).write_text(json.dumps(review(out, states, args.lang)))
        return 0
    english = [s for s in states if s not in KOREAN]
    shots = review(out, english, "en") if english else []
    korean = [s for s in states if s in KOREAN]
    if korean:
        part = out / "ui_review.ko.json"
        cmd = [sys.executable, __file__, "--out", str(out), "--states", ",".join(korean), "--lang", "ko"]
        subprocess.run([*cmd, "--json", str(part)], check=True)
        shots += json.loads(part.read_text())
        part.unlink()
    (out / "ui_review.json").write_text(json.dumps({"sizes": [list(s) for s in SIZES], "shots": shots}, indent=1))
    low = [s for s in shots if s["page"] == "map" and s["map_share"] < 0.35]
    cut = [s for s in shots if s["clipped"]]
    print(f"wrote {out / 'ui_review.json'}: {len(shots)} screenshots; map under 35 %: {len(low)}", end="")
    print(f"; with clipped text: {len(cut)}")
    if args.readme:
        for state, name in README_SHOTS.items():
            src = out / f"{state}-1600x1000.png"
            if src.exists():
                shutil.copyfile(src, ROOT / "resources" / name)
                print(f"resources/{name} <- {src.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
