"""The comparison view, the run history across restarts, the compare queue and export from the app."""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PIL import Image
from PySide6.QtCore import QObject, Qt, Signal

from som_studio.config import DataSpec, RunConfig
from som_studio.qt.comparison import ComparisonView
from som_studio.qt.runs import RunsModel
from som_studio.qt.runs_panel import RunsPanel
from som_studio.session.session import Session
from som_studio.storage import RunHistory, RunRecorder, StoredRun

pytestmark = pytest.mark.qt_log_ignore("This plugin does not support propagateSizeHints")

WAIT_MS = 120_000  # guards against a hang on a loaded machine, not a timing assertion


@pytest.fixture(scope="module")
def stored() -> list[StoredRun]:
    base = RunConfig(width=9, height=6, data=DataSpec(samples=60), seed=4, steps=300)
    out = []
    for impl, grid in (("numpy-online", (9, 6)), ("jax-jit-online", (9, 6)), ("numpy-batch", (10, 6))):
        cfg = base.replace(impl=impl, width=grid[0], height=grid[1])
        if impl.endswith("batch"):
            cfg = cfg.replace(steps=None, epochs=4)
        cap = RunRecorder(frames=8)
        cap.feed_all(Session(cfg, snapshot_interval_s=0.0, quality_points=3, quality_share=None).run())
        out.append(cap.stored())
    return out


@pytest.fixture
def view(qtbot, tmp_path, stored):
    history = RunHistory(tmp_path / "history")
    for run in stored:
        history.add(StoredRun.load(run.save(tmp_path / f"{run.id}.somrun")))
    runs = RunsModel(history)
    v = ComparisonView(runs)
    v.runs_panel = RunsPanel(runs)  # the app's "Runs" dock, beside the view
    qtbot.addWidget(v)
    qtbot.addWidget(v.runs_panel)
    v.show()
    return v


def test_summary_table_sorts_and_follows_the_baseline(view, stored) -> None:
    assert view.report is None and view.summary.rowCount() == 0
    view.set_checked([stored[1].id, stored[0].id])
    assert [r.name for r in view.report.runs] == ["numpy-online", "jax-jit-online"]  # history order
    assert view.summary.rowCount() == 2
    header = list(view.report.SUMMARY_HEADER)
    speed = header.index("speed-up")
    model = view.proxy
    # default baseline: the NumPy run of the kind
    texts = {model.index(r, 0).data(): model.index(r, speed).data() for r in range(2)}
    assert texts["numpy-online"] == "baseline"
    # The report's headline above the table: its speed-up columns are past the table's edge in most windows.
    assert view.headline.isVisible() and view.headline.text() == view.report.headline()
    assert view.headline.text().startswith("jax-jit-online: ")
    # pick jax-jit-online as the baseline: the speed-ups invert
    view.baseline.setCurrentIndex(view.baseline.findData("jax-jit-online"))
    texts = {model.index(r, 0).data(): model.index(r, speed).data() for r in range(2)}
    assert texts["jax-jit-online"] == "baseline" and texts["numpy-online"].endswith("x")
    # sort by median: on the numbers, not the text ("99 µs" < "1.2 ms")
    med = header.index("median / it")
    view.table.sortByColumn(med, Qt.SortOrder.AscendingOrder)
    order = [model.index(r, 0).data() for r in range(2)]
    by_median = sorted(stored[:2], key=lambda r: r.record.median_s)
    assert order == [r.name for r in by_median]


def test_differing_configurations_are_called_out(view, stored) -> None:
    view.set_checked([stored[0].id, stored[2].id])
    text = view.notes.text()
    assert "configurations differ" in text and "grid" in text
    assert "10 x 6" in text
    # the charts are drawn with the report's own code, one widget per tab
    for holder in view._chart_widgets.values():
        assert holder.layout().count() == 1


def test_the_pages_legends_take_two_runs_to_a_line(view, stored) -> None:
    # Four to a line (and the compile marker) set the chart's least width past the page's at 1280 x 800: its
    # right edge, the later epochs and the third run's name, were cut off.
    import pyqtgraph as pg

    view.set_checked([r.id for r in stored])
    for key in ("timing", "quality"):
        (chart,) = [w for w in view._chart_widgets[key].findChildren(pg.GraphicsLayoutWidget)]
        (legend,) = [i for i in chart.scene().items() if isinstance(i, pg.LegendItem)]
        assert legend.columnCount == 2, key


