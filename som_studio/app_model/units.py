"""What the map view says about one unit: the unit-details panel (a click) and the hover read-out.

Qt-free. :func:`unit_details` gathers one unit's codebook by feature name (in
the data's original units), its hit count, its labels (counts per label) and
the rows of its examples (the first :data:`ROWS_SHOWN`, with the count), from
the run's final map, its :class:`~som_studio.picture.MapViews` and, for the
examples, a :class:`UnitIndex` (each training row's best-matching unit, one
pass over the data). :func:`readout` is the one line the hover shows: the unit
and the value under the cursor in the current view.

Threads: any. :meth:`UnitIndex.build` makes one pass over the data (seconds on
a large map): call it off the GUI thread; everything else is a lookup.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio import picture
from som_studio.core.som import metrics
from som_studio.i18n import _, ngettext

ROWS_SHOWN = 20
"""How many example rows the details list; the count says how many there are in all."""


@dataclass(frozen=True, eq=False)
class UnitIndex:
    """Which unit each training example landed on, for one run's final map.

    ``bmus``: (N,) flat unit index per data row (row ``i`` of the data file, header excluded);
    ``labels``: (N,) str or ``None``; ``ids``: (N,) str, the run's id column, or ``None``.
    """

    bmus: np.ndarray
    labels: np.ndarray | None = None
    ids: np.ndarray | None = None

    @classmethod
    def build(
        cls, weights: np.ndarray, data: np.ndarray, labels: np.ndarray | None = None, ids: np.ndarray | None = None
    ) -> UnitIndex:
        """The index of ``data`` (N, D, in the map's trained space) on ``weights`` (H, W, D)."""
        first, _ = metrics.nearest_units(np.asarray(weights, dtype=np.float64), np.asarray(data))
        lab = None if labels is None else np.asarray(labels, dtype=str)
        return cls(np.asarray(first, dtype=np.int64), lab, None if ids is None else np.asarray(ids, dtype=str))

    @classmethod
    def for_config(cls, weights: np.ndarray, config: Any) -> UnitIndex | None:
        """The index of a run's own training data (read again from its configuration), or ``None`` if unreadable."""
        from som_studio.config import RunConfig
        from som_studio.core.data import DataError
        from som_studio.core.som.problem import load_problem_table

        try:
            cfg = config if isinstance(config, RunConfig) else RunConfig.from_dict(dict(config))
            table = load_problem_table(cfg)
        except (DataError, OSError, ValueError, KeyError, TypeError):
            return None
        if table.values.ndim != 2 or table.values.shape[1] != np.asarray(weights).shape[-1]:
            return None  # the file changed since the run: its rows would be someone else's
        return cls.build(weights, table.values, table.labels, table.ids)

    def rows(self, unit: int) -> np.ndarray:
        """The data rows (ascending) whose best-matching unit is ``unit`` (flat index)."""
        return np.flatnonzero(self.bmus == unit)


@dataclass(frozen=True)
class UnitDetails:
    """One unit of a map, as the details panel shows it.

    Attributes
    ----------
    row, col : the unit's place (row ``r``, column ``c``).
    codebook : ``(feature name, value in the data's original units)`` per feature.
    hits : examples whose best-matching unit this is, or ``None`` (not measured).
    label : the unit's majority label (``""`` without labelled hits), or ``None`` (no labels).
    purity : the share of its labelled examples carrying that label, or ``None``.
    label_counts : ``(label, examples)`` for every label among its examples, most first (rows without one left out).
    example_rows : the first :data:`ROWS_SHOWN` data rows (0-based, header excluded) of its examples.
    example_ids : those rows' ids, when the run has an id column (else empty).
    example_count : how many examples it has in all (``None``: the rows are not known).
    cluster : its codebook cluster, or ``None``.
    """

    row: int
    col: int
    codebook: tuple[tuple[str, float], ...]
    hits: int | None = None
    label: str | None = None
    purity: float | None = None
    label_counts: tuple[tuple[str, int], ...] = ()
    example_rows: tuple[int, ...] = ()
    example_count: int | None = None
    cluster: int | None = None
    example_ids: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return _("Unit (row {row}, column {col})").format(row=self.row, col=self.col)

    def rows_text(self) -> str:
        """The example rows as one line: the first ones, then how many more."""
        if self.example_count is None:
            return _("not known (the run's data cannot be read)")
        if self.example_count == 0:
            return _("none")
        # By the id a user gave them, else by data row as messages count them (1-based: the first is 1).
        shown = ", ".join(self.example_ids or (str(r + 1) for r in self.example_rows))
        more = self.example_count - len(self.example_rows)
        if more <= 0:
            return shown
        return ngettext("{rows} and {n} more", "{rows} and {n} more", more).format(rows=shown, n=more)


def unit_details(
    weights: np.ndarray,
    views: picture.MapViews,
    row: int,
    col: int,
    index: UnitIndex | None = None,
    limit: int = ROWS_SHOWN,
) -> UnitDetails:
    """The details of unit (``row``, ``col``) of ``weights`` (H, W, D, in the trained space).

    Hits, labels and the majority label come from ``index`` when given (the run's
    own examples), else from ``views`` (the run's model); the codebook is shown
    in the data's original units through ``views``' scaling.
    """
    h, wd, d = np.shape(weights)
    if not (0 <= row < h and 0 <= col < wd):
        raise ValueError(f"unit ({row}, {col}) is outside a {h}x{wd} map")
    unit = row * wd + col
    own = np.asarray(weights[row, col], dtype=np.float64)  # this unit only: a click costs nothing on a huge map
    codebook = tuple((views.feature_name(k), views.original(k, float(own[k]))) for k in range(d))
    hits = None if views.hits is None else int(np.asarray(views.hits).reshape(-1)[unit])
    label = None if views.labels is None else str(np.asarray(views.labels).reshape(-1)[unit])
    purity = None
    if views.unit_purity is not None:
        p = float(np.asarray(views.unit_purity, dtype=np.float64).reshape(-1)[unit])
        purity = None if math.isnan(p) else p
    counts: tuple[tuple[str, int], ...] = ()
    rows: tuple[int, ...] = ()
    ids: tuple[str, ...] = ()
    count: int | None = None
    if index is not None:
        mine = index.rows(unit)
        count, rows, hits = len(mine), tuple(int(r) for r in mine[:limit]), len(mine)
        ids = () if index.ids is None else tuple(str(index.ids[r]) for r in rows)
        if index.labels is not None:
            tally = Counter(str(v) for v in index.labels[mine] if str(v) != metrics.NO_LABEL)
            counts = tuple(sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
            if counts:  # over its labelled examples, as the run's purity
                label, purity = counts[0][0], counts[0][1] / tally.total()
            else:
                label, purity = "", None
    cluster = None if views.clusters is None else int(np.asarray(views.clusters).reshape(-1)[unit])
    return UnitDetails(row, col, codebook, hits, label, purity, counts, rows, count, cluster, ids)


def readout(
    frame: picture.MapFrame,
    row: int,
    col: int,
    weights: np.ndarray | None = None,
    views: picture.MapViews | None = None,
    tile: int | None = None,
    umatrix: np.ndarray | None = None,
) -> str:
    """The hover read-out of unit (``row``, ``col``) in ``frame``'s view: the unit and the value under the cursor.

    ``weights`` (the map the frame shows, when at hand) gives exact values, and
    ``umatrix`` (its U-matrix, computed once off the GUI thread) exact distances;
    without them (a live frame) the value is read back from the frame's colour
    level on its colour bar. ``tile``: the plane under the cursor in a grid of planes.
    """
    v = views or picture.MapViews()
    where = _("unit ({row}, {col})").format(row=row, col=col)
    value = _value(frame, row, col, weights, v, tile, umatrix)
    return where if value is None else f"{where}: {value}"


def _value(
    frame: picture.MapFrame,
    row: int,
    col: int,
    weights: np.ndarray | None,
    v: picture.MapViews,
    tile: int | None,
    umatrix: np.ndarray | None,
) -> str | None:
    mode = frame.view.mode
    unit = (row, col)
    if mode == picture.HITS and v.hits is not None:
        n = int(np.asarray(v.hits)[unit])
        return ngettext("{n} hit", "{n} hits", n).format(n=n)
    if mode == picture.LABELS and v.labels is not None:
        lab = str(np.asarray(v.labels)[unit])
        if not lab:
            return _("no examples")
        if v.unit_purity is not None:
            return _("label {label} (purity {purity:.2f})").format(
                label=lab, purity=float(np.asarray(v.unit_purity)[unit])
            )
        return _("label {label}").format(label=lab)
    if mode == picture.CLUSTERS and v.clusters is not None:
        return _("cluster {k}").format(k=int(np.asarray(v.clusters)[unit]))
    if mode == picture.UMATRIX and umatrix is not None:
        return _("U-matrix distance {value:.4g}").format(value=float(umatrix[unit]))
    if weights is not None and mode != picture.UMATRIX:
        w = np.asarray(weights)
        k = frame.view.component if mode == picture.COMPONENT else tile
        if k is not None and 0 <= k < w.shape[-1]:
            return f"{v.feature_name(k)} = {v.original(k, float(w[row, col, k])):.4g}"
        if mode == picture.RGB:
            return ", ".join(f"{v.feature_name(j)} = {v.original(j, float(w[row, col, j])):.4g}" for j in range(3))
        return None
    if mode in (picture.LABELS, picture.CLUSTERS):
        return _category_value(frame, row, col)
    return _level_value(frame, row, col, tile)


def _category_value(frame: picture.MapFrame, row: int, col: int) -> str | None:
    """A live frame's label or cluster, read back from its colour among the legend's swatches."""
    found = frame.category_at(row, col)
    if found is None:
        return None
    name, share = found
    if not name:
        return _("no examples")
    if frame.view.mode == picture.CLUSTERS:
        return name  # the swatch says "cluster k"
    return _("label {label} (purity ≈ {purity:.2f})").format(label=name, purity=picture.label_purity_of_fade(share))


def _level_value(frame: picture.MapFrame, row: int, col: int, tile: int | None) -> str | None:
    """A live frame's value, read back from its colour level on its colour bar (to 1/255 of its range)."""
    bar = frame.legend
    if tile is not None and 0 <= tile < len(frame.tiles) and frame.tiles[tile].bar is not None:
        bar = frame.tiles[tile].bar
    level = frame.level_at(row, col, tile)
    if not isinstance(bar, picture.ColourBar) or level is None:
        return None
    value = bar.lo + level / 255.0 * (bar.hi - bar.lo)
    return f"{bar.label} ≈ {value:.0f}" if bar.integer else f"{bar.label} ≈ {value:.3g}"
