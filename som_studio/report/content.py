"""The content of a comparison report: tables, chart data and text, without Qt.

:func:`build_report` turns finished runs (:class:`~som_studio.storage.RunRecorder`
or bare :class:`~som_studio.session.record.RunRecord`) into a :class:`Report`:
the summary table, every run's configuration (and where they differ), the
environment, the data of each chart with a paragraph that says how to read it,
and flags on numbers that deserve suspicion. The HTML page, the PDF, the app's
comparison view and the CLI all render this one object.
"""

from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.core.memory import format_bytes
from som_studio.i18n import N_, _, ngettext
from som_studio.session import timing
from som_studio.session.record import RunRecord

NOISY_RATIO = timing.NOISY_RATIO
"""A run whose p95 per-iteration time exceeds its median by this factor is flagged as noisy."""

FEW_CHUNKS = timing.FEW_CHUNKS
"""Fewer timed chunks than this make the p95 an unreliable figure."""


# -- formatting -------------------------------------------------------------------
def format_seconds(v: float | None) -> str:
    """A duration with a unit that keeps 3-4 significant digits (``-`` for none)."""
    if v is None or not math.isfinite(v):
        return "-"
    if v >= 1:
        return f"{v:.2f} s"
    if v >= 1e-3:
        return f"{v * 1e3:.2f} ms"
    return f"{v * 1e6:.1f} µs"


def status_text(status: str) -> str:
    """A run's status (``ok``, ``failed``, ``cancelled``) in the user's language; records keep the key."""
    return {"ok": _("ok"), "failed": _("failed"), "cancelled": _("cancelled")}.get(status, status)


def kind_text(kind: str) -> str:
    """``online``/``batch`` in the user's language."""
    return {"online": _("online"), "batch": _("batch")}.get(kind, kind)


