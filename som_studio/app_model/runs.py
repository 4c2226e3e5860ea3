"""The runs so far and which of them are ticked (Qt-free); the app's run table adapts it.

:class:`RunList` is the kept run history (:class:`~som_studio.storage.RunHistory`,
saved as each run finishes) plus the selection the comparison compares.
Names tell runs apart (the comparison's titles, its baseline, exported file
names), so :meth:`RunList.unique_name` keeps them apart.

Threads: one thread (the GUI's); the history writes its files on a thread of its own.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from som_studio.app_model.form import LABELS, app_message
from som_studio.comparison.words import format_seconds, setting_of_key, status_text
from som_studio.config import DataSpec
from som_studio.i18n import N_, _
from som_studio.session import timing
from som_studio.session.record import RunRecord
from som_studio.storage import RunHistory, StoredRun


class RunList:
    """Every kept run, oldest first, and the ticked ones."""

    def __init__(self, history: RunHistory) -> None:
        self.history = history
        self._checked: set[str] = set()

    @property
    def runs(self) -> list[StoredRun]:
        return self.history.runs

    @property
    def records(self) -> list[RunRecord]:
        return [r.record for r in self.history.runs]

    def row_of(self, run_id: str) -> int:
        return next(i for i, r in enumerate(self.history.runs) if r.id == run_id)

    def unique_name(self, name: str, run_id: str | None = None) -> str:
        """``name``, or ``name (2)``, ``(3)``... if another run has it."""
        taken = {r.name for r in self.history.runs if r.id != run_id}
        if name not in taken:
            return name
        k = 2
        while f"{name} ({k})" in taken:
            k += 1
        return f"{name} ({k})"

    def add(self, run: StoredRun, check: bool = False) -> tuple[StoredRun, Future[Path]]:
        """Keep ``run`` (listed at once, named apart) and its file written on the history's writer thread.

        Returns what was kept and the write: its path, or the
        :class:`~som_studio.storage.writers.OutputError` of a run that could not be saved (it stays listed
        until the app closes).
        """
        run.name = self.unique_name(run.name)
        kept, saving = self.history.add_later(run)
        if check:
            self._checked.add(kept.id)
        return kept, saving

    def remove(self, run_id: str) -> bool:
        """Remove a run and its file; whether it was ticked."""
        self.history.remove(run_id)
        was = run_id in self._checked
        self._checked.discard(run_id)
        return was

    def rename_problem(self, run: StoredRun, name: str) -> str:
        """Why ``run`` cannot be called ``name`` (``""``: it can)."""
        if name and self.unique_name(name, run.id) != name:
            return _(
                "another run is already called '{name}': names tell runs apart in the comparison and its report"
            ).format(name=name)
        return ""

    def is_checked(self, run_id: str) -> bool:
        return run_id in self._checked

    def check(self, run_id: str, on: bool) -> None:
        (self._checked.add if on else self._checked.discard)(run_id)

    def set_checked(self, run_ids: Iterable[str]) -> None:
        known = {r.id for r in self.history.runs}
        self._checked = {i for i in run_ids if i in known}

    def checked_runs(self) -> list[StoredRun]:
        """The ticked runs, in the history's order."""
        return [r for r in self.history.runs if r.id in self._checked]

    def export_records(self) -> list[RunRecord]:
        """The ticked runs' records, or every run's when none is ticked (Export runs as JSON)."""
        ticked = self.checked_runs()
        return [r.record for r in ticked] if ticked else self.records

    def write_json(self, path: str) -> int:
        """Write :meth:`export_records` as the ``--json`` document (replacing ``path``); how many.

        Raises :class:`~som_studio.storage.writers.OutputError` when it cannot be written.
        """
        from som_studio.report import Exporter, compare

        records = self.export_records()
        Exporter(compare(records), force=True).write("json", path)  # the one comparison pipeline's JSON
        return len(records)


# The run table's columns (shown through _()), and each run's text in them.
COLUMNS = (
    N_("name"),
    N_("implementation"),
    N_("data"),
    N_("settings that differ"),
    N_("grid"),
    N_("layout"),
    N_("status"),
    N_("iterations"),
    N_("compile"),
    N_("median / it"),
    N_("samples/s"),
    "QE",
    "TE",
    N_("when"),
    N_("note"),
)


