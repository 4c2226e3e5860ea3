"""The default radius schedule: a data table's map fits its data; the playbook's colours keep theirs."""

from __future__ import annotations

import pytest

import som_studio
from som_studio.config import DataSpec, RunConfig


def wines_frame():
    """UCI wine (178 x 13, as scikit-learn ships it): R kohonen's wines plus one row, its label the vintage."""
    datasets = pytest.importorskip("sklearn.datasets")
    frame = datasets.load_wine(as_frame=True).frame.rename(columns={"target": "vintage"})
    return frame.assign(vintage=frame["vintage"].astype(str))


def test_a_wines_map_with_default_epochs_fits_its_data():
    run = som_studio.train(
        wines_frame(), labels="vintage", impl="numpy-batch", grid="8x6", topology="hex", scaling="zscore", seed=0
    )
    quality = run.record["quality"]
    assert quality["qe"] <= 1.708  # 1.1x R kohonen 3.0.11's default online map on its wines (1.553)
    assert quality["te"] <= 0.10
    assert run.record["config"]["sigma"]["end"] == [0.75, 0.75]


def test_the_colours_keep_the_playbooks_end_radius():
    assert RunConfig().sigmas[1] == (2.0, 2.0)
    table = RunConfig(data=DataSpec(path="t.csv"))
    assert table.sigmas[1] == (0.75, 0.75)
    # a map smaller than the rule keeps its start radius
    assert RunConfig(width=2, height=2, data=DataSpec(path="t.csv")).sigmas == ((1.0, 1.0), (0.75, 0.75))
    assert RunConfig(width=2, height=2).sigmas == ((1.0, 1.0), (1.0, 1.0))
