"""The content of a comparison report: tables, chart data and text, without Qt.

:func:`build_report` turns finished runs (:class:`~som_studio.storage.RunRecorder`
or bare :class:`~som_studio.session.record.RunRecord`) into a :class:`Report`:
the summary table, every run's configuration (and where they differ), the
environment, the data of each chart with a paragraph that says how to read it,
and flags on numbers that deserve suspicion. The HTML page, the PDF, the app's
comparison view and the CLI all render this one object.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.comparison import summary
from som_studio.comparison.problem import problem_groups
from som_studio.comparison.rules import Flag, Verdict, flatten_config, judge
from som_studio.i18n import _, format_bytes, ngettext
from som_studio.run_settings import Topology
from som_studio.session import timing
from som_studio.session.record import RunRecord
from som_studio.storage.runfile import StoredRun

NOISY_RATIO = timing.NOISY_RATIO
"""A run whose p95 per-iteration time exceeds its median by this factor is flagged as noisy."""


# -- the runs -----------------------------------------------------------------------
def _ratio(x: float) -> str:
    """A speed-up as a headline says it: ``29.6``, ``1.25``, ``312``."""
    return f"{x:.3g}" if x < 100 else f"{x:,.0f}"


def _as_run(item: Any) -> StoredRun:
    if isinstance(item, StoredRun):
        return item
    if isinstance(item, RunRecord):
        return StoredRun(item)
    return StoredRun.from_capture(item)


def _unique_names(runs: list[StoredRun]) -> list[StoredRun]:
    seen: dict[str, int] = {}
    out = []
    for r in runs:
        n = seen.get(r.name, 0) + 1
        seen[r.name] = n
        if n > 1:
            r = dataclasses.replace(r, name=f"{r.name} ({n})")
        out.append(r)
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
    runs: list[StoredRun]
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
    #: or that its simulated devices share the machine's cores (see :mod:`som_studio.comparison.problem`).
    speedup_notes: list[str] | None = None

    # -- summary -------------------------------------------------------------
    SUMMARY_HEADER = summary.SUMMARY_HEADER
    """The summary's columns (see :mod:`som_studio.comparison.summary`)."""

    @classmethod
    def summary_labels(cls) -> list[str]:
        """:attr:`SUMMARY_HEADER` in the user's language (units and QE/TE stay as they are)."""
        return summary.summary_labels()

    @property
    def verdict(self) -> Verdict:
        """The comparison's figures and flags (:func:`~som_studio.comparison.rules.judge`)."""
        n = len(self.runs)
        return Verdict(
            names=tuple(r.name for r in self.runs),
            baseline_of=tuple(self.baseline_of),
            speedup=tuple(self.speedup),
            end_to_end=tuple(self.end_to_end or [None] * n),
            pays_off=tuple(self.pays_off or [None] * n),
            notes=tuple(self.speedup_notes or [""] * n),
            flags=tuple(self.flags),
            diffs=self.config_diffs,
            mixed_kinds=self.progress_axis,
        )

    def summary_values(self) -> list[dict[str, Any]]:
        """Raw values per run (for sorting), keyed by :attr:`SUMMARY_HEADER`."""
        return summary.summary_values(self.runs, self.verdict)

    def summary_rows(self) -> list[list[str]]:
        """The summary table as text, one row per run, columns as :attr:`SUMMARY_HEADER`."""
        return summary.summary_rows(self.runs, self.verdict)

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
        base_run = next(r for r in self.runs if r.name == base)
        stopped = [r.name for r in (run, base_run) if r.record.status == "cancelled"]
        if stopped:  # its median is of the chunks it ran: said here, not only under "read with care"
            line += " " + ngettext(
                "({runs} was cancelled: its figures cover only what ran)",
                "({runs} were cancelled: their figures cover only what ran)",
                len(stopped),
            ).format(runs=", ".join(stopped))
        return line

    # -- configuration and environment ------------------------------------------
    def config_table(self) -> tuple[list[str], list[list[str]]]:
        """(field names, one row per field with each run's value)."""
        flat = [flatten_config(r.record.config) for r in self.runs]
        keys: list[str] = []
        for f in flat:
            keys += [k for k in f if k not in keys]
        # The older switch for minmax scaling, off in every run, says nothing the scaling row does not: read beside
        # "scaling zscore", "data.scale False" looked like a contradiction.
        if all(f.get("data.scale", _("no")) == _("no") for f in flat):
            keys = [k for k in keys if k != "data.scale"]
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

    def _x(self, run: StoredRun, iterations: np.ndarray) -> np.ndarray:
        if not self.progress_axis:
            return iterations
        return iterations / max(run.planned, 1) * 100.0

    def roofline(self) -> Any:
        """The roofline of the runs that recorded their inside (:class:`~som_studio.report.inside.Roofline`),
        or ``None``."""
        from som_studio.report import inside

        return inside.roofline([r.name for r in self.runs], [r.record for r in self.runs])

    def inside_table(self) -> tuple[list[str], list[list[str]], list[str]]:
        """(columns in English, rows, notes) of the roofline's table; the columns say themselves with ``_()``."""
        from som_studio.report import inside

        names, records = [r.name for r in self.runs], [r.record for r in self.runs]
        return list(inside.INSIDE_HEADER), inside.inside_rows(names, records), inside.notes(names, records)

    def section(self, key: str) -> ChartSection:
        return next(s for s in self.sections if s.key == key)

    def views_run(self, key: str) -> StoredRun:
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
    """The report on ``items`` (captures, records or :class:`StoredRun`), in their order.

    ``baseline`` names the run speed-ups are measured against (within its
    kind); by default each kind's NumPy run, else its first run.
    """
    if not items:
        raise ValueError(_("a report needs at least one run"))
    runs = _unique_names([_as_run(i) for i in items])
    groups = problem_groups([r.record for r in runs])
    runs = [runs[i] for g in groups for i in g]  # runs of one problem side by side, in their order
    records = [r.record for r in runs]
    names = [r.name for r in runs]
    if baseline is not None and baseline not in names:
        raise ValueError(
            _("baseline {name!r} is not among the runs ({names})").format(name=baseline, names=", ".join(names))
        )
    verdict = judge(runs, baseline)
    kinds = sorted({r.kind for r in records})
    created = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = title or _("SOM Studio comparison: {runs}").format(runs=", ".join(names))
    return Report(
        title=title,
        created=created,
        runs=runs,
        speedup=list(verdict.speedup),
        baseline_of=list(verdict.baseline_of),
        flags=list(verdict.flags),
        config_diffs=verdict.diffs,
        sections=_sections(runs, kinds, verdict.mixed_kinds),
        progress_axis=verdict.mixed_kinds,
        end_to_end=list(verdict.end_to_end),
        pays_off=list(verdict.pays_off),
        speedup_notes=list(verdict.notes),
    )


