"""Every text a window shows, gathered for the Korean tests: widgets, actions, models, plots, painted text.

A helper of ``tests/qt/test_korean_app.py`` (not a test module itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QLabel,
    QLineEdit,
    QMenu,
    QPlainTextEdit,
    QSpinBox,
    QTabBar,
    QWidget,
)

from som_studio import config as cfgmod
from som_studio.core.impls import registry
from som_studio.qt.layout_check import clipped_texts as clipped  # the one rule: a text wider than its widget

__all__ = ["HANGUL", "clipped", "english_left", "painted_texts", "plain", "widget_texts"]

HANGUL = re.compile(r"[\uac00-\ud7a3]")
_TAG = re.compile(r"<[^>]+>")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'’.+/-]*[A-Za-z0-9]|[A-Za-z]{2,}")

# Names, units, file types, keys and the configuration's own values (the CLI's words): never translated.
ALLOWED = {
    *(w.lower() for w in ("JAX", "NumPy", "XLA", "GPU", "CPU", "CUDA", "JIT", "vmap", "shard_map", "pmap", "HLO")),
    *("som", "studio", "som-studio", "qe", "te", "rgb", "csv", "json", "html", "pdf", "png", "gif", "webp", "mp4"),
    *(
        "npy",
        "txt",
        "parquet",
        "arrow",
        "feather",
        "somrun",
        "id",
        "ms",
        "mb",
        "gb",
        "kb",
        "µs",
        "ns",
        "samples/s",
        "p95",
        "python",
        "pyside6",
    ),
    *("qt", "pyqtgraph", "jaxlib", "nvidia-smi", "lininit", "toolbox", "k-means", "wxh", "ctrl", "esc", "delete"),
    *("iris", "cpu", "cli", "doctor", "english", "linux"),  # data set, backend, the command line, a language's own name
    *("kib", "mib", "gib", "tib", "b"),
    # Units of work and rate, and the names of programs and HLO instructions the Inside page searches for.
    *("flops", "flop/s", "gflop/s", "gb/s", "stablehlo", "jaxpr", "fusion", "while", "dot", "all-reduce"),
    # The implementations' descriptions name what they call (jax.jit, fori_loop...) and what they compute.
    *("jnp", "argmin", "namedsharding", "segment-sum", "bmu", "hy", "hx", "datax1"),
    *(n.lower() for n in registry.names()),
    *(v.lower() for v in (*cfgmod.TOPOLOGIES, *cfgmod.INITS, *cfgmod.SCALINGS, *cfgmod.PRECISIONS, "auto")),
} - {"none"}  # "none" is a word: the app shows it in Korean (an editable grid keeps "auto", the CLI's word)


def plain(text: str) -> str:
    """``text`` without HTML tags, entities and menu mnemonics."""
    text = _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&")
    text = text.replace("\u2060", "")  # a word joiner (no line break after "/") is not a letter
    text = re.sub(r"'[a-z_]+'", " ", text)  # a quoted identifier (a mesh axis) is a name
    text = re.sub(r"`[^`]*`", " ", text)  # a command in backticks is code
    text = re.sub(r"\b(?:Ctrl|Shift|Alt)\+\S+", " ", text)  # shortcuts
    text = re.sub(r"\b\d[\d,]*(?:x\d+)+\b", " ", text)  # a shape or a grid (135x240x3) is numbers
    return re.sub(r"&(?=\w)", "", text)


def _is_name(word: str, ok: set[str]) -> bool:
    """A name, unit or number: allowed, ``f32``/``x4``, or an identifier from code (``fori_loop``, ``jax.jit``)."""
    w = word.lower()
    return (
        w in ok
        or re.fullmatch(r"[a-z]?\d+[a-z]?|x\d+", w) is not None
        or re.fullmatch(r"[a-z]+(?:_[a-z]+)+|(?:jax|lax|jnp)\.[a-z_]+", w) is not None
    )


def english_words(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """The words of ``text`` that are English (not names, units or configuration values)."""
    ok = ALLOWED | {a.lower() for a in allowed}
    out = []
    for w in _WORD.findall(plain(text)):
        w = w.strip(".'’-/")
        if len(w) < 2 or w.lower() in ok or all(_is_name(part, ok) for part in w.split("/")):
            continue
        out.append(w)
    return out


def _model_texts(view: QAbstractItemView) -> Iterator[str]:
    model = view.model()
    if model is None:
        return
    root = QModelIndex()
    try:
        columns = model.columnCount(root)
    except TypeError:  # a QListWidget's model keeps its columnCount private: one column
        columns = 1
    for i in range(columns):
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            v = model.headerData(i, Qt.Orientation.Horizontal, role)
            if isinstance(v, str):
                yield v
    for r in range(model.rowCount(root)):
        for c in range(columns):
            for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                v = model.index(r, c).data(role)
                if isinstance(v, str):
                    yield v


def _graphics_texts(view: pg.GraphicsView) -> Iterator[str]:
    scene = view.scene()
    if scene is None:
        return
    for item in scene.items():
        if isinstance(item, pg.LabelItem):
            yield item.text
        elif isinstance(item, pg.AxisItem) and item.label.isVisible():
            yield item.labelText
        elif isinstance(item, pg.TextItem):
            yield item.toPlainText()


def widget_texts(root: QWidget) -> Iterator[tuple[str, str]]:
    """``(where, text)`` for every text ``root`` and its children show, and their actions'."""
    for w in (root, *root.findChildren(QWidget)):
        where = f"{type(w).__name__} {w.objectName()}".strip()
        if w.isWindow() or isinstance(w, QDockWidget):
            yield where, w.windowTitle()
        yield where, w.toolTip()
        yield where, w.statusTip()
        if isinstance(w, QLabel):
            yield where, w.text()
        elif isinstance(w, QAbstractButton):
            yield where, w.text()
        elif isinstance(w, QGroupBox):
            yield where, w.title()
        elif isinstance(w, QLineEdit):
            yield where, w.placeholderText()
        elif isinstance(w, QPlainTextEdit):
            yield where, w.toPlainText()
        elif isinstance(w, QMenu):
            yield where, w.title()
        elif isinstance(w, QTabBar):
            for i in range(w.count()):
                yield where, w.tabText(i)
                yield where, w.tabToolTip(i)
        if isinstance(w, QComboBox):
            for i in range(w.count()):
                yield where, w.itemText(i)
                tip = w.itemData(i, Qt.ItemDataRole.ToolTipRole)
                if isinstance(tip, str):
                    yield where, tip
        if isinstance(w, QSpinBox):
            yield where, w.specialValueText()
        if isinstance(w, QAbstractSpinBox) and hasattr(w, "suffix"):
            yield where, w.suffix()
        if isinstance(w, QAbstractItemView) and not isinstance(w, QComboBox):
            for t in _model_texts(w):
                yield where, t
        if isinstance(w, pg.GraphicsView):
            for t in _graphics_texts(w):
                yield where, t
    for a in root.findChildren(QAction):
        yield f"QAction {a.text()!r}", a.text()
        yield f"QAction {a.text()!r}", a.toolTip()
        if a.menu() is not None:
            yield f"QMenu {a.text()!r}", a.menu().title()


def painted_texts(widget: QWidget, monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    """The strings ``widget`` paints with ``QPainter.drawText`` (drawn once into a pixmap)."""
    from PySide6.QtGui import QPainter

    seen: list[str] = []
    original = QPainter.drawText

    def record(self, *args):  # type: ignore[no-untyped-def]
        seen.extend(a for a in args if isinstance(a, str))
        return original(self, *args)

    monkeypatch.setattr(QPainter, "drawText", record)
    widget.grab()
    monkeypatch.setattr(QPainter, "drawText", original)
    return seen


def english_left(
    texts: Iterable[tuple[str, str]], allowed: Iterable[str] = (), pending: Iterable[str] = ()
) -> list[str]:
    """``"where: text [words]"`` for each text with English words left (``pending``: parts left out)."""
    skip = sorted(set(pending), key=len, reverse=True)
    out = []
    for where, text in texts:
        for part in skip:
            text = text.replace(part, " ")
        if not text.strip():
            continue
        words = english_words(text, allowed)
        if words:
            out.append(f"{where}: {text!r} {words}")
    return sorted(set(out))
