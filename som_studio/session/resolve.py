"""One entrance to a run: the values a front end gathered and the data they name become one validated run.

The command line (its flags), the Python API (its keywords), the app's form (its fields) and the
sweep each gather values by setting name (:data:`som_studio.config.SETTINGS`) and hand them here.
Text is read by the setting's own ``parse`` (or one of its ``choices``), and a Python value is
written as the text the command line would take and read the same way, so ``"0.5"`` from a flag
and ``0.5`` from a keyword give one value and one refusal. ``None``, ``""`` and ``"auto"`` leave a
setting unset: it takes its declared default. The steps, each callable alone:

1. :func:`gather`: each value read, the implementations and their kinds, the data's column roles
   and scaling checked: everything that needs no data (cheap: the form calls it on every edit).
2. :func:`read`: the data seam, where the source (a file, an array, a data frame or a
   :class:`~som_studio.core.data.Table`) becomes a scaled table. It may take long: the app calls
   it off the GUI thread. The random colours need no reading: they follow the seed. A folder, a
   glob or a file read with ``stream`` becomes a :class:`~som_studio.core.data.stream.Source`
   instead when the run streams it (asked to, or its table would not fit in memory: :func:`streams`):
   only its headers and footers are read here.
3. :func:`finish`: the defaults that follow the data (the grid, by the SOM Toolbox's rule, and the
   count of each implementation's kind), every field validated: one :class:`RunConfig` per
   implementation.

:func:`resolve` runs the three and returns the configurations, the table and what reading it
decided without certainty (the notes a front end shows). Qt-free.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from som_studio import config as cfgmod
from som_studio.config import ConfigError, DataSpec, RunConfig, Setting
from som_studio.core.data import (
    DataError,
    Table,
    check_data,
    default_feature_names,
    empty_array_columns,
    frame_table,
    is_frame,
    refuse_empty_array_columns,
    unmasked,
)
from som_studio.core.data.checks import TEXT_SUFFIXES, data_suffix
from som_studio.core.data.files import SIZED_SUFFIXES, is_streamable
from som_studio.core.data.stream import Source, open_source
from som_studio.i18n import _, ngettext

AUTO = "auto"
"""Typed for a setting left to its default (the form's grid, radii and initialisation)."""


class UnknownSetting(TypeError):
    """A value given under a name that no setting has; the message lists the names there are."""


def is_unset(value: Any) -> bool:
    """``value`` leaves its setting to the default: ``None``, empty text or ``auto``."""
    return value is None or (isinstance(value, str) and value.strip().lower() in ("", AUTO))


def coerce(s: Setting, value: Any) -> Any:
    """``value`` as the config field of setting ``s`` holds it; ``None`` when it leaves ``s`` unset.

    Text is read by the declaration (its ``parse`` or ``choices``); so are numbers and sequences,
    written as the command line would type them (``(7, 5)`` as ``7x5`` for the grid, ``(1, 2)`` as
    ``1,2`` for radii). A value of a type the field cannot hold is kept for
    :meth:`RunConfig.validate` to refuse. Raises :class:`ConfigError` naming the setting.
    """
    if is_unset(value):
        return None
    if isinstance(value, str):
        return cfgmod.read_setting(s, value.strip()) if s.parse is not None or s.choices is not None else value
    if s.choices is not None:
        return cfgmod.read_setting(s, str(value))
    if isinstance(value, np.bool_):
        value = bool(value)
    if s.parse is None:
        return value
    if s.control == cfgmod.Control.COLUMNS:
        return (str(value),) if not isinstance(value, Sequence) else tuple(str(c) for c in value)
    if isinstance(value, Sequence) or isinstance(value, np.ndarray):
        joint = "x" if len(s.targets) > 1 else ","
        return cfgmod.read_setting(s, joint.join(str(v) for v in value))
    return cfgmod.read_setting(s, str(value))


def fallback(name: str) -> Any:
    """The declared value of a setting left unset when its field's own default is ``None`` (a count)."""
    return cfgmod.setting_named(name).fallback


def count_name(kind: str) -> str:
    """The setting that counts an implementation's iterations: ``steps`` online, ``epochs`` in batch."""
    return "steps" if kind == cfgmod.Kind.ONLINE else "epochs"


@dataclass(frozen=True)
class Request:
    """What a front end asked for, each value read; its data not yet read.

    ``fields`` are the given config fields other than the implementation, the grid, the counts and
    the data; ``grid`` is ``None`` when left to the default; ``counts`` the counts given, by name.
    """

    impls: tuple[str, ...]
    kinds: tuple[str, ...]
    source: Any
    spec: DataSpec
    fields: Mapping[str, Any]
    grid: tuple[int, int] | None = None
    counts: Mapping[str, int] = field(default_factory=dict)

    def value(self, name: str) -> Any:
        """A field's value as given, or its declared default."""
        return self.fields.get(name, cfgmod.setting_named(name).default)

    @property
    def scaling(self) -> str:
        """How the data's features are scaled (the older ``data.scale`` switch reads as ``minmax``)."""
        scaling = self.value("scaling")
        return str(cfgmod.Scaling.MINMAX if scaling == cfgmod.Scaling.NONE and self.spec.scale else scaling)


@dataclass(frozen=True)
class DataFacts:
    """What the form knows of a table it read off the GUI thread: its size and the default grid per lattice."""

    rows: int
    features: int
    grids: Mapping[tuple[str, bool], tuple[int, int]]


def data_facts(table: Table) -> DataFacts:
    """A table's :class:`DataFacts`: the default grid for every lattice, toroid or not."""
    from som_studio.core.som.init import grid_for, grid_variances

    values = table.values
    n = int(values.shape[0])
    var = grid_variances(values)  # once: every lattice's grid follows from the same variances
    grids = {(t, w): grid_for(n, var, t, w) for t in cfgmod.TOPOLOGIES for w in (False, True)}
    return DataFacts(n, int(values.shape[1]), grids)


def gather(values: Mapping[str, Any], *, scale: bool = False) -> Request:
    """Read every value a front end gathered, by setting name; ``data`` is the source.

    ``impl`` may name several implementations (a sequence, or text with commas). ``scale`` is the
    command line's older ``--scale`` switch (``scaling`` ``minmax``). Raises :class:`UnknownSetting`,
    :class:`ConfigError` or :class:`~som_studio.core.impls.registry.UnknownImplementation`.
    """
    from som_studio.core.impls import registry

    names = [s.name for s in cfgmod.SETTINGS]
    unknown = [k for k in values if k not in names]
    if unknown:
        raise UnknownSetting(
            _("unknown keyword {names}; choose from {choices}").format(
                names=", ".join(repr(k) for k in unknown), choices=", ".join(names)
            )
        )
    given = {
        k: coerce(cfgmod.setting_named(k), v) for k, v in values.items() if k not in ("data", "impl") and v is not None
    }
    given = {k: v for k, v in given.items() if v is not None}
    impls = _impls(values.get("impl"))
    kinds = tuple(registry.get(name).kind for name in impls)
    source = values.get("data")
    samples = given.pop("samples", cfgmod.setting_named("samples").default)
    spec = _spec(source, samples, scale)
    grid = given.pop("grid", None)
    counts: dict[str, int] = {k: given.pop(k) for k in ("epochs", "steps") if k in given}
    request = Request(impls, kinds, source, spec, given, grid, counts)
    cfgmod.check_table(
        request.value("labels"),
        request.value("ignore"),
        request.value("id_column"),
        request.scaling,
        file=spec.path is not None,
    )
    return request


def _impls(value: Any) -> tuple[str, ...]:
    if is_unset(value):
        return (str(cfgmod.setting_named("impl").default),)
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, Sequence) or not all(isinstance(n, str) for n in value):  # impl=3: not iterable
        raise ConfigError(
            "impl", _("expected an implementation's name or a list of them, got {value!r}").format(value=value)
        )
    names = tuple(n.strip() for n in value if n.strip())
    if not names:
        raise ConfigError("impl", _("an implementation name is required"))
    return names


