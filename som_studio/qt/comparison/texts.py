"""The comparison view's words: its chart tabs, the notes on what the comparison flags.

Translated in the ``ComparisonView`` context, as the view's own strings.

Threads: GUI thread only.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QCoreApplication

from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.report import Comparison
from som_studio.report.content import NOISY_RATIO

translate = QCoreApplication.translate
CHARTS = (  # titles shown through translate("ComparisonView", ...)
    ("maps", QT_TRANSLATE_NOOP("ComparisonView", "Final maps")),
    ("timing", QT_TRANSLATE_NOOP("ComparisonView", "Time per iteration")),
    ("quality", QT_TRANSLATE_NOOP("ComparisonView", "Quality")),
)


def notes_html(report: Comparison | None) -> str:
    """The notes above the summary table: what the comparison flags, as HTML."""
    if report is None:
        return translate(
            "ComparisonView", "Tick runs in the Runs list to compare them, or tick implementations and press Compare."
        )
    if not report.flags:
        clean = translate(
            "ComparisonView",
            "No suspect numbers: no recompiles after warm-up, steady iterations "
            "(p95 within {ratio}x the median), the same configuration for every run.",
        ).format(ratio=f"{NOISY_RATIO:g}")
        return f"<span style='color:#2e7d4f'>{escape(clean)}</span>"
    lines = []
    for f in report.flags:
        color = "#a05a00" if f.level == "warning" else "#3a5a9a"
        word = translate("ComparisonView", "Warning:") if f.level == "warning" else translate("ComparisonView", "Note:")
        lines.append(f"<b style='color:{color}'>{word}</b> {escape(f.text)}")
    return "<br>".join(lines)
