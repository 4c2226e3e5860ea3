"""The run configuration: one validated description of one SOM training run.

Every implementation trains *the same* SOM from a :class:`RunConfig`: same seeded
data, same seeded initial map, same schedules, same neighbourhood, same sample
order. Validation refuses with a :class:`Refusal`, a value naming the offending
field, that the CLI and the app each render in their own words.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, cast

from som_studio.i18n import N_, _

# The settings' vocabulary, re-exported: front ends import it from here, with the settings.
from som_studio.run_settings import HEX_ROW as HEX_ROW
from som_studio.run_settings import Control as Control
from som_studio.run_settings import Init as Init
from som_studio.run_settings import Kind as Kind
from som_studio.run_settings import Precision as Precision
from som_studio.run_settings import Scaling as Scaling
from som_studio.run_settings import Setting as Setting
from som_studio.run_settings import Topology as Topology
from som_studio.run_settings import (
    column_name_problem,
    count_check,
    declared,
    flag_check,
    is_number,
    is_whole,
    named_check,
    radii_check,
    rate_check,
    seed_check,
    setting,
)

# How typed text is read, re-exported: the settings' declarations below name these.
from som_studio.run_settings import parse_columns as parse_columns
from som_studio.run_settings import parse_count as parse_count
from som_studio.run_settings import parse_number as parse_number
from som_studio.run_settings import parse_radii as parse_radii
from som_studio.run_settings import parse_whole as parse_whole

PRECISIONS: tuple[str, ...] = tuple(Precision)
TOPOLOGIES: tuple[str, ...] = tuple(Topology)
INITS: tuple[str, ...] = tuple(Init)
SCALINGS: tuple[str, ...] = tuple(Scaling)
MAX_CLUSTERS = 1000

# The playbook workload.
DEFAULT_WIDTH = 240
DEFAULT_HEIGHT = 135
DEFAULT_SAMPLES = 1000
DEFAULT_STEPS = 50_000
DEFAULT_EPOCHS = 50
DEFAULT_LR = (0.5, 0.01)
DEFAULT_SIGMA_END = 2.0
# A data table's end radius, in units: a unit's own examples then weigh most in its average, so the map
# fits the data (R kohonen's wines, 8x6 hex: QE 1.665, TE 0.073; the playbook's 2 leaves it at 2.07).
TABLE_SIGMA_END = 0.75

# Guards against sizes no machine can hold; memory is checked separately.
MAX_GRID_SIDE = 1 << 15
MAX_UNITS = (1 << 31) - 1
MAX_ITERATIONS = 100_000_000
MAX_SAMPLES = (1 << 31) - 1


# How a run's record words a refusal (its ``message``, kept in the JSON and printed by the CLI as
# it is): the fields by their names and a remedy by the command line's option.
RECORD_NAMES: Mapping[str, str] = {"cpu_devices": "--cpu-devices"}


@dataclass(frozen=True)
class Refusal:
    """Why a configuration cannot run, as a value: the offending ``field`` and the ``reason``.

    ``field`` is a :class:`RunConfig` field name (``grid``, ``steps``,
    ``precision``, ``layout``…), or ``impl``, ``data`` or ``memory``. ``reason``
    is already in the user's language and names no field of its own. ``remedy``
    is ``(field, value)``: a setting that would make the configuration runnable
    (``("cpu_devices", 4)``: simulate 4 CPU devices), or ``None``.

    Each front end renders a refusal with its own names for the fields
    (:meth:`text`): the CLI its flags (``--layout``, ``--cpu-devices 4``), the app
    its controls' labels; ``str()`` is how a run's record words it (:data:`RECORD_NAMES`).
    """

    field: str
    reason: str
    remedy: tuple[str, int] | None = None

    def explanation(self, names: Mapping[str, str] | None = None) -> str:
        """The reason, then the remedy (if any) with its field named by ``names``.

        A name may hold ``{n}`` where the remedy's value goes; otherwise the value follows it.
        A field ``names`` lacks is named as a run's record names it.
        """
        if self.remedy is None:
            return self.reason
        field, value = self.remedy
        name = (names or {}).get(field) or RECORD_NAMES.get(field, field)
        control = name.format(n=value) if "{n}" in name else f"{name} {value}"
        return self.reason + _("; simulate more with {control}").format(control=control)

    def text(self, names: Mapping[str, str] | None = None) -> str:
        """``"<name>: <reason>"`` and the remedy, the fields named by ``names`` (default: as a record names them)."""
        names = names or {}
        return f"{names.get(self.field, self.field)}: {self.explanation(names)}"

    def __str__(self) -> str:
        return self.text()


class ConfigError(ValueError):
    """An invalid configuration, carrying its :class:`Refusal` (``refusal``).

    ``reason`` is already in the user's language; ``remedy`` is ``(field, value)``,
    a setting that would make the configuration runnable (``("cpu_devices", 4)``).
    ``str()`` is the refusal as a run's record words it; a front end renders
    ``refusal`` with its own names instead.
    """

    def __init__(self, field: str, reason: str, remedy: tuple[str, int] | None = None) -> None:
        self.refusal = Refusal(field, reason, remedy)
        super().__init__(str(self.refusal))

    @property
    def field(self) -> str:
        return self.refusal.field


_GRID_RE = re.compile(r"^\s*(\d+)\s*[xX×]\s*(\d+)\s*$")
_SIGNED_GRID_RE = re.compile(r"^\s*(-?\d+)\s*[xX×]\s*(-?\d+)\s*$")


def parse_grid(text: str) -> tuple[int, int]:
    """Parse ``"WxH"`` (width x height: 240x135 is 240 columns, 135 rows)."""
    m = _SIGNED_GRID_RE.match(text)  # a negative side is read, to be refused as not positive
    if not m:
        raise ConfigError("grid", _("expected WIDTHxHEIGHT such as 240x135, got {value!r}").format(value=text))
    width, height = int(m.group(1)), int(m.group(2))
    _check_grid(width, height)
    return width, height


def parse_layout(text: str) -> tuple[int, int]:
    """Parse a device layout ``"DATAxMAP"`` such as ``2x2``."""
    m = _GRID_RE.match(text)
    if not m or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise ConfigError(
            "layout", _("expected DATAxMAP with positive sizes such as 2x2, got {value!r}").format(value=text)
        )
    return int(m.group(1)), int(m.group(2))


def read_grid(text: str) -> tuple[int, int]:
    """:func:`parse_grid` for a setting's ``parse``: a refusal as ``ValueError``, its reason the message."""
    try:
        return parse_grid(text)
    except ConfigError as exc:
        raise ValueError(exc.refusal.reason) from None


