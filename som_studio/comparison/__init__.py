"""The rules of comparing runs. Qt-free, and below the report: the report renders what they decide.

:func:`~som_studio.comparison.rules.judge` applies them to runs in their order: which run
is each one's baseline (runs of one kind on one problem, :mod:`~som_studio.comparison.problem`),
the speed-ups per iteration and end to end, the iterations after which a run pays off, where
the settings differ and which figures to read with care (:class:`~som_studio.comparison.rules.Flag`).
:mod:`~som_studio.comparison.summary` says them as one table, in one set of words
(:mod:`~som_studio.comparison.words`): the report (:func:`som_studio.report.compare`), the
app's comparison view and the ``bench`` and ``compare`` commands all show it.
"""

from som_studio.comparison.rules import Flag, Verdict, judge

__all__ = ["Flag", "Verdict", "judge"]
