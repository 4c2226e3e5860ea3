"""``som-studio compare`` end to end: every output's content, and outputs refused before training."""

from __future__ import annotations

import csv
import errno
import json
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from som_studio import cli
from som_studio.commands import bench, compare
from som_studio.session.timing import nothing_compiled
from tests.conftest import QT_INSTALLED, needs_qt

IMPLS = ["numpy-online", "jax-jit-online"]
RUN = ["compare", "--impl", ",".join(IMPLS), "--grid", "9x6", "--steps", "300", "--samples", "50", "--seed", "2", "-q"]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> Path:
    """One comparison's every output (the HTML and PDF reports only where Qt draws their charts)."""
    d = tmp_path_factory.mktemp("compare")
    reports = ["--report", str(d / "r.html"), "--pdf", str(d / "r.pdf")] if QT_INSTALLED else []
    args = (
        RUN
        + reports
        + [
            "--csv",
            str(d / "r.csv"),
            "--json",
            str(d / "r.json"),
            "--animation",
            str(d / "a.gif"),
            "--maps",
            str(d / "maps"),
            "--frames",
            "12",
        ]
    )
    assert cli.main(args) == 0
    return d


def test_json_is_the_bench_schema(outputs) -> None:
    doc = json.loads((outputs / "r.json").read_text())
    assert doc["schema_version"] == 1
    assert [r["impl"] for r in doc["runs"]] == IMPLS
    for r in doc["runs"]:
        assert set(r) >= {"impl", "kind", "status", "config", "env", "timings", "quality", "memory"}
        assert r["status"] == "ok" and r["timings"]["chunks"]
        assert r["config"]["grid"] == [9, 6] and r["config"]["steps"] == 300


def test_csv_round_trips_to_the_json(outputs) -> None:
    doc = json.loads((outputs / "r.json").read_text())
    with open(outputs / "r.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for run in doc["runs"]:
        mine = [r for r in rows if r["impl"] == run["impl"]]
        assert [(int(r["first"]), int(r["count"]), float(r["seconds"])) for r in mine] == [
            (c["first"], c["count"], c["seconds"]) for c in run["timings"]["chunks"]
        ]
        assert [float(r["iteration_s"]) for r in mine] == run["timings"]["iteration_s"]
        assert sum(int(r["count"]) for r in mine) == 300


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.chunks: list[str] = []
        self.imgs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.imgs.append(dict(attrs)["src"])

    def handle_data(self, data):
        self.chunks.append(data)


@needs_qt
def test_html_report_holds_every_runs_figures(outputs) -> None:
    from som_studio.comparison.words import format_seconds

    page = (outputs / "r.html").read_text()
    p = _Text()
    p.feed(page)
    p.close()
    text = " ".join(p.chunks)
    doc = json.loads((outputs / "r.json").read_text())
    for run in doc["runs"]:
        t = run["timings"]
        for figure in (
            run["impl"],
            format_seconds(t["median_s"]),
            format_seconds(t["p95_s"]),
            f"{run['quality']['qe']:.4f}",
        ):
            assert figure in text, figure
        if not nothing_compiled(t["compile_s"], t["warmup_compiles"]):  # a NumPy rung's: "-"
            assert format_seconds(t["compile_s"]) in text
    assert len(p.imgs) == 3 and all(s.startswith("data:image/png;base64,") for s in p.imgs)
    assert not re.search(r'(src|href)="(?!data:)', page)  # self-contained: nothing fetched from elsewhere
    for title in ("Final maps", "Time per iteration", "Map quality during training", "Configurations", "Environment"):
        assert title in text


@needs_qt
def test_pdf_has_a_page_per_chart_and_every_run_name(outputs) -> None:
    from pypdf import PdfReader

    reader = PdfReader(outputs / "r.pdf")
    pages = [" ".join(pg.extract_text().split()) for pg in reader.pages]  # Qt's PDF separates words with tabs
    assert len(pages) >= 1 + 3  # summary, then each of the three chart sections on its own page
    text = "\n".join(pages)
    for name in IMPLS:
        assert name in text
    # each chart section starts a page of its own, with its image on it
    for title in ("Final maps", "Time per iteration", "Map quality during training"):
        page = next(i for i, t in enumerate(pages) if title in t)
        assert reader.pages[page].images, f"no chart image on the page of {title}"


def test_animation_and_maps(outputs) -> None:
    im = Image.open(outputs / "a.gif")
    from som_studio.report import animation

    assert 2 <= im.n_frames <= 12
    # two 9x6 maps scaled to 256x171 panels, side by side
    ph = round(6 * animation.PANEL / 9)
    assert im.size == (
        2 * animation.PANEL + 3 * animation.MARGIN,
        animation.MARGIN + animation.TITLE_H + ph + animation.BAR_H + animation.MARGIN,
    )
    for name in IMPLS:
        png = Image.open(outputs / "maps" / f"{name}.png")
        assert png.format == "PNG" and png.size == (9 * 54, 6 * 54)  # whole-factor upscale to >= 480 px
    # same kind, same SOM: the two final maps are (nearly) the same picture
    import numpy as np

    a, b = (np.asarray(Image.open(outputs / "maps" / f"{n}.png").convert("RGB"), dtype=int) for n in IMPLS)
    assert np.abs(a - b).max() <= 2


@pytest.fixture
def no_training(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("training started although an output was bad")

    monkeypatch.setattr(bench, "run_configs", refuse)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--animation", "{d}/a.avi"], "--animation: {d}/a.avi: unknown animation format '.avi'"),
        (["--report", "{d}/r.pdf"], "--report: {d}/r.pdf: expected a .html or .htm file name"),
        (["--pdf", "{d}/missing/r.pdf"], "--pdf: {d}/missing/r.pdf: folder {d}/missing does not exist"),
        (["--csv", "{d}/exists.csv"], "--csv: {d}/exists.csv: exists; use --force to overwrite it"),
        (["--maps", "{d}/exists.csv"], "--maps: {d}/exists.csv: is a file, not a folder"),
        (["--csv", "{d}/same", "--json", "{d}/same"], "--json: {d}/same is also the file of --csv"),
        (["--frames", "1", "--animation", "{d}/a.gif"], "--frames: an animation needs at least 2 frames"),
    ],
)
def test_bad_outputs_are_refused_before_training(tmp_path, capsys, no_training, extra, message) -> None:
    (tmp_path / "exists.csv").write_text("keep me\n")
    args = RUN + [a.format(d=tmp_path) for a in extra]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert f"som-studio compare: error: {message.format(d=tmp_path)}" in err
    assert "Traceback" not in err
    assert (tmp_path / "exists.csv").read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists.csv"]