def _fmt_num(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


# -- the runs -----------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ReportRun:
    """One run as the report shows it.

    ``final_image`` is the final map's (H, W, 3) uint8 picture; ``frames`` the
    kept ``(iteration, image)`` pairs for the animation; ``iterations`` the
    iterations the run was to do (a cancelled run did fewer); ``final_map`` the
    raw final map (H, W, D) in the trained space, which the views of a run on a
    data file are drawn from (with the record's model: hits, labels, clusters).
    """

    name: str
    record: RunRecord
    final_image: np.ndarray | None = None
    frames: tuple[tuple[int, np.ndarray], ...] = ()
    iterations: int = 0
    final_map: np.ndarray | None = None

    @property
    def has_views(self) -> bool:
        """Whether the report shows this run's map views: a finished run on a data file (it has a model)."""
        data = self.record.config.get("data")
        on_file = isinstance(data, dict) and bool(data.get("path"))
        return on_file and self.final_map is not None and getattr(self.record, "model", None) is not None

    @property
    def planned(self) -> int:
        if self.iterations:
            return self.iterations
        cfg = self.record.config
        return int(cfg.get("steps") or cfg.get("epochs") or self.record.iterations_done or 0)


def _ratio(x: float) -> str:
    """A speed-up as a headline says it: ``29.6``, ``1.25``, ``312``."""
    return f"{x:.3g}" if x < 100 else f"{x:,.0f}"


def _as_run(item: Any) -> ReportRun:
    if isinstance(item, ReportRun):
        return item
    if isinstance(item, RunRecord):
        return ReportRun(item.impl, item)
    # a RunCapture (duck-typed so report does not depend on the capture's module order)
    record = item.record
    if record is None:
        raise ValueError(f"run {item.name!r} has not finished: no record to report")
    return ReportRun(
        name=item.name or record.impl,
        record=record,
        final_image=item.final_image,
        frames=tuple(item.frames),
        iterations=item.iterations,
        final_map=getattr(item, "final_map", None),
    )


def _unique_names(runs: list[ReportRun]) -> list[ReportRun]:
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        n = seen.get(r.name, 0) + 1
        seen[r.name] = n
        if n > 1:
            r = ReportRun(f"{r.name} ({n})", r.record, r.final_image, r.frames, r.iterations, r.final_map)
        out.append(r)
    return out


# -- baselines ----------------------------------------------------------------------
def _backend(impl: str) -> str | None:
    from som_studio.core import registry

    try:
        return registry.get(impl).backend
    except registry.UnknownImplementation:
        return None


def baseline_index(
    records: Sequence[RunRecord], i: int, baseline: int | None = None, prefer_numpy: bool = True
) -> int | None:
    """Index of the run that ``records[i]``'s speed-up is measured against.

    ``baseline`` (an index) is used when it is of the same kind and has
    timings; otherwise (with ``prefer_numpy``, the comparison's rule) the first
    run of the same kind whose implementation is the NumPy backend (the
    reference the speed-ups are about), otherwise the first run of the same
    kind with timings (``bench``'s rule). ``None`` when there is none.
    """
    me = records[i]

    from som_studio.report.problem import problem_key

    def usable(j: int) -> bool:  # a speed-up is between runs of one kind on one problem
        r = records[j]
        return r.kind == me.kind and bool(r.median_s) and problem_key(r) == problem_key(me)

    if baseline is not None and usable(baseline):
        return baseline
    same = [j for j in range(len(records)) if usable(j)]
    if same == [i] and any(r.kind == me.kind and r.median_s for j, r in enumerate(records) if j != i):
        return None  # alone on its problem: a ratio to another problem's run would mean nothing
    numpy_runs = [j for j in same if _backend(records[j].impl) == "numpy"] if prefer_numpy else []
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
        out.append(base / r.median_s if base and r.median_s else None)
    return out


# -- configurations -------------------------------------------------------------------
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
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


# Fields that differ by design between runs: each run has its own implementation,
# and online runs count steps where batch runs count epochs.
_PER_RUN_FIELDS = ("impl",)
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


def config_differences(runs: Sequence[ReportRun]) -> dict[str, dict[str, str]]:
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


# -- flags ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Flag:
    """A number that deserves suspicion, and why. ``level``: ``"warning"`` or ``"note"``."""

    level: str
    text: str
    run: str | None = None


#: Training under this share of a run's wall time: the report and ``bench`` say where the rest went.
TRAINING_SHARE = 0.8

#: The phases of a run's wall time (``timings.phases``) in words, and what no phase holds.
PHASE_WORDS = {
    "data": N_("reading data"),
    "init": N_("initial map"),
    "compile": N_("compiling"),
    "train": N_("training"),
    "quality": N_("quality"),
    "model": N_("hits and labels"),
    "other": N_("other"),
}


def where_the_rest_went(r: RunRecord) -> str | None:
    """When training (``total_s``) is under :data:`TRAINING_SHARE` of the wall time: where the rest went.

    E.g. "training took 35 % of 25.4 s; the rest: quality 9.8 s, compiling 5.1 s, reading data 0.7 s".
    ``None`` for a run without wall time or one that trained for most of it.
    """
    wall = r.wall_s
    if not wall or r.status == "failed" or r.total_s >= TRAINING_SHARE * wall:
        return None
    parts = {k: v for k, v in r.phases.items() if k != "train"}
    parts["other"] = max(0.0, wall - sum(r.phases.values()))
    shown = sorted(((v, k) for k, v in parts.items() if v >= 0.01 * wall), reverse=True)
    if not shown:
        return None
    return _("training took {share:.0%} of {wall}; the rest: {parts}").format(
        share=r.total_s / wall,
        wall=format_seconds(wall),
        parts=", ".join(f"{_(PHASE_WORDS[k])} {format_seconds(v)}" for v, k in shown),
    )


def run_flags(run: ReportRun) -> list[Flag]:
    r = run.record
    out: list[Flag] = []
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
                ).format(run=run.name, done=r.iterations_done, n=run.planned),
                run.name,
            )
        )
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


# -- charts ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Series:
    """One run's curve: ``x`` and ``y`` of equal length (``edges`` for step curves)."""

    name: str
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class ChartSection:
    """A chart of the report: its title, how to read it, and its axes."""

    key: str
    title: str
    paragraphs: tuple[str, ...]
    x_label: str = ""
    y_label: str = ""
    #: The chart's other words: its panels' axis labels (quality), its marker's legend and
    #: what it says when there is nothing to draw (timing).
    panels: tuple[str, ...] = ()
    marker: str = ""
    empty: str = ""


