"""The rules of comparing runs: baselines, speed-ups, where settings differ, which figures to doubt.

A speed-up is between runs of one kind (steps or epochs) on one problem (see
:mod:`~som_studio.comparison.problem`), against each kind's NumPy run by default (the
reference the ladder is about) or the run named as the baseline. :func:`judge` applies every
rule to runs in their order and gives the :class:`Verdict` that the report, the app's
comparison view, ``compare`` and ``bench`` all show (:mod:`~som_studio.comparison.summary`).
Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from som_studio.comparison.problem import (
    DIFFERENT_PROBLEM,
    PROBLEM_FIELDS,
    describe_problem,
    problem_groups,
    problem_key,
    shared_cores_note,
)
from som_studio.comparison.words import format_seconds, key_words
from som_studio.core.data.checks import RANGE_RATIO_FOR_ZSCORE, ratio_text
from som_studio.i18n import N_, _, ngettext
from som_studio.session import timing
from som_studio.session.record import RunRecord

FEW_CHUNKS = timing.FEW_CHUNKS
"""Fewer timed chunks than this make the p95 an unreliable figure."""


class Compared(Protocol):
    """A run as a comparison sees it: its name (unique among the runs), record and planned iterations."""

    @property
    def name(self) -> str: ...

    @property
    def record(self) -> RunRecord: ...

    @property
    def planned(self) -> int: ...


def baseline_index(
    records: Sequence[RunRecord], i: int, baseline: int | None = None, prefer_numpy: bool = True
) -> int | None:
    """Index of the run that ``records[i]``'s speed-up is measured against.

    ``baseline`` (an index) is used when it is of the same kind and has
    timings; otherwise (with ``prefer_numpy``, the comparison's rule) the first
    run of the same kind whose implementation is the NumPy backend (the
    reference the speed-ups are about; a built-in one before a user's), otherwise the first run of the same
    kind with timings (``bench``'s rule); a run that finished before one that was cancelled; never a run that
    failed or disagrees with the reference. ``None`` when there is none.
    """
    me = records[i]

    def usable(j: int) -> bool:  # a speed-up is between runs of one kind on one problem
        r = records[j]
        return r.kind == me.kind and bool(r.median_s) and problem_key(r) == problem_key(me) and not _unranked(r)

    if baseline is not None and usable(baseline):
        return baseline
    same = [j for j in range(len(records)) if usable(j)]
    if same == [i] and any(
        r.kind == me.kind and r.median_s and not _unranked(r) for j, r in enumerate(records) if j != i
    ):
        return None  # alone on its problem: a ratio to another problem's run would mean nothing
    from som_studio.core.impls import registry

    same.sort(key=lambda j: records[j].status != "ok")  # a whole run before one cancelled, which covers what ran
    numpy_runs = [j for j in same if registry.backend(records[j].impl) == "numpy"] if prefer_numpy else []
    # Ours, the reference, before a user's; a whole run before all.
    numpy_runs.sort(key=lambda j: (records[j].status != "ok", not registry.is_builtin(records[j].impl)))
    if numpy_runs:
        return numpy_runs[0]
    return same[0] if same else None


def speedups(
    records: Sequence[RunRecord], baseline: int | None = None, prefer_numpy: bool = True
) -> list[float | None]:
    """Median-per-iteration speed-up of each run against its baseline (see :func:`baseline_index`)."""
    out: list[float | None] = []
    for i, r in enumerate(records):
        b = baseline_index(records, i, baseline, prefer_numpy)
        base = records[b].median_s if b is not None else None
        out.append(base / r.median_s if base and r.median_s and not _unranked(r) else None)
    return out


def _disagrees(r: RunRecord) -> bool:
    from som_studio.core.impls.user_impl import disagrees

    return disagrees(r.extra)


def _unranked(r: RunRecord) -> bool:
    """A run whose speed is nobody's measure: it failed (its timings end where it broke), it disagrees with the
    NumPy reference (its speed is of another computation) or it is a sweep's (its timings are of many maps)."""
    return r.status == "failed" or _disagrees(r) or r.maps > 1


def flatten_config(cfg: dict[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"sigma": {"start": [..]}}`` → ``{"sigma.start": "[..]"}``, values as short text."""
    out: dict[str, str] = {}
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(flatten_config(v, key + "."))
        elif isinstance(v, (list, tuple)):
            out[key] = " x ".join(_short(x) for x in v) if key == "grid" else ", ".join(_short(x) for x in v)
        else:
            out[key] = _short(v)
    return out


def _short(v: Any) -> str:
    """A setting's value as a reader writes it: "none", "yes" and "no", not Python's None, True and False."""
    if v is None:
        return _("none")
    if isinstance(v, bool):
        return _("yes") if v else _("no")
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


# Fields that differ by design between runs: each run has its own implementation,
# and online runs count steps where batch runs count epochs.
_PER_RUN_FIELDS = ("impl", "auto")  # "auto": which values followed the defaults, not a difference in them
_PER_KIND_FIELDS = ("steps", "epochs")


def run_kind(record: RunRecord) -> str:
    """The record's kind; for a run that ended before it started (kind ``"?"``), the one its config implies."""
    if record.kind in ("online", "batch"):
        return record.kind
    if record.config.get("steps") is not None:
        return "online"
    if record.config.get("epochs") is not None:
        return "batch"
    return record.kind


def config_differences(runs: Sequence[Compared]) -> dict[str, dict[str, str]]:
    """Fields whose values differ between runs: ``{field: {run name: value}}``.

    The implementation is not a difference, and steps/epochs are compared only
    between runs of the same kind.
    """
    flat = [flatten_config(r.record.config) for r in runs]
    keys = sorted({k for f in flat for k in f} - set(_PER_RUN_FIELDS))
    diffs: dict[str, dict[str, str]] = {}
    for key in keys:
        if key in _PER_KIND_FIELDS:
            groups: dict[str, list[int]] = {}
            for i, r in enumerate(runs):
                groups.setdefault(run_kind(r.record), []).append(i)
            differ = any(len({flat[i].get(key, "-") for i in idx}) > 1 for idx in groups.values())
        else:
            differ = len({f.get(key, "-") for f in flat}) > 1
        if differ:
            diffs[key] = {r.name: flat[i].get(key, "-") for i, r in enumerate(runs)}
    return diffs


@dataclass(frozen=True)
class Flag:
    """A number that deserves suspicion, and why. ``level``: ``"warning"`` or ``"note"``."""

    level: str
    text: str
    run: str | None = None


#: Training under this share of a run's wall time: the report and ``bench`` say where the rest went.
TRAINING_SHARE = 0.8

#: Map frames for a watcher (``timings.phases.frames``) costing more than this share of a run's
#: training time are flagged: watching it made it slower than the same run headless.
WATCH_SHARE = 0.05

#: The phases of a run's wall time (``timings.phases``) in words, and what no phase holds.
PHASE_WORDS = {
    "data": N_("reading data"),
    "init": N_("start-up and initial map"),
    "compile": N_("compiling (the training's and the quality pass's programs)"),
    "compile_quality": N_("compiling (the quality pass's JAX programs)"),  # a NumPy run's: its training compiles none
    "train": N_("training"),
    "quality": N_("quality"),
    "frames": N_("frames for the app"),
    "model": N_("hits and labels"),
    "checkpoint": N_("checkpoints (Orbax's start, writing)"),
    "agreement": N_("agreement check"),
    "other": N_("other"),
}


def trained_s(r: RunRecord) -> float:
    """A run's training time: its ``train`` phase (a record from before the phases were kept holds 0 there:
    its total less its compile and initial map)."""
    return r.phases.get("train") or max(0.0, r.total_s - r.compile_s - r.phases.get("init", 0.0))


def compiled_and_trained_s(r: RunRecord) -> float:
    """What a run's end-to-end figure counts: its compile and warm-up and its training, as the iterations after
    which it pays off count them. Not the initial map, which every implementation makes alike on the host."""
    return r.compile_s + trained_s(r)


def where_the_rest_went(r: RunRecord) -> str | None:
    """When training (``phases.train``) is under :data:`TRAINING_SHARE` of the wall time: where the rest went.

    E.g. "training took 35 % of 25.4 s; the rest: quality 9.8 s, compiling 5.1 s, reading data 0.7 s": the
    share and the parts add up to the wall time (``total_s`` holds the compile and the initial map as well,
    which are listed among the rest). ``None`` for a run without wall time or one that trained for most of it.
    """
    wall = r.wall_s
    train = trained_s(r)
    if not wall or r.status == "failed" or train >= TRAINING_SHARE * wall:
        return None
    parts = {k: v for k, v in r.phases.items() if k not in ("train", "read")}  # read: within training
    check = r.extra.get("agreement") or {}
    if check.get("seconds"):  # a user's implementation checked against the reference before it was timed
        parts["agreement"] = float(check["seconds"])
    parts["other"] = max(0.0, wall - sum(parts.values()) - train)
    shown = sorted(((v, k) for k, v in parts.items() if v >= 0.01 * wall), reverse=True)
    if not shown:
        return None
    if (r.env or {}).get("backend") == "numpy":
        shown = [(v, "compile_quality" if k == "compile" else k) for v, k in shown]
    return _("training took {share:.0%} of {wall}; the rest: {parts}").format(
        share=train / wall,
        wall=format_seconds(wall),
        parts=", ".join(f"{_(PHASE_WORDS[k])} {format_seconds(v)}" for v, k in shown),
    )


def _origin_flags(run: Compared) -> list[Flag]:
    """Notes on where a run's figures come from when they are not one whole run's: a sweep's, a resumed run's."""
    r, out = run.record, []
    if r.maps > 1:
        words = _("{run}: its timings are its sweep's, {n} maps trained together in each epoch")
        out.append(Flag("note", words.format(run=run.name, n=r.maps), run.name))
    resumed = r.extra.get("resumed")
    if resumed:
        words = _(
            "{run} was resumed at iteration {n:,} from {folder}: its timings and totals are of the iterations since, "
            "so it has no end-to-end figure"
        )
        n, folder = int(resumed.get("iteration", 0)), resumed.get("checkpoint", "?")
        out.append(Flag("note", words.format(run=run.name, n=n, folder=folder), run.name))
    return out


def run_flags(run: Compared) -> list[Flag]:
    """The flags on one run's figures: failed or cancelled, recompiled, noisy, its problem's notes, where its wall
    time went, few chunks."""
    r = run.record
    out: list[Flag] = []
    check = r.extra.get("agreement")
    if isinstance(check, dict) and r.status != "failed":
        from som_studio.core.impls.user_impl import agreement_text

        level = "note" if check.get("agrees") else "warning"
        out.append(Flag(level, _("{run} {agreement}").format(run=run.name, agreement=agreement_text(check)), run.name))
    if r.status == "failed":
        out.append(
            Flag(
                "warning",
                _("{run} failed: {why}").format(run=run.name, why=r.message or _("no reason given")),
                run.name,
            )
        )
        return out
    if r.status == "cancelled":
        out.append(
            Flag(
                "warning",
                ngettext(
                    "{run} was cancelled after {done} of {n} iteration; its figures cover only what ran",
                    "{run} was cancelled after {done} of {n} iterations; its figures cover only what ran",
                    run.planned,
                ).format(run=run.name, done=r.reached, n=run.planned),
                run.name,
            )
        )
    out += _origin_flags(run)
    if r.recompiles > 0:
        out.append(
            Flag(
                "warning",
                ngettext(
                    "{run} compiled {n} more time after warm-up: the timed iterations include compilation "
                    "(a shape, dtype or static argument changed between calls)",
                    "{run} compiled {n} more times after warm-up: the timed iterations include compilation "
                    "(a shape, dtype or static argument changed between calls)",
                    r.recompiles,
                ).format(run=run.name, n=r.recompiles),
                run.name,
            )
        )
    med, p95 = r.median_s, r.p95_s
    n = len(r.chunks)
    if med and p95 and timing.is_noisy(med, p95, n):
        out.append(
            Flag(
                "warning",
                _(
                    "{run} has noisy iterations: its p95 is {ratio:.1f}x its median ({p95} vs {median}); "
                    "something else may have competed for the machine, or short chunks carry per-call overhead"
                ).format(run=run.name, ratio=p95 / med, p95=format_seconds(p95), median=format_seconds(med)),
                run.name,
            )
        )
    frames_s = r.phases.get("frames", 0.0)
    if r.total_s and frames_s > WATCH_SHARE * r.total_s:
        out.append(
            Flag(
                "warning",
                _(
                    "{run} was watched live and its map frames cost {share:.0%} of its training time ({time}): "
                    "a headless run of it would finish sooner"
                ).format(run=run.name, share=frames_s / r.total_s, time=format_seconds(frames_s)),
                run.name,
            )
        )
    out += _problem_notes(run)
    rest = where_the_rest_went(r)
    if rest:
        out.append(Flag("note", _("{run}: {rest}").format(run=run.name, rest=rest), run.name))
    if 0 < n < FEW_CHUNKS:
        out.append(
            Flag(
                "note",
                ngettext(
                    "{run} has only {n} timed chunk: its median and p95 rest on few measurements",
                    "{run} has only {n} timed chunks: its median and p95 rest on few measurements",
                    n,
                ).format(run=run.name, n=n),
                run.name,
            )
        )
    return out


def _problem_notes(run: Compared) -> list[Flag]:
    """Notes on what a run was given to learn: a neighbourhood that grows, rows its label purity leaves out."""
    r = run.record
    out: list[Flag] = []
    sigma = r.config.get("sigma") or {}
    start, end = sigma.get("start"), sigma.get("end")
    if start and end and any(float(e) > float(s) for s, e in zip(start, end, strict=False)):
        # Given so (the defaults shrink): a neighbourhood that grows unfolds the map as training goes on.
        out.append(
            Flag(
                "note",
                _(
                    "{run}'s neighbourhood grows during training (radius {start} to {end}): a SOM's usually "
                    "shrinks, so that the map first orders itself, then fits its data"
                ).format(run=run.name, start=_radius(start), end=_radius(end)),
                run.name,
            )
        )
    unlabelled = int(r.extra.get("unlabelled") or 0)
    if unlabelled:
        out.append(
            Flag(
                "note",
                ngettext(
                    "{run}'s label purity leaves out the {n:,} row without a label",
                    "{run}'s label purity leaves out the {n:,} rows without a label",
                    unlabelled,
                ).format(run=run.name, n=unlabelled),
                run.name,
            )
        )
    return out


def _scaling_flags(runs: Sequence[Compared]) -> list[Flag]:
    """One note per data set whose features' ranges lie far apart and that the runs did not scale, naming them."""
    wide: dict[tuple[float, str], list[str]] = {}
    for run in runs:
        ratio = float(run.record.extra.get("range_ratio") or 0.0)
        if ratio > RANGE_RATIO_FOR_ZSCORE and run.record.config.get("scaling", "none") == "none":
            wide.setdefault((ratio, str(run.record.extra.get("widest_feature") or "")), []).append(run.name)
    return [
        Flag(
            "note",
            (
                _(
                    "{runs}: the features' ranges differ up to {ratio}x and the data are not scaled: the widest "
                    "feature, {widest!r}, shapes the map alone; scaling {zscore} gives every feature the same weight"
                )
                if widest
                else _(
                    "{runs}: the features' ranges differ up to {ratio}x and the data are not scaled: the widest "
                    "feature shapes the map alone; scaling {zscore} gives every feature the same weight"
                )
            ).format(runs=", ".join(names), ratio=ratio_text(ratio), widest=widest, zscore="zscore"),
        )
        for (ratio, widest), names in wide.items()
    ]


def _size_flags(runs: Sequence[Compared]) -> list[Flag]:
    """One note per table that has fewer rows than its runs' maps have units, naming the runs.

    Random colours are left out: the playbook's picture is a few colours spread over a large map on purpose.
    """
    small: dict[tuple[int, int], list[str]] = {}
    for run in runs:
        rec = run.record
        grid = rec.config.get("grid") or (0, 0)
        units = int(grid[0]) * int(grid[1])
        if rec.config.get("data", {}).get("source") == "file" and 0 < rec.samples < units:
            small.setdefault((rec.samples, units), []).append(run.name)
    return [
        Flag(
            "note",
            ngettext(
                "{runs}: {rows} row for a map of {units} units: most units win no row, and the map shows the "
                "neighbourhood's spread more than the data; about {fit} units (5 √rows, a common rule) suit it",
                "{runs}: {rows} rows for a map of {units} units: most units win no row, and the map shows the "
                "neighbourhood's spread more than the data; about {fit} units (5 √rows, a common rule) suit it",
                rows,
            ).format(
                runs=", ".join(names),
                rows=f"{rows:,}",
                units=f"{units:,}",
                fit=f"{max(1, round(5 * rows**0.5)):,}",
            ),
        )
        for (rows, units), names in small.items()
    ]


def _radius(radii: Sequence[Any]) -> str:
    """Radii per axis as typed: ``2`` where both are one, else ``2x1``."""
    a, b = (float(v) for v in radii)
    return f"{a:g}" if a == b else f"{a:g}x{b:g}"


def speedup_notes(records: Sequence[RunRecord], sp: Sequence[float | None]) -> list[str]:
    """Each run's speed-up note: no baseline on its problem, or simulated devices sharing cores."""
    out = []
    for i, r in enumerate(records):
        others = any(j != i and q.kind == r.kind and q.median_s and not _unranked(q) for j, q in enumerate(records))
        if r.status == "failed":
            out.append(_("failed: not ranked"))
        elif r.maps > 1:
            out.append(_("{n} maps trained together: not ranked").format(n=r.maps))
        elif _disagrees(r):
            out.append(_("disagrees with {reference}: not ranked").format(reference=r.extra["agreement"]["reference"]))
        elif sp[i] is None and r.median_s and others:  # timed, and its kind has runs, but none on its problem
            out.append(_(DIFFERENT_PROBLEM))
        else:
            out.append(shared_cores_note(r) if sp[i] is not None else "")
    return out


def difference_flags(runs: Sequence[Compared], diffs: dict[str, dict[str, str]]) -> list[Flag]:
    """The configurations' differences as a list a reader can scan: the problems, then each setting apart."""
    out: list[Flag] = []
    regrouped = problem_groups([r.record for r in runs])
    if len(regrouped) > 1:
        out.append(
            Flag(
                "warning",
                _(
                    "the runs' configurations differ: they solve {n} different problems, so speed-ups "
                    'are given only between runs of the same problem (the others read "{na}")'
                ).format(n=len(regrouped), na=_(DIFFERENT_PROBLEM)),
            )
        )
        for k, g in enumerate(regrouped, 1):
            names = ", ".join(runs[i].name for i in g)
            out.append(
                Flag(
                    "note",
                    _("problem {k}: {problem}: {runs}").format(
                        k=k, problem=describe_problem(runs[g[0]].record), runs=names
                    ),
                )
            )
    problem_keys = {f for f in diffs if f.split(".", 1)[0] in PROBLEM_FIELDS}
    for key, vals in diffs.items():
        if len(regrouped) > 1 and key in problem_keys:
            continue  # said by the problems above
        # One run's value apart from the next's: a value may be a pair ("2, 2") and a name may hold a comma.
        values = "; ".join(f"{name} {v}" for name, v in vals.items())
        out.append(
            Flag(
                "warning",
                _("the runs' configurations differ in {field}: {values}").format(field=key_words(key), values=values),
            )
        )
    return out


@dataclass(frozen=True)
class Verdict:
    """What the comparison of runs (in their order) says of each: its baseline and figures, and the flags.

    ``speedup`` is the median-per-iteration speed-up against the run's baseline
    (``baseline_of``, a run name, or ``None``); ``end_to_end`` the whole run's (compile and
    warm-up included: :func:`compiled_and_trained_s`); ``pays_off`` the iterations after which the run's
    whole time beats its baseline's (``0``: from the start; ``None``: never, or unknown); ``notes`` what a
    speed-up cell says besides the ratio; ``diffs`` the settings that differ
    (:func:`config_differences`); ``mixed_kinds``: online and batch runs are both here.
    """

    names: tuple[str, ...]
    baseline_of: tuple[str | None, ...]
    speedup: tuple[float | None, ...]
    end_to_end: tuple[float | None, ...]
    pays_off: tuple[int | None, ...]
    notes: tuple[str, ...]
    flags: tuple[Flag, ...]
    diffs: dict[str, dict[str, str]]
    mixed_kinds: bool


def judge(runs: Sequence[Compared], baseline: str | None = None, prefer_numpy: bool = True) -> Verdict:
    """Every rule of comparing, applied to ``runs`` (names unique) in their order.

    ``baseline`` names the run speed-ups are measured against within its kind (raises
    ``ValueError`` when no run has that name); ``prefer_numpy``: otherwise each kind's
    NumPy run (the comparison's rule), else its first timed run (``bench``'s rule).
    """
    records = [r.record for r in runs]
    names = [r.name for r in runs]
    if baseline is not None and baseline not in names:
        raise ValueError(
            _("baseline {name!r} is not among the runs ({names})").format(name=baseline, names=", ".join(names))
        )
    b = names.index(baseline) if baseline is not None else None
    sp = speedups(records, b, prefer_numpy)
    base_of: list[str | None] = []
    e2e: list[float | None] = []
    pays: list[int | None] = []
    for i, r in enumerate(records):
        j = baseline_index(records, i, b, prefer_numpy)
        base_of.append(names[j] if j is not None else None)
        base = records[j] if j is not None and not _unranked(r) else None  # never ranked, not even end to end
        # Whole runs only: a resumed run's totals are of the iterations since its checkpoint.
        ok = base is not None and base.status == r.status == "ok" and not base.extra.get("resumed")
        ok = ok and not r.extra.get("resumed")
        e2e.append(
            timing.end_to_end_speedup(compiled_and_trained_s(base), compiled_and_trained_s(r)) if ok and base else None
        )
        pays.append(
            timing.break_even_iterations(base.compile_s, base.mean_s, r.compile_s, r.mean_s) if ok and base else None
        )
    kinds = {r.kind for r in records}
    mixed = len(kinds & {"online", "batch"}) > 1
    diffs = config_differences(runs)
    flags = [f for run in runs for f in run_flags(run)]
    flags += difference_flags(runs, diffs)
    shared = [(run.name, shared_cores_note(run.record)) for run in runs]
    if any(n for _name, n in shared):
        who = ", ".join(f"{name} ({n})" for name, n in shared if n)
        flags.append(
            Flag(
                "note",
                _(
                    "runs on simulated CPU devices: {runs}; the devices share the machine's cores, so their "
                    "speed-ups say little about as many real devices"
                ).format(runs=who),
            )
        )
    if mixed:
        flags.append(
            Flag(
                "note",
                _(
                    "online and batch runs are both here: an iteration is a step for one and an "
                    "epoch for the other, so speed-ups are given only within a kind"
                ),
            )
        )
    flags += _scaling_flags(runs)
    flags += _size_flags(runs)
    notes = speedup_notes(records, sp)
    if b is not None and _unranked(records[b]):
        flags.append(
            Flag(
                "warning",
                _("{run} cannot be the baseline ({why}): the speed-ups are measured as if none was named").format(
                    run=names[b], why=notes[b]
                ),
                names[b],
            )
        )
    return Verdict(
        names=tuple(names),
        baseline_of=tuple(base_of),
        speedup=tuple(sp),
        end_to_end=tuple(e2e),
        pays_off=tuple(pays),
        notes=tuple(notes),
        flags=tuple(flags),
        diffs=diffs,
        mixed_kinds=mixed,
    )