def test_mp4_without_an_encoder_is_refused_up_front(tmp_path, capsys, no_training, monkeypatch) -> None:
    from som_studio.report import animation

    monkeypatch.setattr(animation, "find_ffmpeg", lambda: None)
    assert cli.main(RUN + ["--animation", str(tmp_path / "a.mp4")]) == 2
    assert "--animation: " in capsys.readouterr().err and not list(tmp_path.iterdir())


def test_existing_files_need_force(tmp_path, capsys) -> None:
    old = tmp_path / "r.csv"
    old.write_text("old\n")
    os.chmod(old, 0o640)
    args = RUN[:2] + ["numpy-online"] + RUN[3:] + ["--csv", str(old)]
    assert cli.main(args) == 2
    assert old.read_text() == "old\n"
    assert cli.main(args + ["--force"]) == 0
    assert old.read_text().startswith("impl,kind,status,chunk")
    assert old.stat().st_mode & 0o777 == 0o640  # overwriting keeps the file's mode
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.csv"]  # no temporary left


def test_a_failed_write_leaves_no_partial_file(tmp_path, capsys, monkeypatch) -> None:
    def full_disk(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full_disk)
    args = RUN[:2] + ["numpy-online"] + RUN[3:] + ["--json", str(tmp_path / "r.json")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert f"som-studio compare: error: --json: {tmp_path / 'r.json'}: cannot write (No space left on device)" in err
    assert list(tmp_path.iterdir()) == []


def test_compare_help_imports_neither_qt_nor_jax() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from som_studio import cli\n"
        "try: cli.main(['compare', '--help'])\n"
        "except SystemExit: pass\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'jax', 'PIL')]\n"
        "print('HEAVY', bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "--animation FILE" in out and "HEAVY []" in out
    assert compare.REPORT_SUFFIXES == (".html", ".htm")


def test_the_terminal_table_and_the_report_agree_on_the_baseline(tmp_path, capsys) -> None:
    # compare's default baseline is each kind's NumPy run, also when it is not listed first.
    path = tmp_path / "r.json"
    args = [
        "compare",
        "--impl",
        "jax-vmap-batch,numpy-batch",
        "--grid",
        "10x8",
        "--epochs",
        "5",
        "--samples",
        "200",
        "-q",
        "--json",
        str(path),
    ]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    med = {r["impl"]: r["timings"]["median_s"] for r in json.loads(path.read_text())["runs"]}
    lines = out.splitlines()
    head = next(re.split(r"\s{2,}", line) for line in lines if line.startswith("implementation"))
    rows = {c[0]: c for c in (re.split(r"\s{2,}", line) for line in lines if line.startswith(("jax-", "numpy-")))}
    speed = head.index("speed-up")
    assert rows["numpy-batch"][speed] == "baseline"  # though listed second
    # the speed-up cell as the report's summary formats it
    assert rows["jax-vmap-batch"][speed] == f"{med['numpy-batch'] / med['jax-vmap-batch']:.2f}x"
