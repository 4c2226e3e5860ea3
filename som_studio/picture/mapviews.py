"""What the views of a map need beyond the map itself: the run's lattice, its feature names, hits, labels, clusters.

A :class:`MapViews` is small, frozen and Qt-free, so it crosses processes and
threads as it is. How its parts travel:

* the lattice comes with the run's configuration, the feature names and the
  scaling with its data (:meth:`MapViews.from_started`, from the ``Started``
  event, so a live run's planes are named; :meth:`MapViews.from_record` for a kept run);
* hits, each unit's majority label and purity, and the clusters of the final
  map are computed once, by the session, where the data is
  (:func:`som_studio.core.data.model_file.attach` into the record's model) and
  read from there (:meth:`MapViews.with_model`): a kept run, the report and
  the app after a run all draw them from the ``.somrun``;
* during a run, the worker measures hits and labels on the current map when
  that is cheap (:meth:`MapViews.measured`, at most :data:`LIVE_BUDGET`
  example-unit-feature products, on its sender thread, never the training one);
  above that, the hit and label views show from the final map on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from som_studio.core.som import metrics
from som_studio.i18n import _
from som_studio.run_settings import Topology

LIVE_BUDGET = 20_000_000
"""Largest examples x units x features measured for a live frame's hits and labels (~20 ms of NumPy here)."""


@dataclass(frozen=True, eq=False)
class MapViews:
    """The inputs of the views of one run's map, other than the map.

    Attributes
    ----------
    topology, toroid : the lattice (``rect`` or ``hex``) and whether it wraps.
    feature_names : one per feature (``()``: unnamed, shown as ``Feature k``).
    offset, scale : the data's scaling (``x = trained * scale + offset`` in original units), or ``None``.
    hits : (H, W) int64 examples per unit, or ``None``.
    labels : (H, W) str, each unit's majority label (``""`` without labelled hits), or ``None``.
    unit_purity : (H, W) float64 share of a unit's labelled examples carrying its label (NaN without labelled
        hits), or ``None``.
    purity : the run's label purity (0-1, over its labelled examples), or ``None``.
    clusters : (H, W) int cluster of each unit, or ``None``.
    iteration : the iteration the hits and labels were measured at (``None``: the final map).
    live : the inputs (``hits``, ``labels``) the worker measures for each frame of a live run
        (:func:`cheap_to_measure`): their views are offered before the run ends.
    """

    topology: str = Topology.RECT
    toroid: bool = False
    feature_names: tuple[str, ...] = ()
    offset: np.ndarray | None = None
    scale: np.ndarray | None = None
    hits: np.ndarray | None = None
    labels: np.ndarray | None = None
    unit_purity: np.ndarray | None = None
    purity: float | None = None
    clusters: np.ndarray | None = None
    iteration: int | None = None
    live: tuple[str, ...] = ()

    # -- built from --------------------------------------------------------------------
    @classmethod
    def from_config(cls, config: Any, feature_names: Any = ()) -> MapViews:
        """From a run's configuration: a :class:`~som_studio.config.RunConfig` or its ``to_dict()``."""
        get = config.get if isinstance(config, dict) else lambda k, d=None: getattr(config, k, d)
        names = tuple(str(n) for n in (feature_names or get("feature_names") or ()))
        return cls(
            topology=str(get("topology") or Topology.RECT), toroid=bool(get("toroid") or False), feature_names=names
        )

    @classmethod
    def from_started(cls, started: Any) -> MapViews:
        """From a run's ``Started`` event: its configuration, its data's feature names and scaling."""
        config = getattr(started, "config", {}) or {}
        views = cls.from_config(config, getattr(started, "feature_names", ()))
        get = config.get if isinstance(config, dict) else lambda k, d=None: getattr(config, k, d)
        units = int(get("height") or 0) * int(get("width") or 0)
        samples = int(getattr(started, "samples", 0) or 0)
        if samples and units and cheap_to_measure(samples, units, int(getattr(started, "features", 0) or 0)):
            views = replace(views, live=("hits", "labels") if get("labels") else ("hits",))
        scaling = getattr(started, "scaling", None)
        if scaling is None:
            return views
        offset, scale = (np.asarray(v, dtype=np.float64) for v in scaling)
        return replace(views, offset=offset, scale=scale)

    @classmethod
    def from_record(cls, record: Any) -> MapViews:
        """From a finished run's record: its configuration and, where it has one, its model."""
        return cls.from_config(getattr(record, "config", {}) or {}).with_model(getattr(record, "model", None), record)

    def with_model(self, model: Any, record: Any = None) -> MapViews:
        """These views with what a run's model holds (a :class:`~som_studio.core.data.model_file.ModelInfo`)."""
        if model is None:
            return self
        scaling = getattr(model, "scaling", None)
        purity = getattr(record, "label_purity", None) if record is not None else None
        if purity is None and model.unit_purity is not None and model.hits is not None:
            p = np.asarray(model.unit_purity, dtype=np.float64)
            h = np.where(np.isnan(p), 0.0, np.asarray(model.hits, dtype=np.float64))  # units with labelled hits
            purity = float((np.nan_to_num(p) * h).sum() / h.sum()) if h.sum() else None
        return replace(
            self,
            feature_names=tuple(model.feature_names) or self.feature_names,
            offset=None if scaling is None else np.asarray(scaling.offset, dtype=np.float64),
            scale=None if scaling is None else np.asarray(scaling.scale, dtype=np.float64),
            hits=model.hits,
            labels=model.unit_labels,
            unit_purity=model.unit_purity,
            purity=purity,
            clusters=model.clusters,
            iteration=None,
        )

    def measured(
        self, weights: np.ndarray, data: np.ndarray, labels: np.ndarray | None = None, iteration: int | None = None
    ) -> MapViews:
        """These views with hits (and majority labels and purity, given ``labels``) of ``data`` on ``weights``."""
        h, w = weights.shape[:2]
        first, _ = metrics.nearest_units(weights, data)
        hits = metrics.hits(first, h * w)
        if labels is None:
            return replace(self, hits=hits.reshape(h, w), iteration=iteration)
        flat, unit_purity, purity = metrics.label_measures(first, labels, h * w)
        return replace(
            self,
            hits=hits.reshape(h, w),
            labels=flat.reshape(h, w),
            unit_purity=unit_purity.reshape(h, w),
            purity=purity,
            iteration=iteration,
        )

    # -- reading -------------------------------------------------------------------------
    def feature_name(self, k: int) -> str:
        """Feature ``k``'s name (``Feature k`` when unnamed)."""
        return self.feature_names[k] if 0 <= k < len(self.feature_names) else _("Feature {k}").format(k=k)

    def original(self, k: int, value: float) -> float:
        """A trained-space value of feature ``k`` in the data's original units."""
        if self.offset is None or self.scale is None or k >= len(self.offset):
            return float(value)
        return float(value * self.scale[k] + self.offset[k])

    def has(self, need: str) -> bool:
        """Whether the input ``need`` (``hits``, ``labels``, ``clusters``) is at hand, or measured live."""
        return getattr(self, need, None) is not None or need in self.live


def cheap_to_measure(samples: int, units: int, features: int) -> bool:
    """Whether a live frame may measure hits and labels (:data:`LIVE_BUDGET`)."""
    return samples * units * max(features, 1) <= LIVE_BUDGET
