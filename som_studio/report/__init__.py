"""A comparison's report: its content, and its files (no Qt).

:func:`compare` turns runs (kept runs, recorders of runs just trained, bare records) into a
:class:`~som_studio.report.content.Report`: the comparison's summary, aligned timing and
quality curves, every run's configuration and where they differ, the environment, the final
maps and the flags (what :mod:`som_studio.comparison` decides). :class:`Exporter` writes it as
HTML, PDF, CSV, JSON, PNG maps and an animation; charts and the PDF are drawn through a
:class:`Renderer`, which the Qt layer implements (offscreen when headless), so nothing here
imports Qt. ``som-studio compare`` and the app's comparison view both go through here.
"""

from som_studio.report.export import EXPORTS, Exporter, ExportError, ExportKind, Renderer
from som_studio.report.pipeline import Comparison, compare

__all__ = ["EXPORTS", "Comparison", "ExportError", "ExportKind", "Exporter", "Renderer", "compare"]
