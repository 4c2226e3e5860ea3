"""The model part of a ``.somrun`` file: what projecting new data needs beyond the record.

A run trained on a table keeps, in :attr:`RunRecord.model <som_studio.session.record.RunRecord>`,
a :class:`ModelInfo`: its feature names, the scaling and its parameters, the
label, id and ignored columns, each unit's majority label and the codebook's
clusters. :func:`model_arrays` turns it into the arrays the ``.somrun`` writer
adds to its npz archive; :func:`read_model` reads them back (no pickle: text
is stored as JSON bytes or fixed-width Unicode arrays). ``docs/somrun-format.md``
documents every key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.core.data import DataError, Scaling, Table, json_fields
from som_studio.core.data.json_fields import NULL, NUMBER, OBJECT, TEXT, WHOLE
from som_studio.core.som import metrics
from som_studio.i18n import _

MODEL_VERSION = 1


class ModelFileError(ValueError):
    """The model part of a run file cannot be read; the message says why."""


@dataclass(frozen=True, eq=False)
class ModelInfo:
    """What a trained map needs to take new data.

    ``unit_labels`` is (H, W) str (``""`` for units without labelled hits) or ``None``;
    ``unit_purity`` (H, W) float64, the share of each unit's labelled examples that
    carry its majority label (NaN without labelled hits), or ``None`` (rows without
    a label are left out of both); ``hits`` (H, W) int64,
    the training examples per unit; ``clusters`` is (H, W) int32 or ``None``.
    """

    feature_names: tuple[str, ...]
    scaling: Scaling
    label_column: str | None = None
    id_column: str | None = None
    ignore: tuple[str, ...] = ()
    unit_labels: np.ndarray | None = None
    clusters: np.ndarray | None = None
    hits: np.ndarray | None = None
    unit_purity: np.ndarray | None = None


def attach(
    record: Any,
    config: Any,
    table: Table,
    final_map: np.ndarray,
    measure: bool = True,
    bmus: np.ndarray | None = None,
) -> None:
    """Set ``record.model`` (and ``record.label_purity`` when the table has labels) for a finished run.

    Rows without a label (:data:`~som_studio.core.som.metrics.NO_LABEL`) are left out of the purity and
    the unit labels; the record's ``extra["unlabelled"]`` counts them where there are any.

    ``measure`` ``False`` skips the pass over the data (hits, unit labels, purity).
    ``bmus``: each example's best unit (flat), when the run's final quality pass
    found them on its device; else they are searched here, on the host.
    """
    weights = np.asarray(final_map, dtype=np.float64)
    h, w = weights.shape[:2]
    unit_labels: np.ndarray | None = None
    unit_purity: np.ndarray | None = None
    hits: np.ndarray | None = None
    if measure:
        first = np.asarray(bmus) if bmus is not None else metrics.nearest_units(weights, table.values)[0]
        hits = metrics.hits(first, h * w)
    if hits is not None and table.labels is not None:
        flat, purity, record.label_purity = metrics.label_measures(first, table.labels, h * w)
        unit_purity, unit_labels = purity.reshape(h, w), flat.reshape(h, w)
        _note_unlabelled(record, int(np.count_nonzero(np.asarray(table.labels, dtype=str) == metrics.NO_LABEL)))
    _set_model(record, config, table, weights, hits, unit_labels, unit_purity)


def attach_counts(
    record: Any,
    config: Any,
    table: Table,
    final_map: np.ndarray,
    hits: np.ndarray | None,
    labels: dict[str, np.ndarray] | None = None,
) -> None:
    """:func:`attach` from counts a streamed run's final pass gathered batch by batch: ``hits`` per unit
    (flat) and, with labels, each label's hits per unit. ``table`` holds no rows: the feature names,
    scaling and column roles. The same model as :func:`attach` gives for the same rows in memory."""
    weights = np.asarray(final_map, dtype=np.float64)
    h, w = weights.shape[:2]
    unit_labels: np.ndarray | None = None
    unit_purity: np.ndarray | None = None
    if hits is not None and labels:
        # Ties go to the first label in sorted order, as metrics.unit_labels; rows without a label are left out.
        names = sorted(n for n in labels if n != metrics.NO_LABEL)
        counts = np.zeros((h * w, len(names)), dtype=np.int64)
        for k, n in enumerate(names):
            counts[:, k] = labels[n]
        flat, purity, record.label_purity = metrics.majority_labels(np.asarray(names, dtype=str), counts)
        unit_purity, unit_labels = purity.reshape(h, w), flat.reshape(h, w)
        _note_unlabelled(record, int(np.sum(labels.get(metrics.NO_LABEL, 0))))
    _set_model(record, config, table, weights, hits, unit_labels, unit_purity)


def _note_unlabelled(record: Any, rows: int) -> None:
    """Keep how many rows had no label (``extra.unlabelled``): label purity and the unit labels leave them out."""
    if rows:
        record.extra["unlabelled"] = rows
    else:
        record.extra.pop("unlabelled", None)


def _set_model(
    record: Any,
    config: Any,
    table: Table,
    weights: np.ndarray,
    hits: np.ndarray | None,
    unit_labels: np.ndarray | None,
    unit_purity: np.ndarray | None,
) -> None:
    h, w = weights.shape[:2]
    clusters = None
    if config.clusters is not None:
        from som_studio.core.som.clusters import kmeans

        clusters = kmeans(weights, config.clusters, seed=config.seed)
    record.model = ModelInfo(
        feature_names=tuple(table.feature_names),
        scaling=table.scaling or Scaling.identity(weights.shape[2]),
        label_column=table.label_column,
        id_column=table.id_column,
        ignore=tuple(config.ignore),
        unit_labels=unit_labels,
        clusters=clusters,
        hits=hits.reshape(h, w) if hits is not None else None,
        unit_purity=unit_purity,
    )


def model_arrays(model: ModelInfo | None) -> dict[str, np.ndarray]:
    """The npz entries for ``model`` (none when ``None``)."""
    if model is None:
        return {}
    meta = {
        "model_version": MODEL_VERSION,
        "feature_names": list(model.feature_names),
        "scaling": model.scaling.to_dict(),
        "label_column": model.label_column,
        "id_column": model.id_column,
        "ignore": list(model.ignore),
    }
    out = {"model_meta": np.frombuffer(json.dumps(meta, allow_nan=False).encode("utf-8"), dtype=np.uint8)}
    if model.unit_labels is not None:
        out["unit_labels"] = np.asarray(model.unit_labels, dtype=str)
    if model.clusters is not None:
        out["clusters"] = np.asarray(model.clusters, dtype=np.int32)
    if model.hits is not None:
        out["hits"] = np.asarray(model.hits, dtype=np.int64)
    if model.unit_purity is not None:
        out["unit_purity"] = np.asarray(model.unit_purity, dtype=np.float64)
    return out


def read_model(z: Any) -> ModelInfo | None:
    """The :class:`ModelInfo` in an opened npz archive ``z``, or ``None`` (a run without one).

    Every field of the model's description is checked for its JSON type, and the
    scaling for finite numbers: a damaged or hand-edited file is refused by name
    (:class:`ModelFileError`), never read as something else (a name given as text
    is not split into letters).
    """
    if "model_meta" not in z.files:
        return None
    try:
        meta = json_fields.loads(bytes(z["model_meta"]))
        if not isinstance(meta, dict):
            raise json_fields.FieldError(
                _("it is {found}; expected {expected}").format(
                    found=json_fields.describe(json_fields.kind_of(meta)), expected=json_fields.describe(OBJECT)
                )
            )
        version = json_fields.field(meta, "model_version", (WHOLE, NULL)) or 0
    except ValueError as exc:
        raise ModelFileError(_("the model description is damaged ({why})").format(why=exc)) from None
    if version > MODEL_VERSION:
        raise ModelFileError(
            _("its model is format {version}, newer than this SOM Studio reads ({reads}); update to open it").format(
                version=version, reads=MODEL_VERSION
            )
        )
    try:
        names = json_fields.items(meta, "feature_names", (TEXT,))
        if "feature_names" not in meta:
            raise json_fields.FieldError(_("{field} is missing").format(field="feature_names"))
        scaling = json_fields.field(meta, "scaling", (OBJECT,), required=True)
        json_fields.field(scaling, "method", (TEXT,), "scaling")
        json_fields.items(scaling, "offset", (NUMBER,), "scaling")
        json_fields.items(scaling, "scale", (NUMBER,), "scaling")
        return ModelInfo(
            feature_names=tuple(names),
            scaling=Scaling.from_dict(scaling),
            label_column=json_fields.field(meta, "label_column", (TEXT, NULL)),
            id_column=json_fields.field(meta, "id_column", (TEXT, NULL)),
            ignore=tuple(json_fields.items(meta, "ignore", (TEXT,))),
            unit_labels=np.asarray(z["unit_labels"]).astype(str) if "unit_labels" in z.files else None,
            clusters=np.asarray(z["clusters"]).astype(np.int32) if "clusters" in z.files else None,
            hits=np.asarray(z["hits"]).astype(np.int64) if "hits" in z.files else None,
            unit_purity=np.asarray(z["unit_purity"]).astype(np.float64) if "unit_purity" in z.files else None,
        )
    except (json_fields.FieldError, DataError) as exc:
        raise ModelFileError(_("the model description is damaged ({why})").format(why=exc)) from None
    except (KeyError, TypeError) as exc:
        raise ModelFileError(
            _("the model description is damaged ({why})").format(why=f"{type(exc).__name__}: {exc}")
        ) from None
