"""The comparison view's words: its chart tabs, the notes on what the comparison flags.

Translated in the ``ComparisonView`` context, as the view's own strings.

Threads: GUI thread only.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from PySide6.QtCore import QCoreApplication

from som_studio.qt.i18n import QT_TRANSLATE_NOOP
from som_studio.report import Comparison
from som_studio.report.content import NOISY_RATIO
from som_studio.storage import StoredRun

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


def data_text(runs: Sequence[StoredRun]) -> str:
    """What the compared runs trained on (one line when they share it), and the settings they differ in."""
    from som_studio.app_model.runs import data_text as run_data
    from som_studio.app_model.runs import differing_settings

    if not runs:
        return ""
    data = [run_data(r.record.config) for r in runs]
    if len(set(data)) == 1:
        lines = [translate("ComparisonView", "Data: {data}").format(data=data[0])]
    else:
        each = "; ".join(f"{r.name}: {d}" for r, d in zip(runs, data))
        lines = [translate("ComparisonView", "Data: {data}").format(data=each)]
    differs = differing_settings(runs)
    if any(differs.values()):
        each = "; ".join(f"{r.name}: {differs[r.id]}" for r in runs if differs.get(r.id))
        lines.append(translate("ComparisonView", "Settings that differ: {settings}").format(settings=each))
    return "\n".join(lines)
