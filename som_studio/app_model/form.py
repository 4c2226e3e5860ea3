"""The configuration being edited: the form's fields, the :class:`RunConfig` they make, and why it cannot run.

:class:`RunForm` is the Run panel without Qt. The panel renders its
:class:`FormFields` and sends it edits (:meth:`RunForm.edit`); the form builds
the :class:`~som_studio.config.RunConfig` from its own fields (never from
widgets, so nothing is clamped to a widget's range) and checks it with the one
:func:`~som_studio.session.preflight.preflight` the session and the CLI use.
Each refusal is shown with its control's label (:data:`LABELS`), where the CLI
names its flag.

Data files are read off the GUI thread: the form says which file it needs
(:attr:`FormState.data_needed`, the file with the chosen label, ignored and id
columns and scaling), the view reads it with :func:`read_data` where it likes,
and gives the answer back (:meth:`RunForm.data_read`): the header's column
names (offered as the label, ignored and id choices), the table's size, and
the default grid for the data (the SOM Toolbox's rule, as the CLI takes it when
``--grid`` is not given), used while the grid is left to ``auto``.

Threads: one thread (the GUI's); listeners are called on it, synchronously.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from som_studio import config as cfgmod
from som_studio.app_model import estimate
from som_studio.config import ConfigError, Refusal, RunConfig
from som_studio.core.data.checks import (
    RANGE_RATIO_FOR_ZSCORE,
    largest_magnitude,
    range_refusal,
    ratio_text,
    reword_column_flags,
    spans_ratio,
    widest_feature,
)
from som_studio.core.impls import memory, registry
from som_studio.i18n import N_, _, format_bytes, ngettext
from som_studio.session.preflight import (
    STREAM_SHARE,
    Devices,
    batch_rows,
    memory_need,
    preflight,
    table_bytes,
    table_fits,
)
from som_studio.session.record import RunRecord
from som_studio.session.resolve import AUTO, DataFacts, coerce, finish, gather

# The app names a refused field by its control's label (the CLI by its flag); shown through _().
LABELS: Mapping[str, str] = {
    **{s.name: s.label for s in cfgmod.SETTINGS},
    "memory": N_("Memory"),
    "config": N_("Configuration"),
    "cpu_devices": N_("Layout's “simulate” box set to {n} CPU devices"),
}

# Refusals from reading a table name the CLI's flags of its columns inside their reason
# ("--labels species"): the app names its controls there too.


MAX_SIMULATED_DEVICES = 64  # JAX's CPU backend simulates this many at most, here


@dataclass(frozen=True)
class DataKey:
    """A data file as the form reads it: the path and the table's column roles and scaling."""

    path: str
    labels: str | None = None
    ignore: tuple[str, ...] = ()
    id_column: str | None = None
    scaling: str = "none"


