"""A sweep's report: QE against TE for every map (the trade-off frontier marked), and its rows. No Qt.

The chart is drawn as SVG in the page itself, so the report is one self-contained HTML file.
"""

from __future__ import annotations

from html import escape
from typing import Any

from som_studio import __version__
from som_studio.comparison.rules import flatten_config
from som_studio.comparison.words import format_seconds
from som_studio.i18n import _, current_language
from som_studio.session.sweep import shown, typed

# The palette's two colours: every map, and the frontier's maps and line.
DOT = "#4c72b0"
FRONT = "#dd8452"


def chart_points(result: Any) -> list[tuple[float, float, bool]]:
    """``(qe, te, on_frontier)`` per row, in row order."""
    front = set(result.frontier())
    return [(r["qe"], r["te"], i in front) for i, r in enumerate(result.rows)]


def qe_te_svg(result: Any, width: int = 560, height: int = 360) -> str:
    """QE (x) against TE (y): one dot per map, the frontier's maps joined by a line."""
    pts = chart_points(result)
    pad_l, pad_b, pad_t, pad_r = 60, 44, 16, 16
    qes = [p[0] for p in pts]
    tes = [p[1] for p in pts]
    x0, x1 = min(qes), max(qes)
    y0, y1 = 0.0, max(max(tes), 1e-3)
    if x1 - x0 < 1e-9:
        x0, x1 = x0 - 0.5, x1 + 0.5
    span_x, span_y = x1 - x0, y1 - y0
    x0, x1, y1 = x0 - 0.05 * span_x, x1 + 0.05 * span_x, y1 + 0.05 * span_y

    def px(q: float) -> float:
        return pad_l + (q - x0) / (x1 - x0) * (width - pad_l - pad_r)

    def py(t: float) -> float:
        return height - pad_b - (t - y0) / (y1 - y0) * (height - pad_b - pad_t)

    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img'>"]
    parts.append(
        f"<line x1='{pad_l}' y1='{height - pad_b}' x2='{width - pad_r}' y2='{height - pad_b}' stroke='#555'/>"
        f"<line x1='{pad_l}' y1='{pad_t}' x2='{pad_l}' y2='{height - pad_b}' stroke='#555'/>"
    )
    for k in range(5):
        q = x0 + (x1 - x0) * k / 4
        t = y0 + (y1 - y0) * k / 4
        parts.append(
            f"<text x='{px(q):.1f}' y='{height - pad_b + 16}' font-size='11' text-anchor='middle'>{q:.3g}</text>"
        )
        parts.append(f"<text x='{pad_l - 6}' y='{py(t) + 4:.1f}' font-size='11' text-anchor='end'>{t:.3g}</text>")
    parts.append(
        f"<text x='{(pad_l + width - pad_r) / 2}' y='{height - 6}' font-size='12' text-anchor='middle'>"
        f"{escape(_('quantization error (QE)'))}</text>"
        f"<text x='14' y='{(pad_t + height - pad_b) / 2}' font-size='12' text-anchor='middle' "
        f"transform='rotate(-90 14 {(pad_t + height - pad_b) / 2})'>{escape(_('topographic error (TE)'))}</text>"
    )
    front = sorted((p for p in pts if p[2]), key=lambda p: p[0])
    if len(front) > 1:
        path = " ".join(f"{px(q):.1f},{py(t):.1f}" for q, t, _f in front)
        parts.append(f"<polyline points='{path}' fill='none' stroke='{FRONT}' stroke-width='1.5'/>")
    for i, (q, t, f) in sorted(enumerate(pts), key=lambda p: p[1][2]):  # the frontier over maps alike
        settings = ", ".join(f"{k} {typed(v)}" for k, v in result.rows[i]["settings"].items())
        parts.append(
            f"<circle cx='{px(q):.1f}' cy='{py(t):.1f}' r='{5 if f else 4}' fill='{FRONT if f else DOT}'>"
            f"<title>{escape(settings)}: QE {q:.4f}, TE {t:.3f}</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


# A sweep's config fields that say nothing of it: the impl and layout are its own, batch epochs have no
# learning rate, "auto" only says which values followed the defaults.
_NOT_SHOWN = ("impl", "layout", "stream", "auto", "learning_rate.start", "learning_rate.end")
# The varied settings as the config's fields name them.
_FIELDS = {"sigma_start": "sigma.start", "sigma_end": "sigma.end"}


def settings_rows(result: Any) -> list[tuple[str, str]]:
    """What every map shares, as ``(field, value)``: the data and its size, the map, the settings not varied."""
    varied = {_FIELDS.get(k, k) for k in (result.rows[0]["settings"] if result.rows else {})}
    flat = flatten_config(result.base)
    for end, radii in (result.base.get("sigma") or {}).items():  # as the rows write a radius: 1x0.6
        flat[f"sigma.{end}"] = typed(shown(tuple(radii)))
    if flat.get("data.scale") == _("no"):  # the older switch for minmax scaling: the scaling row says it
        del flat["data.scale"]
    rows = [(k, v) for k, v in flat.items() if k not in varied and k not in _NOT_SHOWN]
    started = result.started
    if started is not None:  # after the data's fields: the size the file or generator gave
        at = max((i + 1 for i, (k, _v) in enumerate(rows) if k.startswith("data.")), default=0)
        rows.insert(at, (_("rows x features"), f"{started.samples:,} x {started.features}"))
    rows.append((_("devices"), str(result.devices)))
    return rows


def sweep_html(result: Any) -> str:
    """The sweep as one HTML page: what was varied, the chart, the rows and the timings."""
    keys = list(result.rows[0]["settings"]) if result.rows else []
    front = set(result.frontier())
    head = "".join(f"<th>{escape(k)}</th>" for k in [*keys, "QE", "TE", _("label purity"), _("frontier")])
    body = []
    for i, r in enumerate(result.rows):
        cells = [typed(r["settings"][k]) for k in keys]
        cells += [f"{r['qe']:.4f}", f"{r['te']:.3f}"]
        cells.append(f"{r['label_purity']:.3f}" if r["label_purity"] is not None else "-")
        cells.append("*" if i in front else "")
        body.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells) + "</tr>")
    t = result.timings
    cfg = result.base
    grid = "x".join(str(v) for v in cfg.get("grid", []))
    summary = _(
        "{n} maps of {grid} ({topology}) trained together in {wall}: compile {compile}, {per_epoch} per epoch "
        "for all of them."
    ).format(
        n=len(result.rows),
        grid=grid,
        topology=cfg.get("topology", "rect"),
        wall=format_seconds(t["wall_s"]),
        compile=format_seconds(t["compile_s"]),
        per_epoch=format_seconds(t["per_epoch_s"]),
    )
    how = _(
        "Each dot is one map. Lower is better on both axes: QE says how closely the map fits the data, TE how "
        "often a row's two best units are not neighbours (a fold). The marked maps are the frontier: no other "
        "map beats them on both."
    )
    notes = "".join(f"<p>{escape(n)}</p>" for n in result.notes)
    shared = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in settings_rows(result))
    return (
        f"<!DOCTYPE html><html lang='{escape(current_language())}'><head><meta charset='utf-8'>"
        f"<title>{escape(_('SOM Studio sweep'))}</title>"
        "<style>body{font-family:sans-serif;margin:2em}td,th{padding:2px 10px;text-align:right}"
        ".settings th{text-align:left;font-weight:normal;color:#555}.settings td{text-align:left}</style></head>"
        f"<body><h1>{escape(_('SOM Studio sweep'))}</h1><p>{escape(summary)}</p>{notes}"
        f"{qe_te_svg(result)}<p>{escape(how)}</p>"
        f"<table><tr>{head}</tr>{''.join(body)}</table>"
        f"<h2>{escape(_('What every map shares'))}</h2><table class='settings'>{shared}</table>"
        f"<p style='color:#777'>SOM Studio {escape(__version__)}</p></body></html>\n"
    )