def _when(created: str) -> str:
    try:
        t = _dt.datetime.fromisoformat(created).astimezone()
    except ValueError:
        return created
    return t.strftime("%H:%M:%S" if t.date() == _dt.date.today() else "%Y-%m-%d %H:%M")


NUMBER_COLUMNS = frozenset(range(COLUMNS.index(N_("iterations")), COLUMNS.index("TE") + 1))
"""The columns of numbers (aligned right)."""

DIFFERS_COLUMN = COLUMNS.index(N_("settings that differ"))


def data_text(config: Mapping[str, Any]) -> str:
    """What a run trained on, from its configuration: the file's name, or "1,000 random colours"."""
    try:
        return DataSpec.from_dict(dict(config.get("data") or {})).describe()
    except (KeyError, TypeError, ValueError):
        return "?"


# Not a setting: what a run is named by (its implementation), its data, shown apart, and what follows from the
# data (its columns' names) or says which settings were left to their defaults.
_NOT_SETTINGS = ("impl", "data.source", "data.samples", "data.path", "data.scale", "feature_names", "auto")


# A record's nested keys (RunConfig.to_dict) by the setting the form labels them with.
def _setting_text(key: str, value: str) -> str:
    """``key value`` as the form says it: the setting's label, and "-" for none."""
    label = LABELS.get(setting_of_key(key))
    return f"{_(label) if label else key} {'-' if value in (_('none'), '') else value}"


@dataclass(frozen=True)
class _Named:
    """A kept run as the comparison's rules take one."""

    name: str
    record: RunRecord
    planned: int = 0


def differing_settings(runs: Sequence[StoredRun]) -> dict[str, str]:
    """Per run id, the settings in which the ``runs`` (the ticked ones) differ, as ``key value`` text.

    Steps and epochs are compared within a kind (online runs count steps, batch runs epochs), as
    the comparison compares them; fewer than two runs differ in nothing."""
    from som_studio.comparison.rules import config_differences, flatten_config

    if len(runs) < 2:
        return {}
    # The comparison's rule (steps and epochs within a kind), over runs named by their ids.
    named = [_Named(run.id, run.record) for run in runs]
    differ = [k for k in config_differences(named) if k not in _NOT_SETTINGS]
    flat = [flatten_config(r.record.config) for r in runs]
    if len({data_text(r.record.config) for r in runs}) > 1:
        differ.insert(0, "data")
    out = {}
    for run, f in zip(runs, flat):
        bits = [
            _setting_text(key, data_text(run.record.config) if key == "data" else f.get(key, "-")) for key in differ
        ]
        out[run.id] = " · ".join(bits)
    return out


def row_texts(run: StoredRun, differs: str = "") -> tuple[str, ...]:
    """``run`` as the run table shows it, one text per :data:`COLUMNS` entry.

    ``differs``: its settings that differ from the other ticked runs' (:func:`differing_settings`)."""
    r = run.record
    grid = r.config.get("grid", ["?", "?"])
    med, thr = r.median_s, r.throughput
    return (
        run.name,
        r.impl,
        data_text(r.config),
        differs,
        f"{grid[0]}x{grid[1]}",
        r.layout,
        status_text(r.status),
        f"{r.reached:,}",
        "" if timing.nothing_compiled(r.compile_s, r.warmup_compiles) else format_seconds(r.compile_s),
        format_seconds(med) if med else "",
        f"{thr:,.0f}" if thr else "",
        f"{r.qe:.4f}" if r.qe is not None else "",  # as the comparison gives it: a column of aligned figures
        f"{r.te:.3f}" if r.te is not None else "",
        _when(run.created),
        app_message(r),
    )


def run_tooltip(run: StoredRun) -> str:
    r = run.record
    return f"{run.name}: {r.impl} · {data_text(r.config)} · {status_text(r.status)} · {run.created}" + (
        f"\n{app_message(r)}" if r.message else ""
    )
