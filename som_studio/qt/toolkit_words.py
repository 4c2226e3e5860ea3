"""Words of the toolkits that their own catalogues lack, in the app's catalogue so they read in Korean too.

pyqtgraph translates its plots' right-click menus through
``QCoreApplication.translate`` in its own contexts but ships no catalogues, and
Qt's ``qtbase_ko`` misses a few of the file dialog's newer strings. Marked here
(the module is never imported), ``lupdate`` puts them in ``som_studio_ko.ts``
under those contexts; the app's translator, installed after Qt's, answers for
them.
"""

from __future__ import annotations

from som_studio.qt.i18n import QT_TRANSLATE_NOOP

QT_WORDS = (  # Qt's file dialog (its widget version: no native one on a bare Linux desktop)
    QT_TRANSLATE_NOOP("QFileDialog", "&Look in:"),
    QT_TRANSLATE_NOOP("QFileDialog", "Files of &type:"),
    QT_TRANSLATE_NOOP("QAbstractFileIconProvider", "Drive"),
)

PYQTGRAPH_WORDS = (
    QT_TRANSLATE_NOOP("GraphicsScene", "Export..."),
    QT_TRANSLATE_NOOP("ViewBox", "ViewBox options"),
    QT_TRANSLATE_NOOP("ViewBox", "View All"),
    QT_TRANSLATE_NOOP("ViewBox", "axis"),
    QT_TRANSLATE_NOOP("ViewBox", "Mouse Mode"),
    QT_TRANSLATE_NOOP("ViewBox", "3 button"),
    QT_TRANSLATE_NOOP("ViewBox", "1 button"),
    QT_TRANSLATE_NOOP("PlotItem", "Plot Options"),
    QT_TRANSLATE_NOOP("PlotItem", "Transforms"),
    QT_TRANSLATE_NOOP("PlotItem", "Downsample"),
    QT_TRANSLATE_NOOP("PlotItem", "Average"),
    QT_TRANSLATE_NOOP("PlotItem", "Alpha"),
    QT_TRANSLATE_NOOP("PlotItem", "Grid"),
    QT_TRANSLATE_NOOP("PlotItem", "Points"),
)
