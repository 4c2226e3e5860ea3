"""The report as HTML: one self-contained page for browsers, or Qt's rich text for the PDF.

The charts come in as PNG bytes (drawn by the Qt layer); here they are only
embedded — as ``data:`` URIs in the page, or as resource names that the PDF
writer registers with its ``QTextDocument`` (which supports a subset of HTML 4
and CSS, hence the plainer markup in that mode).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from html import escape

from som_studio import __version__
from som_studio.comparison.summary import small_peak_text
from som_studio.comparison.words import status_text
from som_studio.i18n import _, current_language, ngettext
from som_studio.report.content import Report

NUMERIC = {"compile", "median / it", "p95 / it", "total", "wall", "samples/s", "speed-up", "QE", "TE", "peak memory"}
NUMERIC |= {"mean / it", "end-to-end", "label purity", "faster after"}

_CSS = """
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, "Noto Sans CJK KR", "Noto Sans KR", "NanumGothic",
       "Apple SD Gothic Neo", "Malgun Gothic", sans-serif; color: #1d2330; margin: 0;
       background: #f4f5f7; line-height: 1.45; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 48px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
p.headline { font-size: 21px; font-weight: 600; color: #0b4f8a; margin: 10px 0 8px; max-width: none; }
h2 { font-size: 19px; margin: 34px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #dde1e8; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p { margin: 6px 0 10px; max-width: 78ch; }
.meta { color: #5b6475; margin-bottom: 18px; }
table { border-collapse: collapse; margin: 8px 0 14px; font-size: 13px; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e3e6ec; text-align: left; vertical-align: top; }
th { background: #eef1f6; font-weight: 600; white-space: nowrap; }
td { white-space: nowrap; }
table.by-run th[scope="row"] { text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.long { white-space: normal; min-width: 40ch; }
tr.diff td { background: #fff4d6; }
.table-wrap { overflow-x: auto; }
ul.flags { padding-left: 0; list-style: none; }
ul.flags li { margin: 6px 0; padding: 7px 12px; border-left: 4px solid #e0a100; background: #fff8e6; max-width: 110ch; }
ul.flags li.note { border-left-color: #6b8cce; background: #eef3fc; }
ul.flags li.ok { border-left-color: #3c9a5f; background: #edf7f0; }
.status-failed { color: #b3261e; font-weight: 600; }
.status-cancelled { color: #a05a00; font-weight: 600; }
figure { margin: 10px 0 14px; }
figure img { max-width: 100%; height: auto; border: 1px solid #e3e6ec; }
footer { margin-top: 36px; color: #7a8294; font-size: 12px; }
code { font-size: 12px; }
"""


def _img_src(key: str, png: bytes | None, for_qt: bool) -> str | None:
    if png is None:
        return None
    if for_qt:
        return f"chart-{key}.png"
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


#: Characters from which a text cell (a list of feature names, a long path) wraps: names and numbers never do,
#: and a cell this long would run past a PDF page's edge, where Qt cuts it.
WRAP_CHARS = 60
#: A cell longer than this may break after a path's separators in the PDF.
PATH_BREAK_CHARS = 20
_PATH_BREAKS = re.compile(r"[/\\]")


def _text_cell(cell: str, for_qt: bool = False) -> str:
    if len(cell) > WRAP_CHARS:
        return f'<td class="long" style="white-space: normal">{escape(cell)}</td>'
    if for_qt and len(cell) > PATH_BREAK_CHARS:
        # In a PDF page's table one long cell per run (a path, the feature names) pushed the last runs past the
        # page's edge: the cell may wrap, a path after each separator (a zero-width space there; the HTML, whose
        # text is copied, keeps the path as it is).
        broken = _PATH_BREAKS.sub("\\g<0>\u200b", escape(cell))
        return f'<td style="white-space: normal">{broken}</td>'
    return f"<td>{escape(cell)}</td>"


def _table(
    header: list[str],
    rows: list[list[str]],
    *,
    numeric: set[str] | None = None,
    row_classes: list[str] | None = None,
    for_qt: bool = False,
    wide: bool = False,
    labels: list[str] | None = None,
) -> str:
    """A table; ``header`` names the columns (``numeric`` and the status column go by it), ``labels``
    are what the heading row shows (default: ``header``)."""
    numeric = numeric or set()
    attrs = ' border="0" cellspacing="0" cellpadding="4"' + (' width="100%"' if wide else "") if for_qt else ""
    shown = labels or header
    out = [f"<table{attrs}>", "<tr>" + "".join(f"<th>{escape(h)}</th>" for h in shown) + "</tr>"]
    bad = {status_text(s): s for s in ("failed", "cancelled")}
    for i, row in enumerate(rows):
        cls = row_classes[i] if row_classes else ""
        bg = ' bgcolor="#fff4d6"' if for_qt and cls == "diff" else ""
        cells = []
        for h, cell in zip(header, row):
            if h in numeric:
                cells.append(f'<td class="num" align="right">{escape(cell)}</td>')
            elif h == "status" and cell in bad:
                cells.append(f'<td class="status-{bad[cell]}">{escape(cell)}</td>')
            else:
                cells.append(_text_cell(cell))
        out.append(f'<tr class="{cls}"{bg}>' + "".join(cells) + "</tr>" if cls else "<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    html = "\n".join(out)
    return html if for_qt else f'<div class="table-wrap">{html}</div>'


RUNS_PER_TABLE = 6
"""Runs side by side in one table: more are shown in further tables, so no cell has to wrap."""
RUNS_PER_PAGE_TABLE = 4
"""The runs' configurations on a PDF's page, a landscape A4 (five runs' settings ran past its edge)."""


def _by_run(
    corner: str,
    names: list[str],
    row_labels: list[str],
    columns: list[list[str]],
    *,
    numeric_rows: set[int] | None = None,
    row_classes: list[str] | None = None,
    for_qt: bool = False,
    per_table: int = RUNS_PER_TABLE,
) -> str:
    """A table with one column per run and one row per measure (``columns[j][i]``: run ``j``, row ``i``).

    Read down a run's column; with many runs, several tables of ``per_table`` runs each,
    so neither a name nor a number is ever broken across lines to fit a page.
    """
    numeric_rows = numeric_rows or set()
    # On a PDF page the table is held to the page's width, so its long cells wrap (at their spaces and a path's
    # separators): sized to its content, a configuration's paths and feature names pushed the third run past
    # the page's edge and the fourth off it.
    attrs = ' border="0" cellspacing="0" cellpadding="4" width="100%"' if for_qt else ' class="by-run"'
    bad = {status_text(st): st for st in ("failed", "cancelled")}
    out = []
    for start in range(0, max(len(names), 1), per_table):
        part = range(start, min(start + per_table, len(names)))
        rows = [
            f"<table{attrs}>",
            f"<tr><th>{escape(corner)}</th>" + "".join(f"<th>{escape(names[j])}</th>" for j in part) + "</tr>",
        ]
        for i, label in enumerate(row_labels):
            cls = row_classes[i] if row_classes else ""
            bg = ' bgcolor="#fff4d6"' if for_qt and cls == "diff" else ""
            cells = []
            for j in part:
                cell = columns[j][i]
                if i in numeric_rows:
                    cells.append(f'<td class="num" align="right">{escape(cell)}</td>')
                elif cell in bad:
                    cells.append(f'<td class="status-{bad[cell]}">{escape(cell)}</td>')
                else:
                    cells.append(_text_cell(cell, for_qt))
            head = f'<th scope="row" align="left">{escape(label)}</th>'
            rows.append((f'<tr class="{cls}"{bg}>' if cls else "<tr>") + head + "".join(cells) + "</tr>")
        rows.append("</table>")
        html = "\n".join(rows)
        out.append(html if for_qt else f'<div class="table-wrap">{html}</div>')
    return "\n".join(out)


def report_html(
    report: Report,
    charts: Mapping[str, bytes | None],
    *,
    for_qt: bool = False,
    image_widths: Mapping[str, int] | None = None,
) -> str:
    """The whole report as one HTML document.

    Parameters
    ----------
    report : what to say.
    charts : PNG bytes per chart section key (``"maps"``, ``"timing"``, ``"quality"``).
    for_qt : markup for ``QTextDocument`` (images as resource names
        ``chart-<key>.png``; sections flow on from page to page, charts short enough
        that one moved to the next page leaves at most half a page) instead of a
        self-contained page with embedded images.
    image_widths : with ``for_qt``, each chart's width in the document's pixels.
    """
    runs = ", ".join(escape(r.name) for r in report.runs)  # the charts' alt texts name them
    parts = [
        *_head(report, for_qt),
        *_summary(report, for_qt),
        *_flags(report, for_qt),
        *_charts(report, charts, runs, for_qt, image_widths),
        *_configurations(report, for_qt),
        *_environment(report, for_qt),
        _footer(),
        "</main></body></html>",
    ]
    return "\n".join(p for p in parts if p)


def _head(report: Report, for_qt: bool) -> list[str]:
    """The document's head, the title, the headline and who made it of which runs."""
    parts: list[str] = []
    a = parts.append
    a("<!DOCTYPE html>" if not for_qt else "")
    a(f'<html lang="{current_language()}"><head><meta charset="utf-8">')
    a(f"<title>{escape(report.title)}</title>")
    if not for_qt:
        a('<meta name="viewport" content="width=device-width, initial-scale=1">')
        a(f"<style>{_CSS}</style>")
    a("</head><body><main>")
    a(f"<h1>{escape(report.title)}</h1>")
    headline = report.headline()
    if headline:
        size = ' style="font-size: 15pt; font-weight: 600; color: #0b4f8a"' if for_qt else ""
        a(f'<p class="headline"{size}>{escape(headline)}</p>')
    runs = ", ".join(escape(r.name) for r in report.runs)
    n = len(report.runs)
    meta = ngettext(
        "{n} run: {runs}. Made {created} by SOM Studio {version}.",
        "{n} runs: {runs}. Made {created} by SOM Studio {version}.",
        n,
    ).format(n=n, runs=runs, created=escape(report.created), version=escape(__version__))
    a(f'<p class="meta">{meta}</p>')
    return parts


def _summary(report: Report, for_qt: bool) -> list[str]:
    """The summary: one column per run, and how to read its measures."""
    parts: list[str] = []
    a = parts.append
    a(f"<h2>{escape(_('Summary'))}</h2>")
    # One column per run: eighteen measures across a page broke names and numbers mid-word.
    labels = report.summary_labels()
    keys = list(report.SUMMARY_HEADER)
    rows = report.summary_rows()
    a(
        _by_run(
            labels[0],
            [row[0] for row in rows],
            labels[1:],
            [row[1:] for row in rows],
            numeric_rows={i for i, k in enumerate(keys[1:]) if k in NUMERIC},
            for_qt=for_qt,
        )
    )
    bases = sorted({(r.record.kind, b) for r, b in zip(report.runs, report.baseline_of) if b})
    base_text = "; ".join(_base_for(escape(b), k) for k, b in bases) or escape(_("none"))
    a(
        "<p>"
        + _(
            "Times are per iteration: an epoch for batch implementations, a step for online ones. "
            "<b>{speedup}</b> is the baseline's median time per iteration divided by the run's "
            "(baseline: {baselines}). <b>samples/s</b> is computed at the median. <b>{compile}</b> is compilation "
            "and warm-up, timed apart. <b>QE</b>/<b>TE</b> are the final map's quantization and topographic "
            "errors. <b>{peak}</b> is the growth of the process's memory during the run (plus device memory "
            "where the device reports it)."
        ).format(
            speedup=escape(_("speed-up")),
            baselines=base_text,
            compile=escape(_("compile")),
            peak=escape(_("peak memory")),
        )
        + " "
        + _("It reads {small} where it grew by less: the run fit in memory the process already held.").format(
            small=f"<b>{escape(small_peak_text())}</b>"
        )
        + " "
        + _(
            "<b>{total}</b> is the whole training, the initial map and the compile included; <b>{wall}</b> is "
            "what a stopwatch around the run saw: reading the data, the initial map, compiling, training, "
            "measuring quality and counting hits and labels. <b>{e2e}</b> is the baseline's compile and training "
            "over the run's (the initial map, made alike by every implementation, left out); <b>{after}</b> is "
            "the iteration from which the run's compile and training take less than the baseline's."
        ).format(
            total=escape(_("total")),
            wall=escape(_("wall")),
            e2e=escape(_("end-to-end")),
            after=escape(_("faster after")),
        )
        + "</p>"
    )
    return parts


def _flags(report: Report, for_qt: bool) -> list[str]:
    """What to read with care: the report's flags, or that there are none."""
    parts: list[str] = []
    a = parts.append
    a(f"<h2>{escape(_('Read with care'))}</h2>")
    if report.flags:
        a('<ul class="flags">')
        for f in report.flags:
            mark = escape(_("Warning") if f.level == "warning" else _("Note"))
            color = "#a05a00" if f.level == "warning" else "#3a5a9a"
            label = f'<b><font color="{color}">{mark}:</font></b> ' if for_qt else f"<b>{mark}:</b> "
            a(f'<li class="{f.level}">{label}{escape(f.text)}</li>')
        a("</ul>")
    else:
        a(
            '<ul class="flags"><li class="ok">'
            + escape(
                _(
                    "No suspect numbers: no run recompiled after warm-up, iterations are steady (p95 within 2x of "
                    "the median), and every run trained the same configuration."
                )
            )
            + "</li></ul>"
        )
    return parts


def _charts(
    report: Report, charts: Mapping[str, bytes | None], runs: str, for_qt: bool, image_widths: Mapping[str, int] | None
) -> list[str]:
    """A section per chart: the picture (or that it was not drawn), its paragraphs, and the roofline's table."""
    parts: list[str] = []
    a = parts.append
    for sec in report.sections:
        a(f"<h2>{escape(sec.title)}</h2>")
        src = _img_src(sec.key, charts.get(sec.key), for_qt)
        if src is None:
            a(f"<p><i>{escape(_('(chart not drawn)'))}</i></p>")
        elif for_qt:
            width = (image_widths or {}).get(sec.key, _QT_IMAGE_WIDTH)
            a(f'<p align="center"><img src="{src}" width="{width}"></p>')
        else:
            a(f'<figure><img src="{src}" alt="{escape(sec.title)}: {runs}"></figure>')
        for para in sec.paragraphs:
            a(f"<p>{escape(para)}</p>")
        if sec.key == "roofline":
            head, rows, notes = report.inside_table()
            a(_table(head, rows, numeric=set(head[1:-2]), for_qt=for_qt, wide=True, labels=[_(h) for h in head]))
            for line in notes:
                a(f"<p><small>{escape(line.strip())}</small></p>")
    return parts


def _configurations(report: Report, for_qt: bool) -> list[str]:
    """The runs' configurations side by side, the fields that differ highlighted."""
    parts: list[str] = []
    a = parts.append
    a(f"<h2>{escape(_('Configurations'))}</h2>")
    keys, rows = report.config_table()
    if report.config_diffs:
        text = _("Highlighted rows differ between runs: {fields}.").format(fields=", ".join(report.config_diffs))
        a(f"<p>{escape(text)}</p>")
    else:
        text = _(
            "Every run trained the same configuration (each with its own implementation; steps for online "
            "runs, epochs for batch runs)."
        )
        a(f"<p>{escape(text)}</p>")
    classes = ["diff" if k in report.config_diffs else "" for k in keys]
    names = [r.name for r in report.runs]
    a(
        _by_run(
            _("field"),
            names,
            keys,
            [[row[j] for row in rows] for j in range(len(names))],
            row_classes=classes,
            for_qt=for_qt,
            per_table=RUNS_PER_PAGE_TABLE if for_qt else RUNS_PER_TABLE,
        )
    )
    return parts


def _environment(report: Report, for_qt: bool) -> list[str]:
    """What every run shared of its environment, then what each had of its own."""
    parts: list[str] = []
    a = parts.append
    a(f"<h2>{escape(_('Environment'))}</h2>")
    names = [r.name for r in report.runs]
    shared, per_keys, per_rows = report.env_table()
    if shared:
        a(f"<h3>{escape(_('Shared by every run'))}</h3>")
        a(_table(["", _("value")], [[k, v] for k, v in shared], for_qt=for_qt))
    if per_keys:
        a(f"<h3>{escape(_('Per run'))}</h3>")
        a(_by_run(_("run"), names, per_keys, per_rows, for_qt=for_qt))
    return parts


def _footer() -> str:
    """Where the raw numbers behind the report are."""
    footer = _(
        "SOM Studio {version}. The raw numbers behind this report: {json} (every run's full record) and {csv} "
        "(one row per timed chunk); in the app, Export > {json_menu} and {csv_menu}."
    ).format(
        version=escape(__version__),
        json="<code>som-studio compare ... --json FILE</code>",
        csv="<code>--csv FILE</code>",
        json_menu=escape(_("Full records (JSON)…").rstrip("…")),
        csv_menu=escape(_("Timed chunks (CSV)…").rstrip("…")),
    )
    return f"<footer>{footer}</footer>"


def _base_for(name: str, kind: str) -> str:
    """``"numpy-batch for batch runs"``: a kind's baseline, for the summary's note."""
    if kind == "batch":
        return _("{name} for batch runs").format(name=name)
    if kind == "online":
        return _("{name} for online runs").format(name=name)
    return f"{name} ({kind})"


_QT_IMAGE_WIDTH = 640
"""Width of a chart in the PDF's rich text, in the document's pixels (the page is laid out at 96 dpi)."""
