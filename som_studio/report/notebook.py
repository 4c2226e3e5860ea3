"""A trained run as a notebook shows it (``_repr_html_``): its final map, timings and quality. No Qt.

The picture is the one the run recorder keeps (:func:`~som_studio.picture.views.map_image`:
RGB for three features, the U-matrix otherwise, hexagons on a hex map), encoded as PNG by
the report's encoder; the words and the numbers' formats are the report's.
"""

from __future__ import annotations

import base64
from html import escape
from typing import Any

import numpy as np

from som_studio.comparison.words import format_seconds, kind_text, status_text
from som_studio.i18n import _


def map_png(run: Any) -> bytes:
    """The run's final map as the recorder pictures it, PNG-encoded."""
    from som_studio.picture.mapviews import MapViews
    from som_studio.picture.raster import report_scale
    from som_studio.picture.views import map_image
    from som_studio.storage.writers import png_bytes

    trained = np.asarray(run._trained)
    h, w = trained.shape[:2]
    topology = str(run.config.get("topology") or "rect")
    views = MapViews(topology=topology, toroid=bool(run.config.get("toroid")))
    lo = np.nanmin(trained.reshape(-1, trained.shape[2]), axis=0)
    hi = np.nanmax(trained.reshape(-1, trained.shape[2]), axis=0)
    image = map_image(trained, lo, hi, views, scale=report_scale(h, w, 320))
    return png_bytes(image)


def run_html(run: Any) -> str:
    """An HTML fragment: the picture beside a table of the run's timings and quality."""
    rec = run.record
    t, q = rec.get("timings") or {}, rec.get("quality") or {}
    toroid = ", toroid" if run.config.get("toroid") else ""  # as the comparison's problem line says it
    rows: list[tuple[str, str]] = [
        (_("implementation"), str(rec.get("impl", ""))),
        (_("kind"), kind_text(str(rec.get("kind", "")))),
        (_("status"), status_text(str(rec.get("status", "")))),
        (_("map"), f"{run.width}x{run.height} {run.config.get('topology', 'rect')}" + toroid),
        (_("compile"), format_seconds(t.get("compile_s"))),
        (_("median / it"), format_seconds(t.get("median_s"))),
        (_("p95 / it"), format_seconds(t.get("p95_s"))),
        (_("total"), format_seconds(t.get("total_s"))),
        (_("wall"), format_seconds(t.get("wall_s"))),
        ("QE", f"{q['qe']:.4g}" if q.get("qe") is not None else "-"),
        ("TE", f"{q['te']:.3f}" if q.get("te") is not None else "-"),
    ]
    if q.get("label_purity") is not None:
        rows.append((_("label purity"), f"{q['label_purity']:.3f}"))
    agreement = (rec.get("extra") or {}).get("agreement")
    if isinstance(agreement, dict):  # your own implementation, checked against the reference
        from som_studio.core.impls.user_impl import agreement_text

        rows.append((_("reference"), agreement_text(agreement)))
    src = "data:image/png;base64," + base64.b64encode(map_png(run)).decode("ascii")
    cells = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows
    )
    names = escape(", ".join(run.feature_names[:12]) + (", ..." if len(run.feature_names) > 12 else ""))
    if len(run.feature_names) != 3:  # not the features' colours: the picture is the U-matrix (map_image)
        words = _(
            "The U-matrix shows each unit's mean distance to its neighbouring units: light ridges are borders "
            "between groups of similar units."
        )
    else:  # three features of any table are drawn as colours: which is which
        red, green, blue = run.feature_names
        words = _("Red, green and blue are {red}, {green} and {blue}, each over its range in the data.").format(
            red=red, green=green, blue=blue
        )
    caption = f"<p style='max-width:320px'>{escape(words)}</p>"
    return (
        "<div style='display:flex;gap:1.5em;align-items:flex-start'>"
        f"<div><img src='{src}' alt='{escape(_('final map'))}' style='image-rendering:pixelated'/>{caption}</div>"
        f"<div><table>{cells}</table><p>{escape(_('features'))}: {names}</p></div></div>"
    )
