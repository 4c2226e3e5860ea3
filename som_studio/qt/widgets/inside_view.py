"""The Inside page: the roofline of the runs compared, its table, and the programs XLA compiled.

A thin view over plain data (:mod:`som_studio.report.inside` reads each run's
``extra.inside``): a log-log chart of achieved FLOP/s against arithmetic
intensity (FLOPs per byte) under the device's two ceilings, one point per run;
beside it a table that says per run the fraction of the ceiling it reached and
what bounds it; below, the program's text (optimized HLO, StableHLO or jaxpr)
folded by computation and searchable. :func:`draw_roofline` is shared with the
report's chart.

Run alone with made-up runs: ``python -m som_studio.qt.widgets.inside_view``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from som_studio.core.inspection.hlo import folded
from som_studio.qt.chart_style import LIGHT, ChartTheme, readable_axes, style_plot, style_widget, theme_of
from som_studio.report.inside import INSIDE_HEADER, Roofline, inside_of, inside_rows, notes, roofline
from som_studio.session.record import RunRecord

# The runs' colours, as the report's charts give them.
G = 1e9  # the chart's FLOP/s are GFLOP/s
# The program texts a record may hold, in the order the viewer offers them.
PROGRAM_KINDS = ("hlo", "stablehlo", "jaxpr")


def draw_roofline(plot: Any, line: Roofline, labels: bool = True, theme: ChartTheme = LIGHT) -> None:
    """Draw ``line`` into a pyqtgraph ``PlotItem`` (log-log): the two ceilings, then a point per run.

    In ``theme``'s colours, as every chart of the app and the report.

    The plot is cleared first; its axes get their labels here. Coordinates are given in decades (log10),
    as pyqtgraph's log mode expects of items added by hand.
    """
    plot.clear()
    plot.setLogMode(x=True, y=True)
    for side in ("left", "bottom"):  # the unit is in the label (GFLOP/s): no "(x1e+09)" added to it
        plot.getAxis(side).enableAutoSIPrefix(False)
    style_plot(plot, theme, plot_words()["x"], plot_words()["y"])
    lo, hi = line.intensity_range()
    peak, bw = line.peak_flops_per_s, line.bandwidth_bytes_per_s
    if peak and bw:
        ridge = peak / bw
        xs = [lo, ridge, hi]
        plot.plot(xs, [bw * lo / G, peak / G, peak / G], pen=pg.mkPen(theme.muted, width=2))
        if labels:
            for text, x, y, anchor in (
                (plot_words()["compute"].format(v=peak / G), math.log10(hi), math.log10(peak / G), (1, 1)),
                (plot_words()["memory"].format(v=bw / G), math.log10(lo), math.log10(bw * lo / G), (0, 0)),
            ):
                item = pg.TextItem(text, color=theme.muted, anchor=anchor)
                item.setPos(x, y)
                plot.addItem(item)
    for i, p in enumerate(line.points):
        colour = theme.colour(i)
        plot.plot(
            [p.intensity],
            [p.achieved / G],
            pen=None,
            symbol="o",
            symbolSize=11,
            symbolBrush=colour,
            symbolPen=theme.background,
        )
        if labels:
            # A point in the right part of the plot is named to its left: named to its right, the plot's edge cut
            # its name ("numpy-batc").
            right = math.log10(p.intensity / lo) > 0.6 * math.log10(hi / lo) if hi > lo > 0 else False
            item = pg.TextItem(p.name, color=colour, anchor=(1, 1.2) if right else (0, 1.2))
            item.setPos(math.log10(p.intensity), math.log10(p.achieved / G))
            plot.addItem(item)
    ys = [p.achieved / G for p in line.points] + [v / G for v in (peak, bw * lo if bw else None) if v]
    if ys:
        plot.setYRange(math.log10(min(ys)) - 0.5, math.log10(max(ys)) + 0.5, padding=0)
    plot.setXRange(math.log10(lo), math.log10(hi), padding=0)


def plot_words() -> dict[str, str]:
    """The chart's words in the user's language (the report's chart says the same)."""
    return {
        "x": QCoreApplication.translate("InsideView", "arithmetic intensity (FLOPs per byte)"),
        "y": QCoreApplication.translate("InsideView", "achieved GFLOP/s"),
        "compute": QCoreApplication.translate("InsideView", "float32 matmul: {v:.3g} GFLOP/s"),
        "memory": QCoreApplication.translate("InsideView", "memory: {v:.3g} GB/s"),
    }


class InsideTable(QAbstractTableModel):
    """The roofline table's rows (:func:`~som_studio.report.inside.inside_rows`) as a Qt model."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.rows: list[list[str]] = []

    def set_rows(self, rows: list[list[str]]) -> None:
        self.beginResetModel()
        self.rows = rows
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(INSIDE_HEADER)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            from som_studio.i18n import _

            return _(INSIDE_HEADER[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and index.isValid():
            return self.rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class ProgramText(QWidget):
    """A program's text folded by computation (one branch each, its lines inside), with a search box.

    Searching keeps the computations that hold the text, opens them and selects the first line that matches.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setObjectName("insideSearch")
        self.search.setPlaceholderText(self.tr("Search the program (e.g. fusion, while, dot, all-reduce)"))
        self.search.setClearButtonEnabled(True)
        self.tree = QTreeWidget()
        self.tree.setObjectName("insideProgram")
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setStyleHint(QFont.StyleHint.Monospace)
        self.tree.setFont(mono)
        self.count = QLabel()
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.count)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(top)
        lay.addWidget(self.tree, 1)
        self.search.textChanged.connect(self._on_search)

    def set_text(self, text: str) -> None:
        self.tree.clear()
        for head, body in folded(text):
            lines = body.splitlines()
            top = QTreeWidgetItem([head or self.tr("(module)")])
            top.setToolTip(0, head)
            top.addChildren([QTreeWidgetItem([ln]) for ln in lines[1:] if ln.strip() != "}"] if head else
                            [QTreeWidgetItem([ln]) for ln in lines])  # fmt: skip
            self.tree.addTopLevelItem(top)
        self.count.setText(self.tr("{n} computations").format(n=self.tree.topLevelItemCount()))
        self._on_search(self.search.text())

    def _on_search(self, text: str) -> None:
        needle = text.strip().lower()
        first: QTreeWidgetItem | None = None
        shown = 0
        for i in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(i)
            if top is None:
                continue
            hit = None
            if needle:
                if needle in top.text(0).lower():
                    hit = top
                for j in range(top.childCount()):
                    child = top.child(j)
                    if child is not None and needle in child.text(0).lower():
                        hit = hit or child
                        break
            top.setHidden(bool(needle) and hit is None)
            top.setExpanded(bool(needle) and hit is not None)
            shown += not top.isHidden()
            first = first or hit
        if first is not None:
            self.tree.setCurrentItem(first)
            self.tree.scrollToItem(first)
        if needle:
            self.count.setText(self.tr("{n} computations match").format(n=shown))
        else:
            self.count.setText(self.tr("{n} computations").format(n=self.tree.topLevelItemCount()))