@dataclass
class Report:
    """Everything a comparison report says. Build with :func:`build_report`."""

    title: str
    created: str
    runs: list[ReportRun]
    speedup: list[float | None]
    baseline_of: list[str | None]
    flags: list[Flag]
    config_diffs: dict[str, dict[str, str]]
    sections: list[ChartSection]
    progress_axis: bool = False
    #: Whole-run speed-up against the same baseline (compile and warm-up included).
    end_to_end: list[float | None] | None = None
    #: Iterations after which each run's whole time beats its baseline's (None: never or unknown).
    pays_off: list[int | None] | None = None
    #: What each run's speed-up cell says besides (or instead of) the ratio: "n/a: different problem",
    #: or that its simulated devices share the machine's cores (see :mod:`som_studio.report.problem`).
    speedup_notes: list[str] | None = None

    # -- summary -------------------------------------------------------------
    SUMMARY_HEADER = (
        N_("implementation"),
        N_("kind"),
        N_("status"),
        N_("layout"),
        N_("compile"),
        N_("median / it"),
        N_("p95 / it"),
        N_("mean / it"),
        N_("total"),
        N_("wall"),
        "samples/s",
        N_("speed-up"),
        N_("end-to-end"),
        N_("faster after"),
        "QE",
        "TE",
        N_("label purity"),
        N_("peak memory"),
    )
    """The summary's columns: the keys of :meth:`summary_values` (English, as the JSON and CSV
    name them); :meth:`summary_labels` says them in the user's language."""

    @classmethod
    def summary_labels(cls) -> list[str]:
        """:attr:`SUMMARY_HEADER` in the user's language (units and QE/TE stay as they are)."""
        return [_(h) for h in cls.SUMMARY_HEADER]

    def summary_values(self) -> list[dict[str, Any]]:
        """Raw values per run (for sorting), keyed by :attr:`SUMMARY_HEADER`."""
        rows = []
        n = len(self.runs)
        e2e = self.end_to_end or [None] * n
        pays = self.pays_off or [None] * n
        for run, sp, ee, pay in zip(self.runs, self.speedup, e2e, pays):
            r = run.record
            ok = r.status != "failed"
            rows.append(
                {
                    "implementation": run.name,
                    "kind": r.kind,
                    "status": r.status,
                    "layout": r.layout,
                    "compile": r.compile_s if ok else None,
                    "median / it": r.median_s,
                    "p95 / it": r.p95_s,
                    "mean / it": r.mean_s,
                    "total": r.total_s if r.total_s else None,
                    "wall": r.wall_s if r.wall_s else None,
                    "samples/s": r.throughput,
                    "speed-up": sp,
                    "end-to-end": ee,
                    "faster after": pay,
                    "QE": r.qe,
                    "TE": r.te,
                    "label purity": r.label_purity,
                    "peak memory": r.peak_bytes,
                }
            )
        return rows

    def summary_rows(self) -> list[list[str]]:
        """The summary table as text, one row per run, columns as :attr:`SUMMARY_HEADER`."""
        out = []
        notes = self.speedup_notes or [""] * len(self.runs)
        for v, base, note in zip(self.summary_values(), self.baseline_of, notes):
            sp = v["speed-up"]
            is_base = base == v["implementation"]
            speed = (note or "-") if sp is None else (_("baseline") if is_base else f"{sp:.2f}x")
            if sp is not None and note and not is_base:
                speed += f" ({note})"
            ee = v["end-to-end"]
            whole = "-" if ee is None or is_base else f"{ee:.2f}x"
            pay = v["faster after"]
            if is_base or sp is None:
                after = "-"
            elif pay is None:
                after = _("never")
            else:
                after = _("from the start") if pay == 0 else _("{n:,} it").format(n=pay)
            out.append(
                [
                    v["implementation"],
                    kind_text(v["kind"]),
                    status_text(v["status"]),
                    v["layout"],
                    format_seconds(v["compile"]),
                    format_seconds(v["median / it"]),
                    format_seconds(v["p95 / it"]),
                    format_seconds(v["mean / it"]),
                    format_seconds(v["total"]),
                    format_seconds(v["wall"]),
                    "-" if v["samples/s"] is None else f"{v['samples/s']:,.0f}",
                    speed,
                    whole,
                    after,
                    _fmt_num(v["QE"], ".4f"),
                    _fmt_num(v["TE"], ".3f"),
                    _fmt_num(v["label purity"], ".3f"),
                    "-" if v["peak memory"] is None else format_bytes(v["peak memory"]),
                ]
            )
        return out

    # -- the headline ------------------------------------------------------------
    def headline(self) -> str | None:
        """The report's first line: the fastest run against its baseline, per iteration and end to end.

        ``"jax-fused-batch: 29.6x faster per epoch than numpy-batch, 16.8x end to end"``; the run
        with the largest speed-up that is not its own baseline. ``None`` when no run has a
        baseline to be measured against (a single run, or failed ones).
        """
        e2e = self.end_to_end or [None] * len(self.runs)
        best: tuple[float, int] | None = None
        for i, (run, sp, base) in enumerate(zip(self.runs, self.speedup, self.baseline_of)):
            if sp is None or base is None or base == run.name:
                continue
            if best is None or sp > best[0]:
                best = (sp, i)
        if best is None:
            return None
        sp, i = best
        run, base = self.runs[i], self.baseline_of[i]
        epoch = run.record.kind == "batch"
        if sp >= 1.0:
            text = (
                _("{run}: {x}x faster per epoch than {base}") if epoch else _("{run}: {x}x faster per step than {base}")
            )
            x = sp
        else:
            text = (
                _("{run}: {x}x slower per epoch than {base}") if epoch else _("{run}: {x}x slower per step than {base}")
            )
            x = 1.0 / sp
        line = text.format(run=run.name, x=_ratio(x), base=base)
        whole = e2e[i]
        if whole is not None and whole >= 1.0:
            line += _(", {x}x end to end").format(x=_ratio(whole))
        elif whole is not None and whole > 0:  # compile and warm-up cost more than the faster iterations saved
            line += _(", {x}x slower end to end").format(x=_ratio(1.0 / whole))
        return line

    # -- configuration and environment ------------------------------------------
    def config_table(self) -> tuple[list[str], list[list[str]]]:
        """(field names, one row per field with each run's value)."""
        flat = [flatten_config(r.record.config) for r in self.runs]
        keys: list[str] = []
        for f in flat:
            keys += [k for k in f if k not in keys]
        return keys, [[f.get(k, "-") for f in flat] for k in keys]

    def env_table(self) -> tuple[list[tuple[str, str]], list[str], list[list[str]]]:
        """(facts shared by every run, per-run field names, per-run rows).

        Versions and the machine are usually shared; the backend and devices
        differ between NumPy and JAX runs.
        """
        envs = [_env_facts(r.record.env) for r in self.runs]
        keys: list[str] = []
        for e in envs:
            keys += [k for k in e if k not in keys]
        shared = [(k, envs[0].get(k, "-")) for k in keys if envs and len({e.get(k, "-") for e in envs}) == 1]
        shared_keys = {k for k, _ in shared}
        per_keys = [k for k in keys if k not in shared_keys]
        rows = [[e.get(k, "-") for k in per_keys] for e in envs]
        return shared, per_keys, rows

    # -- chart data --------------------------------------------------------------
    def timing_series(self) -> list[tuple[Series, float | None]]:
        """Per run: a step curve of seconds per iteration over the iterations
        (``x`` has one more entry than ``y``: chunk edges), and its compile time."""
        out = []
        for run in self.runs:
            r = run.record
            if not r.chunks:
                continue
            edges = np.array([c.first for c in r.chunks] + [r.chunks[-1].first + r.chunks[-1].count], dtype=float)
            y = np.array([c.seconds / c.count for c in r.chunks], dtype=float)
            out.append((Series(run.name, self._x(run, edges), y), r.compile_s if r.status != "failed" else None))
        return out

    def quality_series(self, which: str) -> list[Series]:
        """Per run: ``"qe"`` or ``"te"`` over the iterations where it was measured."""
        out = []
        for run in self.runs:
            h = run.record.history
            if not h:
                continue
            x = np.array([p["iteration"] for p in h], dtype=float)
            out.append(Series(run.name, self._x(run, x), np.array([p[which] for p in h], dtype=float)))
        return out

    def _x(self, run: ReportRun, iterations: np.ndarray) -> np.ndarray:
        if not self.progress_axis:
            return iterations
        return iterations / max(run.planned, 1) * 100.0

    def section(self, key: str) -> ChartSection:
        return next(s for s in self.sections if s.key == key)

    def views_run(self, key: str) -> ReportRun:
        """The run a map-views section (key ``views-<index>``) shows."""
        return self.runs[int(key.removeprefix(VIEWS_PREFIX))]


