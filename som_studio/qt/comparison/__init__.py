"""Comparing runs in the app: the comparison view, the compare queue and the recorder of every run.

* :class:`LiveRecorder` keeps every run the controller trains as a
  :class:`~som_studio.storage.StoredRun`, through the one Qt-free recorder.
* :class:`ComparisonView` renders the comparison of the ticked runs (the
  Qt-free :mod:`som_studio.report` builds and exports it) and runs
  ticked implementations one after another (:class:`CompareQueue`).

Run alone with two real runs: ``python -m som_studio.qt.comparison``.
"""

from som_studio.qt.comparison.queue import CompareQueue, ImplementationPicker
from som_studio.qt.comparison.recording import LiveRecorder, history_folder
from som_studio.qt.comparison.summary import SummaryModel
from som_studio.qt.comparison.view import ComparisonView

__all__ = ["CompareQueue", "ComparisonView", "ImplementationPicker", "LiveRecorder", "SummaryModel", "history_folder"]
