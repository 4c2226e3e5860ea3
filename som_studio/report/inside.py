"""The inside of runs as the Inside page, the report and ``som-studio explain`` show it: the roofline and its table.

Reads ``extra.inside`` (:mod:`som_studio.core.inspection.inside`) of finished runs and
turns it into plain data: one roofline point per run (arithmetic intensity,
achieved FLOP/s), the device's two ceilings, and a table that says per run the
fraction of the ceiling it reached and what bounds it. No Qt, no JAX.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from som_studio.comparison.words import format_seconds
from som_studio.i18n import N_, _, ljust, ngettext, text_width
from som_studio.session.record import RunRecord


@dataclass(frozen=True)
class RooflinePoint:
    """One run under the roofline."""

    name: str
    intensity: float  # FLOPs per byte
    achieved: float  # FLOP/s
    fraction: float | None
    bound: str | None


@dataclass(frozen=True)
class Roofline:
    """The chart's data: the ceilings (``None`` where no run measured them) and a point per run that has both
    figures."""

    points: tuple[RooflinePoint, ...]
    peak_flops_per_s: float | None
    bandwidth_bytes_per_s: float | None
    measured_with: tuple[str, ...]
    device: str
    #: When the matmul figure was measured (UTC, ISO 8601; empty when not known) and over how many measurements.
    measured_at: str = ""
    measurements: int = 0

    @property
    def ridge(self) -> float | None:
        """The intensity where the two ceilings meet (FLOPs per byte)."""
        if self.peak_flops_per_s and self.bandwidth_bytes_per_s:
            return self.peak_flops_per_s / self.bandwidth_bytes_per_s
        return None

    def intensity_range(self) -> tuple[float, float]:
        """An x range (FLOPs per byte, log-friendly) that holds every point and the ridge, a decade around."""
        xs = [p.intensity for p in self.points if p.intensity > 0]
        if self.ridge:
            xs.append(self.ridge)
        if not xs:
            return 0.01, 100.0
        return 10 ** math.floor(math.log10(min(xs)) - 1), 10 ** math.ceil(math.log10(max(xs)) + 1)


def inside_of(record: RunRecord) -> dict[str, Any] | None:
    """The run's ``extra.inside``, or ``None``."""
    got = record.extra.get("inside") if isinstance(record.extra, dict) else None
    return got if isinstance(got, dict) else None


def bound_text(bound: str | None) -> str:
    """What bounds a run, in the user's language (records keep the English key)."""
    if bound is None:
        return "-"
    return {
        "memory": _("memory"),
        "compute": _("compute"),
        "launch overhead": _("launch overhead"),
        "overhead": _("interpreter overhead"),
    }.get(bound, bound)


def roofline(names: Sequence[str], records: Sequence[RunRecord]) -> Roofline | None:
    """The roofline of the runs that carry ``extra.inside``; ``None`` when none does."""
    insides = [(n, i) for n, r in zip(names, records) if (i := inside_of(r)) is not None]
    if not insides:
        return None
    ceil = next((i["ceilings"] for _, i in insides if i.get("ceilings")), None) or {}
    how = ceil.get("measured_with") or {}
    measured = tuple(str(v) for v in how.values()) if isinstance(how, dict) else (str(how),)
    points = []
    for n, i in insides:
        ai, achieved = i.get("arithmetic_intensity"), i.get("achieved_flops_per_s")
        if ai and achieved and ai > 0 and achieved > 0:
            points.append(RooflinePoint(n, float(ai), float(achieved), i.get("fraction_of_ceiling"), i.get("bound")))
    return Roofline(
        tuple(points),
        ceil.get("matmul_flops_per_s"),
        ceil.get("bandwidth_bytes_per_s"),
        measured,
        ceil.get("device") or "",
        str(ceil.get("measured_at") or ""),
        int(ceil.get("measurements") or 0),
    )


INSIDE_HEADER = (
    N_("implementation"),
    N_("FLOPs / it"),
    N_("bytes / it"),
    N_("FLOPs / byte"),
    N_("kernels / it"),
    "GFLOP/s",
    "GB/s",
    N_("of ceiling"),
    N_("bound"),
    N_("XLA / analytic"),
    N_("trace / lower / compile"),
)


def _si(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    for div, unit in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:.3g} {unit}"
    return f"{v:.3g}"


def _bytes(v: float | None) -> str:
    """``620 B``, ``3.45 kB`` (it read ``620B`` beside ``3.45 kB``)."""
    text = _si(v)
    return text if text == "-" else text + ("B" if text[-1].isalpha() else " B")


def _rate(v: float | None) -> str:
    return "-" if v is None else f"{v / 1e9:.3g}"


def _phases(p: dict[str, Any] | None) -> str:
    if not p:
        return "-"
    parts = [p.get(k) for k in ("trace", "lower", "compile")]
    if all(v is None for v in parts):
        return "-"
    return " / ".join("-" if v is None else f"{v:.2f}" for v in parts) + " s"


def _past_bandwidth(i: dict[str, Any]) -> bool:
    """Faster than the measured memory bandwidth: the iteration's bytes came from the caches."""
    return i.get("bound") == "memory" and (i.get("fraction_of_ceiling") or 0) > 1


