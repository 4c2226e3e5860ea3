"""The one comparison pipeline: runs -> a comparison -> files. Qt-free.

:func:`compare` turns runs (kept runs, recorders of runs just trained, bare
records) into a :class:`~som_studio.report.content.Report`: aligned timing and
quality curves, the summary table with speed-ups, every run's configuration
and where they differ, the environment, the final maps and flags on suspect
numbers. :class:`Exporter` writes it as HTML, PDF, CSV, JSON, PNG maps and an
animation; charts and the PDF are drawn through a :class:`Renderer`, which the
Qt layer implements (offscreen when headless), so nothing here imports Qt.
``som-studio compare`` and the app's comparison view both go through here.
"""

from som_studio.comparison.export import EXPORTS, Exporter, ExportError, ExportKind, Renderer
from som_studio.comparison.pipeline import Comparison, compare

__all__ = ["EXPORTS", "Comparison", "ExportError", "ExportKind", "Exporter", "Renderer", "compare"]