def _env_facts(env: dict[str, Any]) -> dict[str, str]:
    """A run's environment as labelled text."""
    out: dict[str, str] = {}
    labels = [
        ("python", "Python"),
        ("numpy", "NumPy"),
        ("jax", "JAX"),
        ("jaxlib", "jaxlib"),
        ("platform", _("platform")),
        ("cpu", _("CPU model")),
        ("cpu_count", _("CPU cores")),
    ]
    for key, label in labels:
        if env.get(key) is not None:
            out[label] = str(env[key])
    if env.get("backend") is not None:  # None: the run failed before its backend started
        out[_("backend")] = str(env["backend"])
    devices = env.get("devices") or []
    if devices:
        kinds: dict[str, int] = {}
        for d in devices:
            kinds[str(d.get("kind", "?"))] = kinds.get(str(d.get("kind", "?")), 0) + 1
        text = ", ".join(f"{n} x {k}" for k, n in kinds.items())
        limit = devices[0].get("memory_limit")
        if limit:
            text += " " + _("({bytes} each)").format(bytes=format_bytes(limit))
        out[_("devices")] = text
    out["XLA_FLAGS"] = str(env.get("xla_flags") or _("(none)"))
    if env.get("precision_policy"):
        # Records keep the policy in English; the words this SOM Studio states are in its catalogue.
        out[_("precision")] = _(str(env["precision_policy"]))
    return out


