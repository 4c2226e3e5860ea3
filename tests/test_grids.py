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


def test_the_slice_takes_the_cases_that_bring_the_most():
    # Four forms by two lattices: four cases try every form and both lattices (taken in the grid's
    # order, the first lattice would need every form and the second a case more).
    grid = product(["direct", "matmul", "tiled", "blocked"], ["rect", "hex"], [False, True])
    slice_ = _values(kept(representative(grid)))
    assert len(slice_) == 4
    assert {c[0] for c in slice_} == {"direct", "matmul", "tiled", "blocked"}
    assert {c[1] for c in slice_} == {"rect", "hex"} and {c[2] for c in slice_} == {False, True}
    # With pairs: every implementation on both lattices and both data, two cases each.
    grid = product("xyz", ["rect", "hex"], [False, True])
    slice_ = _values(kept(representative(grid, pairs_with=0)))
    assert slice_ == [(i, lattice, missing) for i in "xyz" for lattice, missing in (("rect", False), ("hex", True))]
