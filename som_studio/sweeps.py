"""Many maps trained together: every combination of a few varied settings as one batched JAX program.

>>> rows = som_studio.sweep("resources/data/wine.csv", vary={"sigma_end": [0.5, 1, 2], "seed": [0, 1]},
...                         labels="cultivar", grid="8x6", topology="hex", scaling="zscore")  # doctest: +SKIP
>>> rows[0]["qe"], rows.to_pandas(), rows.run(0)                                          # doctest: +SKIP

One map size and one data set; what may vary is what the declaration of settings marks
``sweep`` (:data:`som_studio.config.SETTINGS`: the start and end radii and the seed). A sweep is
one :class:`~som_studio.session.session.Session` given the combinations, run like every run (in
the app, in its worker process): its trainer (:mod:`som_studio.core.impls.jax_sweep`) ``vmap``-s
the fused batch epoch of ``jax-fused-batch`` over the combinations' maps and radius schedules,
compiled once and run in chunks; with several devices the batch is sharded over them. Each
combination comes back as a ``CombinationTrained`` event; :func:`result` gathers them. A
``jax-fused-batch`` run of any combination trains the same map, to float32 rounding.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from som_studio import config as cfgmod
from som_studio.config import ConfigError, RunConfig
from som_studio.i18n import _, ngettext
from som_studio.session.sweep import IMPL as IMPL

SCHEMA_VERSION = 1
"""The version of the sweep's JSON (``--json``; docs/json-schema.md, "The sweep")."""


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
    read = []
    for v in parts:
        try:
            read.append(cfgmod.read_setting(s, v))
        except ConfigError as exc:
            why = exc.refusal.reason
            if s.parse is cfgmod.parse_radii:  # here commas separate the values: radii per axis are 1x0.5
                why = _("expected a radius or radii per axis such as 1x0.5 (commas separate the values), got {value!r}")
                why = why.format(value=v)
            raise ConfigError("vary", f"{key}: {why}") from None
    _once(key, parts, [_value(key, v) for v in read])
    return key, read


def _once(key: str, given: Sequence[Any], read: Sequence[Any]) -> None:
    """Refuse a value given twice (``read``: as the config holds them, ``1`` and ``1.0`` alike), named as given:
    two maps alike are a typo more likely than a wish."""
    twice = next((given[i] for i, v in enumerate(read) if v in read[:i]), None)
    if twice is not None:
        raise ConfigError("vary", _("{key}: {value} is given twice").format(key=key, value=twice))


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
        if isinstance(given, np.ndarray):  # np.linspace(0.5, 2, 4): its values, as a list's
            given = given.tolist()
        if isinstance(given, bytes):
            given = given.decode()
        if isinstance(given, str):  # "0.5,1" as --vary takes it: two values (radii per axis are 1x0.5)
            given = read_vary(f"{key}={given}")[1]
        elif not isinstance(given, Sequence):
            given = [given]
        if not given:
            raise ConfigError(key, _("a sweep with no value of {key} has no combination").format(key=key))
        read = [_value(key, v) for v in given]
        for v in read:  # before any data is read: a sweep of a large table refused at once
            try:
                cfgmod.check_value(cfgmod.setting_named(key), v)
            except ConfigError as exc:
                raise ConfigError("vary", f"{key}: {exc.refusal.reason}") from None
        _once(key, given, read)
        values.append(read)
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
    started: Any = None  # the sweep's Started event: the data's colour range and the lattice of its pictures

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: Any) -> Any:
        return self.rows[i]

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"<SweepResult: {len(self.rows)} maps, {self.timings['wall_s']:.2f} s>"

    def _repr_html_(self) -> str:
        """The rows as a notebook shows them: a table, the rows on the QE-TE frontier in bold, the timings below."""
        from html import escape

        from som_studio.session.sweep import typed

        keys = list(self.rows[0]["settings"]) if self.rows else []
        best = set(self.frontier())

        def cell(v: Any, f: str) -> str:
            return "-" if v is None else f.format(v)

        head = "".join(f"<th>{escape(k)}</th>" for k in ["", *keys, "QE", "TE", _("label purity")])
        body = []
        for i, r in enumerate(self.rows):
            values = [str(i), *(typed(r["settings"][k]) for k in keys)]
            values += [cell(r["qe"], "{:.4g}"), cell(r["te"], "{:.3f}"), cell(r["label_purity"], "{:.3f}")]
            style = " style='font-weight:bold'" if i in best else ""
            body.append(f"<tr{style}>" + "".join(f"<td>{escape(v)}</td>" for v in values) + "</tr>")
        t = self.timings
        words = _(
            "{n} maps trained together in {wall:.2f} s ({epoch:.3g} s an epoch); in bold, the rows no other row "
            "beats on both QE and TE"
        ).format(n=len(self.rows), wall=t["wall_s"], epoch=t["per_epoch_s"])
        return f"<table><tr>{head}</tr>{''.join(body)}</table><p>{escape(words)}</p>"

    def run(self, i: int) -> Any:
        """Row ``i``'s map as a :class:`~som_studio.trained.SomRun` (nothing is trained)."""
        from som_studio.trained import SomRun

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