def test_rename_remove_and_persist(view, stored, tmp_path) -> None:
    panel = view.runs_panel
    view.set_checked([stored[0].id, stored[1].id])
    assert panel.model.setData(panel.model.index(0, 0), "the reference")
    assert view.history.runs[0].name == "the reference"
    assert [r.name for r in view.report.runs] == ["the reference", "jax-jit-online"]  # the comparison follows
    assert not panel.model.setData(panel.model.index(0, 0), "  ")  # a blank name is refused, with a dialog
    assert "needs a name" in panel.error_dialog.text()
    panel.error_dialog.close()
    panel.select(stored[1].id)
    panel.remove_selected()
    assert [r.name for r in view.report.runs] == ["the reference"]
    again = RunHistory(tmp_path / "history")
    assert [r.name for r in again.runs] == ["the reference", "numpy-batch"]


def test_save_open_and_export_everything(view, stored, tmp_path) -> None:
    from pypdf import PdfReader

    view.set_checked([stored[0].id, stored[1].id])
    out = tmp_path / "out"
    out.mkdir()
    for kind, name in (
        ("html", "c.html"),
        ("pdf", "c.pdf"),
        ("csv", "c.csv"),
        ("json", "c.json"),
        ("animation", "c.gif"),
    ):
        assert view.export(kind, str(out / name)), view.error_dialog and view.error_dialog.text()
    assert view.export("maps", str(out))
    doc = json.loads((out / "c.json").read_text())
    assert [r["impl"] for r in doc["runs"]] == ["numpy-online", "jax-jit-online"]
    rows = list(csv.DictReader(io.StringIO((out / "c.csv").read_text())))
    assert sum(int(r["count"]) for r in rows if r["impl"] == "numpy-online") == 300
    assert "jax-jit-online" in (out / "c.html").read_text()
    reader = PdfReader(out / "c.pdf")
    assert len(reader.pages) >= 4
    assert Image.open(out / "c.gif").n_frames >= 2
    assert {p.name for p in out.glob("*.png")} == {"numpy-online.png", "jax-jit-online.png"}
    # refusing an existing file when not forced; errors arrive as a dialog, not an exception
    assert not view.export("csv", str(out / "c.csv"), force=False)
    assert "exists" in view.error_dialog.text()
    view.error_dialog.close()
    assert not view.export("animation", str(out / "c.avi"))
    assert "unknown animation format" in view.error_dialog.text()
    view.error_dialog.close()
    # a run saved to a file opens again into the history, ticked
    panel = view.runs_panel
    panel.select(stored[0].id)
    assert panel.save_selected(str(out / "one.somrun"))
    opened = panel.open_runs([str(out / "one.somrun")])
    assert opened[0].id in {r.id for r in view.checked_runs()}
    # it is the run listed already (opening it again adds no duplicate)
    assert len(opened) == 1 and opened[0].id == stored[0].id and len(view.history.runs) == 3
    np.testing.assert_array_equal(opened[0].final_map, stored[0].final_map)


# -- the app, for real: worker processes ---------------------------------------------------------


def test_compare_queue_runs_ticked_implementations_and_history_survives_restart(qtbot, window, tmp_path) -> None:
    from som_studio.qt.main_window import MainWindow
    from som_studio.qt.settings import Settings

    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("8x6")
    p.random_data.setChecked(True)
    p.samples.setValue(50)
    p.iterations.setValue(200)
    p.simulate.setChecked(False)
    assert p.state.runnable, p.state.reason
    view = window.comparison
    view.set_ticked_impls(["numpy-online", "jax-jit-online"])  # the form's implementation runs first
    with qtbot.waitSignal(view.queue.finished, timeout=WAIT_MS):
        assert view.compare_ticked()
    runs = view.history.runs
    assert [r.record.impl for r in runs] == ["numpy-online", "jax-jit-online"]
    assert all(r.record.status == "ok" and r.final_image is not None and r.frames for r in runs)
    assert [r.name for r in view.checked_runs()] == ["numpy-online", "jax-jit-online"]
    cfgs = [dict(r.record.config) for r in runs]
    for c in cfgs:
        c.pop("impl")
    assert cfgs[0] == cfgs[1]  # the identical configuration
    assert view.summary.rowCount() == 2
    assert p.impl.currentData() == "numpy-online"  # the race showed each run's in the form; the user's came back
    window.close()

    again = MainWindow(Settings(tmp_path / "settings.ini"))
    qtbot.addWidget(again)
    try:
        assert [r.id for r in again.comparison.history.runs] == [r.id for r in runs]
        assert again.comparison.history.runs[1].final_image.shape == (6, 8, 3)
    finally:
        again.close()


