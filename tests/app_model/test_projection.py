"""Project data… and Export units… on a stored run, without Qt: through som_studio.model, as the CLI."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from som_studio import cli
from som_studio.app_model.examples import iris_config
from som_studio.app_model.projection import ProjectionError, export_units, project_stored
from som_studio.model import load_run
from som_studio.resources import resource
from som_studio.storage.runfile import StoredRun

IRIS = resource("data", "iris.csv")


@pytest.fixture(scope="module")
def iris_run(tmp_path_factory) -> StoredRun:
    """The example's map (12x8 hex, pca, zscore, species), trained by the CLI and stored as the app keeps runs."""
    folder = tmp_path_factory.mktemp("runs")
    cfg = iris_config(epochs=10)
    argv = ["bench", "--data", cfg.data.path, "--impl", cfg.impl, "--grid", cfg.grid, "--topology", cfg.topology,
            "--init", cfg.init, "--scaling", cfg.scaling, "--labels", cfg.labels, "--epochs", "10",
            "--save-runs", folder, "--quiet"]  # fmt: skip
    assert cli.main([str(a) for a in argv]) == 0
    return StoredRun.load(folder / "numpy-batch.somrun")


def test_the_training_data_lands_where_the_model_puts_it(iris_run, tmp_path):
    result = project_stored(iris_run, IRIS)
    assert result.hits.shape == (8, 12) and result.rows == 150 and result.topology == "hex"
    # The same BMUs as som_studio.load_run(...).project(...), which `som-studio project` writes.
    path = iris_run.save(tmp_path / "iris.somrun")
    p = load_run(path).project(IRIS)
    expected = np.zeros((8, 12), dtype=np.int64)
    np.add.at(expected, (p.bmu_row, p.bmu_col), 1)
    assert np.array_equal(result.hits, expected)
    frame = result.frame()
    assert frame.view.mode == "hits" and frame.topology == result.topology and frame.image.dtype == np.uint8
    assert frame.legend.label == "examples per unit" and frame.legend.hi == result.hits.max()
    # Each unit reads back its own count from the picture (units without rows in the empty colour).
    for row, col in zip(*np.nonzero(result.hits)):
        level = frame.level_at(row, col)
        assert level == pytest.approx(result.hits[row, col] / result.hits.max() * 255, abs=1.5)
    assert all(frame.level_at(r, c) is None for r, c in zip(*np.nonzero(result.hits == 0)))
    assert "150 rows" in result.caption and "iris.csv on numpy-batch" in result.caption


def test_mismatched_columns_are_refused_by_name(iris_run, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("sepal_length,sepal_width,petal_len,petal_width,colour\n5,3,1,0.2,red\n")
    with pytest.raises(ProjectionError) as exc:
        project_stored(iris_run, bad)
    assert "missing petal_length" in str(exc.value) and "unexpected petal_len, colour" in str(exc.value)


def test_export_units_writes_the_per_unit_csv(iris_run, tmp_path):
    out = export_units(iris_run, tmp_path / "units.csv")
    rows = list(csv.reader(out.open()))
    assert rows[0][:7] == ["unit", "row", "col", "hits", "label", "purity", "cluster"]
    assert rows[0][7:] == ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    assert len(rows) == 1 + 96 and sum(int(r[3]) for r in rows[1:]) == 150
    assert {r[4] for r in rows[1:]} - {""} == {"setosa", "versicolor", "virginica"}
