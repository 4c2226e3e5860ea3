"""The window's layout: the map the largest thing on screen, nothing cut off, pages, names, empty states.

Geometry, not pixels: the map view's share of the window's area and the labels and
buttons narrower than their text, at the three sizes the layout is held to, before
and after a run.
"""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QFileDialog,
    QLabel,
    QScrollArea,
    QWidget,
)

from som_studio.qt.layout_check import MIN_MAP_SHARE, clipped_texts, visible_share
from som_studio.qt.main_window import MainWindow
from som_studio.qt.settings import Settings
from tests.qt.test_app import configure, run_and_wait

pytestmark = pytest.mark.qt_log_ignore(
    "This plugin does not support propagateSizeHints", "This plugin does not support raise"
)

SIZES = [(1280, 800), (1600, 1000), (1920, 1080)]
NAMES = ("mapView", "runPanel", "timingPlot", "qualityPlot", "runsTable", "compareView", "shardingView", "runButton")


def at_size(qtbot, win: MainWindow, size: tuple[int, int]) -> None:
    win.resize(*size)
    qtbot.waitUntil(lambda: (win.width(), win.height()) == size)
    qtbot.wait(20)  # the layout settles


def assert_map_first(win: MainWindow) -> None:
    share = win.map_share()
    assert share >= MIN_MAP_SHARE, f"the map takes {share:.1%} of a {win.width()}x{win.height()} window"
    for widget in (win.panel, win.timing_plot, win.quality_plot):
        assert visible_share(widget, win) < share  # the largest thing on screen
    assert clipped_texts(win) == []


def test_a_first_start_fits_the_screens_room(window):
    # It opened at 1400x860 whatever the screen: without a window manager to shrink it (a bare X server, VNC),
    # a 1280x800 screen cut the Timings and Quality docks off at its right edge.
    room = window.screen().availableGeometry()  # Qt's offscreen screen: 800x800
    least = window.minimumSizeHint()  # where the screen is smaller still, the window's least size
    assert window.width() <= max(room.width(), least.width()) and window.height() <= max(room.height(), least.height())


def test_the_views_have_their_names(window):
    found = {name: window.findChild(QWidget, name) for name in NAMES}
    assert all(w is not None for w in found.values()), [n for n, w in found.items() if w is None]
    assert found["mapView"] is window.map_view.plot
    assert not found["mapView"].isAncestorOf(window.map_view.inspector.legend)  # the legend is beside it
    assert isinstance(found["runsTable"], QAbstractItemView) and found["runsTable"].model() is window.runs
    assert isinstance(found["runButton"], QAbstractButton) and found["runPanel"].isAncestorOf(found["runButton"])
    assert found["compareView"] is window.comparison and found["shardingView"] is window.sharding_view


@pytest.mark.parametrize("size", SIZES)
def test_the_map_is_the_largest_thing_on_screen_at_first_launch(qtbot, window, size):
    at_size(qtbot, window, size)
    assert window.pages.current_key() == "map"
    assert_map_first(window)


def test_every_field_of_the_run_panel_shows_its_text_whole_at_every_size(qtbot, window):
    area = next(a for a in window.panel.findChildren(QScrollArea) if a.isAncestorOf(window.panel.precision))
    fields = [w for w in area.widget().findChildren(QWidget) if isinstance(w, (QComboBox, QLabel)) and w.isVisible()]
    for size in SIZES:
        at_size(qtbot, window, size)
        for field in fields:
            area.ensureWidgetVisible(field)
            qtbot.wait(1)
            assert clipped_texts(window) == [], (size, field.objectName() or type(field).__name__)