def read_setting(s: Setting, text: str) -> Any:
    """``text`` as typed for setting ``s``, read by its ``parse`` (or one of its ``choices``).

    Raises :class:`ConfigError` naming the setting.
    """
    try:
        if s.choices is not None:
            if text not in tuple(s.choices):
                raise ValueError(_one_of(tuple(s.choices), text))
            return s.choices(text)
        return s.parse(text) if s.parse is not None else text
    except ValueError as exc:
        raise ConfigError(s.name, str(exc)) from None


def _check_grid(width: int, height: int) -> None:
    if width < 1 or height < 1:
        raise ConfigError("grid", _("width and height must be positive, got {grid}").format(grid=f"{width}x{height}"))
    if width > MAX_GRID_SIDE or height > MAX_GRID_SIDE:
        raise ConfigError(
            "grid", _("{grid}: each side must be at most {most}").format(grid=f"{width}x{height}", most=MAX_GRID_SIDE)
        )
    if width * height > MAX_UNITS:
        raise ConfigError(
            "grid",
            _("{grid} has {units:,} units; at most {most:,} fit").format(
                grid=f"{width}x{height}", units=width * height, most=MAX_UNITS
            ),
        )


def _one_of(choices: tuple[str, ...], value: object) -> str:
    return _("must be one of {choices}, got {value!r}").format(choices=", ".join(choices), value=value)


def _member[E: StrEnum](choices: type[E], value: object) -> E:
    """``value`` as a member of ``choices``; other text is kept as it is, for :meth:`RunConfig.validate` to refuse."""
    text = str(value)
    return choices(text) if text in tuple(choices) else cast(E, text)


def _grid_check(v: Any) -> str | None:
    for side in v:
        if not is_number(side):
            return _("must be a number, got {value!r}").format(value=side)
    if not all(is_whole(side) for side in v):
        return _("width and height must be whole numbers")
    try:
        _check_grid(*v)
    except ConfigError as exc:
        return exc.refusal.reason
    return None


