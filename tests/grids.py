"""Grids of cases: every case in the exhaustive run, a representative slice of them in the default one.

``./dev.sh test`` runs each grid's slice; ``./dev.sh test -m exhaustive`` runs the rest of every grid
(the two runs together run every case). The slice is chosen so that every
value of every parameter is tried (every kernel form, every lattice, every precision, missing values
and none, once at least) and, where a grid asks for it (``pairs_with``), every pairing of one
parameter's values (the implementation) with each other parameter's values: every implementation
still meets every lattice. It is kept small (each case compiles programs of its own): case by case, the
one that brings the most values and pairings not yet tried, so that one case tries a new kernel form
and a new lattice at once where the grid has such a case.
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
    """``cases`` (``pytest.param``s) with all but a representative slice marked :data:`EXHAUSTIVE`, in their order.

    The slice brings every value of every parameter, and every pairing of parameter ``pairs_with``'s
    value with another parameter's value (``pairs_with=None`` asks only for the values). It is built
    greedily: the case that brings the most of these not yet brought, the earliest of equals, until
    every one is brought (a greedy set cover: within a small factor of the fewest cases that can).
    """
    params = [c if hasattr(c, "values") else pytest.param(*c) for c in cases]
    wants = []
    for case in params:
        values = [_key(v) for v in case.values]
        want = {(i, v) for i, v in enumerate(values)}
        if pairs_with is not None:
            head = values[pairs_with]
            want |= {(pairs_with, head, j, v) for j, v in enumerate(values) if j != pairs_with}
        wants.append(want)
    left: set[tuple[Any, ...]] = set().union(*wants)
    chosen: set[int] = set()
    while left:
        best = max(range(len(params)), key=lambda k: (len(wants[k] & left), -k))
        chosen.add(best)
        left -= wants[best]
    return [
        case if k in chosen else pytest.param(*case.values, id=case.id, marks=[*case.marks, EXHAUSTIVE])
        for k, case in enumerate(params)
    ]


def kept(cases: Iterable[Any]) -> list[Any]:
    """The cases of ``cases`` that the default run runs (for tests of the slice itself)."""
    return [c for c in cases if not any(m.name == "exhaustive" for m in c.marks)]


def product(*axes: Sequence[Any], ids: Callable[[tuple[Any, ...]], str] | None = None) -> list[Any]:
    """Every combination of ``axes`` (the first varies slowest) as ``pytest.param``s, named by ``ids``."""
    return [pytest.param(*c, id=ids(c) if ids else None) for c in itertools.product(*axes)]