def train_together(
    base: RunConfig,
    table: Any,
    combos: list[dict[str, Any]],
    read_s: float = 0.0,
    observe: Callable[[Any], None] | None = None,
) -> SweepResult:
    """Train ``base`` once per combination of ``combos``, all as one batched program, in this process.

    ``table`` is the run's data (:class:`~som_studio.core.data.Table`, scaled), ``read_s`` the seconds reading it
    took (the record's ``phases.data``); ``observe`` is given each event (a progress bar). Raises
    :class:`ConfigError` for a configuration the fused batch epoch cannot train (each combination's
    own refusal, or the memory they need together), :class:`SweepError` when training fails.
    """
    from som_studio.core.data import Table
    from som_studio.session.session import Session

    if not isinstance(table, Table):  # a source read in batches: --stream, or data too large for memory
        raise ConfigError("stream", _("a sweep trains its maps together on data held in memory; it does not stream"))
    if base.layout != "1x1":  # taken silently, it was recorded as the layout that ran
        raise ConfigError("layout", _("a sweep spreads its maps over every device itself; it takes no layout"))
    events = Session(base, data=table, sweep=combos, snapshot_interval_s=None, read_s=read_s).run()
    return result(events if observe is None else _observed(events, observe), combos)


def _observed(events: Iterable[Any], observe: Callable[[Any], None]) -> Iterator[Any]:
    for ev in events:
        observe(ev)
        yield ev


def result(events: Iterable[Any], combos: Sequence[Mapping[str, Any]]) -> SweepResult:
    """A sweep's result from its session's events (in this process, or as the app's worker sent them).

    Raises :class:`ConfigError` when the sweep was refused, :class:`SweepError` when it failed.
    """
    from som_studio.session.events import CombinationTrained, Failed, Finished, Started

    started: Any = None
    done: list[CombinationTrained] = []
    end: Any = None
    for ev in events:
        if isinstance(ev, Started):
            started = ev
        elif isinstance(ev, CombinationTrained):
            done.append(ev)
        elif isinstance(ev, (Finished, Failed)):
            end = ev
    if end is None or isinstance(end, Failed):
        rec = end.record if end is not None else None
        if rec is not None and rec.refusal is not None:
            raise ConfigError(rec.refusal.field, rec.refusal.reason)
        raise SweepError(rec.message if rec is not None else _("the sweep ended without a result"))
    return assemble(started, end.record, done, combos)


