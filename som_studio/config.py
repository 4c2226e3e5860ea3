"""The run configuration: one validated description of one SOM training run.

Every implementation trains *the same* SOM from a :class:`RunConfig`: same seeded
data, same seeded initial map, same schedules, same neighbourhood, same sample
order. Validation refuses with a :class:`Refusal`, a value naming the offending
field, that the CLI and the app each render in their own words.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from som_studio.i18n import _

Precision = Literal["float32", "float64"]
PRECISIONS: tuple[str, ...] = ("float32", "float64")
TOPOLOGIES: tuple[str, ...] = ("rect", "hex")
INITS: tuple[str, ...] = ("random", "pca", "sample")
SCALINGS: tuple[str, ...] = ("none", "minmax", "zscore")
# Rows of a hex lattice are this far apart in plane units (1 = adjacent units).
HEX_ROW = math.sqrt(3.0) / 2.0
MAX_CLUSTERS = 1000

# The playbook workload.
DEFAULT_WIDTH = 240
DEFAULT_HEIGHT = 135
DEFAULT_SAMPLES = 1000
DEFAULT_STEPS = 50_000
DEFAULT_EPOCHS = 50
DEFAULT_LR = (0.5, 0.01)
DEFAULT_SIGMA_END = 2.0

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


def parse_grid(text: str) -> tuple[int, int]:
    """Parse ``"WxH"`` (width x height: 240x135 is 240 columns, 135 rows)."""
    m = _GRID_RE.match(text)
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


def _whole(v: float) -> bool:
    """``v`` is a whole number (an int, or a float with no fraction; not NaN or infinite)."""
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def default_sigma_start(width: int, height: int, topology: str = "rect") -> tuple[float, float]:
    """Start radius per axis: a quarter of the side in plane units, at least 1 unit.

    On a hex lattice rows are ``sqrt(3)/2`` apart, so the height spans ``height * sqrt(3)/2``.
    """
    span_y = height * HEX_ROW if topology == "hex" else float(height)
    return (max(width / 4.0, 1.0), max(span_y / 4.0, 1.0))


def default_sigma_end(width: int, height: int, topology: str = "rect") -> tuple[float, float]:
    """End radius per axis: 2 units, or the start radius when the map is smaller."""
    sx, sy = default_sigma_start(width, height, topology)
    return (min(DEFAULT_SIGMA_END, sx), min(DEFAULT_SIGMA_END, sy))


@dataclass(frozen=True)
class DataSpec:
    """Where the training data comes from.

    ``path`` ``None`` means ``samples`` random colours (uniform in [0, 1]^3,
    seeded by the run's seed); otherwise a ``.npy`` or ``.csv`` file.
    """

    path: str | None = None
    samples: int = DEFAULT_SAMPLES
    scale: bool = False

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

    ``topology`` is ``rect`` or ``hex`` and ``toroid`` wraps distances on both
    axes (a hex toroid needs an even height). ``init`` ``None`` is ``random`` for
    generated colours and ``pca`` for a data file (see :attr:`init_method`).
    ``scaling`` is ``none``, ``minmax`` or ``zscore``; ``data.scale`` (the older
    switch) reads as ``minmax`` (see :attr:`scaling_method`). ``labels``,
    ``ignore`` and ``id_column`` name columns of a CSV table; ``clusters`` is
    the k of k-means on the codebook (``None``: no clusters).
    """

    impl: str = "numpy-batch"
    width: int = DEFAULT_WIDTH
    height: int = DEFAULT_HEIGHT
    data: DataSpec = field(default_factory=DataSpec)
    steps: int | None = None
    epochs: int | None = None
    sigma_start: tuple[float, float] | None = None
    sigma_end: tuple[float, float] | None = None
    lr_start: float = DEFAULT_LR[0]
    lr_end: float = DEFAULT_LR[1]
    seed: int = 0
    precision: str = "float32"
    layout: str = "1x1"
    topology: str = "rect"
    toroid: bool = False
    init: str | None = None
    scaling: str = "none"
    labels: str | None = None
    ignore: tuple[str, ...] = ()
    id_column: str | None = None
    clusters: int | None = None

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
        return (
            self.sigma_start or default_sigma_start(self.width, self.height, self.topology),
            self.sigma_end or default_sigma_end(self.width, self.height, self.topology),
        )

    @property
    def init_method(self) -> str:
        """``init``, or its default: ``pca`` for a data file, ``random`` for generated colours."""
        if self.init is not None:
            return self.init
        return "pca" if self.data.path is not None else "random"

    @property
    def scaling_method(self) -> str:
        """``scaling``; the older ``data.scale`` switch reads as ``minmax``."""
        if self.scaling == "none" and self.data.scale:
            return "minmax"
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

        Returns ``self`` so calls chain. Raises :class:`ConfigError`.
        """
        if not isinstance(self.impl, str) or not self.impl:
            raise ConfigError("impl", _("an implementation name is required"))
        for name in ("width", "height", "seed", "lr_start", "lr_end"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(name, _("must be a number, got {value!r}").format(value=v))
        if not (_whole(self.width) and _whole(self.height)):
            raise ConfigError("grid", _("width and height must be whole numbers"))
        _check_grid(self.width, self.height)
        if self.data.path is None:
            if isinstance(self.data.samples, bool) or not isinstance(self.data.samples, int):
                raise ConfigError("samples", _("must be a whole number, got {value!r}").format(value=self.data.samples))
            if self.data.samples < 1:
                raise ConfigError("samples", _("must be at least 1, got {value}").format(value=self.data.samples))
            if self.data.samples > MAX_SAMPLES:
                raise ConfigError(
                    "samples", _("at most {most:,}, got {value:,}").format(most=MAX_SAMPLES, value=self.data.samples)
                )
        for name in ("steps", "epochs"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, int):
                raise ConfigError(name, _("must be a whole number, got {value!r}").format(value=v))
            if v < 1:
                raise ConfigError(name, _("must be at least 1, got {value}").format(value=v))
            if v > MAX_ITERATIONS:
                raise ConfigError(name, _("at most {most:,}, got {value:,}").format(most=MAX_ITERATIONS, value=v))
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
        for name in ("sigma_start", "sigma_end"):
            v = getattr(self, name)
            if v is None:
                continue
            if len(v) != 2:
                raise ConfigError(name, _("needs two radii (x, y), got {value!r}").format(value=v))
            for s in v:
                if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s <= 0:
                    raise ConfigError(name, _("radii must be finite and > 0, got {value!r}").format(value=v))
        for name in ("lr_start", "lr_end"):
            v = float(getattr(self, name))
            if not math.isfinite(v) or v <= 0 or v > 1:
                raise ConfigError(name, _("learning rate must be in (0, 1], got {value!r}").format(value=v))
        if not _whole(self.seed) or self.seed < 0 or self.seed >= 2**63:
            raise ConfigError("seed", _("must be a whole number >= 0, got {value!r}").format(value=self.seed))
        if self.precision not in PRECISIONS:
            raise ConfigError("precision", _one_of(PRECISIONS, self.precision))
        if not isinstance(self.layout, str):
            raise ConfigError("layout", _("expected DATAxMAP such as 2x2, got {value!r}").format(value=self.layout))
        parse_layout(self.layout)
        self._validate_map_and_table()
        return self

    def _validate_map_and_table(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise ConfigError("topology", _one_of(TOPOLOGIES, self.topology))
        if not isinstance(self.toroid, bool):
            raise ConfigError("toroid", _("must be true or false, got {value!r}").format(value=self.toroid))
        if self.toroid and self.topology == "hex" and self.height % 2:
            raise ConfigError(
                "toroid",
                _("a hex toroid needs an even height (rows wrap in pairs of offsets), got {value}").format(
                    value=self.height
                ),
            )
        if self.init is not None and self.init not in INITS:
            raise ConfigError("init", _one_of(INITS, self.init))
        if self.scaling not in SCALINGS:
            raise ConfigError("scaling", _one_of(SCALINGS, self.scaling))
        table = self.labels is not None or self.ignore or self.id_column is not None
        if table and self.data.path is None:
            raise ConfigError("labels", _("labels, ignored and id columns name columns of a data file; none is given"))
        if self.scaling_method != "none" and self.data.path is None:
            raise ConfigError("scaling", _("scales the features of a data file; random colours are already in [0, 1]"))
        named = [("labels", self.labels), ("id_column", self.id_column)] + [("ignore", c) for c in self.ignore]
        for name, col in named:
            if col is not None and (not isinstance(col, str) or not col.strip()):
                raise ConfigError(name, _("a column name is required, got {value!r}").format(value=col))
        if self.labels is not None and self.labels == self.id_column:
            raise ConfigError("id_column", _("column {name!r} is already the labels").format(name=self.labels))
        for col in self.ignore:
            if col in (self.labels, self.id_column):
                raise ConfigError(
                    "ignore", _("column {name!r} is the labels or the id column; it cannot be ignored").format(name=col)
                )
        if self.clusters is not None:
            if isinstance(self.clusters, bool) or not isinstance(self.clusters, int):
                raise ConfigError("clusters", _("must be a whole number, got {value!r}").format(value=self.clusters))
            if not 2 <= self.clusters <= min(MAX_CLUSTERS, self.units):
                raise ConfigError(
                    "clusters",
                    _("must be between 2 and {most} (the units), got {value}").format(
                        most=min(MAX_CLUSTERS, self.units), value=self.clusters
                    ),
                )

    # -- (de)serialisation: enough to re-run ------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        (sx0, sy0), (sx1, sy1) = self.sigmas
        d: dict[str, Any] = {
            "impl": self.impl,
            "grid": [self.width, self.height],
            "data": self.data.to_dict(),
            "sigma": {"start": [sx0, sy0], "end": [sx1, sy1]},
            "learning_rate": {"start": self.lr_start, "end": self.lr_end},
            "seed": self.seed,
            "precision": self.precision,
            "layout": self.layout,
            "topology": self.topology,
            "toroid": self.toroid,
            "init": self.init_method,
            "scaling": self.scaling_method,
            "labels": self.labels,
        }
        if self.ignore:
            d["ignore"] = list(self.ignore)
        if self.id_column is not None:
            d["id_column"] = self.id_column
        if self.clusters is not None:
            d["clusters"] = self.clusters
        if self.steps is not None:
            d["steps"] = self.steps
        if self.epochs is not None:
            d["epochs"] = self.epochs
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunConfig:
        """Inverse of :meth:`to_dict`; raises :class:`ConfigError` on bad input."""
        try:
            width, height = (int(v) for v in d.get("grid", (DEFAULT_WIDTH, DEFAULT_HEIGHT)))
            sigma = d.get("sigma") or {}
            lr = d.get("learning_rate") or {}
            cfg = cls(
                impl=str(d["impl"]),
                width=width,
                height=height,
                data=DataSpec.from_dict(d.get("data") or {}),
                steps=d.get("steps"),
                epochs=d.get("epochs"),
                sigma_start=tuple(float(s) for s in sigma["start"]) if "start" in sigma else None,  # type: ignore[arg-type]
                sigma_end=tuple(float(s) for s in sigma["end"]) if "end" in sigma else None,  # type: ignore[arg-type]
                lr_start=float(lr.get("start", DEFAULT_LR[0])),
                lr_end=float(lr.get("end", DEFAULT_LR[1])),
                seed=int(d.get("seed", 0)),
                precision=str(d.get("precision", "float32")),
                layout=str(d.get("layout", "1x1")),
                topology=str(d.get("topology", "rect")),
                toroid=bool(d.get("toroid", False)),
                init=str(d["init"]) if d.get("init") is not None else None,
                # Older records have only data.scale: it reads as minmax.
                scaling=str(d.get("scaling") or ("minmax" if (d.get("data") or {}).get("scale") else "none")),
                labels=str(d["labels"]) if d.get("labels") is not None else None,
                ignore=tuple(str(c) for c in d.get("ignore") or ()),
                id_column=str(d["id_column"]) if d.get("id_column") is not None else None,
                clusters=int(d["clusters"]) if d.get("clusters") is not None else None,
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ConfigError):
                raise
            raise ConfigError("config", _("not a valid run configuration ({why})").format(why=exc)) from None
        return cfg