def test_cancel_stops_the_queue(qtbot, window) -> None:
    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("8x6")
    p.random_data.setChecked(True)
    p.samples.setValue(50)
    p.iterations.setValue(200)
    p.simulate.setChecked(False)
    view = window.comparison
    view.set_ticked_impls(["numpy-online", "jax-jit-online", "jax-naive-online"])
    with qtbot.waitSignal(view.queue.finished, timeout=WAIT_MS):
        assert view.compare_ticked()
        view.cancel_compare()
    assert len(view.history.runs) <= 1  # the first run was stopped; the others never started
    assert not view.queue.active and view.compare_button.isEnabled()


def test_compare_queue_follows_the_order_ticked(window):
    view = window.comparison
    items = {
        view.impl_list.item(i).data(Qt.ItemDataRole.UserRole): view.impl_list.item(i)
        for i in range(view.impl_list.count())
    }
    view.set_ticked_impls([])
    assert not view.compare_button.isEnabled()  # nothing to compare: pressed, it opened an error dialog
    for name in ("jax-jit-online", "numpy-batch", "numpy-online"):  # not the registry's order
        items[name].setCheckState(Qt.CheckState.Checked)
    assert view.compare_button.isEnabled()
    items["numpy-batch"].setCheckState(Qt.CheckState.Unchecked)
    assert view.ticked_impls() == ["jax-jit-online", "numpy-online"]
    assert items["jax-jit-online"].text() == "1. jax-jit-online" and items["numpy-batch"].text() == "numpy-batch"
    assert "jax-jit-online → numpy-online" in view.queue_label.text()
    configs, reason = view.compare_configs()
    assert reason == "" and [c.impl for c in configs] == ["jax-jit-online", "numpy-online"]


class _Ended(QObject):
    ended = Signal()  # the controller's run_ended


@pytest.mark.parametrize("refused", ["layout", "missing values"])
def test_the_compare_queue_refuses_what_the_preflight_refuses(qtbot, tmp_path, register_impl, refused) -> None:
    # The view judges each run as the Run form judges its own configuration, before any trains.
    from som_studio.app_model.form import RunForm, app_text, read_data
    from som_studio.core.impls import registry

    no_missing = register_impl("test-no-missing", registry.get("numpy-batch").factory)  # before the picker lists it
    form = RunForm()
    if refused == "layout":
        # numpy-batch runs on one device and takes any layout; jax-pmap-batch splits no map.
        form.edit(impl="numpy-batch", grid="4x3", samples=20, iterations=2, layout="2x2")
        other = "jax-pmap-batch"
    else:
        table = tmp_path / "holes.csv"
        table.write_text("a,b\n1,2\n3,\n5,6\n7,8\n")
        st = form.edit(impl="numpy-batch", grid="3x2", iterations=2, file=True, path=str(table))
        form.data_read(st.data_needed, read_data(st.data_needed))
        other = no_missing.name
    assert form.state.runnable, form.state.reason
    launched: list[RunConfig] = []
    ended = _Ended()
    view = ComparisonView(
        RunsModel(RunHistory(tmp_path / "history")),
        launch=lambda cfg: launched.append(cfg) or "",
        ended=ended.ended,
        base_config=lambda: form.state.config,
        iterations=form.counts,
        judge=form.judge,
    )
    qtbot.addWidget(view)
    errors: list[str] = []
    view.show_error = lambda _title, text: errors.append(text)
    view.set_ticked_impls(["numpy-batch", other])
    (refusal,) = form.judge(form.state.config.replace(impl=other))
    assert refused in refusal.reason
    assert view.compare_configs() == ([], f"{other}: {app_text(refusal)}")
    assert not view.compare_ticked() and launched == [] and errors == [f"{other}: {app_text(refusal)}"]
    view.set_ticked_impls(["numpy-batch"])
    assert view.compare_ticked() and [c.impl for c in launched] == ["numpy-batch"]
    ended.ended.emit()
    assert not view.queue.active


def test_stop_during_a_comparison_stops_the_comparison(qtbot, window):
    p = window.panel
    p.impl.setCurrentIndex(p.impl.findData("numpy-online"))
    p.grid.setCurrentText("8x6")
    p.random_data.setChecked(True)
    p.samples.setValue(50)
    p.iterations.setValue(5_000_000)
    p.simulate.setChecked(False)
    view = window.comparison
    view.set_ticked_impls(["numpy-online", "jax-jit-online"])
    with qtbot.waitSignal(window.controller.chunks_timed, timeout=WAIT_MS):
        assert view.compare_ticked()
    with qtbot.waitSignal(view.queue.finished, timeout=WAIT_MS):
        window.stop_action.trigger()
    assert [r.record.status for r in window.runs.runs] == ["cancelled"]  # jax-jit-online never started
    assert not window.controller.busy and view.compare_button.isEnabled()