def _spec(source: Any, samples: int, scale: bool) -> DataSpec:
    """The :class:`DataSpec` a run's record keeps of ``source``: a file's path, an in-memory table's kind."""
    if source is None:
        return DataSpec(samples=samples)
    if isinstance(source, (str, os.PathLike)):
        return DataSpec(path=os.fspath(source), scale=scale)
    if isinstance(source, Table):
        return DataSpec(path=source.source)
    return DataSpec(path=type(source).__name__ if is_frame(source) else "array")


def read(request: Request) -> Table | Source | None:
    """The run's data as a scaled :class:`Table`: the source read with the request's column roles.

    ``None`` for the random colours: they follow the run's seed
    (:func:`~som_studio.core.som.problem.load_problem_table`). Raises :class:`DataError` or
    :class:`ConfigError` (columns named for an array).
    """
    if request.source is None:
        return None
    labels, ignore, id_column = request.value("labels"), request.value("ignore"), request.value("id_column")
    dtype = np.dtype(request.value("precision"))  # a float32 run's scaled values in float32 (Table.scaled)
    if isinstance(request.source, (str, os.PathLike)):
        source = open_data(os.fspath(request.source), bool(request.value("stream")), labels, ignore, id_column)
        if source is not None and streams(bool(request.value("stream")), source):
            return source
        if source is not None and not os.path.isfile(request.source):  # a folder or a glob that fits
            return source_table(source).scaled(request.scaling, dtype)
    elif request.value("stream") and not isinstance(request.source, Table):
        # Said to stream, an array or frame trained in memory while its record said it streamed.
        raise ConfigError(
            "stream", _("reads a data file in batches; data given in memory is read already: leave stream out")
        )
    return read_source(request.source, labels, ignore, id_column).scaled(request.scaling, dtype)