def test_the_map_stays_first_after_a_run_at_every_size(qtbot, window):
    configure(window)
    run_and_wait(qtbot, window)
    qtbot.waitUntil(lambda: window.map_view.last_frame is not None)
    # The timings' summary is one long line: it wraps in its dock, never widening it.
    assert "median" in window.timing_plot.caption.text() and window.timing_plot.caption.wordWrap()
    window.status_label.setText("a status line far longer than the status bar " * 10)  # elided, not widening
    for size in SIZES:
        at_size(qtbot, window, size)
        assert_map_first(window)
    assert window.status_label.toolTip() == window.status_label.text()  # the whole text, where it is cut


def test_the_run_button_starts_the_panels_configuration_at_once(qtbot, window):
    configure(window, iterations=3)
    button = window.findChild(QAbstractButton, "runButton")
    assert button.isEnabled()
    with qtbot.waitSignal(window.controller.run_ended, timeout=60_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert window.controller.busy and not button.isEnabled()
    assert window.error_dialog is None
    assert window.runs.rowCount() == 1 and window.runs.records[-1].config["epochs"] == 3
    qtbot.waitUntil(button.isEnabled)


def squeeze(qtbot, win: MainWindow) -> None:
    """Give the side docks most of a large window, as a user dragging the splitters could (at 1280x800 the
    pages' least width keeps the map its share)."""
    at_size(qtbot, win, (1920, 1080))
    win.resizeDocks([win.docks["run"], win.docks["timings"]], [640, 640], Qt.Orientation.Horizontal)
    qtbot.wait(20)
    assert win.map_share() < MIN_MAP_SHARE


def test_reset_layout_restores_the_default(qtbot, window):
    at_size(qtbot, window, (1920, 1080))
    window.reset_layout()
    qtbot.wait(20)
    default = {k: d.geometry() for k, d in window.docks.items()}
    squeeze(qtbot, window)
    window.docks["quality"].hide()
    window.docks["timings"].setFloating(True)
    window.pages.show_page("compare")
    window.reset_layout_action.trigger()
    qtbot.wait(20)
    assert window.pages.current_key() == "map"
    assert all(d.isVisible() and not d.isFloating() for d in window.docks.values())
    assert {k: d.geometry() for k, d in window.docks.items()} == default
    assert_map_first(window)


def test_a_saved_layout_that_squeezes_the_map_is_not_restored(qtbot, tmp_path):
    path = tmp_path / "settings.ini"
    win = MainWindow(Settings(path))
    qtbot.addWidget(win)
    win.show()
    squeeze(qtbot, win)
    win.close()

    again = MainWindow(Settings(path))
    qtbot.addWidget(again)
    again.resize(1920, 1080)  # the size it was saved at (the offscreen screen is smaller: restoring shrinks it)
    again.show()
    qtbot.wait(20)
    assert_map_first(again)
    assert "too little room" in again.status_label.text()
    again.close()


def test_pages_share_the_central_area_and_a_page_is_one_call(qtbot, window):
    at_size(qtbot, window, (1280, 800))
    assert window.pages.keys == ["map", "runs", "compare", "sharding", "sweep", "inside"]
    for key in window.pages.keys[1:]:
        window.pages.actions_by_key[key].trigger()
        page = window.pages.page(key)
        assert page.isVisible() and window.map_share() == 0
        assert page.width() >= window.width() - 2 * 330  # between the side docks, not a strip below the map
        assert clipped_texts(window) == []
    for name in ("sweepView", "insideView"):
        assert window.findChild(QWidget, name) is not None
    n = window.pages.count()
    later = window.pages.add_page("later", "Later", QLabel("later"))
    later.setObjectName("laterView")
    action = window.pages.actions_by_key["later"]
    assert window.pages.count() == n + 1 and action in window.menus["&View"].actions()
    assert action.shortcut().toString() == f"Ctrl+{n + 1}"
    action.trigger()
    assert window.findChild(QWidget, "laterView").isVisible()


def test_empty_views_say_what_will_appear_and_how(qtbot, window):
    on_map = window.empty.map
    assert on_map.isVisible() and on_map.geometry() == window.map_view.plot.viewport().rect()
    cfg = window.form.state.config
    text = on_map.text()
    for words in (cfg.impl, f"{cfg.width}x{cfg.height}", "1,000 random colours", "Ctrl+R"):
        assert words in text, (words, text)
    for state in (window.empty.timing, window.empty.quality):
        assert state.isVisible() and "appears here" in state.text()
    runs = window.empty.runs
    assert runs.isVisibleTo(window.runs_panel) and "Ctrl+R" in runs.text()  # on the Runs page
    window.panel.grid.setCurrentText("0x5")  # not runnable: the map says so, and why
    assert "cannot run" in on_map.text() and window.form.state.reason in on_map.text()

    configure(window, iterations=3)
    run_and_wait(qtbot, window)
    for state in (on_map, window.empty.timing, window.empty.quality):
        assert not state.isVisible()
    assert not runs.isVisibleTo(window.runs_panel)


def test_a_restart_shows_the_last_runs_map(qtbot, tmp_path):
    path = tmp_path / "settings.ini"
    win = MainWindow(Settings(path))
    qtbot.addWidget(win)
    win.show()
    configure(win, iterations=3)
    run_and_wait(qtbot, win)
    name = win.runs.runs[-1].name
    win.close()

    again = MainWindow(Settings(path))
    qtbot.addWidget(again)
    again.show()
    qtbot.waitUntil(lambda: again.map_view.last_frame is not None)
    assert not again.empty.map.isVisible() and name in again.map_view.caption.text()
    assert again.timing_plot.points.xData is not None and len(again.timing_plot.points.xData)
    again.close()


def test_runs_say_what_they_are_and_their_columns_are_remembered(qtbot, tmp_path):
    from som_studio.app_model.runs import COLUMNS

    path = tmp_path / "settings.ini"
    win = MainWindow(Settings(path))
    qtbot.addWidget(win)
    win.show()
    for grid in ("12x9", "10x8"):
        configure(win, grid=grid, iterations=2)
        run_and_wait(qtbot, win)
    model, data, differs = win.runs, COLUMNS.index("data"), COLUMNS.index("settings that differ")
    assert model.rowCount() == 2
    assert model.index(0, data).data() == "120 random colours"
    win.runs.set_checked([r.id for r in win.runs.runs])
    texts = [model.index(r, differs).data() for r in (0, 1)]
    assert texts[0].startswith("Grid 12 x 9") and texts[1].startswith("Grid 10 x 8"), texts  # the form's words
    assert "Radius σ (start)" in texts[0] and "sigma" not in texts[0]  # the default radii follow the grid
    assert "impl" not in texts[0] and "Epochs" not in texts[0]  # the same in both: not a difference
    from som_studio.qt.runs_panel import DIFFERS_MAX_PX

    assert win.runs_panel.table.columnWidth(differs) <= DIFFERS_MAX_PX  # long ones elided, whole in the tooltip
    assert model.index(0, differs).data(Qt.ItemDataRole.ToolTipRole) == texts[0]
    line = win.comparison.data_line.text()  # the comparison says it too
    assert line.startswith("Data: 120 random colours") and "Grid 10 x 8" in line, line
    header = win.runs_panel.table.horizontalHeader()
    win.runs_panel.columns.set_shown(COLUMNS.index("layout"), False)
    win.comparison.columns.set_shown(2, False)  # the comparison's table too
    win.comparison.refresh()  # filled anew: still hidden
    assert win.comparison.table.horizontalHeader().isSectionHidden(2)
    header.moveSection(header.visualIndex(data), 1)
    win.close()

    again = MainWindow(Settings(path))
    qtbot.addWidget(again)
    header = again.runs_panel.table.horizontalHeader()
    assert header.isSectionHidden(COLUMNS.index("layout")) and header.visualIndex(data) == 1
    menu = again.runs_panel.columns.menu()
    assert [a.isChecked() for a in menu.actions()].count(False) == 1
    assert again.comparison.table.horizontalHeader().isSectionHidden(2)
    again.close()


def test_open_data_sets_the_panels_data_and_remembers_the_folder(qtbot, window, tmp_path, monkeypatch):
    table = tmp_path / "tables" / "wide.csv"
    table.parent.mkdir()
    table.write_text("a,b\n" + "".join(f"{i % 7},{1000 * (i % 5)}\n" for i in range(40)))
    asked: list[str] = []
    offered: list[str] = []

    def answer(parent, caption, start, filters):  # the user picks the file in the dialog
        asked.append(start)
        offered.append(filters)
        return str(table), ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", answer)
    assert window.open_data_action.shortcut().toString() == "Ctrl+Shift+O"
    assert window.open_action.shortcut().toString() == "Ctrl+O"
    window.open_data_action.trigger()
    assert window.form.fields.file and window.form.fields.path == str(table)
    assert window.settings.folder("data") == str(table.parent)
    assert all(f"*{s}" in offered[0].split(";;")[0] for s in (".csv", ".csv.gz", ".tsv.gz", ".parquet"))
    window.open_data_action.trigger()
    assert asked[-1] == str(table.parent)  # the dialog opens where it last chose
    # Ranges 6 and 4000 apart: the panel suggests z-score, and says why.
    qtbot.waitUntil(lambda: "zscore" in window.panel.data_info.text())
    assert "same weight" in window.panel.data_info.text()


def test_implementations_are_grouped_by_kind(window):
    from som_studio.core.impls import registry

    combo = window.panel.impl
    model = combo.model()
    headings = [i for i in range(combo.count()) if combo.itemData(i) is None]
    assert len(headings) >= 4 and headings[0] == 0
    assert all(not model.item(i).isEnabled() for i in headings)
    assert sorted(combo.itemData(i) for i in range(combo.count()) if i not in headings) == sorted(registry.names())
    assert combo.itemText(headings[0]).startswith("NumPy")


def test_a_13_feature_hex_map_with_a_unit_clicked_leaves_the_map_its_share(qtbot, window):
    """The wine table (13 features, labels) on a hex map: the labels view, its legend and a unit's
    details beside the map, at the smallest size."""
    from pathlib import Path

    from som_studio import picture
    from som_studio.config import DataSpec, RunConfig

    wine = Path(__file__).resolve().parents[2] / "resources" / "data" / "wine.csv"
    cfg = RunConfig(
        impl="numpy-batch",
        width=10,
        height=7,
        data=DataSpec(path=str(wine)),
        epochs=3,
        topology="hex",
        scaling="zscore",
        labels="cultivar",
    )
    with qtbot.waitSignal(window.controller.run_ended, timeout=60_000):
        assert window.run_config(cfg) == ""
    view = window.map_view
    view.set_choice(picture.LABELS, 0)
    qtbot.waitUntil(lambda: view.last_frame.view.mode == picture.LABELS)
    view.inspector.select(3, 4)
    qtbot.waitUntil(lambda: view.inspector.index is not None)
    assert view.inspector.panel.isVisible() and view.inspector.legend.isVisible()
    for size in SIZES:
        at_size(qtbot, window, size)
        assert_map_first(window)


@pytest.mark.parametrize(("layout", "split"), [("4x1", False), ("1x4", True), ("2x2", True), ("1x1", False)])
def test_the_sharding_caption_says_whether_the_map_is_split_or_whole(qtbot, layout, split):
    """pmap's copies hold the whole map each: their caption said "rows split over 'map'" under four whole maps."""
    from som_studio.app_model.sharding_layout import layout_description
    from som_studio.qt.widgets.sharding_view import ShardingView

    view = ShardingView()
    qtbot.addWidget(view)
    title = view.map_title(layout_description(layout, 30, 40, 3, 1000)["arrays"]["map"])
    assert ("rows split" in title) == split and ("whole" in title) != split