# -- building -------------------------------------------------------------------------
def build_report(items: Sequence[Any], baseline: str | None = None, title: str | None = None) -> Report:
    """The report on ``items`` (captures, records or :class:`ReportRun`), in their order.

    ``baseline`` names the run speed-ups are measured against (within its
    kind); by default each kind's NumPy run, else its first run.
    """
    if not items:
        raise ValueError(_("a report needs at least one run"))
    from som_studio.report import problem

    runs = _unique_names([_as_run(i) for i in items])
    groups = problem.problem_groups([r.record for r in runs])
    runs = [runs[i] for g in groups for i in g]  # runs of one problem side by side, in their order
    records = [r.record for r in runs]
    names = [r.name for r in runs]
    if baseline is not None and baseline not in names:
        raise ValueError(
            _("baseline {name!r} is not among the runs ({names})").format(name=baseline, names=", ".join(names))
        )
    b = names.index(baseline) if baseline is not None else None
    sp = speedups(records, b)
    base_of = []
    e2e: list[float | None] = []
    pays: list[int | None] = []
    for i, r in enumerate(records):
        j = baseline_index(records, i, b)
        base_of.append(names[j] if j is not None else None)
        base = records[j] if j is not None else None
        ok = base is not None and base.status == r.status == "ok"
        e2e.append(timing.end_to_end_speedup(base.total_s, r.total_s) if ok and base else None)
        pays.append(
            timing.break_even_iterations(base.compile_s, base.mean_s, r.compile_s, r.mean_s) if ok and base else None
        )
    kinds = sorted({r.kind for r in records})
    progress = len({k for k in kinds if k in ("online", "batch")}) > 1
    diffs = config_differences(runs)

    flags = [f for run in runs for f in run_flags(run)]
    notes = speedup_notes(records, sp)
    flags += _difference_flags(runs, diffs)
    shared = [(run.name, problem.shared_cores_note(run.record)) for run in runs]
    if any(n for _, n in shared):
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
    if progress:
        flags.append(
            Flag(
                "note",
                _(
                    "online and batch runs are both here: an iteration is a step for one and an "
                    "epoch for the other, so speed-ups are given only within a kind"
                ),
            )
        )
    created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = title or _("SOM Studio comparison: {runs}").format(runs=", ".join(names))
    return Report(
        title=title,
        created=created,
        runs=runs,
        speedup=sp,
        baseline_of=base_of,
        flags=flags,
        config_diffs=diffs,
        sections=_sections(runs, kinds, progress),
        progress_axis=progress,
        end_to_end=e2e,
        pays_off=pays,
        speedup_notes=notes,
    )


