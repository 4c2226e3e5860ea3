"""What a run setting is: its allowed values, and how each front end names, reads and offers it.

Each setting of a run is declared once, as a field of
:class:`~som_studio.config.RunConfig` (or of the data it trains on,
:class:`~som_studio.config.DataSpec`) made with :func:`setting`. The declaration
holds everything a front end needs: the command-line flag and its help, the app's
label and the kind of control, how typed text becomes a value, the allowed values
(an enum), whether a sweep may vary it and whether it sets the time of one
iteration. :data:`som_studio.config.SETTINGS` collects them, in declaration order;
from it the CLI builds its options (``commands/common.py``), the app's form its
controls and refusal names (``app_model/form.py``), and a run's record its keys.

Allowed values are :class:`~enum.StrEnum` members: they compare equal to their
text (``Topology.HEX == "hex"``), so JSON, argparse and old records read them as
the plain strings they are.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from som_studio.i18n import _


class Topology(StrEnum):
    """The map's lattice: 4 neighbours in square rows, or 6 in offset rows."""

    RECT = "rect"
    HEX = "hex"


# Rows of a hex lattice are this far apart in plane units (1 = adjacent units).
HEX_ROW = math.sqrt(3.0) / 2.0


class Scaling(StrEnum):
    """How each feature of a data table is scaled before training."""

    NONE = "none"
    MINMAX = "minmax"
    ZSCORE = "zscore"


class Init(StrEnum):
    """The initial map: random in the data's box, the first two principal components, or sampled rows."""

    RANDOM = "random"
    PCA = "pca"
    SAMPLE = "sample"


class Precision(StrEnum):
    FLOAT32 = "float32"
    FLOAT64 = "float64"


class Kind(StrEnum):
    """How an implementation counts its iterations: online steps (one example each) or batch epochs."""

    ONLINE = "online"
    BATCH = "batch"


class Control(StrEnum):
    """The kind of control the app offers for a setting (the run panel lays out the common ones by hand)."""

    CHOICE = "choice"  # one of an enum's values
    CHECK = "check"  # on or off
    COUNT = "count"  # a whole number >= 1, or none
    NUMBER = "number"  # a real number
    TEXT = "text"  # typed text, read by the setting's ``parse``
    COLUMN = "column"  # one column of the data table, or none
    COLUMNS = "columns"  # several columns of the data table


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One run setting, as every front end sees it.

    ``name`` is the field's name: the Python API's keyword and the key a refusal names.
    ``flag``, ``metavar`` and ``help`` make its command-line option (``help`` may use
    ``%(default)s``); ``label`` (marked with ``N_``, shown through ``_()``) names its
    control in the app, and ``control`` says which kind. ``parse`` turns typed text
    into the value (raising :class:`~som_studio.config.ConfigError`); ``choices`` is
    the enum of allowed values. ``sweep``: a sweep may vary it; ``per_iteration``: it
    sets the time of one iteration (the run panel's time estimate matches kept runs
    on these). ``fields`` are the config fields it fills when not one field of its own
    name (``grid`` fills ``width`` and ``height``); ``record`` is the key of a run's
    record that holds it when not its name (``samples`` is kept under ``data``).
    ``default`` is the field's default; ``fallback`` what a front end's setting left unset
    takes where that default is ``None`` only because the field may not apply (the count
    of the other kind of implementation). ``check`` says what is wrong with a value, alone
    (the value of every field in ``fields`` as a tuple), or returns ``None``: a run's
    configuration is valid when every setting's check and ``choices`` pass and the rules
    between settings hold.
    """

    name: str = ""
    flag: str
    help: str
    label: str
    control: Control
    metavar: str | None = None
    parse: Callable[[str], Any] | None = None
    choices: type[StrEnum] | None = None
    sweep: bool = False
    per_iteration: bool = False
    fields: tuple[str, ...] = ()
    record: str = ""
    default: Any = None
    fallback: Any = None
    check: Callable[[Any], str | None] | None = None

    @property
    def record_key(self) -> str:
        return self.record or self.name

    @property
    def targets(self) -> tuple[str, ...]:
        """The config fields this setting fills."""
        return self.fields or (self.name,)


# -- reading typed text (a setting's ``parse``; a refusal is a ValueError whose message is the reason) ----------
def parse_count(text: str, least: int = 1) -> int:
    """A whole number >= ``least`` (sizes, iterations: 1); ``0`` and ``-3`` get the same rule."""
    try:
        v = int(text)
    except ValueError:
        raise ValueError(_("expected a whole number, got {value!r}").format(value=text)) from None
    if v < least:
        raise ValueError(_("must be at least {least}, got {value}").format(least=least, value=v))
    return v


def parse_whole(text: str) -> int:
    """A whole number >= 0 (seeds)."""
    try:
        v = int(text.strip())
    except ValueError:
        raise ValueError(_("expected a whole number, got {value!r}").format(value=text)) from None
    if v < 0:
        raise ValueError(_("must be 0 or more, got {value}").format(value=v))
    return v


def parse_number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(_("expected a number, got {value!r}").format(value=text)) from None


def parse_radii(text: str) -> tuple[float, float] | None:
    """``""``/``auto``: the default; ``S`` or ``SX,SY`` (or ``SXxSY``): radii per axis."""
    text = text.strip().lower()
    if not text or text == "auto":
        return None
    parts = [p for p in text.replace("x", ",").replace(" ", ",").split(",") if p]
    why = _("expected a radius or X,Y radii, got {value!r}").format(value=text)
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise ValueError(why) from None
    if len(vals) == 1:
        vals *= 2
    if len(vals) != 2:
        raise ValueError(why)
    return vals[0], vals[1]


def column_name_problem(col: object) -> str:
    """Why ``col`` cannot name a column (``""`` where it can): a column's values given for its name (a Series,
    an array) are said by their type, never printed whole."""
    if not isinstance(col, str):
        name = getattr(col, "name", None)
        hint = _("; give its name, {name!r}").format(name=name) if isinstance(name, str) else ""
        return _("a column name is required, got a {kind}{hint}").format(kind=type(col).__name__, hint=hint)
    return "" if col.strip() else _("a column name is required, got {value!r}").format(value=col)


def parse_columns(text: str) -> tuple[str, ...]:
    """``COL[,COL...]``: column names, blanks dropped."""
    return tuple(c.strip() for c in text.split(",") if c.strip())


def setting(default: Any = dataclasses.MISSING, *, factory: Any = dataclasses.MISSING, **declared: Any) -> Any:
    """A dataclass field that declares a run setting (see :class:`Setting` for the keywords)."""
    meta = {"setting": Setting(**declared)}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def declared(cls: type, prefix: str = "") -> list[Setting]:
    """The settings declared by ``cls``'s fields, in order, each named and given its default."""
    out = []
    for f in dataclasses.fields(cls):
        s = f.metadata.get("setting")
        if s is None:
            continue
        default = f.default if f.default is not dataclasses.MISSING else None
        out.append(dataclasses.replace(s, name=s.name or f.name, default=default))
    return out


