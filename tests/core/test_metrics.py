from __future__ import annotations

import numpy as np
import pytest

from som_studio.core.som import metrics


def _line_map():
    # A 4x1 map whose units sit at 0, 1, 2, 3 on one feature.
    return np.arange(4, dtype=np.float64).reshape(1, 4, 1)


def test_quantization_error_is_mean_distance_to_best_unit():
    w = _line_map()
    data = np.array([[0.0], [1.25], [3.5]])
    assert metrics.quantization_error(w, data) == pytest.approx((0 + 0.25 + 0.5) / 3)


def test_topographic_error_counts_non_adjacent_best_pairs():
    # Units in the order 0, 2, 1, 3 on the line: an example at 1.4 has best unit 2 (value 1)
    # and second best unit 1 (value 2): adjacent. An example at 0.6 has best 0 (value 0) and
    # second best unit 2 (value 1), two cells apart: an error.
    w = np.array([0.0, 2.0, 1.0, 3.0]).reshape(1, 4, 1)
    assert metrics.topographic_error(w, np.array([[1.4]])) == 0.0
    assert metrics.topographic_error(w, np.array([[0.4]])) == 1.0
    assert metrics.topographic_error(w, np.array([[1.4], [0.4]])) == 0.5


def test_diagonal_neighbours_are_adjacent():
    w = np.zeros((2, 2, 1))
    w[0, 0] = 0.0
    w[1, 1] = 0.1
    w[0, 1] = w[1, 0] = 5.0
    assert metrics.topographic_error(w, np.array([[0.04]])) == 0.0


def test_single_unit_map_has_no_topographic_error():
    w = np.zeros((1, 1, 2))
    qe, te = metrics.quality(w, np.ones((3, 2)))
    assert qe == pytest.approx(np.sqrt(2)) and te == 0.0


def test_blocked_search_matches_brute_force(monkeypatch):
    rng = np.random.default_rng(0)
    w, x = rng.random((6, 7, 3)), rng.random((50, 3))
    monkeypatch.setattr(metrics, "_BLOCK_ELEMENTS", 42 * 3)  # several blocks
    first, second, d2 = metrics.best_two(w, x)
    full = ((x[:, None, :] - w.reshape(-1, 3)[None]) ** 2).sum(-1)
    order = np.argsort(full, axis=1)
    np.testing.assert_array_equal(first, order[:, 0])
    np.testing.assert_array_equal(second, order[:, 1])
    np.testing.assert_allclose(d2, full.min(axis=1))


def test_u_matrix():
    assert np.all(metrics.u_matrix(np.ones((3, 4, 2))) == 0)
    w = _line_map()  # neighbours at distance 1
    np.testing.assert_allclose(metrics.u_matrix(w), np.ones((1, 4)))
    w = np.zeros((2, 2, 1))
    w[1, 1] = 2.0
    np.testing.assert_allclose(metrics.u_matrix(w), [[0, 1], [1, 2]])


def test_to_rgb():
    img = metrics.to_rgb(np.array([[[0.0, 0.5, 1.0], [2.0, -1.0, 0.25]]]))
    assert img.dtype == np.uint8 and img.shape == (1, 2, 3)
    assert img.tolist() == [[[0, 128, 255], [255, 0, 64]]]


def test_nearest_units_agrees_with_best_two_with_and_without_missing_values():
    from som_studio.core.som.metrics import best_two, nearest_units

    rng = np.random.default_rng(0)
    w = rng.random((5, 7, 4))
    x = rng.random((300, 4))
    f1, _, d1 = best_two(w, x)
    f2, d2 = nearest_units(w, x)
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_allclose(d1, d2)
    x[::3, 1] = np.nan
    f1, _, d1 = best_two(w, x)
    f2, d2 = nearest_units(w, x)
    np.testing.assert_array_equal(f1, f2)
    np.testing.assert_allclose(d1, d2)
    # known features only: the distance ignores the NaN column
    np.testing.assert_allclose(d2[0], np.sum((np.delete(x[0], 1) - np.delete(w.reshape(35, 4)[f2[0]], 1)) ** 2))


def test_rows_without_a_label_are_left_out_of_the_unit_labels_and_purity():
    bmus = np.array([0, 0, 0, 0, 1, 1, 2])
    labels = np.array(["a", "", "", "", "b", "c", ""])
    flat, unit_purity, purity = metrics.label_measures(bmus, labels, 4)
    assert flat.tolist() == ["a", "b", "", ""]  # unit 2's only example has no label: no majority
    np.testing.assert_array_equal(unit_purity, [1.0, 0.5, np.nan, np.nan])
    assert purity == pytest.approx(2 / 3)  # a and b agree, c does not; the four without a label do not count
    np.testing.assert_array_equal(metrics.unit_labels(bmus, labels, 4), flat)
    assert metrics.label_measures(bmus, np.full(7, ""), 4)[2] is None
    weights = np.array([[[0.0], [1.0]]])
    assert metrics.label_purity(weights, np.array([[0.0], [0.1], [0.9]]), np.array(["a", "", "b"])) == 1.0