def streams(asked: bool, source: Source) -> bool:
    """Whether a run reads ``source`` in batches: ``asked`` (``--stream``), or its table would not fit in memory."""
    from som_studio.session.preflight import table_fits

    return asked or not table_fits(source.rows, source.features)


def open_data(
    path: str, stream: bool, labels: str | None, ignore: Sequence[str], id_column: str | None
) -> Source | None:
    """``path`` opened as a :class:`Source` (headers and footers only) when a run may stream it, else ``None``.

    A folder or a glob always (in memory too when it fits); one file with ``stream``, a columnar or
    ``.npy`` file (its rows are known without reading it) that may not fit, or a text file large enough
    that its table might not (:func:`text_may_not_fit`: its rows are then counted).
    """
    sized = data_suffix(path).suffix in SIZED_SUFFIXES
    if not (stream or is_streamable(path) or sized or text_may_not_fit(path)):
        return None
    return open_source(path, labels, tuple(ignore), id_column)


#: How much of a text file's start estimates its rows' length (:func:`text_may_not_fit`).
TEXT_SAMPLE_BYTES = 1 << 20


def text_may_not_fit(path: str) -> bool:
    """Whether one CSV or text file is so large that its table might not fit in memory: its rows
    estimated from the length of those in its first megabyte, with a quarter more for longer rows
    later (:func:`~som_studio.session.preflight.table_fits`). Such a file is counted as a source and
    streams when its rows would not fit; read whole, a 20 GB file would not be refused with a message
    but killed for memory.

    A gzip'd file is judged by its text, not its size on disk: text compresses several times over, so a 2 GB
    ``.csv.gz`` may hold a 10 GB table."""
    from som_studio.core.data import CsvReader, DataError
    from som_studio.core.data.files import READ_ERRORS, open_bytes
    from som_studio.session.preflight import table_fits

    suffix = data_suffix(path)
    if suffix.suffix not in TEXT_SUFFIXES or not os.path.isfile(path):
        return False
    if not suffix.gzip and os.path.getsize(path) <= TEXT_SAMPLE_BYTES:
        return False
    try:
        with open_bytes(Path(path)) as f:
            head = f.read(TEXT_SAMPLE_BYTES)
        if len(head) < TEXT_SAMPLE_BYTES:  # a gzip'd file whose whole text is shorter
            return False
        reader = CsvReader(path)
    except READ_ERRORS + (DataError,):
        return False  # read whole, and refused there in the usual words
    # The text's length, counted as its encoding was checked (the whole file decoded): exact, where a gzip'd
    # file's compression ratio measured on its start, or its trailer's length (modulo 4 GiB, and its last
    # member's only), would be a guess.
    size = reader.text_bytes
    columns = len(reader.columns)
    lines = head.count(b"\n")
    if not lines:  # rows longer than a megabyte: a value takes a byte at least (an empty cell and its comma)
        return not table_fits(size, 1)
    return not table_fits(int(size / (len(head) / lines) * 1.25), columns)


def source_table(source: Source) -> Table:
    """A source that fits in memory, read whole as an unscaled table; a feature with no value refused by name."""
    from som_studio.core.data.checks import empty_array_columns
    from som_studio.core.som.problem import refuse_empty_features

    values, labels, ids = source.read_all()
    refuse_empty_features(source, empty_array_columns(values))
    return Table(
        np.ascontiguousarray(values),
        source.feature_names,
        labels=labels,
        ids=ids,
        label_column=source.label_column,
        id_column=source.id_column,
        source=source.spec,
        notes=source.notes,
    )


