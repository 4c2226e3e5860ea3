"""``som_studio.compare``: implementations raced on one SOM from Python, as ``som-studio compare`` races them.

Each implementation trains through :func:`som_studio.train`, one after the other in this process, on the
same data and settings; the comparison is the report's (:func:`som_studio.report.compare`): its speed-ups
against the NumPy reference of each kind, the flags on its figures, and the files ``compare`` writes.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from som_studio.i18n import _

#: What :meth:`Comparison.save` writes, by the file's suffix: the export kinds of ``som-studio compare``.
SAVED = {".html": "html", ".pdf": "pdf", ".json": "json", ".csv": "csv"}


class Comparison:
    """Implementations compared on one SOM: their runs, the summary table and the report's words.

    Attributes
    ----------
    runs : the trained runs (:class:`~som_studio.trained.SomRun`), in the order compared
    report : the comparison as the app's Compare page and ``som-studio compare`` have it
    """

    def __init__(self, runs: list[Any], stored: list[Any], baseline: str | None = None) -> None:
        from som_studio.report import compare

        self.runs = runs
        self.report = compare(stored, baseline=baseline)

    def __repr__(self) -> str:
        return f"<Comparison of {', '.join(r.name for r in self.report.runs)}>"

    def headline(self) -> str | None:
        """The report's one-line verdict (the fastest against its baseline), or ``None`` when none can be said."""
        return self.report.headline()

    def flags(self) -> list[str]:
        """What the report flags about the figures: runs that failed, differ in their settings, were noisy..."""
        return [f.text for f in self.report.flags]

    def summary(self) -> list[dict[str, Any]]:
        """One dict per run, keyed by the summary's columns (``implementation``, ``median / it``, ``speed-up``...):
        the figures as numbers, ``None`` where a run has none."""
        return self.report.summary_values()

    def to_pandas(self) -> Any:
        """:meth:`summary` as a pandas DataFrame, a row per implementation."""
        import pandas as pd

        return pd.DataFrame(self.summary()).set_index("implementation")

    def save(self, path: str | os.PathLike[str], force: bool = False) -> Path:
        """Write the comparison as ``som-studio compare`` writes it, by the file's suffix: ``.html`` (the report),
        ``.pdf``, ``.json`` (the runs) or ``.csv`` (every timed chunk). An existing file only with ``force``.

        The report and the PDF draw their charts with Qt (offscreen, no window)."""
        from som_studio.report import Exporter
        from som_studio.trained import refuse_existing

        p = Path(path)
        kind = SAVED.get(p.suffix.lower())
        if kind is None:
            raise ValueError(_("{path}: a comparison is saved as {suffixes}").format(path=p, suffixes=", ".join(SAVED)))
        refuse_existing(p, force)
        renderer = None
        if kind in ("html", "pdf"):
            from som_studio.qt.report_render import QtRenderer

            renderer = QtRenderer()
        Exporter(self.report, renderer, force=force).write(kind, p)
        if kind == "pdf":
            from som_studio.qt.report_render import missing_glyphs

            if why := missing_glyphs(self.report):
                warnings.warn(f"{p}: {why}", stacklevel=2)
        return p

    def _repr_html_(self) -> str:
        """The summary as a notebook shows it: the headline, a row per run, the flags below."""
        labels = self.report.summary_labels()
        head = "".join(f"<th>{escape(h)}</th>" for h in labels)
        rows = "".join(
            "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in self.report.summary_rows()
        )
        words = self.headline()
        top = f"<p><b>{escape(words)}</b></p>" if words else ""
        notes = "".join(f"<li>{escape(f)}</li>" for f in self.flags())
        return f"{top}<table><tr>{head}</tr>{rows}</table>" + (f"<ul>{notes}</ul>" if notes else "")


def compare(
    data: Any = None,
    impl: str | Sequence[str] = ("numpy-batch", "jax-fused-batch"),
    baseline: str | None = None,
    **train_keywords: Any,
) -> Comparison:
    """Train each implementation of ``impl`` on the same SOM, one after another, and compare them.

    ``data`` and ``train_keywords`` are :func:`som_studio.train`'s (an iteration count is the kind's:
    ``epochs`` for batch implementations, ``steps`` for online ones; leave it out to take each kind's
    default). ``baseline`` names the run speed-ups are measured against (default: the NumPy
    reference of each kind). Raises what :func:`~som_studio.train` raises, naming the keyword.
    """
    from som_studio.api import TrainError, check_counts, progress_observer, train
    from som_studio.config import ConfigError
    from som_studio.storage import RunRecorder

    names = [n.strip() for n in impl.split(",") if n.strip()] if isinstance(impl, str) else list(impl)
    if len(names) < 2:
        raise ValueError(_("impl: a comparison needs two implementations or more, got {value!r}").format(value=impl))
    try:  # a count no implementation listed takes is refused, not dropped, as the command line does
        check_counts(names, {_kind(n) for n in names}, train_keywords)
    except ConfigError as exc:
        raise TrainError(exc.refusal.text()) from None
    progress = train_keywords.pop("progress", None)
    runs, stored = [], []
    for name in names:
        # The other kind's count is not this implementation's (epochs for a batch one, steps for an online one).
        other = "steps" if _kind(name) == "batch" else "epochs"
        keywords = {k: v for k, v in train_keywords.items() if k != other}
        recorder = RunRecorder()  # the run as the report pictures it: its final map on the data's colour range
        watch, close = progress_observer(progress)

        def observe(ev: Any, recorder: Any = recorder, watch: Any = watch) -> None:
            recorder.feed(ev)
            if watch is not None:
                watch(ev)

        try:
            runs.append(train(data, impl=name, progress=observe, **keywords))
        finally:
            close()
        stored.append(recorder.stored())
    return Comparison(runs, stored, baseline)


def _kind(name: str) -> str:
    """``batch`` or ``online``: a built-in implementation's, or your own class's (``file.py:Class``, checked)."""
    from som_studio.core.impls import registry, user_impl

    if user_impl.is_spec(name):
        try:
            return user_impl.load(name).kind
        except user_impl.UserImplError:
            return "batch"  # train() refuses it in its words
    try:
        return registry.get(name).kind
    except registry.UnknownImplementation:
        return "batch"  # train() refuses it in its words