def speedup_notes(records: Sequence[RunRecord], sp: Sequence[float | None]) -> list[str]:
    """Each run's speed-up note: no baseline on its problem, or simulated devices sharing cores."""
    from som_studio.report.problem import DIFFERENT_PROBLEM, shared_cores_note

    out = []
    for i, r in enumerate(records):
        others = any(j != i and q.kind == r.kind and q.median_s for j, q in enumerate(records))
        if sp[i] is None and r.median_s and others:  # timed, and its kind has runs, but none on its problem
            out.append(_(DIFFERENT_PROBLEM))
        else:
            out.append(shared_cores_note(r) if sp[i] is not None else "")
    return out


def _difference_flags(runs: Sequence[ReportRun], diffs: dict[str, dict[str, str]]) -> list[Flag]:
    """The configurations' differences as a list a reader can scan: the problems, then each setting apart."""
    from som_studio.report.problem import DIFFERENT_PROBLEM, PROBLEM_FIELDS, describe_problem, problem_groups

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
        values = ", ".join(f"{name} {v}" for name, v in vals.items())
        out.append(
            Flag("warning", _("the runs' configurations differ in {field}: {values}").format(field=key, values=values))
        )
    return out


def _iteration_words(kinds: list[str]) -> tuple[str, str]:
    """The x axis's word and the y axis's label for runs of ``kinds``."""
    if kinds == ["batch"]:
        return _("epoch"), _("seconds per epoch")
    if kinds == ["online"]:
        return _("step"), _("seconds per step")
    return _("iteration"), _("seconds per iteration")


def _sections(runs: list[ReportRun], kinds: list[str], progress: bool) -> list[ChartSection]:
    word, per_word = _iteration_words(kinds)
    samples = sorted({r.record.samples for r in runs if r.record.samples})
    if len(samples) == 1:
        epoch = _("an epoch (one pass over all {n:,} samples, then one map update)").format(n=samples[0])
    else:
        epoch = _("an epoch (one pass over all the samples, then one map update)")
    what = {"batch": epoch, "online": _("a step (one sample, one map update)")}
    known = [k for k in kinds if k in what]  # a run stopped before it started has no kind
    if len(known) > 1:
        it_text = _("{batch} for batch runs and {online} for online runs").format(
            batch=what["batch"], online=what["online"]
        )
    else:
        it_text = what[known[0]] if known else _("an iteration")
    x_label = _("progress (% of the run's iterations)") if progress else word
    q_points = max((len(r.record.history) for r in runs), default=0)
    maps = ChartSection(
        "maps",
        _("Final maps"),
        (
            _(
                "The map each run ended with, one block per unit (a square, or a hexagon on a hex map): the three "
                "features as red, green and blue when the data has three features, otherwise the U-matrix (each "
                "unit's mean distance to its neighbours; light marks the borders between clusters). Colours use the "
                "training data's per-feature range."
            ),
            _(
                "Runs of the same kind start from the same data, seed and initial map and compute the same SOM, so "
                "their maps should look alike; tiny differences come from floating-point rounding. A map that looks "
                "different points to a bug, not to a faster implementation."
            ),
        ),
        empty=_("{status}: no map"),
    )
    timing = ChartSection(
        "timing",
        _("Time per iteration"),
        (
            _(
                "Each step of a curve is one timed chunk of consecutive iterations: its wall time, measured only "
                "once its results were ready on the device, divided by the iterations in it. An iteration here is "
                "{iteration}. The session grows chunks to about {ms} ms so that the timer and Python's loop cost "
                "little."
            ).format(iteration=it_text, ms=40),
            _(
                "Compilation and warm-up are timed apart, before the first chunk, and marked with a star at the "
                "start of each curve; they are in no chunk, median or p95 (the summary's 'compile' column). "
                "Quality measurements and map copies for display are not timed either."
            ),
            _(
                "The summary gives the median time per iteration (the typical iteration) and the 95th percentile "
                "(p95), which shows stalls and noise, both over iterations (a chunk of many iterations weighs "
                "more than a warm-up chunk of one), and the mean (all training time over all iterations: what "
                "a stopwatch sees per iteration). 'end-to-end' compares whole runs, compile and warm-up "
                "included; 'faster after' is the iteration count from which a run's whole time beats its "
                "baseline's (its compile paid off). The vertical axis is logarithmic, so runs that differ a "
                "thousandfold fit on one chart: equal vertical gaps are equal ratios of speed."
            ),
        ),
        x_label=x_label,
        y_label=_("{label} (log scale)").format(label=per_word),
        marker=_("compile + warm-up"),
        empty=_("no timed iterations"),
    )
    quality = ChartSection(
        "quality",
        _("Map quality during training"),
        (
            _(
                "Quantization error (QE, left): the mean distance from each sample to its best-matching unit; lower "
                "means the map fits the data more closely. Topographic error (TE, right): the share of samples whose "
                "two best units are not neighbours on the grid; lower means the map keeps the data's topology."
            ),
            _(
                "Both are measured on the host in float64 at up to {n} points of each run, outside the timed "
                "chunks. Runs of the same kind on the same configuration should trace the same curves; online and "
                "batch training converge along different paths."
            ).format(n=q_points),
        ),
        x_label=x_label,
        y_label="",
        panels=(_("quantization error (QE)"), _("topographic error (TE)")),
    )
    return [maps, timing, quality, *_views_sections(runs)]


