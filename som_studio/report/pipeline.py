"""Runs to a comparison: the step every view and exporter of a comparison starts from."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from som_studio.report.content import Report, build_report

Comparison = Report
"""A comparison of runs: the report's content (tables, aligned curves, speed-ups, maps, flags)."""


def compare(runs: Sequence[Any], baseline: str | None = None, title: str | None = None) -> Comparison:
    """The comparison of ``runs``, in their order.

    Parameters
    ----------
    runs : :class:`~som_studio.storage.StoredRun`, :class:`~som_studio.storage.RunRecorder`,
        :class:`~som_studio.storage.runfile.StoredRun` or bare
        :class:`~som_studio.session.record.RunRecord` (no maps), mixed freely.
    baseline : the run name speed-ups are measured against; default: the NumPy run of each kind.
    title : the report's title; default: the implementations compared.
    """
    return build_report(runs, baseline=baseline, title=title)