def load_data(config: RunConfig) -> Table | Source | None:
    """A resolved run's data: its scaled table, or its source when it streams; ``None`` for the random colours."""
    path = config.data.path
    if path is None:
        return None
    source = open_data(path, bool(config.stream), config.labels, config.ignore, config.id_column)
    if source is not None and streams(bool(config.stream), source):
        return source
    if source is not None and not os.path.isfile(path):  # a folder or a glob that fits
        return source_table(source).scaled(config.scaling_method, np.dtype(config.precision))
    from som_studio.core.som.problem import load_problem_table

    return load_problem_table(config)


def read_source(source: Any, labels: str | None, ignore: Sequence[str], id_column: str | None) -> Table:
    """The data seam: a source as an unscaled :class:`Table`, its columns in the roles given.

    A file (``.csv``, ``.npy``, ``.parquet``, ``.arrow``) is read from disk and may take long; an
    array, a data frame or a :class:`Table` given in memory is checked. Raises :class:`DataError`,
    or :class:`ConfigError` for columns named for an array.
    """
    from som_studio.core.data import read_table

    if isinstance(source, (str, os.PathLike)):
        return read_table(os.fspath(source), labels, tuple(ignore), id_column)
    if isinstance(source, Table):
        return source
    if is_frame(source):
        return frame_table(source, labels, ignore, id_column, source=type(source).__name__, keywords=True)
    if labels is not None or ignore or id_column is not None:
        raise ConfigError(
            "labels" if labels is not None else "ignore" if ignore else "id_column",
            _("an array has no named columns: labels, ignore and id_column name columns of a data frame or file"),
        )
    try:
        arr = np.asarray(unmasked(source))
    except (TypeError, ValueError) as exc:
        raise DataError(_("data: cannot be read as an array ({why})").format(why=exc)) from None
    values = check_data(arr, "array")
    refuse_empty_array_columns(empty_array_columns(values), "array")
    return Table(values, default_feature_names(values.shape[1]), source="array")


def finish(
    request: Request, data: Table | Source | DataFacts | None = None, *, check: bool = True
) -> tuple[RunConfig, ...]:
    """One validated :class:`RunConfig` per implementation asked for.

    ``data`` (the table :func:`read` gave, or the facts of one) gives the default grid of a data
    table; the random colours take the declared one. Each implementation takes the count of its
    kind as given, else its declared default; a count given for a kind that no implementation
    asked for, with none for the kind they have, is refused. ``check`` false leaves every check
    to :func:`~som_studio.session.preflight.preflight` (the form shows a refused configuration's
    memory and devices). Raises :class:`ConfigError`.
    """
    grid = request.grid or _default_grid(request, data)
    listed = {count_name(kind) for kind in request.kinds}
    stray = {k: n for k, n in request.counts.items() if k not in listed}
    configs = []
    for name, kind in zip(request.impls, request.kinds):
        own = count_name(kind)
        counts: dict[str, Any] = {"steps": None, "epochs": None}
        if own in request.counts or not stray:
            counts[own] = request.counts.get(own, fallback(own))
        else:
            counts.update(stray)  # validate() says what this kind counts instead
        cfg = RunConfig(impl=name, width=grid[0], height=grid[1], data=request.spec, **counts, **request.fields)
        configs.append(cfg.validate(kind) if check else cfg)
    return tuple(configs)


def _default_grid(request: Request, data: Table | Source | DataFacts | None) -> tuple[int, int]:
    if request.spec.path is None or data is None:
        return cfgmod.DEFAULT_WIDTH, cfgmod.DEFAULT_HEIGHT
    topology, toroid = str(request.value("topology")), bool(request.value("toroid"))
    if isinstance(data, DataFacts):
        return data.grids[(topology, toroid)]
    if isinstance(data, Source):  # its statistics in one pass, the table never loaded
        from som_studio.core.som.init import grid_for, principal_variances

        rows, var = principal_variances(data, request.scaling)
        return grid_for(rows, var, topology, toroid)
    from som_studio.core.som.init import default_grid

    return default_grid(data.values, topology, toroid)