# -- one pipeline: the CLI and the app write the same files for the same runs -----------------------


def _without_date(text: str) -> str:
    # "Made 2026-11-23 14:16 UTC by": the date and the time (a run across a minute differs in both).
    return re.sub(r"Made\s[^<]*?\sUTC\sby", "Made - by", text)  # spaces in HTML, tabs in the PDF text


def test_the_cli_and_the_app_write_the_same_comparison_files(qtbot, tmp_path, monkeypatch) -> None:
    from pypdf import PdfReader

    from som_studio import cli
    from som_studio.commands import compare

    # The runs the CLI trains, kept as it made them (a spy on the real step, nothing replaced).
    kept: list[StoredRun] = []
    train = compare.train
    monkeypatch.setattr(compare, "train", lambda *a, **k: kept.extend(train(*a, **k)) or list(kept))
    by_cli, by_app = tmp_path / "cli", tmp_path / "app"
    by_app.mkdir()
    files = {"html": "r.html", "pdf": "r.pdf", "csv": "r.csv", "json": "r.json", "animation": "a.gif"}
    flags = {"html": "--report", "pdf": "--pdf", "csv": "--csv", "json": "--json", "animation": "--animation"}
    args = ["compare", "--impl", "numpy-online,jax-jit-online", "--grid", "9x6", "--steps", "300", "--samples", "50"]
    args += ["--seed", "3", "-q", "--maps", str(by_cli / "maps")]
    for kind, name in files.items():
        args += [flags[kind], str(by_cli / name)]
    by_cli.mkdir()
    assert cli.main(args) == 0
    assert [r.name for r in kept] == ["numpy-online", "jax-jit-online"]

    # The app, with those runs in its run list, as it would open them after a restart.
    history = RunHistory(tmp_path / "history")
    for run in kept:
        history.add(run)
    view = ComparisonView(RunsModel(RunHistory(tmp_path / "history")))
    qtbot.addWidget(view)
    view.set_checked([r.id for r in view.history.runs])
    for kind, name in files.items():
        assert view.export(kind, str(by_app / name)), view.error_dialog and view.error_dialog.text()
    (by_app / "maps").mkdir()
    assert view.export("maps", str(by_app / "maps"))

    for name in ("r.csv", "r.json", "a.gif", "maps/numpy-online.png", "maps/jax-jit-online.png"):
        assert (by_cli / name).read_bytes() == (by_app / name).read_bytes(), name
    # The report says when it was made; nothing else differs.
    assert _without_date((by_cli / "r.html").read_text()) == _without_date((by_app / "r.html").read_text())
    pages = [[_without_date(p.extract_text()) for p in PdfReader(d / "r.pdf").pages] for d in (by_cli, by_app)]
    assert pages[0] == pages[1] and len(pages[0]) >= 4


def test_the_compare_page_has_the_central_area_for_its_table_and_maps(qtbot, window):
    window.resize(1600, 1000)
    qtbot.wait(50)
    view = window.comparison
    assert window.pages.current_key() == "map" and not view.isVisible()
    view.show_requested.emit()  # Compare > Compare ticked runs, or a comparison ending
    qtbot.waitUntil(view.isVisible)
    assert window.pages.current_key() == "compare" and window.map_share() == 0
    # The whole central area: the window's height less its menu, tab and status bars.
    assert view.height() >= window.height() - 120, view.height()
    assert view.table.height() >= 100 and view.charts.height() >= 400, (view.table.height(), view.charts.height())


def test_a_pdf_no_font_can_draw_the_korean_of_is_written_and_said_so(view, stored, tmp_path, monkeypatch) -> None:
    from som_studio import i18n
    from som_studio.qt import i18n as qt_i18n

    view.set_checked([stored[0].id, stored[1].id])
    monkeypatch.setattr(qt_i18n, "hangul_family", lambda families=None: None)
    assert view.export("pdf", str(tmp_path / "en.pdf")) and view.error_dialog is None  # no Hangul: nothing to say
    i18n.install("ko")
    try:
        view.set_checked([stored[0].id, stored[1].id])  # the report again, in Korean
        assert view.export("pdf", str(tmp_path / "ko.pdf"))
    finally:
        i18n.install("en")
    assert (tmp_path / "ko.pdf").is_file()
    box = view.error_dialog
    assert box is not None and box.icon() == box.Icon.Warning and "fonts-noto-cjk" in box.text()