def _layout_check(v: Any) -> str | None:
    if not isinstance(v, str):
        return _("expected DATAxMAP such as 2x2, got {value!r}").format(value=v)
    try:
        parse_layout(v)
    except ConfigError as exc:
        return exc.refusal.reason
    return None


def check_value(s: Setting, value: Any) -> None:
    """Refuse ``value`` of setting ``s`` unless its declaration allows it."""
    if s.choices is not None and value is not None and value not in tuple(s.choices):
        raise ConfigError(s.name, _one_of(tuple(s.choices), value))
    reason = s.check(value) if s.check is not None else None
    if reason is not None:
        raise ConfigError(s.name, reason)


def default_sigma_start(width: int, height: int, topology: str = Topology.RECT) -> tuple[float, float]:
    """Start radius per axis: a quarter of the side in plane units, at least 1 unit.

    On a hex lattice rows are ``sqrt(3)/2`` apart, so the height spans ``height * sqrt(3)/2``.
    """
    span_y = height * HEX_ROW if topology == Topology.HEX else float(height)
    return (max(width / 4.0, 1.0), max(span_y / 4.0, 1.0))


def default_sigma_end(
    width: int,
    height: int,
    topology: str = Topology.RECT,
    table: bool = False,
    start: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """End radius per axis: 2 units for the playbook's colours, 0.75 for a data table; the start radius
    (``start``, else its default) if smaller: a neighbourhood that shrinks, never one that grows.

    The playbook's colours are a smooth picture, and 2 keeps them one. A data table is fitted:
    with 2, a map of a few dozen units stays a smoothed average of its data (quantization error
    2.07 on R kohonen's wines, 8x6 hex, where kohonen's own defaults reach 1.58); at 0.75 a unit's
    own examples dominate its average and neighbours still pull it (QE 1.665, topographic error
    0.073); 0.5 reaches QE 1.47 at a topographic error of 0.19: a map that folds.
    """
    end = TABLE_SIGMA_END if table else DEFAULT_SIGMA_END
    sx, sy = start or default_sigma_start(width, height, topology)
    return (min(end, sx), min(end, sy))


def check_table(
    labels: str | None, ignore: tuple[str, ...], id_column: str | None, scaling: str, *, file: bool
) -> None:
    """Refuse column roles and a scaling that cannot hold, before any data is read.

    ``labels``, ``ignore`` and ``id_column`` name columns of a data ``file`` (or a data frame) and
    may not name one column twice; ``scaling`` scales a file's features. Raises :class:`ConfigError`.
    """
    if scaling not in SCALINGS:
        raise ConfigError("scaling", _one_of(SCALINGS, scaling))
    if (labels is not None or ignore or id_column is not None) and not file:
        given = "labels" if labels is not None else "ignore" if ignore else "id_column"
        raise ConfigError(given, _("labels, ignored and id columns name columns of a data file; none is given"))
    if scaling != "none" and not file:
        raise ConfigError("scaling", _("scales the features of a data file; random colours are already in [0, 1]"))
    for name, col in [("labels", labels), ("id_column", id_column)] + [("ignore", c) for c in ignore]:
        if col is not None and (why := column_name_problem(col)):
            raise ConfigError(name, why)
    if labels is not None and labels == id_column:
        raise ConfigError("id_column", _("column {name!r} is already the labels").format(name=labels))
    for col in ignore:
        if col in (labels, id_column):
            raise ConfigError(
                "ignore", _("column {name!r} is the labels or the id column; it cannot be ignored").format(name=col)
            )


@dataclass(frozen=True)
class DataSpec:
    """Where the training data comes from.

    ``path`` ``None`` means ``samples`` random colours (uniform in [0, 1]^3, seeded by the run's seed); otherwise a
    ``.npy``, ``.csv``, ``.parquet`` or ``.arrow`` file (or, from the Python API, the name of the data frame or array
    given in memory).
    """

    path: str | None = setting(
        None,
        name="data",
        flag="--data",
        metavar="FILE",
        help=".npy, .csv (.tsv, .txt), .csv.gz (.tsv.gz, .txt.gz), .parquet or .arrow (.feather, .ipc) file of "
        "examples x features (numeric, optional header), or a folder "
        "of such files or a quoted glob (one format; their rows in file-name order)",
        label=N_("Data"),
        control=Control.TEXT,
        per_iteration=True,
    )
    samples: int = setting(
        DEFAULT_SAMPLES,
        check=count_check(MAX_SAMPLES),
        flag="--samples",
        metavar="N",
        parse=parse_count,
        help="number of random colours to train on (ignored with --data); default %(default)s",
        label=N_("Data (random colours)"),
        control=Control.COUNT,
        record="data",
        per_iteration=True,
    )
    scale: bool = False  # the older switch for scaling minmax (``--scale``)

    def to_dict(self) -> dict[str, Any]:
        if self.path is None:
            return {"source": "random", "samples": self.samples}
        return {"source": "file", "path": self.path, "scale": self.scale}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DataSpec:
        if d.get("source", "random") == "random":
            return cls(samples=int(d.get("samples", DEFAULT_SAMPLES)))
        return cls(path=str(d["path"]), scale=bool(d.get("scale", False)))

    def describe(self) -> str:
        if self.path is None:
            return _("{n} random colours").format(n=f"{self.samples:,}")
        if self.scale:
            return _("{file} (min-max scaled)").format(file=Path(self.path).name)
        return Path(self.path).name


@dataclass(frozen=True)
class RunConfig:
    """One training run. Frozen: derive variants with :meth:`replace`.

    ``steps`` is given for online implementations and ``epochs`` for batch ones;
    giving the other kind's count is an error (see :meth:`validate`).
    Radii (``sigma_*``) are per axis, ``(x, y)``, in plane units (1 = the distance
    between adjacent units); ``None`` takes the defaults for the grid size.

    ``topology`` is ``rect`` or ``hex`` and ``toroid`` wraps distances on both axes (a hex toroid needs an even
    height). ``init`` ``None`` is ``random`` for generated colours and ``pca`` for a data file (see
    :attr:`init_method`). ``scaling`` is ``none``, ``minmax`` or ``zscore``; ``data.scale`` (the older switch) reads
    as ``minmax`` (see :attr:`scaling_method`). ``labels``, ``ignore`` and ``id_column`` name columns of a data
    table; ``clusters`` is the k of k-means on the codebook (``None``: no clusters).
    """

    impl: str = setting(
        # The map takes shape within seconds (50 epochs of the 240x135 map take about 2 s on a 2-core
        # CPU, compile included), where numpy-online, the slowest rung, would crawl.
        "jax-fused-batch",
        check=named_check,
        flag="--impl",
        help="comma-separated implementations to run, in order (see `som-studio list`); FILE.py:CLASS runs your own "
        "class, checked against the NumPy reference first (docs/your-implementation.md)",
        label=N_("Implementation"),
        control=Control.CHOICE,
        per_iteration=True,
    )
    width: int = setting(
        DEFAULT_WIDTH,
        name="grid",
        fields=("width", "height"),
        check=_grid_check,
        flag="--grid",
        metavar="WxH",
        parse=read_grid,
        help="map size, width x height (240x135: 240 columns, 135 rows); default 240x135 for random colours, "
        "and for --data about 5*sqrt(N) units with the sides in the ratio of the first two principal components",
        label=N_("Grid"),
        control=Control.TEXT,
        per_iteration=True,
    )
    height: int = DEFAULT_HEIGHT  # declared with the width, as the grid
    data: DataSpec = field(default_factory=DataSpec)  # its settings are declared by DataSpec
    topology: Topology = setting(
        Topology.RECT,
        flag="--topology",
        choices=Topology,
        help="lattice; default %(default)s",
        label=N_("Lattice"),
        control=Control.CHOICE,
        per_iteration=True,
    )
    toroid: bool = setting(
        False,
        check=flag_check,
        flag="--toroid",
        help="wrap the map on both axes (hex: needs an even height)",
        label=N_("Toroid"),
        control=Control.CHECK,
        per_iteration=True,
    )
    init: Init | None = setting(
        None,
        flag="--init",
        choices=Init,
        help="initial map; default random for random colours, pca for --data",
        label=N_("Initialisation"),
        control=Control.CHOICE,
    )
    scaling: Scaling = setting(
        Scaling.NONE,
        flag="--scaling",
        choices=Scaling,
        help="scale each feature of --data (zscore: mean 0, sd 1); default none",
        label=N_("Scaling"),
        control=Control.CHOICE,
    )
    labels: str | None = setting(
        None,
        flag="--labels",
        metavar="COLUMN",
        help="the column of --data holding each row's label",
        label=N_("Label column"),
        control=Control.COLUMN,
    )
    ignore: tuple[str, ...] = setting(
        (),
        flag="--ignore",
        metavar="COL[,COL...]",
        parse=parse_columns,
        help="columns of --data to leave out",
        label=N_("Ignore"),
        control=Control.COLUMNS,
    )
    id_column: str | None = setting(
        None,
        flag="--id",
        metavar="COLUMN",
        help="a column of --data carried through to projections",
        label=N_("ID column"),
        control=Control.COLUMN,
    )
    clusters: int | None = setting(
        None,
        check=count_check(optional=True, least=2),  # one cluster is no partition
        flag="--clusters",
        metavar="K",
        parse=functools.partial(parse_count, least=2),
        help="k-means clusters of the trained codebook; default none",
        label=N_("Clusters"),
        control=Control.COUNT,
    )
    epochs: int | None = setting(
        None,
        fallback=DEFAULT_EPOCHS,
        check=count_check(MAX_ITERATIONS, optional=True),
        flag="--epochs",
        metavar="N",
        parse=parse_count,
        help=f"epochs for batch implementations; default {DEFAULT_EPOCHS}",
        label=N_("Epochs"),
        control=Control.COUNT,
    )
    steps: int | None = setting(
        None,
        fallback=DEFAULT_STEPS,
        check=count_check(MAX_ITERATIONS, optional=True),
        flag="--steps",
        metavar="N",
        parse=parse_count,
        help=f"steps for online implementations; default {DEFAULT_STEPS}",
        label=N_("Steps"),
        control=Control.COUNT,
    )
    sigma_start: tuple[float, float] | None = setting(
        None,
        record="sigma",
        check=radii_check,
        flag="--sigma-start",
        metavar="S|SX,SY",
        parse=parse_radii,
        help="start neighbourhood radius (per axis); default a quarter of each side",
        label=N_("Radius σ (start)"),
        control=Control.TEXT,
        sweep=True,
    )
    sigma_end: tuple[float, float] | None = setting(
        None,
        record="sigma",
        check=radii_check,
        flag="--sigma-end",
        metavar="S|SX,SY",
        parse=parse_radii,
        help=(
            "end neighbourhood radius (per axis); default 0.75 for --data (fits a table's map to its data), "
            "2 for the random colours (keeps their picture smooth); the start radius if smaller"
        ),
        label=N_("Radius σ (end)"),
        control=Control.TEXT,
        sweep=True,
    )
    lr_start: float = setting(
        DEFAULT_LR[0],
        record="learning_rate",
        check=rate_check,
        flag="--lr-start",
        metavar="A",
        parse=parse_number,
        help="online learning rate at the first step; default %(default)s",
        label=N_("Learning rate (start)"),
        control=Control.NUMBER,
    )
    lr_end: float = setting(
        DEFAULT_LR[1],
        record="learning_rate",
        check=rate_check,
        flag="--lr-end",
        metavar="A",
        parse=parse_number,
        help="online learning rate at the last step; default %(default)s",
        label=N_("Learning rate (end)"),
        control=Control.NUMBER,
    )
    seed: int = setting(
        0,
        check=seed_check,
        flag="--seed",
        metavar="N",
        parse=parse_whole,
        help="seed for data, initial map and sample order; default 0",
        label=N_("Seed"),
        control=Control.TEXT,
        sweep=True,
    )
    precision: Precision = setting(
        Precision.FLOAT32,
        flag="--precision",
        choices=Precision,
        help="default %(default)s",
        label=N_("Precision"),
        control=Control.CHOICE,
        per_iteration=True,
    )
    layout: str = setting(
        "1x1",
        check=_layout_check,
        flag="--layout",
        metavar="DATAxMAP",
        help="device mesh: devices along the data axis x along the map axis; default 1x1",
        label=N_("Layout"),
        control=Control.TEXT,
        per_iteration=True,
    )
    stream: bool = setting(
        False,
        check=flag_check,
        flag="--stream",
        help=N_(
            "read the data in row batches during every pass instead of loading it (most implementations; one "
            "that cannot says so and names those that can; a run whose table would not fit in memory streams "
            "without being asked)"
        ),
        label=N_("Stream from disk"),
        control=Control.CHECK,
        per_iteration=True,
    )
    batch_rows: int | None = setting(
        None,
        check=count_check(optional=True),
        flag="--batch-rows",
        metavar="N",
        parse=parse_count,
        help=N_(
            "rows per batch of a streamed run (one asked to stream, or whose table is too large to load; a run "
            "that loads its table has no batches); default: chosen by the preflight"
        ),
        label=N_("Batch rows"),
        control=Control.COUNT,
        per_iteration=True,
    )

    def __post_init__(self) -> None:
        # Allowed values given as text become their enum members; others stay for validate() to refuse.
        for s in SETTINGS_OWN:
            v = getattr(self, s.name)
            if s.choices is not None and isinstance(v, str) and v in tuple(s.choices):
                object.__setattr__(self, s.name, s.choices(v))

    # -- derived -------------------------------------------------------------------
    @property
    def units(self) -> int:
        return self.width * self.height

    @property
    def grid(self) -> str:
        return f"{self.width}x{self.height}"

    @property
    def sigmas(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """(start, end) radii with defaults filled in."""
        start = self.sigma_start or default_sigma_start(self.width, self.height, self.topology)
        table = self.data.path is not None
        return start, self.sigma_end or default_sigma_end(self.width, self.height, self.topology, table, start)

    @property
    def init_method(self) -> str:
        """``init``, or its default: ``pca`` for a data file, ``random`` for generated colours."""
        if self.init is not None:
            return self.init
        return Init.PCA if self.data.path is not None else Init.RANDOM

    @property
    def scaling_method(self) -> str:
        """``scaling``; the older ``data.scale`` switch reads as ``minmax``."""
        if self.scaling == Scaling.NONE and self.data.scale:
            return Scaling.MINMAX
        return self.scaling

    @property
    def iterations(self) -> int:
        """Steps (online) or epochs (batch), whichever this run gives."""
        n = self.steps if self.steps is not None else self.epochs
        return int(n) if n is not None else 0

    def replace(self, **changes: Any) -> RunConfig:
        return dataclasses.replace(self, **changes)

    # -- validation ----------------------------------------------------------------
    def validate(self, kind: str | None = None) -> RunConfig:
        """Check every field; ``kind`` (``"online"``/``"batch"``) checks the counts.

        Each setting's own check and allowed values come from its declaration; the rules between
        settings follow. Returns ``self`` so calls chain. Raises :class:`ConfigError`.
        """
        for s in SETTINGS_OWN:
            check_value(s, tuple(getattr(self, f) for f in s.fields) if s.fields else getattr(self, s.name))
        if self.data.path is None:
            check_value(_SAMPLES, self.data.samples)
        if self.steps is not None and self.epochs is not None:
            raise ConfigError("epochs", _("give steps (online) or epochs (batch), not both"))
        if kind == "online":
            if self.epochs is not None:
                raise ConfigError(
                    "epochs", _("{impl} trains online, in steps: give steps, not epochs").format(impl=self.impl)
                )
            if self.steps is None:
                raise ConfigError(
                    "steps", _("{impl} trains online: the number of steps is required").format(impl=self.impl)
                )
        elif kind == "batch":
            if self.steps is not None:
                raise ConfigError(
                    "steps", _("{impl} trains in batch epochs: give epochs, not steps").format(impl=self.impl)
                )
            if self.epochs is None:
                raise ConfigError(
                    "epochs",
                    _("{impl} trains in batch epochs: the number of epochs is required").format(impl=self.impl),
                )
        if self.toroid and self.topology == Topology.HEX and self.height % 2:
            raise ConfigError(
                "toroid",
                _("a hex toroid needs an even height (rows wrap in pairs of offsets), got {value}").format(
                    value=self.height
                ),
            )
        check_table(self.labels, self.ignore, self.id_column, self.scaling_method, file=self.data.path is not None)
        if self.stream and self.data.path is None:
            raise ConfigError("stream", _("reads a data file, folder or glob in batches; none is given"))
        if self.clusters is not None and not 2 <= self.clusters <= min(MAX_CLUSTERS, self.units):
            raise ConfigError(
                "clusters",
                _("must be between 2 and {most} (the units), got {value}").format(
                    most=min(MAX_CLUSTERS, self.units), value=self.clusters
                ),
            )
        return self

    # -- (de)serialisation: enough to re-run ------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        (sx0, sy0), (sx1, sy1) = self.sigmas
        d: dict[str, Any] = {
            "impl": self.impl,
            "grid": [self.width, self.height],
            "data": self.data.to_dict(),
            "sigma": {"start": [sx0, sy0], "end": [sx1, sy1]},
            "learning_rate": {"start": self.lr_start, "end": self.lr_end},
            "init": str(self.init_method),
            "scaling": str(self.scaling_method),
            "labels": self.labels,
        }
        for st in _RECORDED:
            value = getattr(self, st.name)
            if value is not None and value != ():
                # JSON's own types: a list for a tuple, the plain text of an enum's member.
                d[st.name] = list(value) if isinstance(value, tuple) else str(value) if st.choices else value
        auto = [name for name in _FOLLOWING if getattr(self, name) is None]
        if auto:
            d["auto"] = auto  # written resolved above, but left to follow the grid and the data when re-run
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunConfig:
        """Inverse of :meth:`to_dict`; raises :class:`ConfigError` on bad input."""
        try:
            width, height = (int(v) for v in d.get("grid", (DEFAULT_WIDTH, DEFAULT_HEIGHT)))
            sigma = d.get("sigma") or {}
            lr = d.get("learning_rate") or {}
            old_scale = (d.get("data") or {}).get("scale")
            auto = set(d.get("auto") or ())
            cfg = cls(
                impl=str(d["impl"]),
                width=width,
                height=height,
                data=DataSpec.from_dict(d.get("data") or {}),
                sigma_start=_radii(sigma, "start") if "sigma_start" not in auto else None,
                sigma_end=_radii(sigma, "end") if "sigma_end" not in auto else None,
                lr_start=float(lr.get("start", DEFAULT_LR[0])),
                lr_end=float(lr.get("end", DEFAULT_LR[1])),
                init=_member(Init, d["init"]) if d.get("init") is not None and "init" not in auto else None,
                # Older records have only data.scale: it reads as minmax.
                scaling=_member(Scaling, d.get("scaling") or (Scaling.MINMAX if old_scale else Scaling.NONE)),
                labels=str(d["labels"]) if d.get("labels") is not None else None,
                **{
                    st.name: _from_record(st, d[st.name])
                    for st in SETTINGS_OWN
                    if st.name not in _SHAPED and st.name in d
                },
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError("config", _("not a valid run configuration ({why})").format(why=exc)) from None
        return cfg


def _radii(sigma: dict[str, Any], key: str) -> tuple[float, float] | None:
    """A record's radii at ``key`` (``start``, ``end``) as the config holds them; ``None`` when not kept."""
    if key not in sigma:
        return None
    sx, sy = (float(v) for v in sigma[key])
    return sx, sy


def _from_record(s: Setting, value: Any) -> Any:
    """A setting's value as a run's record keeps it (JSON) back in the config's type; ``null``: its default."""
    if value is None:
        return s.default
    if s.choices is not None:
        return _member(s.choices, value)
    if s.control == Control.CHECK:
        return bool(value)
    if s.control == Control.COLUMNS:
        return tuple(str(c) for c in value)
    if isinstance(s.default, tuple) or isinstance(value, list):
        return tuple(float(v) for v in value)
    if s.control == Control.COUNT or isinstance(s.default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(_("{name} must be a whole number, got {value!r}").format(name=s.name, value=value))
        return value
    if s.control == Control.NUMBER:
        return float(value)
    return str(value)


SETTINGS_OWN: tuple[Setting, ...] = tuple(declared(RunConfig))
SETTINGS_DATA: tuple[Setting, ...] = tuple(declared(DataSpec))
SETTINGS: tuple[Setting, ...] = (*SETTINGS_OWN[:2], *SETTINGS_DATA, *SETTINGS_OWN[2:])
_SAMPLES = next(s for s in SETTINGS_DATA if s.name == "samples")
# Kept in a record in shapes of their own ("grid": [w, h], "sigma": {"start", "end"}, the
# defaults of init and scaling resolved); every other setting under its name, when given.
_SHAPED = ("impl", "grid", "sigma_start", "sigma_end", "lr_start", "lr_end", "init", "scaling", "labels")
_RECORDED = tuple(s for s in SETTINGS_OWN if s.name not in _SHAPED)
# Kept resolved, their defaults following the grid and the data: a record's "auto" names those left so.
_FOLLOWING = ("sigma_start", "sigma_end", "init")
"""Every run setting, in the order the CLI's help and the app's form list them."""

_BY_NAME = {s.name: s for s in SETTINGS}


def setting_named(name: str) -> Setting:
    """The setting ``name`` (a :class:`RunConfig` field, ``grid``, ``data`` or ``samples``)."""
    return _BY_NAME[name]