@dataclass(frozen=True)
class DataInfo:
    """What :func:`read_data` found in a file.

    ``columns``: the header's names (``x1``, ``x2``... without one; empty for a
    ``.npy`` or an unreadable file); ``shape``: (rows, features) of the table
    read with the key's roles, or ``None`` with ``error`` saying why;
    ``grids``: the default (width, height) per (lattice, toroid); ``notes``: what reading it
    decided without certainty (a guessed encoding, a header of years, an unnamed column).
    """

    columns: tuple[str, ...] = ()
    shape: tuple[int, int] | None = None
    error: str = ""
    missing: bool = False
    feature_names: tuple[str, ...] = ()
    grids: Mapping[tuple[str, bool], tuple[int, int]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    range_ratio: float = 1.0  # the widest feature's range over the narrowest's, unscaled
    widest: str = ""  # the feature with the widest range, unscaled
    largest: float = 0.0  # the largest value in size the run would train on (scaled as the key says)
    #: A folder or a glob: ``(files, bytes on disk)``; its rows are streamed, never loaded.
    streamed: tuple[int, int] | None = None
    #: Rows per second the statistics pass over a streamed source read (and summed) them at; 0: not measured.
    read_rate: float = 0.0


@dataclass(frozen=True)
class FormFields:
    """What the form holds, as the user typed it (text where text is typed)."""

    impl: str = cfgmod.setting_named("impl").default
    grid: str = AUTO  # "auto" (or empty): the playbook's for colours, the data's default for a file
    file: bool = False
    samples: int = cfgmod.setting_named("samples").default
    path: str = ""
    scaling: str = cfgmod.setting_named("scaling").default
    topology: str = cfgmod.setting_named("topology").default
    toroid: bool = cfgmod.setting_named("toroid").default
    init: str = AUTO  # "auto": pca for a file, random for colours (as the CLI)
    labels: str = ""  # "" for none
    ignore: tuple[str, ...] = ()
    id_column: str = ""
    clusters: int = 0  # 0 for none
    steps: int = cfgmod.setting_named("steps").fallback
    epochs: int = cfgmod.setting_named("epochs").fallback
    sigma_start: str = ""
    sigma_end: str = ""
    lr_start: float = cfgmod.setting_named("lr_start").default
    lr_end: float = cfgmod.setting_named("lr_end").default
    seed: str = str(cfgmod.setting_named("seed").default)
    precision: cfgmod.Precision = cfgmod.setting_named("precision").default
    layout: str = cfgmod.setting_named("layout").default
    simulate: bool = False
    cpu_devices: int = 8
    # Settings declared with no control laid out by hand here, by name (the run panel offers each).
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def kind(self) -> str:
        try:
            return registry.get(self.impl).kind
        except registry.UnknownImplementation:
            return "batch"

    @property
    def iterations(self) -> int:
        """Steps or epochs, whichever the chosen implementation counts."""
        return self.steps if self.kind == "online" else self.epochs

    @property
    def grid_auto(self) -> bool:
        return self.grid.strip().lower() in ("", AUTO)

    @property
    def data_key(self) -> DataKey:
        return DataKey(self.path.strip(), self.labels or None, tuple(self.ignore), self.id_column or None, self.scaling)

    @property
    def simulated(self) -> int | None:
        """Simulated CPU devices, or ``None`` for the machine's own devices."""
        return self.cpu_devices if self.simulate else None


@dataclass(frozen=True)
class FormState:
    """The form's verdict: a runnable config, or the refusals; what to show beside it."""

    config: RunConfig | None
    refusals: tuple[Refusal, ...] = ()
    memory_text: str = ""
    cpu_devices: int | None = None
    time_text: str = ""  # how long it will take, from a kept run of the same problem (see estimate.py)
    features: int = 3
    samples: int = 0
    data_text: str = ""
    grid_text: str = ""  # what the grid left to "auto" is, and why
    columns: tuple[str, ...] = ()  # the data file's columns, for the label, ignore and id choices
    data_needed: DataKey | None = None  # a file to read before the config can be checked
    missing: bool = False  # the data read hold missing values
    feature_names: tuple[str, ...] = ()  # the data file's features, as a run on it names them
    candidate: RunConfig | None = field(default=None, compare=False)  # built, though refused

    @property
    def reason(self) -> str:
        """The first refusal, named as the app names it; ``""`` when runnable."""
        return app_text(self.refusals[0]) if self.refusals else ""

    @property
    def runnable(self) -> bool:
        return self.config is not None and not self.refusals


def labels() -> dict[str, str]:
    """:data:`LABELS` in the language in use."""
    return {k: _(v) for k, v in LABELS.items()}


def number_text(v: float) -> str:
    """``v`` as short text that reads back as exactly ``v`` (``2``, ``1.5``, ``0.123456789``)."""
    short = f"{v:g}"
    return short if float(short) == v else repr(float(v))


def app_words(text: str) -> str:
    """``text`` with the CLI's table flags (``--labels species``) named as the app's controls."""
    return reword_column_flags(text, lambda name: _(LABELS[name]) + " ")


def app_text(refusal: Refusal) -> str:
    """``refusal`` in the app's words: its field and its remedy named by the controls' labels.

    ``Refusal("layout", "…", ("cpu_devices", 16))`` reads ``"Layout: …; simulate more with
    Layout's “simulate” box set to 16 CPU devices"`` where the CLI says ``--layout`` and
    ``--cpu-devices 16``.
    """
    return app_words(refusal.text(labels()))


def app_message(record: RunRecord) -> str:
    """A run's message in the app's words.

    A run its worker's session refused carries the refusal (:attr:`RunRecord.refusal`), rendered
    as the form renders its own (:func:`app_text`). Other messages are shown as written (a table's
    flags named as the app's controls, :func:`app_words`), as are those of runs read from a file:
    a file keeps the message, in the words the CLI prints, and not the refusal.
    """
    if record.refusal is not None:
        return app_text(record.refusal)
    cancelled = CANCELLED.fullmatch(record.message or "")
    if cancelled:  # written in the language of the session that ran it: said again in the app's
        done, total = (int(g.replace(",", "")) for g in cancelled.groups())
        return ngettext(
            "cancelled after {done:,} of {n:,} iteration", "cancelled after {done:,} of {n:,} iterations", total
        ).format(done=done, n=total)
    return app_words(record.message)


#: A stopped run's message as its session wrote it in English (:mod:`som_studio.session.training`).
CANCELLED = re.compile(r"cancelled after ([\d,]+) of ([\d,]+) iterations?")


def read_data(key: DataKey) -> DataInfo:
    """Read the data file ``key`` names, through the resolver's data seam; may take long: call it off the GUI thread."""
    from som_studio.core.data import DataError, file_columns
    from som_studio.core.data.files import is_streamable
    from som_studio.session.resolve import data_facts, read_source

    if is_streamable(key.path) or _too_big_to_load(key.path):
        return _read_folder(key)
    columns: tuple[str, ...] = ()
    try:
        # The header alone, with no roles: offered even when the table is refused.
        columns = file_columns(key.path)
        raw = read_source(key.path, key.labels, key.ignore, key.id_column)
        table = raw.scaled(key.scaling)
    except DataError as exc:
        return DataInfo(columns, None, str(exc))
    except OSError as exc:  # a file that vanished or cannot be read between the edit and the load
        return DataInfo(
            columns, None, _("cannot read {path}: {error}").format(path=key.path, error=exc.strerror or exc)
        )
    facts = data_facts(table)
    low, high = _feature_ranges(raw.values)
    ratio, widest = spans_ratio(low, high), widest_feature(low, high, raw.feature_names)
    shape = (facts.rows, facts.features)
    largest = largest_magnitude(table.values)
    return DataInfo(
        columns,
        shape,
        "",
        table.has_missing,
        table.feature_names,
        facts.grids,
        table.notes,
        ratio,
        widest,
        largest=largest,
    )


def _too_big_to_load(path: str) -> bool:
    """Whether ``path`` is one file whose rows are known from its footer (Parquet, Arrow, ``.npy``), or a text
    file large enough to be counted (:func:`~som_studio.session.resolve.text_may_not_fit`), and whose table
    would not fit in memory: the run streams it, and the app must not load it either."""
    from som_studio.core.data import DataError
    from som_studio.core.data.checks import data_suffix
    from som_studio.core.data.files import SIZED_SUFFIXES
    from som_studio.core.data.stream import open_source
    from som_studio.session.resolve import text_may_not_fit

    sized = data_suffix(path).suffix in SIZED_SUFFIXES and os.path.isfile(path)
    if not (sized or text_may_not_fit(path)):
        return False
    try:
        source = open_source(path)
    except (DataError, OSError):
        return False  # read whole below, and refused there in the usual words
    return not table_fits(source.rows, source.features)


def _read_folder(key: DataKey) -> DataInfo:
    """A folder's or a glob's files as a streamed source: headers and footers, and one statistics pass
    for the default grid (its principal variances); the rows are never held."""
    from som_studio.core.data import DataError
    from som_studio.core.data.stream import open_source
    from som_studio.core.som.init import grid_for, principal_variances

    try:
        source = open_source(key.path, key.labels, key.ignore, key.id_column)
        t0 = time.perf_counter()
        rows, var = principal_variances(source, key.scaling)
        read_s = time.perf_counter() - t0
    except DataError as exc:
        return DataInfo((), None, str(exc))
    except OSError as exc:
        return DataInfo((), None, _("cannot read {path}: {error}").format(path=key.path, error=exc.strerror or exc))
    grids = {(t, w): grid_for(rows, var, t, w) for t in cfgmod.TOPOLOGIES for w in (False, True)}
    return DataInfo(
        source.columns,
        (source.rows, source.features),
        "",
        False,
        source.feature_names,
        grids,
        source.notes,
        streamed=(source.files, source.bytes),
        read_rate=rows / read_s if read_s > 0 else 0.0,
    )


def _feature_ranges(values: Any) -> tuple[Any, Any]:
    """Each feature's least and greatest value, missing ones left out (empty for no rows)."""
    import numpy as np

    with np.errstate(all="ignore"):
        if not values.size:
            return np.zeros(0), np.zeros(0)
        return np.nanmin(values, axis=0), np.nanmax(values, axis=0)


# The settings the form builds itself: the implementation chosen, the grid left to "auto" or
# typed, and the count of the implementation's kind.
_BUILT = ("impl", "grid", "epochs", "steps")
_HAND = frozenset(f.name for f in dataclasses.fields(FormFields)) - {"extra"}
EXTRA_SETTINGS: tuple[cfgmod.Setting, ...] = tuple(
    s for s in cfgmod.SETTINGS_OWN if s.name not in _HAND and s.name not in _BUILT
)
"""Declared settings the run panel has no control of its own for: it offers each by its control kind."""


def control_value(s: cfgmod.Setting, raw: Any) -> Any:
    """A control's value as the setting's, read as the resolver reads it: empty text, ``auto`` and a count of 0
    mean its default.

    Raises :class:`ConfigError` naming the setting when typed text does not read.
    """
    value = None if s.control == cfgmod.Control.COUNT and raw == 0 else coerce(s, raw)
    return s.default if value is None else value


def control_text(s: cfgmod.Setting, value: Any) -> Any:
    """The inverse of :func:`control_value`: what a control shows for the setting's ``value``."""
    if value is None:
        return {cfgmod.Control.CHOICE: AUTO, cfgmod.Control.COUNT: 0, cfgmod.Control.CHECK: False}.get(s.control, "")
    if s.control == cfgmod.Control.TEXT and isinstance(value, tuple):
        return ",".join(number_text(v) for v in value)
    if s.control == cfgmod.Control.TEXT and isinstance(value, int):
        return str(int(value))
    return value


def setting_values(f: FormFields) -> dict[str, Any]:
    """The config's settings as the fields give them, all but those the form builds itself.

    Raises :class:`ConfigError` naming the first setting whose text does not read.
    """
    return {s.name: control_value(s, raw) for s, raw in _controls(f)}


def _controls(f: FormFields) -> list[tuple[cfgmod.Setting, Any]]:
    """Each setting the fields hold a control of, with the control's value (all but those the form builds)."""
    return [
        (s, getattr(f, s.name) if s.name in _HAND else f.extra.get(s.name))
        for s in cfgmod.SETTINGS_OWN
        if s.name not in _BUILT
    ]


# What the random colours have no use for: a data file's column roles and scaling.
_TABLE_ONLY = {"scaling": None, "labels": None, "ignore": None, "id_column": None}


def form_values(f: FormFields) -> dict[str, Any]:
    """The values the fields give, by setting name, as the resolver takes them (a count of 0: unset).

    The implementation's count is the one of its kind; a data file's roles and scaling are kept in
    the fields for when a file is chosen again, but the random colours leave them unset.
    """
    values: dict[str, Any] = {
        s.name: None if s.control == cfgmod.Control.COUNT and raw == 0 else raw for s, raw in _controls(f)
    }
    values.update(impl=f.impl, grid=f.grid, **{"steps" if f.kind == "online" else "epochs": f.iterations})
    if f.file and f.data_key.path:
        values["data"] = f.data_key.path
    else:
        values.update(_TABLE_ONLY, samples=f.samples)
    return values


def devices_text(seen: tuple[dict[str, Any], int | None] | None, asking: bool, asked_before: bool) -> tuple[str, str]:
    """(line, tooltip) saying which devices a worker saw (``seen``: info and simulated count)."""
    if asking:
        return _("Devices: asking…"), ""
    if seen is None:
        return (_("Devices: not asked yet for these settings") if asked_before else _("Devices: not asked yet")), ""
    info, simulated = seen
    if "error" in info:
        return _("Devices: JAX cannot start here ({error})").format(error=info["error"]), ""
    devs = info.get("devices") or []
    kinds = ", ".join(sorted({str(d.get("kind")) for d in devs}))
    line = _("Devices: {n} × {kinds} (simulated)") if simulated else _("Devices: {n} × {kinds}")
    return line.format(n=len(devs), kinds=kinds), _("JAX backend: {backend}").format(backend=info.get("backend"))


class RunForm:
    """The configuration being edited, checked after every edit.

    Parameters
    ----------
    fields : the starting fields (default: every setting's declared default, the playbook's map).
    """

    def __init__(
        self, fields: FormFields | None = None, past_runs: Callable[[], Iterable[RunRecord]] | None = None
    ) -> None:
        self._fields = fields or FormFields()
        self._past_runs = past_runs  # the kept runs' records, for how long a run will take
        self._data: dict[DataKey, DataInfo] = {}
        self._columns: dict[str, tuple[str, ...]] = {}  # per path: the header's names, kept while re-reading
        self._devices: tuple[dict[str, Any], int | None] | None = None  # what a worker saw, and with what setting
        self._device_memory: tuple[int, str] | None = None
        self._state_listeners: list[Callable[[FormState], None]] = []
        self._fields_listeners: list[Callable[[FormFields], None]] = []
        self._state = self._evaluate()

    # -- observing ----------------------------------------------------------------------
    def on_state(self, listener: Callable[[FormState], None]) -> None:
        """Call ``listener(state)`` after every change of the verdict."""
        self._state_listeners.append(listener)

    def on_fields(self, listener: Callable[[FormFields], None]) -> None:
        """Call ``listener(fields)`` when the fields change other than by :meth:`edit` (a loaded config)."""
        self._fields_listeners.append(listener)

    @property
    def fields(self) -> FormFields:
        return self._fields

    @property
    def state(self) -> FormState:
        return self._state

    # -- intents ------------------------------------------------------------------------
    def edit(self, **changes: Any) -> FormState:
        """Change fields (``iterations=`` sets the current kind's count) and check again."""
        n = changes.pop("iterations", None)
        extra = {k: changes.pop(k) for k in list(changes) if k not in _HAND}
        if extra:
            changes["extra"] = {**self._fields.extra, **extra}
        self._fields = dataclasses.replace(self._fields, **changes)
        if n is not None:  # the count of the kind chosen, with this edit's implementation
            self._fields = dataclasses.replace(
                self._fields, **{"steps" if self._fields.kind == "online" else "epochs": n}
            )
        if self._devices is not None and self._devices[1] != self._fields.simulated:
            self._devices = None  # what a worker saw holds for the device setting it ran with, no other
        return self.revalidate()

    def set_config(self, cfg: RunConfig) -> FormState:
        """Show ``cfg`` (an unknown implementation keeps the current one); the device setting stays."""
        f = self._fields
        impl = cfg.impl if cfg.impl in registry.names() else f.impl
        changes: dict[str, Any] = {"impl": impl, "grid": cfg.grid, "file": cfg.data.path is not None}
        extra: dict[str, Any] = {}
        for s in cfgmod.SETTINGS_OWN:
            if s.name not in _BUILT:
                (changes if s.name in _HAND else extra)[s.name] = control_text(s, getattr(cfg, s.name))
        changes["scaling"] = cfg.scaling_method  # the older data.scale switch included
        changes["extra"] = extra
        if cfg.data.path is None:
            changes["samples"] = cfg.data.samples
        else:
            changes["path"] = cfg.data.path
        if cfg.steps is not None:
            changes["steps"] = cfg.steps
        if cfg.epochs is not None:
            changes["epochs"] = cfg.epochs
        self._fields = dataclasses.replace(f, **changes)
        for listener in self._fields_listeners:
            listener(self._fields)
        return self.revalidate()

    def set_counts(self, counts: Mapping[str, int]) -> FormState:
        """The remembered steps (``online``) and epochs (``batch``)."""
        f = self._fields
        self._fields = dataclasses.replace(
            f, steps=int(counts.get("online") or f.steps), epochs=int(counts.get("batch") or f.epochs)
        )
        for listener in self._fields_listeners:
            listener(self._fields)
        return self.revalidate()

    def counts(self) -> dict[str, int]:
        return {"online": self._fields.steps, "batch": self._fields.epochs}

    def data_read(self, key: DataKey, info: DataInfo) -> FormState:
        """The answer of :func:`read_data` for ``key``.

        Columns chosen as labels, ignored or id that the file does not have
        (chosen for another file) are let go, so the choices are the file's.
        """
        self._data[key] = info
        if info.columns:
            self._columns[key.path] = info.columns
            f = self._fields
            if f.data_key.path == key.path:
                known = set(info.columns)
                kept: dict[str, Any] = {
                    "labels": f.labels if f.labels in known else "",
                    "id_column": f.id_column if f.id_column in known else "",
                    "ignore": tuple(c for c in f.ignore if c in known),
                }
                if any(getattr(f, k) != v for k, v in kept.items()):
                    self._fields = dataclasses.replace(f, **kept)
                    for listener in self._fields_listeners:
                        listener(self._fields)
        return self.revalidate()

    def columns(self) -> tuple[str, ...]:
        """The columns of the current data file, once read (empty otherwise)."""
        return self._columns.get(self._fields.path.strip(), ()) if self._fields.file else ()

    def set_devices(self, info: dict[str, Any] | None, simulated: int | None) -> FormState:
        """What a worker saw (``env`` of a run, or the probe's answer) with ``simulated`` CPU devices."""
        self._devices = None if info is None else (info, simulated)
        if info is not None and "error" not in info:
            mem = Devices.from_info(info).memory
            if mem is not None:
                self._device_memory = mem
        return self.revalidate()

    def known_device_count(self) -> int | None:
        """Devices a worker saw with the current device setting, or ``None``."""
        if self._devices is None or self._devices[1] != self._fields.simulated:
            return None
        info = self._devices[0]
        if "error" in info:
            return None
        return len(info.get("devices") or []) or None

    def devices_info(self) -> tuple[dict[str, Any], int | None] | None:
        """What a worker saw with the current device setting (``(info, simulated)``), or ``None``: seen with another
        (a kept run's one device shown beside 4 simulated ones ticked since) is not what a run would get."""
        if self._devices is None or self._devices[1] != self._fields.simulated:
            return None
        return self._devices

    def judge(self, cfg: RunConfig) -> tuple[Refusal, ...]:
        """What :func:`preflight` refuses of ``cfg``, a variant of the form's configuration.

        A variant (another implementation, its count: a comparison's runs) is judged as the form
        judges its own, on the data read and the devices known; ``()`` when it would run. On other
        data than the form's, or before the form could build a configuration, the data's size is
        not known and memory is not checked.
        """
        st = self._state
        devices = self._devices_now()
        own = st.candidate
        table = (cfg.data, cfg.labels, cfg.ignore, cfg.id_column)
        if own is None or table != (own.data, own.labels, own.ignore, own.id_column):
            return tuple(preflight(cfg, devices=devices))
        return tuple(preflight(cfg, data_shape=(st.samples, st.features), devices=devices, missing=st.missing))

    def revalidate(self) -> FormState:
        self._state = self._evaluate()
        for listener in self._state_listeners:
            listener(self._state)
        return self._state

    # -- the verdict ----------------------------------------------------------------------
    def _devices_now(self) -> Devices:
        f = self._fields
        if f.simulated:
            return Devices(f.simulated, "cpu", 1, self._device_memory)
        count = self.known_device_count()
        if count is None:
            return Devices(None, None, 1, self._device_memory)
        assert self._devices is not None
        return Devices(count, str(self._devices[0].get("backend")), 1, self._device_memory)

    def _evaluate(self) -> FormState:
        """The verdict on the fields: the resolver's configuration, judged by :func:`preflight` on what is known."""
        f = self._fields
        cpu = f.simulated
        columns = self.columns()
        key = f.data_key
        try:
            request = gather(form_values(f))
        except registry.UnknownImplementation as exc:
            return FormState(None, (exc.refusal,), cpu_devices=cpu)
        except ConfigError as exc:
            # The file is still read for its columns when they are not known (a new file).
            unknown = f.file and key.path and key.path not in self._columns and key not in self._data
            return FormState(
                None, (exc.refusal,), cpu_devices=cpu, columns=columns, data_needed=key if unknown else None
            )
        impl = registry.get(request.impls[0])
        info: DataInfo | None = None
        data_text = ""
        if f.file:
            if not key.path:
                choose = Refusal("data", _("choose a data file (.csv, .npy, .parquet or .arrow)"))
                return FormState(None, (choose,), cpu_devices=cpu)
            if key not in self._data:
                wait = Refusal("data", _("reading {path}…").format(path=key.path))
                return FormState(
                    None, (wait,), cpu_devices=cpu, data_text=_("reading…"), columns=columns, data_needed=key
                )
            info = self._data[key]
            if info.shape is None:
                return FormState(None, (Refusal("data", info.error),), cpu_devices=cpu, columns=columns)
            samples, features = info.shape
        else:
            samples, features = f.samples, 3
        facts = DataFacts(samples, features, info.grids) if info is not None else None
        (cfg,) = finish(request, facts, check=False)
        grid_text = _grid_text(cfg, samples if info is not None else None) if request.grid is None else ""
        devices = self._devices_now()
        missing = info is not None and info.missing
        # A streamed run holds a batch, never the table: memory is judged on a batch's rows, with
        # missing values possible in any batch (as the session judges it).
        streaming = (
            info is not None and info.streamed is not None and (bool(cfg.stream) or not table_fits(samples, features))
        )
        held = batch_rows(cfg, features, samples) if streaming else samples
        if info is not None:
            data_text = _data_text(info, f.scaling, held if streaming else None, impl.kind == "online")
        refusals = tuple(preflight(cfg, data_shape=(held, features), devices=devices, missing=missing or streaming))
        too_large = range_refusal(info.largest, features, cfg.precision, key.path) if info is not None else None
        if too_large:  # the run would refuse it as it starts: say it before
            refusals = (Refusal("data", too_large), *refusals)
        text = ""
        if not refusals or all(r.field in ("memory", "samples") for r in refusals):  # memory's, colours' too
            need, have, where = memory_need(impl, cfg, held, features, devices, missing or streaming)
            text = _("Memory: about {need} of {have} {where} available").format(
                need=format_bytes(need), have=format_bytes(have), where=where
            )
        time_text = ""
        if not refusals and self._past_runs is not None:
            time_text = estimate.time_text(cfg, self._past_runs())
        if not refusals and streaming and not time_text:
            assert info is not None
            time_text = estimate.stream_text(impl, cfg, (samples, features), devices.backend, info.read_rate)
        return FormState(
            None if refusals else cfg,
            refusals,
            text,
            cpu,
            time_text,
            features,
            samples,
            data_text,
            grid_text,
            columns,
            missing=missing,
            feature_names=info.feature_names if info is not None else (),
            candidate=cfg,
        )


def _data_text(info: DataInfo, scaling: str, batch: int | None = None, online: bool = False) -> str:
    """What the form says of a table it read: its size, what reading it decided, and whether to scale it.

    ``batch``: the rows of a batch when the run streams it (asked to, or its table would not fit in memory);
    ``online``: the run's steps take the rows in order, one a step, where a batch run's epochs each read them all.
    """
    assert info.shape is not None
    rows, features = info.shape
    if info.streamed is not None:
        files, on_disk = info.streamed
        size = ngettext(
            "{rows:,} x {features} in {files} file ({bytes} on disk)",
            "{rows:,} x {features} in {files} files ({bytes} on disk)",
            files,
        ).format(rows=rows, features=features, files=files, bytes=format_bytes(on_disk))
        if batch is None:
            return "\n".join(
                [
                    _("{size}: read into memory (it fits; Stream from disk reads it in batches instead)").format(
                        size=size
                    ),
                    *map(app_words, info.notes),
                ]
            )
        if online:
            how = _("Streamed: read in batches of {batch:,} rows, a row a step in the files' order, never held whole")
        else:
            how = _("Streamed: read in batches of {batch:,} rows every epoch, never held whole")
        how = how.format(batch=batch)
        if not table_fits(rows, features):  # why, when it was not asked for: the session streams it too
            how += _(
                " (loaded, its table would take about {need}, more than {share:.0%} of the {have} of memory available)"
            ).format(
                need=format_bytes(table_bytes(rows, features)),
                share=STREAM_SHARE,
                have=format_bytes(memory.host_available()),
            )
        return "\n".join([size, how, *map(app_words, info.notes)])
    if info.missing:
        size = _("{rows:,} x {features} loaded (with missing values)")
    else:
        size = _("{rows:,} x {features} loaded")
    lines = [size.format(rows=rows, features=features), *map(app_words, info.notes)]
    if scaling == "none" and info.range_ratio > RANGE_RATIO_FOR_ZSCORE:
        lines.append(
            (
                _(
                    "Its features' ranges differ up to {ratio}x: unscaled, the widest, {widest!r}, would shape the "
                    "map alone. Scaling {zscore} gives every feature the same weight."
                )
                if info.widest
                else _(
                    "Its features' ranges differ up to {ratio}x: unscaled, the widest would shape the map "
                    "alone. Scaling {zscore} gives every feature the same weight."
                )
            ).format(ratio=ratio_text(info.range_ratio), widest=info.widest, zscore="zscore")
        )
    return "\n".join(lines)


def _grid_text(cfg: RunConfig, rows: int | None) -> str:
    """What the grid left to "auto" is, and why: the data's rule for ``rows`` rows, or the playbook's map."""
    if rows is not None:
        return ngettext(
            "Grid: {grid} for {rows:,} row (about 5·√N units, sides in the ratio of "
            "the first two principal components); type WxH to set it",
            "Grid: {grid} for {rows:,} rows (about 5·√N units, sides in the ratio of "
            "the first two principal components); type WxH to set it",
            rows,
        ).format(grid=cfg.grid, rows=rows)
    return _("Grid: {grid} (the playbook's map); type WxH to set it").format(grid=cfg.grid)
