"""The unit-details panel's content and the hover read-out, computed without Qt."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio import picture
from som_studio.app_model.examples import iris_config
from som_studio.app_model.units import UnitDetails, UnitIndex, readout, unit_details
from som_studio.core.som import metrics
from som_studio.core.som.problem import load_problem_table


def _map(h: int = 3, w: int = 4, d: int = 2) -> np.ndarray:
    # Unit (r, c) holds (r, c, r*c...) so each unit's codebook is recognisable.
    r, c = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    planes = [r, c, r * c, r + c][:d]
    return np.stack(planes, axis=-1).astype(np.float64)


def _views(**kw) -> picture.MapViews:
    base = {"topology": "hex", "feature_names": ("height", "weight")}
    base.update(kw)
    return picture.MapViews(**base)


def test_codebook_by_feature_name_in_original_units():
    w = _map()
    views = _views(offset=np.array([10.0, -1.0]), scale=np.array([2.0, 0.5]))
    d = unit_details(w, views, 2, 3)
    # trained value x -> x * scale + offset: unit (2, 3) holds (2, 3).
    assert d.codebook == (("height", 2 * 2.0 + 10.0), ("weight", 3 * 0.5 - 1.0))
    assert (d.hits, d.label, d.example_count) == (None, None, None)
    assert "row 2, column 3" in d.title


def test_examples_labels_and_rows_from_the_index():
    w = _map()
    # Examples sitting exactly on units: rows 0, 2, 5 on unit (1, 1); rows 1, 3 on (0, 0); row 4 on (2, 3).
    data = np.array([[1, 1], [0, 0], [1, 1], [0, 0], [2, 3], [1, 1]], dtype=np.float64)
    labels = np.array(["a", "x", "b", "x", "z", "a"])
    index = UnitIndex.build(w, data, labels)
    d = unit_details(w, _views(), 1, 1, index)
    assert d.hits == 3 and d.example_count == 3
    assert d.example_rows == (0, 2, 5) and d.rows_text() == "1, 3, 6"  # data rows as messages count them
    with_ids = unit_details(w, _views(), 1, 1, UnitIndex.build(w, data, labels, np.array([f"r{i}" for i in range(6)])))
    assert with_ids.example_ids == ("r0", "r2", "r5") and with_ids.rows_text() == "r0, r2, r5"  # by the run's ids
    assert d.label_counts == (("a", 2), ("b", 1))
    assert d.label == "a" and d.purity == pytest.approx(2 / 3)
    empty = unit_details(w, _views(), 0, 3, index)
    assert empty.hits == 0 and empty.example_rows == () and empty.label == "" and empty.rows_text() == "none"


def test_rows_are_cut_to_the_first_ones_with_the_count():
    w = _map(2, 2)
    data = np.zeros((45, 2))  # all on unit (0, 0)
    d = unit_details(w, _views(), 0, 0, UnitIndex.build(w, data), limit=20)
    assert d.example_rows == tuple(range(20)) and d.example_count == 45
    assert d.rows_text().endswith("and 25 more")
    assert UnitDetails(0, 0, ()).rows_text().startswith("not known")


def test_a_unit_outside_the_map_is_refused():
    with pytest.raises(ValueError, match="outside a 3x4 map"):
        unit_details(_map(), _views(), 3, 0)


def test_the_iris_index_gives_the_models_hits_and_labels():
    """The rows found for each unit agree with the hits and majority labels the run's model measured."""
    cfg = iris_config()
    table = load_problem_table(cfg)
    rng = np.random.default_rng(0)
    w = table.values[rng.choice(len(table.values), 12 * 8)].reshape(8, 12, -1)
    views = _views(feature_names=table.feature_names).measured(w, table.values, table.labels)
    index = UnitIndex.for_config(w, cfg)
    assert index is not None and len(index.bmus) == 150
    for row, col in ((0, 0), (3, 5), (7, 11)):
        d = unit_details(w, views, row, col, index)
        assert d.hits == int(views.hits[row, col])
        assert d.label == str(views.labels[row, col])
        assert sum(n for _, n in d.label_counts) == d.hits
        assert all(int(index.bmus[r]) == row * 12 + col for r in d.example_rows)


def test_unreadable_data_gives_no_index():
    cfg = iris_config().to_dict()
    cfg["data"]["path"] = "/nonexistent/iris.csv"
    assert UnitIndex.for_config(_map(d=4), cfg) is None