def inside_rows(names: Sequence[str], records: Sequence[RunRecord]) -> list[list[str]]:
    """The table's rows (:data:`INSIDE_HEADER`), one per run that carries ``extra.inside``."""
    rows = []
    for n, r in zip(names, records):
        i = inside_of(r)
        if i is None:
            continue
        frac = i.get("fraction_of_ceiling")
        ratio = i.get("analytic_ratio")
        flops = _si(i.get("flops_per_iteration"))
        if i.get("flops_source") == "analytic":
            flops += " *"
        kernels = i.get("kernels_per_iteration")
        rows.append(
            [
                n,
                flops,
                _bytes(i.get("bytes_per_iteration")),
                "-" if i.get("arithmetic_intensity") is None else f"{i['arithmetic_intensity']:.3g}",
                "-" if kernels is None else f"{kernels:.3g}",
                _rate(i.get("achieved_flops_per_s")),
                _rate(i.get("achieved_bytes_per_s")),
                "-" if frac is None else f"{frac:.1%}" + (" †" if _past_bandwidth(i) else ""),
                bound_text(i.get("bound")),
                "-" if ratio is None else f"{ratio:.2f}",
                _phases(i.get("compile_phases_s")),
            ]
        )
    return rows


def notes(names: Sequence[str], records: Sequence[RunRecord]) -> list[str]:
    """Lines under the table: the ceilings and how they were measured, analytic stand-ins, recompilations."""
    out = []
    line = roofline(names, records)
    if line is not None and line.peak_flops_per_s and line.bandwidth_bytes_per_s:
        out.append(
            _("ceilings of {device}: {flops} GFLOP/s float32 matmul, {bw} GB/s memory").format(
                device=line.device or "?",
                flops=f"{line.peak_flops_per_s / 1e9:.3g}",
                bw=f"{line.bandwidth_bytes_per_s / 1e9:.3g}",
            )
        )
        out += [_("  measured by {how}").format(how=h) for h in line.measured_with]
        if line.measured_at:
            out.append(
                ngettext(
                    "  measured {when} (the best of {n} measurement)",
                    "  measured {when} (the best of {n} measurements)",
                    max(line.measurements, 1),
                ).format(when=line.measured_at.replace("T", " ").replace("Z", " UTC"), n=max(line.measurements, 1))
            )
    if any((inside_of(r) or {}).get("flops_source") == "analytic" for r in records):
        out.append(
            _(
                "* counted by hand, the SOM's own operations: a NumPy run, or your own implementation, shows no "
                "compiled program to count, a streamed run calls its programs batch by batch (none is an iteration), "
                "XLA gave no count, or its count cannot be what ran (the program branches on the data, or the count "
                "is more than the measured time allows); its bytes are the least the iteration must move"
            )
        )
    if any(_past_bandwidth(inside_of(r) or {}) for r in records):
        out.append(
            _(
                "† above its ceiling: the bytes it moves come from the caches, faster than the memory the bandwidth "
                "ceiling is measured on (an array larger than them)"
            )
        )
    for n, r in zip(names, records):
        why = (inside_of(r) or {}).get("error")
        if why:
            out.append(_("{name}: its program was not inspected: {why}").format(name=n, why=why))
    for n, r in zip(names, records):
        line_ = plan_model_text(n, r)
        if line_:
            out.append(line_)
    for n, r in zip(names, records):
        reasons = ((inside_of(r) or {}).get("counts") or {}).get("recompile_reasons") or []
        for text in reasons[:3]:
            out.append(_("{impl} recompiled: {why}").format(impl=n, why=" ".join(str(text).split())[:300]))
    return out


def plan_model_text(name: str, record: RunRecord) -> str | None:
    """The kernel plan the cost model chose for a run (``extra.plan_model``), predicted beside measured, and
    the runner-up's prediction; ``None`` for a run without one."""
    m = record.extra.get("plan_model")
    if not isinstance(m, dict) or not m.get("plan"):
        return None

    def sec(v: Any) -> str:
        return format_seconds(float(v)) if isinstance(v, (int, float)) else "-"

    text = _("{impl}: kernel plan {plan}, predicted {predicted} an epoch, measured {measured}").format(
        impl=name,
        plan=m["plan"],
        predicted=sec(m.get("predicted_s_per_epoch")),
        measured=sec(m.get("measured_s_per_epoch")),
    )
    if m.get("runner_up"):
        text += _("; runner-up {plan}, predicted {predicted}").format(
            plan=m["runner_up"], predicted=sec(m.get("runner_up_predicted_s"))
        )
    if m.get("forced"):
        text += _(" (forced)")
    return text


def format_inside_table(names: Sequence[str], records: Sequence[RunRecord]) -> str:
    """The table as text, with its notes (``som-studio explain`` and ``bench --inside`` print it)."""
    head = [_(h) for h in INSIDE_HEADER]
    rows = inside_rows(names, records)
    if not rows:
        return _("no run recorded its inside")
    widths = [max(text_width(h), *(text_width(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(ljust(h, w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(ljust(c, w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines + notes(names, records))