class InsideView(QWidget):
    """The Inside page: roofline, table, program text of the runs given to :meth:`set_runs`.

    Threads: GUI thread only.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("insideView")
        self._names: list[str] = []
        self._records: list[RunRecord] = []
        self.plot = pg.PlotWidget(axisItems=readable_axes(("left", "bottom")))
        self.plot.setObjectName("insideRoofline")
        style_widget(self.plot, theme_of(self))
        self.plot.setMinimumSize(240, 180)
        self.table = QTableView()
        self.table.setObjectName("insideTable")
        self.model = InsideTable(self)
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.table, 1)
        rl.addWidget(self.notes)
        # Each rung's source, to read what the numbers come from.
        self.sources = QLabel()
        self.sources.setObjectName("insideSources")
        self.sources.setWordWrap(True)
        self.sources.setTextFormat(Qt.TextFormat.RichText)
        self.sources.setOpenExternalLinks(True)
        rl.addWidget(self.sources)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(self.plot)
        top.addWidget(right)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)
        # The same 3 : 2 from the start: stretch shares out only the room past the size hints, and the plot's took
        # it all (the table and its notes in a fifth of the page, the table's columns behind a scroll bar).
        top.setSizes([600, 400])
        self.which = QComboBox()
        self.which.setObjectName("insideWhich")
        self.program = ProgramText()
        self.program_note = QLabel()
        self.program_note.setWordWrap(True)
        bottom = QWidget()
        bl = QVBoxLayout(bottom)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.addWidget(self.which)
        bl.addWidget(self.program_note)
        bl.addWidget(self.program, 1)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(top)
        body.addWidget(bottom)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        self.empty = QLabel(
            self.tr(
                "The roofline of the runs ticked in the run list appears here: for each run, the FLOP/s it "
                "achieved against its arithmetic intensity (FLOPs per byte), under the device's float32 matmul "
                "and memory ceilings, with what bounds it and the program XLA compiled.\n\n"
                "A run shows here when it recorded its inside: tick Record the inside of the next runs above and "
                "run it, or run `som-studio bench --inside --keep-programs --save-runs DIR` (or `som-studio "
                "explain`) and open the runs with File > Open run…"
            )
        )
        self.empty.setObjectName("insideEmpty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.record = QCheckBox(self.tr("Record the inside of the next runs"))
        self.record.setObjectName("insideRecord")
        self.record.setToolTip(
            self.tr(
                "After each run's timed iterations, compile its program once more and keep what XLA made of it "
                "(its texts too: a kept run grows by their size) and the device's ceilings (measured once)"
            )
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(body)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addWidget(self.record)
        lay.addWidget(self.stack)
        self.which.currentIndexChanged.connect(self._on_which)
        self.set_runs([], [])

    def session_options(self) -> dict[str, Any]:
        """What the next run's session is asked (:class:`~som_studio.session.session.Session`'s keywords)."""
        return {"inside": True, "keep_programs": True} if self.record.isChecked() else {}

    # -- feeding ---------------------------------------------------------------------------
    def set_runs(self, names: Sequence[str], records: Sequence[RunRecord]) -> None:
        """Show these runs (the ticked ones); runs without ``extra.inside`` are left out."""
        self._names, self._records = list(names), list(records)
        line = roofline(self._names, self._records)
        if line is None:
            self.stack.setCurrentWidget(self.empty)
            self.model.set_rows([])
            self.which.clear()
            return
        self.stack.setCurrentIndex(1)
        theme = theme_of(self)
        style_widget(self.plot, theme)
        draw_roofline(self.plot.getPlotItem(), line, theme=theme)
        self.model.set_rows(inside_rows(self._names, self._records))
        self.notes.setText("\n".join(notes(self._names, self._records)))
        self.sources.setText(self._source_links())
        self.which.blockSignals(True)
        self.which.clear()
        kinds = {"hlo": self.tr("optimized HLO"), "stablehlo": self.tr("StableHLO"), "jaxpr": self.tr("jaxpr")}
        for name, record in zip(self._names, self._records):
            got = inside_of(record)
            if got is None:
                continue
            for prog, texts in (got.get("programs") or {}).items():
                for kind in PROGRAM_KINDS:
                    if texts.get(kind):
                        self.which.addItem(f"{name}: {prog} — {kinds[kind]}", (name, prog, kind))
        self.which.blockSignals(False)
        self._on_which(self.which.currentIndex())

    def _source_links(self) -> str:
        """Links to the shown runs' implementations' source files (rich text), or ``""``."""
        from html import escape
        from pathlib import Path

        from som_studio.core.impls import registry

        links = []
        for impl in dict.fromkeys(r.impl for r in self._records if inside_of(r) is not None):
            source = registry.get(impl).source if impl in registry.names() else None
            if source:
                links.append(f'<a href="{Path(source).as_uri()}">{escape(impl)}: {escape(Path(source).name)}</a>')
        return self.tr("Source: {links}").format(links=" · ".join(links)) if links else ""

    def _on_which(self, index: int) -> None:
        data = self.which.itemData(index) if index >= 0 else None
        if data is None:
            self.program.set_text("")
            self.program_note.setText(
                self.tr(
                    "No program text kept with these runs: record them with `som-studio bench --inside "
                    "--keep-programs`, or write one with `som-studio explain --hlo FILE`."
                )
            )
            return
        name, prog, kind = data
        record = self._records[self._names.index(name)]
        text = ((inside_of(record) or {}).get("programs") or {}).get(prog, {}).get(kind) or ""
        self.program_note.setText("")
        self.program.set_text(text)


def _preview() -> None:  # pragma: no cover - run by hand
    import sys

    from PySide6.QtWidgets import QApplication

    from som_studio.core.inspection import inside

    app = QApplication.instance() or QApplication(sys.argv)
    ceiling = {"matmul_flops_per_s": 5e10, "bandwidth_bytes_per_s": 2e10, "measured_with": {"matmul": "made up"}}
    records = []
    for name, flops, nbytes, s in (
        ("jax-fused-batch", 4.1e8, 1.2e8, 0.015),
        ("jax-vmap-batch", 8.1e8, 1.8e9, 4.5),
        ("jax-jit-online", 8.8e5, 2.2e6, 4e-4),
    ):
        static = {"xla_flops_per_iteration": flops, "xla_bytes_per_iteration": nbytes, "kernels_per_iteration": 12}
        got = inside.assemble(static, {"flops": flops, "bytes": nbytes}, ceiling=ceiling, seconds_per_iteration=s)
        got["programs"] = {
            "chunk": {"hlo": "HloModule m\n\nENTRY %main (a: f32[]) -> f32[] {\n  ROOT %a = f32[] parameter(0)\n}\n"}
        }
        records.append(RunRecord(impl=name, kind="batch", config={}, extra={"inside": got}))
    view = InsideView()
    view.set_runs([r.impl for r in records], records)
    view.resize(1100, 700)
    view.show()
    app.exec()


if __name__ == "__main__":  # pragma: no cover
    _preview()