# What a valid value of one setting is: the ``check`` of its declaration.
def is_whole(v: float) -> bool:
    """``v`` is a whole number (an int, or a float with no fraction; not NaN or infinite)."""
    return isinstance(v, int) or (isinstance(v, float) and v.is_integer())


def is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def count_check(most: int | None = None, optional: bool = False, least: int = 1) -> Callable[[Any], str | None]:
    """A whole number from ``least`` (to ``most``); ``optional``: ``None`` too."""

    def check(v: Any) -> str | None:
        if v is None and optional:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            return _("must be a whole number, got {value!r}").format(value=v)
        if v < least:
            return _("must be at least {least}, got {value}").format(least=least, value=v)
        if most is not None and v > most:
            return _("at most {most:,}, got {value:,}").format(most=most, value=v)
        return None

    return check


def flag_check(v: Any) -> str | None:
    return None if isinstance(v, bool) else _("must be true or false, got {value!r}").format(value=v)


def named_check(v: Any) -> str | None:
    return None if isinstance(v, str) and v else _("an implementation name is required")


#: The largest neighbourhood radius taken, in units (the largest map's side is 32,768).
MAX_RADIUS = 1_000_000
#: The smallest: from far above it the neighbourhood is the best unit alone (exp(-1/1e-12) is 0), and far below
#: it a float32 program's square of the radius underflows to 0 (at 1e-30 the NumPy rungs trained nothing while
#: jax-fused-batch trained).
MIN_RADIUS = 1e-6


def radii_check(v: Any) -> str | None:
    if v is None:
        return None
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        return _("needs two radii (x, y), got {value!r}").format(value=v)
    if not all(is_number(s) and math.isfinite(s) and s > 0 for s in v):
        return _("radii must be finite and > 0, got {value!r}").format(value=v)
    if any(s < MIN_RADIUS for s in v):
        return _("radii must be at least {least:g} (a smaller one weights the best unit alone, as {least:g} does), "
                 "got {value!r}").format(least=MIN_RADIUS, value=v)  # fmt: skip
    if any(s > MAX_RADIUS for s in v):
        # Past the largest map's side a neighbourhood already reaches every unit; far past it the float32
        # programs' squares overflow.
        return _("radii must be at most {most:,}, got {value!r}").format(most=MAX_RADIUS, value=v)
    return None


def rate_check(v: Any) -> str | None:
    if not is_number(v):
        return _("must be a number, got {value!r}").format(value=v)
    if not math.isfinite(v) or v <= 0 or v > 1:
        return _("learning rate must be in (0, 1], got {value!r}").format(value=float(v))
    return None


def seed_check(v: Any) -> str | None:
    if not is_number(v):
        return _("must be a number, got {value!r}").format(value=v)
    if not is_whole(v) or v < 0:
        return _("must be a whole number >= 0, got {value!r}").format(value=v)
    if v >= 2**63:
        return _("must be below 2^63 (9,223,372,036,854,775,808), got {value!r}").format(value=v)
    return None
