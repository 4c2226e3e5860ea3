"""The grids' slices: what the default run keeps of a grid, and that the exhaustive run gets the rest."""

from __future__ import annotations

import itertools

from tests.grids import kept, product, representative


def _values(cases) -> list[tuple]:
    return [tuple(c.values) for c in cases]


def test_the_slice_tries_every_value_of_every_parameter():
    grid = product(["a", "b", "c"], [1, 2], [False, True])
    cases = representative(grid)
    slice_ = _values(kept(cases))
    assert len(slice_) < len(grid)
    for axis, values in enumerate((["a", "b", "c"], [1, 2], [False, True])):
        assert {c[axis] for c in slice_} == set(values)
    # Nothing is lost: the cases left out are marked for the exhaustive run, in the grid's order.
    assert _values(cases) == _values(grid)
    left = [c for c in cases if c not in kept(cases)]
    assert all(any(m.name == "exhaustive" for m in c.marks) for c in left)


def test_pairs_with_keeps_every_pairing_of_one_parameter_with_the_others():
    grid = [(impl, lattice, missing) for impl, lattice, missing in itertools.product("xyz", "rh", (0, 1))]
    slice_ = _values(kept(representative(grid, pairs_with=0)))
    for impl in "xyz":
        assert {c[1] for c in slice_ if c[0] == impl} == {"r", "h"}
        assert {c[2] for c in slice_ if c[0] == impl} == {0, 1}
    assert len(slice_) < len(grid)
