"""Many maps trained together: every combination of a few varied settings as one batched JAX program.

>>> rows = som_studio.sweep("wines.csv", vary={"sigma_end": [0.5, 1, 2], "seed": [0, 1]},
...                         labels="vintage", grid="8x6", topology="hex", scaling="zscore")  # doctest: +SKIP
>>> rows[0]["qe"], rows.to_pandas(), rows.run(0)                                          # doctest: +SKIP

One map size and one data set; what may vary is what the declaration of settings marks
``sweep`` (:data:`som_studio.config.SETTINGS`: the start and end radii and the seed). Each
combination is one slice of a batch: the fused batch epoch of ``jax-fused-batch``
(:func:`som_studio.core.impls.jax_fused.batch_epoch`, its kernel plan and kernels) is ``vmap``-ed over
the combinations' maps and radius schedules and the whole run is one ``fori_loop``, compiled once;
with several devices the batch is sharded over them. A ``jax-fused-batch`` run of any
combination trains the same map, to float32 rounding.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from som_studio import config as cfgmod
from som_studio.config import ConfigError, RunConfig
from som_studio.i18n import _

SCHEMA_VERSION = 1
"""The version of the sweep's JSON (``--json``; docs/json-schema.md, "The sweep")."""

IMPL = "jax-fused-batch"
"""The implementation whose epoch a sweep batches: a run of it reproduces any row."""


class SweepError(ValueError):
    """A sweep that cannot run; the message names the setting or the problem."""


def varied_settings() -> tuple[str, ...]:
    """The settings a sweep may vary, as the declaration marks them."""
    return tuple(s.name for s in cfgmod.SETTINGS if s.sweep)


def read_vary(text: str) -> tuple[str, list[Any]]:
    """``KEY=V1,V2,...`` as typed after ``--vary``: the key and its values, each read as the setting reads it.

    Raises :class:`ConfigError` naming the key (``vary`` when the text has no key).
    """
    key, eq, values = text.partition("=")
    key = key.strip().replace("-", "_")
    if not eq or not key:
        raise ConfigError(
            "vary", _("expected KEY=V1,V2,... such as sigma_end=0.5,1,2, got {value!r}").format(value=text)
        )
    check_key(key)
    parts = [v.strip() for v in values.split(",") if v.strip()]
    if not parts:
        raise ConfigError("vary", _("{key}: give at least one value").format(key=key))
    s = cfgmod.setting_named(key)
    return key, [cfgmod.read_setting(s, v) for v in parts]


def check_key(key: str) -> None:
    """Refuse a key a sweep cannot vary, naming it and the ones it can."""
    if key not in varied_settings():
        raise ConfigError(
            "vary",
            _("{key} cannot vary in a sweep (one map size, one data set); it varies {choices}").format(
                key=key, choices=", ".join(varied_settings())
            ),
        )


def _value(key: str, value: Any) -> Any:
    """A varied value as its config field holds it, read as every front end's values are (radii per axis)."""
    from som_studio.session.resolve import coerce

    return coerce(cfgmod.setting_named(key), value)


def _shown(value: Any) -> Any:
    """A varied value as a row and the JSON give it: a number, or ``[sx, sy]`` when the axes differ."""
    if isinstance(value, tuple):
        return value[0] if value[0] == value[1] else [value[0], value[1]]
    return value


