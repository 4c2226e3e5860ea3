"""Measuring the window's layout: how much of it the map takes, and which texts are cut off.

The window uses :func:`visible_share` to refuse a saved layout that leaves the
map too little room; ``bench/ui_review.py`` and the Qt tests use both to hold
the layout to its rule (geometry, not pixels).

Threads: GUI thread only.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QComboBox,
    QLabel,
    QRadioButton,
    QStyle,
    QStyleOptionComboBox,
    QWidget,
)

MIN_MAP_SHARE = 0.35
"""The least share of the window's area the map view shows, whenever the map is shown."""

_TAG = re.compile(r"<[^>]+>")


def visible_rect(widget: QWidget, window: QWidget) -> QRect:
    """The part of ``widget`` that its ancestors up to ``window`` leave in sight, in ``window``'s coordinates.

    Empty when the widget is hidden (a page not chosen, a closed dock)."""
    if not widget.isVisible():
        return QRect()
    rect = QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())
    parent = widget.parentWidget()
    while parent is not None and parent is not window:
        rect = rect.intersected(QRect(parent.mapTo(window, QPoint(0, 0)), parent.size()))
        parent = parent.parentWidget()
    return rect.intersected(window.rect())


def visible_share(widget: QWidget, window: QWidget) -> float:
    """The share of ``window``'s area in which ``widget`` is seen (0 when hidden)."""
    r = visible_rect(widget, window)
    area = window.width() * window.height()
    return r.width() * r.height() / area if area and not r.isEmpty() else 0.0


def _plain(text: str) -> str:
    text = _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&amp;", "&")
    return re.sub(r"&(?=\w)", "", text)  # a menu mnemonic takes no room


def _combo_room(combo: QComboBox) -> int:
    """The width a combo box draws its current text in: its edit field, less the style's margins."""
    opt = QStyleOptionComboBox()
    combo.initStyleOption(opt)
    style = combo.style()
    field = style.subControlRect(QStyle.ComplexControl.CC_ComboBox, opt, QStyle.SubControl.SC_ComboBoxEditField, combo)
    return field.width() - 2 * style.pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, opt, combo)


def clipped_texts(root: QWidget) -> list[str]:
    """Visible labels, buttons and combo boxes whose one-line text is wider than the part of them in sight.

    A label that wraps (or rich text, which lays itself out) and an icon-only
    button are not text cut off; neither is a label that elides its text on purpose
    (its ``elided`` property is true, its whole text in the tool tip)."""
    out = []
    window = root.window()
    for w in root.findChildren(QWidget):
        if not w.isVisible() or not isinstance(w, (QLabel, QAbstractButton, QComboBox)):
            continue
        seen = visible_rect(w, window)
        if seen.isEmpty():
            continue  # scrolled out of sight: not cut, there to scroll to
        if isinstance(w, QLabel) and (w.wordWrap() or w.textFormat() == Qt.TextFormat.RichText or w.property("elided")):
            continue
        text = w.currentText() if isinstance(w, QComboBox) else _plain(w.text())
        if not text.strip() or "\n" in text:
            continue
        need = w.fontMetrics().horizontalAdvance(text)
        room = w.contentsRect().width()
        if isinstance(w, QComboBox):
            room = _combo_room(w)
        elif isinstance(w, (QCheckBox, QRadioButton)):
            room = w.width() - w.style().pixelMetric(QStyle.PixelMetric.PM_IndicatorWidth) - 4
        elif isinstance(w, QAbstractButton):
            room = w.width() - 2 * w.style().pixelMetric(QStyle.PixelMetric.PM_ButtonMargin) // 2
        # A scroll area or a narrow dock can hide a widget's right side: the room is what is seen.
        room -= w.width() - seen.width()
        if room + 1 < need:
            out.append(f"{type(w).__name__} {text!r}: {room} px for {need} px")
    return out