def assemble(started: Any, record: Any, done: Sequence[Any], combos: Sequence[Mapping[str, Any]]) -> SweepResult:
    """The :class:`SweepResult` of a finished sweep: its ``Started``, record and ``CombinationTrained`` events."""
    from som_studio.session.sweep import configs, stacked

    done = sorted(done, key=lambda ev: ev.index)
    base = started.config
    notes = []
    if combos and "seed" in combos[0] and base.init_method == cfgmod.Init.PCA:
        notes.append(
            _(
                "the seed does not change these maps: they start from the data's principal components (init pca) "
                "and a batch epoch has no sample order; vary the seed with init random or sample"
            )
        )
    kept = [ev.record for ev in done]
    unlabelled = max((int(r.extra.get("unlabelled") or 0) for r in kept), default=0)
    if unlabelled:
        notes.append(
            ngettext(
                "label purity leaves out the {n:,} row without a label",
                "label purity leaves out the {n:,} rows without a label",
                unlabelled,
            ).format(n=unlabelled)
        )
    train_s = sum(c.seconds for c in record.chunks)
    timings = {
        "wall_s": record.wall_s,
        "per_epoch_s": train_s / max(base.iterations, 1),
        "compile_s": record.compile_s,
        "train_s": train_s,
    }
    base_dict = base.to_dict()
    if "feature_names" in record.config:
        base_dict["feature_names"] = list(record.config["feature_names"])
    rows = list(record.extra.get("sweep", {}).get("rows", []))
    devices = int(record.extra.get("sweep", {}).get("devices", 1))
    maps = stacked([ev.map for ev in done])
    return SweepResult(rows, timings, configs(base, combos), maps, kept, notes, base_dict, devices, started)


def sweep(data: Any = None, vary: Mapping[str, Sequence[Any]] | None = None, **train_keywords: Any) -> SweepResult:
    """Train every combination of ``vary``'s values together; return one row per combination.

    ``vary`` maps each varied setting (``sigma_start``, ``sigma_end``: a number, ``(sx, sy)`` or
    ``"SXxSY"``; ``seed``) to its values, a list, or a string as ``--vary`` reads it (``"0.5,1"``: two values).
    ``data`` and ``train_keywords`` are
    :func:`som_studio.train`'s (``impl`` may only be ``jax-fused-batch``, the kernels batched).

    Raises
    ------
    TypeError : an unknown keyword.
    ValueError : a key that cannot vary, a sweep with no combination, a refused setting or data.
    """
    from som_studio.api import TrainKeywordError, prepare, progress_observer
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
        observe, close = progress_observer(train_keywords.pop("progress", None))  # a bar over the epochs
        prepared = prepare(data, {"impl": IMPL, **train_keywords})
        try:
            return train_together(prepared.config, prepared.table, combos, prepared.read_s, observe)
        finally:
            close()
    except TrainKeywordError as exc:
        raise TrainKeywordError(str(exc)) from None
    except ConfigError as exc:
        raise SweepError(exc.refusal.text()) from None
    except DataError as exc:
        raise SweepError(str(exc)) from None


def for_config(config: RunConfig) -> RunConfig:
    """A run configuration (the app's form) as a sweep's base: ``jax-fused-batch``, batch epochs.

    The configuration's values go through the one resolver, as the form's did, its count of epochs
    kept (a count of steps is not a sweep's); its data are not read here (the worker reads them).
    Raises :class:`ConfigError`.
    """
    from som_studio.session.resolve import resolve, values_of

    values = {**values_of(config), "impl": IMPL, "steps": None, "layout": None}  # its maps spread over the devices
    return resolve(values, load=False).config


def stored_run(result: SweepResult, i: int) -> Any:
    """Row ``i`` as the app keeps a run (:class:`~som_studio.storage.StoredRun`), through the one recorder."""
    from som_studio.session.events import Finished, Snapshot
    from som_studio.session.sweep import settings_text
    from som_studio.storage import RunRecorder

    record = result.records[i]
    name = _("sweep: {settings}").format(settings=settings_text(result.rows[i]["settings"]))
    events: list[Any] = [Snapshot(result.configs[i].iterations, result.maps[i]), Finished(record)]
    return RunRecorder(name).feed_all([result.started, *events] if result.started else events).stored()