def _iteration_words(kinds: list[str]) -> tuple[str, str]:
    """The x axis's word and the y axis's label for runs of ``kinds``."""
    if kinds == ["batch"]:
        return _("epoch"), _("seconds per epoch")
    if kinds == ["online"]:
        return _("step"), _("seconds per step")
    return _("iteration"), _("seconds per iteration")


def _sections(runs: list[StoredRun], kinds: list[str], progress: bool) -> list[ChartSection]:
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
                "Both are measured at up to {n} points of each run, outside the timed chunks: a JAX run's on its own "
                "device, a NumPy run's on the host. Runs of the same kind on the same configuration should trace the "
                "same curves; online and batch training converge along different paths."
            ).format(n=q_points),
        ),
        x_label=x_label,
        y_label="",
        panels=(_("quantization error (QE)"), _("topographic error (TE)")),
    )
    return [maps, timing, quality, *_roofline_section(runs), *_views_sections(runs)]


def _roofline_section(runs: list[StoredRun]) -> list[ChartSection]:
    """The roofline, when a run recorded its inside (``bench --inside``, ``explain``)."""
    if not any(isinstance(r.record.extra, dict) and r.record.extra.get("inside") for r in runs):
        return []
    return [
        ChartSection(
            "roofline",
            _("Inside: the roofline"),
            (
                _(
                    "Each point is a run: the floating-point operations it achieved per second against its "
                    "arithmetic intensity, the operations per byte of memory it moved, both per iteration as "
                    "XLA's cost analysis counts them (each loop body times its trips). The slanted line is the "
                    "memory ceiling (bandwidth x intensity), the flat one the float32 matrix-product ceiling, "
                    "both measured on the device."
                ),
                _(
                    "A run far below the ceiling over its intensity is bound by launch overhead when its kernels "
                    "are many and short; a run above the memory line moves bytes that the caches serve. NumPy "
                    "runs, and runs whose program branches on the data (marked *), carry the count of the SOM's "
                    "own operations."
                ),
            ),
            x_label=_("arithmetic intensity (FLOPs per byte)"),
            y_label=_("achieved GFLOP/s"),
        )
    ]


VIEWS_PREFIX = "views-"
"""Key of a run's map-views section: ``views-<index of the run>``."""

REPORT_PLANES = 16
"""Component planes a run's map views draw, at most: the first ones, by column. Each plane is a chart with its
colour bar: 200 features' took 40 s to draw and 2 MB a run, 1,000 features' more than ten minutes."""


def _views_sections(runs: list[StoredRun]) -> list[ChartSection]:
    """One section per run on a data file: its U-matrix, hits, labels, clusters and every component plane."""
    out = []
    for i, run in enumerate(runs):
        if not run.has_views:
            continue
        cfg = run.record.config
        model = run.record.model
        hexa = cfg.get("topology") == Topology.HEX
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
        planes = _(
            "Component planes: one per feature, named, each on its own colour scale in the data's original "
            "units (the colour bar under it): where a feature is high or low on the map, and which features go "
            "together."
        )
        features = len(model.feature_names) if model is not None else 0
        if features > REPORT_PLANES:
            planes += " " + _(
                "Here the first {shown} of its {n:,} features; the app's map view shows any of them."
            ).format(shown=REPORT_PLANES, n=features)
        paras.append(planes)
        if purity is not None:
            title = _("Map views: {run} (label purity {purity:.3f})").format(run=run.name, purity=purity)
        else:
            title = _("Map views: {run}").format(run=run.name)
        out.append(ChartSection(f"{VIEWS_PREFIX}{i}", title, tuple(paras)))
    return out
