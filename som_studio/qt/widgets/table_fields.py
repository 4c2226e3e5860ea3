"""The run panel's map and table controls: lattice, toroid, initialisation, scaling, column roles, clusters.

A thin view of the form's fields (:class:`~som_studio.app_model.form.FormFields`):
it renders them with the data file's columns (once read) and reports each
edit as ``edited(name, value)``; the form decides everything else.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QWidget,
)

from som_studio import config as cfgmod
from som_studio.app_model.form import FormFields, labels
from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.run_settings import Topology
from som_studio.session.resolve import AUTO

translate = QCoreApplication.translate
NONE = "—"  # no column chosen: a dash, in any language (never a column's name)
_INIT_TIPS = {  # shown through translate("TableFields", ...)
    AUTO: QT_TRANSLATE_NOOP("TableFields", "pca for a data file, random for random colours (as the CLI)"),
    "random": QT_TRANSLATE_NOOP("TableFields", "each feature uniform between its smallest and largest value"),
    "pca": QT_TRANSLATE_NOOP(
        "TableFields", "the map spans the first two principal components (the SOM Toolbox's lininit)"
    ),
    "sample": QT_TRANSLATE_NOOP("TableFields", "each unit starts at a random example"),
}


def _init_tip(name: str) -> str:
    return translate("TableFields", _INIT_TIPS[name]) if name in _INIT_TIPS else ""


def _combo(items: tuple[str, ...], tip: str = "") -> QComboBox:
    box = QComboBox()
    box.addItems(items)
    box.setToolTip(tip)
    # Long column names must not widen the panel (a panel they widen clips its labels and scrolls sideways).
    box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    box.setMinimumContentsLength(6)
    return box


class TableFields(QWidget):
    """Lattice, Toroid, Initialisation, Scaling, Label column, Ignore, ID column and Clusters.

    ``edited`` is emitted with a :class:`FormFields` name and its new value,
    only for the user's edits (never while rendering).
    """

    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rendering = False
        self.topology = _combo(
            cfgmod.TOPOLOGIES, self.tr("{rect}: 4 neighbours in a square grid; {hex}: 6 in offset rows")
        )
        self.topology.setToolTip(self.topology.toolTip().format(rect=Topology.RECT, hex=Topology.HEX))
        self.toroid = QCheckBox(labels()["toroid"])
        self.toroid.setToolTip(self.tr("distances wrap around both axes (a hex toroid needs an even height)"))
        self.init = _combo((), _init_tip(AUTO))
        for i, name in enumerate((AUTO, *cfgmod.INITS)):
            self.init.addItem(self.tr("auto") if name == AUTO else name, name)  # "auto" in words, methods by name
            self.init.setItemData(i, _init_tip(name), Qt.ItemDataRole.ToolTipRole)
        self.scaling = _combo(
            (),
            self.tr("each feature of the file: {minmax} to [0, 1]; {zscore} to mean 0, sd 1").format(
                minmax="minmax", zscore="zscore"
            ),
        )
        for name in cfgmod.SCALINGS:
            self.scaling.addItem(self.tr("none") if name == "none" else name, name)
        self.labels = _combo((NONE,), self.tr("the column holding each row's label (shown on the map, and its purity)"))
        self.id_column = _combo((NONE,), self.tr("a column carried through to projections of new data"))
        self.ignore = QToolButton()
        self.ignore.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.ignore.setToolTip(self.tr("columns of the file left out of training"))
        self.ignore.setMenu(QMenu(self.ignore))
        # Many ignored names must not widen the panel: the button shows what fits (its tooltip all).
        self.ignore.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.ignore.setMinimumWidth(60)
        self.clusters = QSpinBox()
        self.clusters.setRange(0, cfgmod.MAX_CLUSTERS)
        self.clusters.setSpecialValueText(self.tr("none"))
        self.clusters.setToolTip(self.tr("k-means clusters of the trained codebook; 0: no clusters"))
        self._columns: tuple[str, ...] = ()
        self._ignored: tuple[str, ...] = ()

        self.topology.currentTextChanged.connect(lambda t: self._edit("topology", t))
        self.toroid.toggled.connect(lambda on: self._edit("toroid", on))
        self.init.currentIndexChanged.connect(lambda _i: self._edit("init", self.init.currentData()))
        self.scaling.currentIndexChanged.connect(lambda _i: self._edit("scaling", self.scaling.currentData()))
        self.labels.currentTextChanged.connect(lambda t: self._edit("labels", "" if t == NONE else t))
        self.id_column.currentTextChanged.connect(lambda t: self._edit("id_column", "" if t == NONE else t))
        self.clusters.valueChanged.connect(lambda n: self._edit("clusters", n))

    def add_rows(self, rows: QFormLayout) -> None:
        """Add the controls to ``rows``, each named as the CLI's flag words."""
        names = labels()
        lattice = QHBoxLayout()
        lattice.addWidget(self.topology, 1)
        lattice.addWidget(self.toroid)
        rows.addRow(names["topology"], lattice)
        for key in ("init", "scaling", "labels", "ignore", "id_column", "clusters"):
            rows.addRow(names[key], getattr(self, key))

    def _edit(self, name: str, value: Any) -> None:
        if not self._rendering:
            self.edited.emit(name, value)

    def _toggle_ignored(self, column: str, on: bool) -> None:
        kept = [c for c in self._ignored if c != column] + ([column] if on else [])
        self._edit("ignore", tuple(c for c in self._columns if c in kept) or tuple(kept))

    def show_fields(self, f: FormFields, columns: tuple[str, ...]) -> None:
        """Show ``f``; ``columns`` (the file's, once read) are the label, ignore and id choices."""
        self._rendering = True
        try:
            self.topology.setCurrentText(f.topology)
            self.toroid.setChecked(f.toroid)
            self.init.setCurrentIndex(max(self.init.findData(f.init or AUTO), 0))
            self.init.setToolTip(_init_tip(f.init or AUTO))
            self.scaling.setCurrentIndex(max(self.scaling.findData(f.scaling), 0))
            self.clusters.setValue(f.clusters)
            # The chosen names stay offered while a new file is read (its columns are not known yet).
            offered = columns or tuple(c for c in (f.labels, f.id_column, *f.ignore) if c)
            for box, chosen in ((self.labels, f.labels), (self.id_column, f.id_column)):
                items = (NONE, *offered)
                if tuple(box.itemText(i) for i in range(box.count())) != items:
                    box.clear()
                    box.addItems(items)
                box.setCurrentText(chosen or NONE)
            self._columns, self._ignored = offered, tuple(f.ignore)
            menu = self.ignore.menu()
            menu.clear()
            for c in offered:
                act = menu.addAction(c)
                act.setCheckable(True)
                act.setChecked(c in f.ignore)
                act.toggled.connect(lambda on, c=c: self._toggle_ignored(c, on))
            self.ignore.setText(", ".join(f.ignore) if f.ignore else NONE)
            self.ignore.setToolTip(
                self.tr("left out of training: {columns}").format(columns=", ".join(f.ignore) or NONE)
            )
            self.ignore.setEnabled(bool(offered) and f.file)
            for w in (self.scaling, self.labels, self.id_column):
                w.setEnabled(f.file)
        finally:
            self._rendering = False


def note(style: str = "color: #555;") -> QLabel:
    """A label that wraps its text to the panel's width (it never widens the panel)."""
    label = QLabel()
    label.setWordWrap(True)
    label.setStyleSheet(style)
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
    label.setMinimumWidth(1)
    return label