# -- hover read-out ------------------------------------------------------------------------
def test_readout_names_the_unit_and_the_value_of_the_view():
    w = _map(3, 4, 2)
    hits = np.arange(12).reshape(3, 4)
    labels = np.array([["a"] * 4, ["b"] * 4, [""] * 4])
    purity = np.full((3, 4), 0.5)
    views = _views(hits=hits, labels=labels, unit_purity=purity, clusters=np.ones((3, 4), int))
    lo, hi = picture.colour_range(w)

    def at(mode: str, component: int = 0, **kw) -> str:
        frame = picture.make_frame(1, w, picture.ViewChoice(mode, component), lo, hi, views)
        return readout(frame, 1, 2, views=views, **kw)

    assert at(picture.HITS) == "unit (1, 2): 6 hits"
    assert at(picture.LABELS) == "unit (1, 2): label b (purity 0.50)"
    assert at(picture.CLUSTERS) == "unit (1, 2): cluster 1"
    assert at(picture.COMPONENT, 1, weights=w) == "unit (1, 2): weight = 2"
    um = metrics.u_matrix(w, "hex")
    assert at(picture.UMATRIX, umatrix=um) == f"unit (1, 2): U-matrix distance {um[1, 2]:.4g}"
    frame = picture.make_frame(1, w, picture.ViewChoice(picture.PLANES), lo, hi, views)
    assert readout(frame, 1, 2, w, views, tile=0) == "unit (1, 2): height = 1"


@pytest.mark.parametrize("topology", ["rect", "hex"])
def test_a_live_frame_is_read_back_from_its_colours(topology):
    """Without the map (a live frame), a plane's value comes back from the picture to 1/255 of its range."""
    rng = np.random.default_rng(3)
    w = rng.random((9, 7, 3))
    lo, hi = np.zeros(3), np.ones(3)
    views = picture.MapViews(topology=topology, feature_names=("r", "g", "b"))
    frame = picture.make_frame(5, w, picture.ViewChoice(picture.COMPONENT, 2), lo, hi, views)
    for row, col in ((0, 0), (4, 3), (8, 6)):
        text = readout(frame, row, col, views=views)
        value = float(text.rsplit("≈ ", 1)[1])
        assert value == pytest.approx(w[row, col, 2], abs=1.5 / 255 + 5e-3)
        assert text.startswith(f"unit ({row}, {col}): b ≈")


@pytest.mark.parametrize("topology", ["rect", "hex"])
def test_a_live_labels_or_clusters_frame_is_read_back_from_its_colours(topology):
    """A live frame's views travel as a picture only: the label (and purity) or cluster come back from its colours."""
    rng = np.random.default_rng(5)
    h, w_ = 6, 5
    w = rng.random((h, w_, 2))
    labels = rng.choice(np.array(["setosa", "versicolor", "virginica", ""]), size=(h, w_))
    purity = np.where(labels == "", np.nan, rng.uniform(0.3, 1.0, size=(h, w_)))
    clusters = rng.integers(0, 4, size=(h, w_))
    measured = _views(topology=topology, labels=labels, unit_purity=purity, clusters=clusters)
    lo, hi = picture.colour_range(w)
    live = _views(topology=topology)  # what the app holds while the run goes on: no labels, no clusters
    labelled = picture.make_frame(1, w, picture.ViewChoice(picture.LABELS), lo, hi, measured)
    clustered = picture.make_frame(1, w, picture.ViewChoice(picture.CLUSTERS), lo, hi, measured)
    for row in range(h):
        for col in range(w_):
            text = readout(labelled, row, col, views=live)
            if labels[row, col] == "":
                assert text == f"unit ({row}, {col}): no examples"
            else:
                assert text.startswith(f"unit ({row}, {col}): label {labels[row, col]} (purity ≈ ")
                read = float(text.rsplit("≈ ", 1)[1].rstrip(")"))
                assert read == pytest.approx(purity[row, col], abs=0.02)
            assert readout(clustered, row, col, views=live) == f"unit ({row}, {col}): cluster {clusters[row, col]}"


def test_a_units_label_and_purity_leave_out_its_rows_without_a_label():
    w = np.zeros((1, 2, 2))
    data = np.zeros((5, 2))  # all on unit (0, 0)
    labels = np.array(["a", "", "", "b", "a"])
    index = UnitIndex.build(w, data, labels)
    d = unit_details(w, _views().measured(w, data, labels), 0, 0, index)
    assert d.label == "a" and d.purity == pytest.approx(2 / 3) and d.hits == 5
    assert d.label_counts == (("a", 2), ("b", 1))
    views = _views().measured(w, data, labels)
    assert views.labels[0, 0] == "a" and views.unit_purity[0, 0] == pytest.approx(2 / 3)
    assert views.purity == pytest.approx(2 / 3)