def count_refusal(
    names: Sequence[str], kinds: set[str], counts: Mapping[str, Any], use: Callable[[str], str] | None = None
) -> ConfigError | None:
    """``epochs`` given where no implementation of ``names`` trains in epochs, or ``steps`` where none trains in
    steps: the refusal (it would be dropped without a word), or ``None``. ``use`` names the other count as the
    front end takes it (``--steps``); with it, a refusal where that count is not given says to use it, else
    only to leave this one out (the other count's default applies)."""
    for count, kind, other in (("epochs", "batch", "steps"), ("steps", "online", "epochs")):
        if counts.get(count) is None or kind in kinds:
            continue
        if use is not None and counts.get(other) is None:
            why = (
                ngettext(
                    "applies to batch implementations and none is listed ({names} trains in steps); use {other} N",
                    "applies to batch implementations and none is listed ({names} train in steps); use {other} N",
                    len(names),
                )
                if kind == "batch"
                else ngettext(
                    "applies to online implementations and none is listed ({names} trains in epochs); use {other} N",
                    "applies to online implementations and none is listed ({names} train in epochs); use {other} N",
                    len(names),
                )
            )
        elif kind == "batch":
            why = ngettext(
                "applies to batch implementations and none is listed ({names} trains in steps); leave it out",
                "applies to batch implementations and none is listed ({names} train in steps); leave it out",
                len(names),
            )
        else:
            why = ngettext(
                "applies to online implementations and none is listed ({names} trains in epochs); leave it out",
                "applies to online implementations and none is listed ({names} train in epochs); leave it out",
                len(names),
            )
        return ConfigError(count, why.format(names=", ".join(names), other=use(other) if use else other))
    return None


def values_of(config: RunConfig) -> dict[str, Any]:
    """A configuration's values by setting name, as a front end gives them (``data``: the file's path)."""
    out: dict[str, Any] = {}
    for s in cfgmod.SETTINGS:
        if s.name == "data":
            out["data"] = config.data.path
        elif s.name == "samples":
            out["samples"] = config.data.samples
        elif s.name == "scaling":
            out["scaling"] = config.scaling_method  # the older data.scale switch included
        else:
            values = tuple(getattr(config, t) for t in s.targets)
            out[s.name] = values[0] if len(values) == 1 else values
    return out


@dataclass(frozen=True)
class Resolved:
    """A run ready for a session: its configurations (one per implementation), its data, what to tell the user.

    ``table`` is ``None`` when :func:`resolve` was asked not to load it, and for a streamed run:
    ``source`` is then the data read in batches.

    ``notes``: what reading the data decided without certainty (a guessed encoding, a header of
    years); ``grid_from_data``: the grid was left unset and follows the table (each front end says
    so in its own words).
    """

    configs: tuple[RunConfig, ...]
    table: Table | None
    notes: tuple[str, ...] = ()
    grid_from_data: bool = False
    source: Source | None = None

    @property
    def rows(self) -> int | None:
        """The data's rows, where they were read or counted."""
        if self.source is not None:
            return self.source.rows
        return int(self.table.values.shape[0]) if self.table is not None else None

    @property
    def config(self) -> RunConfig:
        return self.configs[0]


def resolve(values: Mapping[str, Any], *, scale: bool = False, load: bool = True) -> Resolved:
    """:func:`gather`, :func:`read` and :func:`finish`: the validated run of what a front end gathered.

    The data's values are checked against the precision too. ``load`` false reads a file only when
    the grid follows it, and leaves ``table`` ``None`` otherwise: the command line reads it where
    Ctrl-C can stop the reading as a phase of the run. Raises :class:`UnknownSetting`,
    :class:`ConfigError`, :class:`~som_studio.core.impls.registry.UnknownImplementation` or :class:`DataError`.
    """
    from som_studio.core.som.problem import check_range, load_problem_table

    request = gather(values, scale=scale)
    from_data = request.grid is None and request.spec.path is not None
    got = read(request) if load or from_data else None
    configs = finish(request, got)
    if isinstance(got, Source):
        return Resolved(configs, None, got.notes, from_data, source=got)
    read_table = got
    if not load:
        return Resolved(configs, read_table, tuple(read_table.notes) if read_table is not None else (), from_data)
    if read_table is None:
        from som_studio.session.preflight import colours_refusal

        refused = colours_refusal(configs[0])
        if refused is not None:
            raise ConfigError(refused.field, refused.reason)
    table = read_table if read_table is not None else load_problem_table(configs[0])
    check_range(table.values, configs[0].precision, request.spec.path or _("data"))
    return Resolved(configs, table, tuple(table.notes), from_data)