VIEWS_PREFIX = "views-"
"""Key of a run's map-views section: ``views-<index of the run>``."""


def _views_sections(runs: list[ReportRun]) -> list[ChartSection]:
    """One section per run on a data file: its U-matrix, hits, labels, clusters and every component plane."""
    out = []
    for i, run in enumerate(runs):
        if not run.has_views:
            continue
        cfg = run.record.config
        model = run.record.model
        hexa = cfg.get("topology") == "hex"
        grid = cfg.get("grid") or []
        size = f"{grid[0]} x {grid[1]}" if len(grid) == 2 else "?"
        if hexa:
            first = _(
                "The {size} map of {run} on a hexagonal lattice{wrap}, each unit drawn as a hexagon "
                "where it sits on the grid."
            )
        else:
            first = _(
                "The {size} map of {run} on a rectangular lattice{wrap}, each unit drawn as a square "
                "where it sits on the grid."
            )
        wrap = _(", wrapped into a toroid") if cfg.get("toroid") else ""
        paras = [
            first.format(size=size, run=run.name, wrap=wrap)
            + " "
            + _(
                "The U-matrix shows each unit's mean distance to its neighbouring units: light ridges are borders "
                "between groups of similar units."
            ),
        ]
        if model.hits is not None:
            hits = np.asarray(model.hits)
            paras.append(
                _(
                    "The hit map counts the training examples whose best-matching unit each unit is (grey: none; "
                    "{hit} of {units} units have at least one, the busiest {most})."
                ).format(hit=int((hits > 0).sum()), units=hits.size, most=int(hits.max()))
            )
        purity = run.record.label_purity
        if model.unit_labels is not None:
            names = sorted({str(n) for n in np.asarray(model.unit_labels).ravel() if n})
            if purity is not None:
                figure = _(
                    "Label purity is {purity:.3f}: the share of examples whose best-matching unit's majority label "
                    "is their own."
                ).format(purity=purity)
            else:
                figure = _(
                    "Label purity is the share of examples whose best-matching unit's majority label is their own."
                )
            paras.append(
                _(
                    "The label overlay colours each unit by the majority label of its examples ({labels}), paler "
                    "where its examples disagree."
                ).format(labels=", ".join(names))
                + " "
                + figure
            )
        if model.clusters is not None:
            k = len({int(c) for c in np.asarray(model.clusters).ravel()})
            paras.append(
                _("Clusters: k-means on the codebook into {k} clusters, with their borders drawn in black.").format(k=k)
            )
        paras.append(
            _(
                "Component planes: one per feature, named, each on its own colour scale in the data's original "
                "units (the colour bar under it): where a feature is high or low on the map, and which features go "
                "together."
            )
        )
        if purity is not None:
            title = _("Map views: {run} (label purity {purity:.3f})").format(run=run.name, purity=purity)
        else:
            title = _("Map views: {run}").format(run=run.name)
        out.append(ChartSection(f"{VIEWS_PREFIX}{i}", title, tuple(paras)))
    return out
