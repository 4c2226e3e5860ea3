"""Grids of cases: every case in the exhaustive run, a representative slice of them in the default one.

``./dev.sh test`` runs each grid's slice; ``./dev.sh test -m exhaustive`` runs the rest of every grid
(the two runs together run every case). The slice is chosen, in the grid's own order, so that every
value of every parameter is tried (every kernel form, every lattice, every precision, missing values
and none, once at least) and, where a grid asks for it (``pairs_with``), every pairing of one
parameter's values (the implementation) with each other parameter's values: every implementation
still meets every lattice.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest

EXHAUSTIVE = pytest.mark.exhaustive


def _key(value: Any) -> str:
    return repr(value)


def representative(cases: Sequence[Any], pairs_with: int | None = None) -> list[Any]:
    """``cases`` (``pytest.param``s) with all but a representative slice marked :data:`EXHAUSTIVE`.

    A case is kept when it brings a value of some parameter, or a pairing of parameter
    ``pairs_with``'s value with another parameter's value, that no earlier kept case brought.
    ``pairs_with=None`` asks only that every value of every parameter appears.
    """
    seen: set[tuple[Any, ...]] = set()
    out = []
    for case in (c if hasattr(c, "values") else pytest.param(*c) for c in cases):
        values = [_key(v) for v in case.values]
        wants = {(i, v) for i, v in enumerate(values)}
        if pairs_with is not None:
            head = values[pairs_with]
            wants |= {(pairs_with, head, j, v) for j, v in enumerate(values) if j != pairs_with}
        if wants - seen:
            seen |= wants
            out.append(case)
        else:
            out.append(pytest.param(*case.values, id=case.id, marks=[*case.marks, EXHAUSTIVE]))
    return out


def kept(cases: Iterable[Any]) -> list[Any]:
    """The cases of ``cases`` that the default run runs (for tests of the slice itself)."""
    return [c for c in cases if not any(m.name == "exhaustive" for m in c.marks)]


def product(*axes: Sequence[Any], ids: Callable[[tuple[Any, ...]], str] | None = None) -> list[Any]:
    """Every combination of ``axes`` (the first varies slowest) as ``pytest.param``s, named by ``ids``."""
    return [pytest.param(*c, id=ids(c) if ids else None) for c in itertools.product(*axes)]
