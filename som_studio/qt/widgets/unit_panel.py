"""The unit-details panel: what one clicked unit of the map holds.

Renders a :class:`~som_studio.app_model.units.UnitDetails` (computed Qt-free):
its codebook by feature name in the data's original units, its hit count, its
labels (examples per label) and its examples' rows.

Threads: GUI thread only.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QToolButton, QVBoxLayout, QWidget

from som_studio.app_model.units import UnitDetails

WIDTH = 200
"""The panel's width, in pixels: at 1280x800 the map beside it keeps 35 % of the window."""


class UnitPanel(QWidget):
    """Shows one unit's details; hidden until a unit is clicked. ``closed`` when the user closes it."""

    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.details: UnitDetails | None = None
        self.title = QLabel()
        self.title.setStyleSheet("font-weight: bold")
        self.title.setWordWrap(True)  # a long title wraps within the panel's width
        close = QToolButton()
        close.setText("×")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Close the unit's details"))
        close.clicked.connect(self._close)
        self.body = QLabel()
        self.body.setTextFormat(Qt.TextFormat.RichText)
        self.body.setWordWrap(True)
        self.body.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.body.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setWidget(self.body)
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(close)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(head)
        lay.addWidget(scroll, 1)
        # Beside the map, this wide: a wider codebook scrolls, the map keeps its room.
        self.setFixedWidth(WIDTH)
        self.hide()

    def _close(self) -> None:
        self.hide()
        self.closed.emit()

    def show_details(self, details: UnitDetails, note: str = "") -> None:
        """Show ``details``; ``note``: a line under them (the codebook or rows still to come)."""
        self.details = details
        self.title.setText(details.title)
        self.body.setText(self._html(details, note))
        self.show()

    def text(self) -> str:
        """The panel's content as plain text (tests, copy)."""
        return self.title.text() + "\n" + self.body.text()

    def _html(self, d: UnitDetails, note: str) -> str:
        e = html.escape
        parts: list[str] = []
        if d.codebook:
            rows = "".join(
                f"<tr><td>{e(name)}</td><td align='right'>&nbsp;{value:.4g}</td></tr>" for name, value in d.codebook
            )
            heading = self.tr("Codebook")
            parts.append(f"<b>{e(heading)}</b><table>{rows}</table>")
        facts = []
        if d.hits is not None:
            facts.append(self.tr("Hits: {n}").format(n=d.hits))
        if d.label is not None:
            label = d.label or self.tr("(no examples)")
            if d.purity is not None:
                facts.append(self.tr("Label: {label} (purity {purity:.2f})").format(label=e(label), purity=d.purity))
            else:
                facts.append(self.tr("Label: {label}").format(label=e(label)))
        if d.cluster is not None:
            facts.append(self.tr("Cluster: {k}").format(k=d.cluster))
        if facts:
            parts.append("<br>".join(facts))
        if d.label_counts:
            rows = "".join(f"<tr><td>{e(name)}</td><td align='right'>&nbsp;{n}</td></tr>" for name, n in d.label_counts)
            heading = self.tr("Labels of its examples")
            parts.append(f"<b>{e(heading)}</b><table>{rows}</table>")
        if d.example_count is not None:
            if d.example_ids:
                heading = self.tr("Examples by id ({n})").format(n=d.example_count)
            else:
                heading = self.tr("Example data rows ({n}; the first is 1)").format(n=d.example_count)
            parts.append(f"<b>{e(heading)}</b><br>{e(d.rows_text())}")
        if note:
            parts.append(f"<i>{e(note)}</i>")
        return "<br>".join(parts)