def combinations(vary: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of ``vary``'s values (the last key varying fastest), as config fields."""
    if not vary:
        raise ConfigError(
            "vary",
            _("a sweep needs at least one varied setting ({choices})").format(choices=", ".join(varied_settings())),
        )
    keys = list(vary)
    for key in keys:
        check_key(key)
    values = []
    for key in keys:
        given = vary[key]
        if isinstance(given, (str, bytes)) or not isinstance(given, Sequence):
            given = [given]
        if not given:
            raise ConfigError(key, _("a sweep with no value of {key} has no combination").format(key=key))
        values.append([_value(key, v) for v in given])
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


@dataclass
class SweepResult(Sequence[dict[str, Any]]):
    """A sweep's rows (one per combination, in order), its timings and notes; ``run(i)`` gives row i's map.

    Each row: ``settings`` (the varied keys and values), ``qe``, ``te``, ``label_purity``
    (``None`` without labels). ``timings``: ``wall_s`` (start to the last row),
    ``per_epoch_s`` (the batched program's time per epoch), ``compile_s``.
    """

    rows: list[dict[str, Any]]
    timings: dict[str, float]
    configs: list[RunConfig]
    maps: np.ndarray  # (C, H, W, D) in the scaled space
    records: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    base: dict[str, Any] = field(default_factory=dict)
    devices: int = 1

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        return self.rows[i]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"<SweepResult: {len(self.rows)} maps, {self.timings['wall_s']:.2f} s>"

    def run(self, i: int) -> Any:
        """Row ``i``'s map as a :class:`~som_studio.model.SomRun` (nothing is trained)."""
        from som_studio.model import SomRun

        return SomRun.trained(self.records[i], self.maps[i])

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame: one column per varied key, then qe, te, label_purity."""
        import pandas as pd

        return pd.DataFrame(
            [{**r["settings"], "qe": r["qe"], "te": r["te"], "label_purity": r["label_purity"]} for r in self.rows]
        )

    def frontier(self) -> list[int]:
        """The rows no other row beats on both QE and TE (lower is better; equal rows alike), by rising QE."""
        pts = [(r["qe"], r["te"]) for r in self.rows]

        def beaten(i: int) -> bool:
            q, t = pts[i]
            return any(qj <= q and tj <= t and (qj < q or tj < t) for qj, tj in pts)

        return sorted((i for i in range(len(pts)) if not beaten(i)), key=lambda i: pts[i])

    def to_dict(self) -> dict[str, Any]:
        """The sweep's JSON document (docs/json-schema.md, "The sweep")."""
        return {
            "schema_version": SCHEMA_VERSION,
            "impl": IMPL,
            "config": self.base,
            "varied": list(self.rows[0]["settings"]) if self.rows else [],
            "rows": self.rows,
            "frontier": self.frontier(),
            "devices": self.devices,
            "timings": dict(self.timings),
            "notes": list(self.notes),
        }


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


def train_together(base: RunConfig, table: Any, combos: list[dict[str, Any]]) -> SweepResult:
    """Train ``base`` once per combination of ``combos``, all as one batched program.

    ``table`` is the run's data (:class:`~som_studio.core.data.Table`, scaled). Raises
    :class:`ConfigError` for a configuration the fused batch epoch cannot train.
    """
    from som_studio.core.data import Table
    from som_studio.session.preflight import preflight

    if not isinstance(table, Table):  # a source read in batches: --stream, or data too large for memory
        raise ConfigError("stream", _("a sweep trains its maps together on data held in memory; it does not stream"))
    t_start = time.perf_counter()
    configs = [base.replace(**c).validate("batch") for c in combos]
    for cfg in configs:
        refused = preflight(cfg)
        if refused:
            raise ConfigError(refused[0].field, refused[0].reason)
    maps, shards, compile_s, train_s = _train_batched(base, configs, table.values)
    records = [
        _record(cfg, combo, m, table, len(configs), compile_s, train_s) for cfg, combo, m in zip(configs, combos, maps)
    ]
    rows = [
        {"settings": rec.extra["sweep"]["settings"], "qe": rec.qe, "te": rec.te, "label_purity": rec.label_purity}
        for rec in records
    ]
    wall = time.perf_counter() - t_start
    for rec in records:
        rec.wall_s = wall
    notes = []
    if "seed" in combos[0] and base.init_method == cfgmod.Init.PCA:
        notes.append(
            _(
                "the seed does not change these maps: they start from the data's principal components (init pca) "
                "and a batch epoch has no sample order; vary the seed with init random or sample"
            )
        )
    T = base.iterations
    timings = {"wall_s": wall, "per_epoch_s": train_s / max(T, 1), "compile_s": compile_s, "train_s": train_s}
    base_dict = base.to_dict()
    base_dict["feature_names"] = list(table.feature_names)
    return SweepResult(rows, timings, configs, maps, records, notes, base_dict, shards)


def _train_batched(base: RunConfig, configs: list[RunConfig], data: np.ndarray) -> tuple[np.ndarray, int, float, float]:
    """Every configuration's map trained by one ``vmap``-ed program: ``(maps, devices, compile_s, train_s)``.

    The combinations are sharded over the devices, each taking as many maps; the last
    combination fills the gap and its copies are dropped.
    """
    from som_studio.core import jax_runtime
    from som_studio.core.impls.jax_fused import batch_epoch
    from som_studio.core.plans import fused_plan
    from som_studio.core.som.problem import decay, make_problem

    jax = jax_runtime.jax()
    dtype = np.dtype(base.precision)
    T = base.iterations
    problems = [make_problem(cfg, "batch", data) for cfg in configs]
    init = np.stack([np.moveaxis(p.init_map, 2, 0) for p in problems])  # (C, D, H, W)
    sx = np.stack([decay(c.sigmas[0][0], c.sigmas[1][0], T).astype(dtype) for c in configs])
    sy = np.stack([decay(c.sigmas[0][1], c.sigmas[1][1], T).astype(dtype) for c in configs])
    n_combos = len(configs)
    devices = jax.devices()
    shards = spread(n_combos, len(devices))
    padded = -(-n_combos // shards) * shards
    if padded > n_combos:
        fill = padded - n_combos
        init, sx, sy = (np.concatenate([a, np.repeat(a[-1:], fill, 0)]) for a in (init, sx, sy))
    d, h, w = init.shape[1:]
    plan = fused_plan.choose(devices[0].platform, h * w, d, data.shape[0], dtype.itemsize)
    lattice = (str(base.topology), bool(base.toroid))
    known_np = ~np.isnan(data)
    missing = not bool(known_np.all())
    x_np = np.where(known_np, data, 0).astype(dtype)

    def one(w0: Any, sxs: Any, sys_: Any, x: Any, known: Any) -> Any:
        body = lambda t, wt: batch_epoch(wt, x, sxs[t], sys_[t], plan, lattice, known if missing else None)
        return jax.lax.fori_loop(0, T, body, w0)

    batched = jax.vmap(one, in_axes=(0, 0, 0, None, None))
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    mesh = Mesh(np.asarray(devices[:shards]), ("maps",))
    split = NamedSharding(mesh, PartitionSpec("maps"))
    whole = NamedSharding(mesh, PartitionSpec())
    args = (
        jax.device_put(init.astype(dtype), split),
        jax.device_put(sx, split),
        jax.device_put(sy, split),
        jax.device_put(x_np, whole),
        jax.device_put(known_np.astype(dtype), whole),
    )
    program = jax.jit(batched, in_shardings=(split, split, split, whole, whole), out_shardings=split)
    t0 = time.perf_counter()
    compiled = program.lower(*args).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = compiled(*args)
    out.block_until_ready()
    train_s = time.perf_counter() - t0
    maps = np.moveaxis(np.asarray(out)[:n_combos], 1, 3)  # (C, H, W, D)
    return maps, shards, compile_s, train_s


def _record(
    cfg: RunConfig,
    combo: dict[str, Any],
    m: np.ndarray,
    table: Any,
    combinations: int,
    compile_s: float,
    train_s: float,
) -> Any:
    """One combination's run record: its map measured (QE, TE, the model's hits and labels), the batch's timings."""
    from som_studio.core.data import model_file
    from som_studio.core.som import metrics
    from som_studio.session.record import Chunk, RunRecord

    data = table.values
    T = cfg.iterations
    qe, te, first = metrics.measure(m.astype(np.float64), data, cfg.topology, cfg.toroid)
    rec = RunRecord(impl=IMPL, kind="batch", config=cfg.to_dict(), status="ok")
    rec.config["feature_names"] = list(table.feature_names)
    rec.samples = int(data.shape[0])
    rec.layout = "1x1"
    rec.compile_s = compile_s
    rec.chunks.append(Chunk(0, T, train_s))
    rec.total_s = compile_s + train_s
    rec.qe, rec.te = qe, te
    rec.history.append({"iteration": T, "qe": qe, "te": te})
    rec.extra["sweep"] = {"combinations": combinations, "settings": {k: _shown(v) for k, v in combo.items()}}
    model_file.attach(rec, cfg, table, m, measure=True, bmus=first)
    return rec


def sweep(data: Any = None, vary: Mapping[str, Sequence[Any]] | None = None, **train_keywords: Any) -> SweepResult:
    """Train every combination of ``vary``'s values together; return one row per combination.

    ``vary`` maps each varied setting (``sigma_start``, ``sigma_end``: a number, ``(sx, sy)`` or
    ``"SXxSY"``; ``seed``) to its values. ``data`` and ``train_keywords`` are
    :func:`som_studio.train`'s (``impl`` may only be ``jax-fused-batch``, the kernels batched).

    Raises
    ------
    TypeError : an unknown keyword.
    ValueError : a key that cannot vary, a sweep with no combination, a refused setting or data.
    """
    from som_studio.api import TrainKeywordError, prepare
    from som_studio.core.data import DataError

    try:
        impl = train_keywords.pop("impl", IMPL)
        if impl != IMPL:
            raise ConfigError(
                "impl", _("a sweep trains with {impl}'s kernels, batched; got {value!r}").format(impl=IMPL, value=impl)
            )
        combos = combinations(vary or {})
        for key in vary or {}:
            if key in train_keywords:
                raise ConfigError(key, _("is given both as a keyword and in vary"))
        train_keywords.pop("progress", None)
        prepared = prepare(data, {"impl": IMPL, **train_keywords})
        return train_together(prepared.config, prepared.table, combos)
    except TrainKeywordError as exc:
        raise TrainKeywordError(str(exc)) from None
    except ConfigError as exc:
        raise SweepError(exc.refusal.text()) from None
    except DataError as exc:
        raise SweepError(str(exc)) from None


def for_config(config: RunConfig) -> tuple[RunConfig, Any]:
    """A run configuration (the app's form) as a sweep's base and its data: ``jax-fused-batch``, batch epochs.

    The configuration's values go through the one resolver, as the form's did, its count of epochs
    kept (a count of steps is not a sweep's). Raises :class:`ConfigError` or
    :class:`~som_studio.core.data.DataError`.
    """
    from som_studio.session.resolve import resolve, values_of

    values = {**values_of(config), "impl": IMPL, "steps": None}
    resolved = resolve(values)
    return resolved.config, resolved.table


def stored_run(result: SweepResult, i: int) -> Any:
    """Row ``i`` as the app keeps a run (:class:`~som_studio.storage.StoredRun`), its final picture drawn."""
    from som_studio.picture.mapviews import MapViews
    from som_studio.picture.views import colour_range, map_image
    from som_studio.storage import StoredRun

    cfg = result.configs[i]
    m = result.maps[i]
    rng = colour_range(m)
    image = map_image(m, rng.lo, rng.hi, MapViews(topology=str(cfg.topology), toroid=bool(cfg.toroid)))
    name = ", ".join(f"{k}={v}" for k, v in result.rows[i]["settings"].items())
    return StoredRun(record=result.records[i], name=f"sweep {name}", final_map=m, final_image=image)
