"""The JSON a file holds, checked before it is trusted: each field's type, named by where it sits.

``json.loads`` gives whatever the file says: a list where an object belongs,
text where a number does. Readers ask :func:`field` for each value they use,
with the kinds it may be; a value of another kind is a :class:`FieldError`
naming the field (``record.timings.compile_s``), what it is and what it should
be, so a damaged or hand-edited file is refused in words, not with a
``TypeError`` from deep inside. Qt-free.
"""

from __future__ import annotations

import json
import math
from typing import Any

from som_studio.i18n import _

WHOLE = "whole"
NUMBER = "number"
TEXT = "text"
FLAG = "flag"
LIST = "list"
OBJECT = "object"
NULL = "null"

# Whole numbers are stored in int64 arrays (chunk logs, sizes): larger ones cannot be kept.
_INT64 = 1 << 63


class FieldError(ValueError):
    """A JSON value is not of the kind its reader needs; the message names the field."""


def describe(kind: str) -> str:
    """A kind of JSON value in words (``a whole number``)."""
    return {
        WHOLE: _("a whole number"),
        NUMBER: _("a number"),
        TEXT: _("text"),
        FLAG: _("true or false"),
        LIST: _("a list"),
        OBJECT: _("an object"),
        NULL: _("null"),
    }.get(kind, kind)


def kind_of(value: Any) -> str:
    """The kind of a value ``json.loads`` gave (a whole number that overflows int64 is a ``number``)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return FLAG
    if isinstance(value, int):
        return WHOLE if -_INT64 <= value < _INT64 else NUMBER
    if isinstance(value, float):
        return NUMBER
    if isinstance(value, str):
        return TEXT
    if isinstance(value, list):
        return LIST
    if isinstance(value, dict):
        return OBJECT
    return type(value).__name__


def _fits(value: Any, kinds: tuple[str, ...]) -> bool:
    kind = kind_of(value)
    if kind in kinds:
        return kind != NUMBER or _finite(value)
    # A whole number is a number too, when a float can hold it.
    return NUMBER in kinds and kind == WHOLE and _finite(value)


def _finite(value: Any) -> bool:
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def field(doc: dict[str, Any], key: str, kinds: tuple[str, ...], where: str = "", required: bool = False) -> Any:
    """``doc[key]`` when it is one of ``kinds`` (an absent key gives ``None``, or is refused if ``required``).

    ``where`` names ``doc`` in messages (``record.timings``).
    """
    name = f"{where}.{key}" if where else key
    if key not in doc:
        if required:
            raise FieldError(_("{field} is missing").format(field=name))
        return None
    value = doc[key]
    check(value, kinds, name)
    return value


def check(value: Any, kinds: tuple[str, ...], name: str) -> None:
    """Refuse ``value`` (the field ``name``) unless it is one of ``kinds``."""
    if not _fits(value, kinds):
        raise FieldError(
            _("{field} is {found}; expected {expected}").format(
                field=name, found=describe(kind_of(value)), expected=_(" or ").join(describe(k) for k in kinds)
            )
        )


def items(doc: dict[str, Any], key: str, kinds: tuple[str, ...], where: str = "") -> list[Any]:
    """``doc[key]``, a list (or absent or null: empty) whose every item is one of ``kinds``."""
    value = field(doc, key, (LIST, NULL), where)
    name = f"{where}.{key}" if where else key
    for i, item in enumerate(value or ()):
        check(item, kinds, f"{name}[{i}]")
    return list(value or ())


def loads(data: bytes) -> Any:
    """JSON text (UTF-8) as Python values; NaN and infinities, which JSON has no words for, are refused.

    Raises :class:`ValueError` (a :class:`json.JSONDecodeError` or :class:`UnicodeDecodeError`
    among them) for text that is not JSON, nested too deep included.
    """

    def _no_constant(word: str) -> Any:
        raise ValueError(_("{word} is not a JSON value").format(word=word))

    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(_("nested too deeply")) from None
