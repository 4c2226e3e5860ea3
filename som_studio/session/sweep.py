"""What a session needs to train a sweep: many maps of one SOM at once, each combination a slice of a batch.

A sweep is one :class:`~som_studio.session.session.Session` whose configuration is the base SOM and
whose ``sweep`` lists the combinations (the varied settings as config fields): its trainer
(:class:`~som_studio.core.impls.jax_sweep.SweepBatch`) trains every combination's map as one
``vmap``-ed ``jax-fused-batch`` epoch, in chunks like any run. Here: the combinations' configurations,
how many devices they spread over, and each combination's own record.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from som_studio.config import RunConfig
from som_studio.session.chunklog import ChunkLog
from som_studio.session.record import RunRecord

IMPL = "jax-fused-batch"
"""The implementation whose epoch a sweep batches: a run of it reproduces any combination."""


def spread(combinations: int, devices: int) -> int:
    """Over how many devices to shard ``combinations`` maps: the fewest maps per device, then the least padding.

    Every device takes as many maps (a sharded axis is cut evenly), so 10 maps on 8 devices go
    5 x 2 (no padding) rather than 8 x 2 (6 padded maps trained for nothing).
    """
    best = 1
    for s in range(1, max(1, min(devices, combinations)) + 1):
        rounds, best_rounds = -(-combinations // s), -(-combinations // best)
        if rounds < best_rounds or (
            rounds == best_rounds and s * rounds - combinations < best * best_rounds - combinations
        ):
            best = s
    return best


def shown(value: Any) -> Any:
    """A varied value as a row and the JSON give it: a number, or ``[sx, sy]`` when the axes differ."""
    if isinstance(value, tuple):
        return value[0] if value[0] == value[1] else [value[0], value[1]]
    return value


def typed(value: Any) -> str:
    """A row's varied value (:func:`shown`) as a user types it: ``0.5``, ``1x0.6`` (a radius per axis), ``2``."""
    if isinstance(value, (list, tuple)):
        return "x".join(f"{v:g}" for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


def settings_text(settings: Mapping[str, Any]) -> str:
    """A row's varied settings by their labels, as the form names them: ``Radius σ (end) 1x0.6, Seed 0``."""
    from som_studio.config import setting_named
    from som_studio.i18n import _

    return ", ".join(f"{_(setting_named(k).label)} {typed(v)}" for k, v in settings.items())


def configs(base: RunConfig, combos: Sequence[Mapping[str, Any]]) -> list[RunConfig]:
    """Each combination's configuration: ``base`` with its values; raises ``ConfigError`` naming a bad one."""
    return [base.replace(**dict(c)).validate("batch") for c in combos]


def combination_record(
    sweep: RunRecord, cfg: RunConfig, combo: Mapping[str, Any], quality: tuple[float, float] | None
) -> RunRecord:
    """One combination's record: its configuration and settings, its quality, the sweep's timings and setting.

    Every combination trained in the same chunks of the same program, so the chunks, compile and
    totals are the sweep's.
    """
    rec = RunRecord(impl=IMPL, kind="batch", config=cfg.to_dict(), status=sweep.status, message=sweep.message)
    if "feature_names" in sweep.config:
        rec.config["feature_names"] = list(sweep.config["feature_names"])
    rec.samples, rec.layout, rec.env = sweep.samples, "1x1", dict(sweep.env)
    rec.compile_s, rec.total_s, rec.wall_s = sweep.compile_s, sweep.total_s, sweep.wall_s
    rec.chunks = ChunkLog(sweep.chunks)
    rec.phases.update(sweep.phases)
    if quality is not None:
        rec.qe, rec.te = quality
        rec.history.append({"iteration": cfg.iterations, "qe": rec.qe, "te": rec.te})
    rec.extra["sweep"] = {
        "combinations": int(sweep.extra.get("sweep", {}).get("combinations", 1)),
        "settings": {k: shown(v) for k, v in combo.items()},
    }
    return rec


def row(record: RunRecord) -> dict[str, Any]:
    """A combination's row: its settings, ``qe``, ``te``, ``label_purity`` (``None`` without labels)."""
    return {
        "settings": dict(record.extra["sweep"]["settings"]),
        "qe": record.qe,
        "te": record.te,
        "label_purity": record.label_purity,
    }


def stacked(maps: Sequence[np.ndarray]) -> np.ndarray:
    """The combinations' maps as one (C, H, W, D) array."""
    return np.stack([np.asarray(m) for m in maps]) if len(maps) else np.zeros((0, 0, 0, 0))
