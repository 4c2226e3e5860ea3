"""The one summary of a comparison: a row per run, its columns, formats and words.

The report (HTML, PDF, CSV, JSON), the app's comparison view and the command line's
``bench`` and ``compare`` all show these rows, so a figure reads the same everywhere
("from the start", ``1.93x``, ``12.40 ms``). :func:`text_table` lays them out for a terminal.
Qt-free.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from som_studio.comparison.rules import Compared, Verdict
from som_studio.comparison.words import format_seconds, kind_text, number_cell, status_text
from som_studio.i18n import N_, _, format_bytes, ljust, text_width
from som_studio.session import timing

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
    N_("samples/s"),
    N_("speed-up"),
    N_("end-to-end"),
    N_("faster after"),
    "QE",
    "TE",
    N_("label purity"),
    N_("peak memory"),
)
"""The summary's columns: the keys of :func:`summary_values` (English, as the JSON and CSV
name them); :func:`summary_labels` says them in the user's language."""

#: Below this a run's peak memory reads :func:`small_peak_text`: it is the growth of the process's resident
#: memory, and a run that fits in memory the process already holds grows by little or nothing ("0 B" read as
#: a run that needed none).
SMALL_PEAK_BYTES = 1 << 20


def summary_labels() -> list[str]:
    """:data:`SUMMARY_HEADER` in the user's language (units and QE/TE stay as they are)."""
    return [_(h) for h in SUMMARY_HEADER]


def summary_values(runs: Sequence[Compared], verdict: Verdict) -> list[dict[str, Any]]:
    """Raw values per run (for sorting), keyed by :data:`SUMMARY_HEADER`."""
    rows = []
    for run, sp, ee, pay in zip(runs, verdict.speedup, verdict.end_to_end, verdict.pays_off):
        r = run.record
        # A run stopped before compiling has none (one that failed later compiled: its compile is shown, as the
        # Runs page shows it); a NumPy rung's warm-up compiles nothing: "-", not "3.0 µs".
        compiled = bool(r.compile_s or r.chunks)
        compiled = compiled and not timing.nothing_compiled(r.compile_s, r.warmup_compiles)
        rows.append(
            {
                "implementation": run.name,
                "kind": r.kind,
                "status": r.status,
                "layout": r.layout,
                "compile": r.compile_s if compiled else None,
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


def small_peak_text() -> str:
    """The peak memory cell of a run whose process grew by less than :data:`SMALL_PEAK_BYTES`."""
    return _("< 1 MiB")


def peak_cell(peak_bytes: int | None) -> str:
    """The peak memory cell: its size, :func:`small_peak_text` below :data:`SMALL_PEAK_BYTES`, ``-`` unmeasured."""
    if peak_bytes is None:
        return "-"
    return small_peak_text() if peak_bytes < SMALL_PEAK_BYTES else format_bytes(peak_bytes)


def faster_after(pay: int | None) -> str:
    """The "faster after" cell: the iterations after which a run's whole time beats its baseline's."""
    if pay is None:
        return _("never")
    return _("from the start") if pay == 0 else _("{n:,} it").format(n=pay)


def _times(x: float) -> str:
    """A ratio as the table writes it: two decimals, two significant digits below 0.1 (0.012x, not 0.00x)."""
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def summary_rows(runs: Sequence[Compared], verdict: Verdict) -> list[list[str]]:
    """The summary as text, one row per run, columns as :data:`SUMMARY_HEADER`."""
    out = []
    statuses = {run.name: run.record.status for run in runs}
    for v, base, note in zip(summary_values(runs, verdict), verdict.baseline_of, verdict.notes):
        sp = v["speed-up"]
        is_base = base == v["implementation"]
        speed = (note or "-") if sp is None else (_("baseline") if is_base else _times(sp))
        if sp is not None and note and not is_base:
            speed += f" ({note})"
        ee = v["end-to-end"]
        whole = "-" if ee is None or is_base else _times(ee)
        # "never" only between two whole finished runs (an end-to-end figure); a cancelled, failed or resumed
        # one pays off nowhere known
        finished = v["status"] == "ok" and base is not None and statuses.get(base) == "ok" and ee is not None
        after = "-" if is_base or sp is None or not finished else faster_after(v["faster after"])
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
                number_cell(v["QE"], ".4f"),
                number_cell(v["TE"], ".3f"),
                number_cell(v["label purity"], ".3f"),
                peak_cell(v["peak memory"]),
            ]
        )
    return out


def text_table(runs: Sequence[Compared], verdict: Verdict) -> list[str]:
    """The summary laid out for a terminal: aligned columns, those empty for every run left out."""
    head = summary_labels()
    rows = summary_rows(runs, verdict)
    keep = [i for i in range(len(head)) if i == 0 or any(row[i] != "-" for row in rows)]
    head = [head[i] for i in keep]
    rows = [[row[i] for i in keep] for row in rows]
    widths = [max(text_width(h), *(text_width(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(ljust(h, w) for h, w in zip(head, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(ljust(c, w) for c, w in zip(row, widths)).rstrip() for row in rows]
    return lines
