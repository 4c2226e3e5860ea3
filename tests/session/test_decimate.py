"""The live views' bounded histories: fixed size, whole run visible, spikes kept."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.session.decimate import MinMaxSeries


def test_a_short_series_is_kept_exactly() -> None:
    s = MinMaxSeries(max_points=100)
    xs = np.arange(40.0)
    ys = np.sin(xs)
    s.extend(xs, ys)
    x, y = s.arrays()
    np.testing.assert_array_equal(x, xs)
    np.testing.assert_array_equal(y, ys)
    assert len(s) == 40 and s.span == 1


@pytest.mark.parametrize("n", [101, 1_000, 200_000])
def test_size_stays_bounded_and_the_whole_run_stays_visible(n: int) -> None:
    s = MinMaxSeries(max_points=100)
    rng = np.random.default_rng(n)
    ys = rng.standard_normal(n)
    s.extend(np.arange(n, dtype=float), ys)
    x, y = s.arrays()
    assert len(x) <= 100
    assert x[0] == 0.0 and x[-1] == n - 1  # first and last iteration on the axis
    assert np.all(np.diff(x) > 0)  # drawable as a curve: x strictly increasing
    assert y.min() == ys.min() and y.max() == ys.max()  # the envelope is intact
    # Every kept point is a real point of the series.
    np.testing.assert_array_equal(y, ys[x.astype(int)])
    assert len(s) == n


def test_an_old_spike_survives_long_after_it_happened() -> None:
    s = MinMaxSeries(max_points=64)
    n = 50_000
    ys = np.ones(n)
    ys[123] = 40.0  # a recompile early in the run
    ys[7_000] = 0.01  # an unusually fast chunk
    s.extend(np.arange(n, dtype=float), ys)
    x, y = s.arrays()
    assert 123.0 in x and y[list(x).index(123.0)] == 40.0
    assert 7_000.0 in x and y[list(x).index(7_000.0)] == 0.01


def test_recent_points_stay_exact() -> None:
    s = MinMaxSeries(max_points=100)
    n = 10_000
    ys = np.cos(np.arange(n) / 7.0)
    s.extend(np.arange(n, dtype=float), ys)
    x, y = s.arrays()
    # At least a quarter of the budget is the newest points, one for one.
    np.testing.assert_array_equal(x[-25:], np.arange(n - 25, n))
    np.testing.assert_array_equal(y[-25:], ys[-25:])
    assert s.last() == (n - 1.0, ys[-1])


def test_memory_does_not_grow_with_the_run() -> None:
    s = MinMaxSeries(max_points=200)
    for i in range(5_000):
        s.append(i, i % 17)
    kept_early = len(s._buckets) + len(s._recent_x)
    for i in range(5_000, 500_000):
        s.append(i, i % 17)
    kept_late = len(s._buckets) + len(s._recent_x)
    assert kept_late <= 200 and kept_early <= 200
    assert s.span > 1


def test_nan_is_kept_but_never_hides_a_number() -> None:
    s = MinMaxSeries(max_points=16)
    ys = [float("nan")] + [float(i) for i in range(1, 200)]
    s.extend(range(200), ys)
    x, y = s.arrays()
    assert len(x) <= 16
    assert np.nanmax(y) == 199.0 and np.nanmin(y) == 1.0


def test_clear_starts_a_new_run() -> None:
    s = MinMaxSeries(max_points=32)
    s.extend(range(1_000), range(1_000))
    s.clear()
    x, y = s.arrays()
    assert len(x) == 0 and len(y) == 0 and len(s) == 0 and s.span == 1 and s.last() is None
    s.append(5, 2)
    x, y = s.arrays()
    assert list(x) == [5.0] and list(y) == [2.0]


def test_too_small_a_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 16"):
        MinMaxSeries(max_points=4)
