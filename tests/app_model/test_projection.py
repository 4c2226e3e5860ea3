"""Project data… and Export units… on a stored run, without Qt: through som_studio.trained, as the CLI."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from som_studio import cli
from som_studio.app_model import projection
from som_studio.app_model.examples import iris_config
from som_studio.app_model.projection import ProjectionError, export_units, project_apart, project_stored
from som_studio.resources import resource
from som_studio.storage.runfile import StoredRun
from som_studio.trained import load_run

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
    assert export_units(iris_run, tmp_path / "typed") == tmp_path / "typed.csv"  # a name typed without its suffix
    with pytest.raises(ProjectionError, match="the units export as a .csv file"):  # a message box, not a traceback
        export_units(iris_run, tmp_path / "units.npy")


# A map big enough to search on JAX's device is projected in a process of its own: the caller (the app)
# never imports JAX. Here the iris map stands in for a big one (the size check is patched in this process).
APART_SCRIPT = r"""
import sys
import numpy as np
from som_studio.app_model import projection
from som_studio.storage.runfile import StoredRun
projection.searches_on_device = lambda *shape: True
result = projection.project_apart(StoredRun.load(sys.argv[1]), sys.argv[2])
np.save(sys.argv[3], result.hits)
print("jax imported here:", "jax" in sys.modules)
"""


def test_a_big_map_is_projected_in_a_process_of_its_own(iris_run, tmp_path):
    stored = iris_run.save(tmp_path / "iris.somrun")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run(
        [sys.executable, "-c", APART_SCRIPT, str(stored), str(IRIS), str(tmp_path / "hits.npy")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert "jax imported here: False" in out.stdout
    assert np.array_equal(np.load(tmp_path / "hits.npy"), project_stored(iris_run, IRIS).hits)


def test_a_refusal_in_the_projection_process_reaches_the_caller(iris_run, tmp_path, monkeypatch):
    monkeypatch.setattr(projection, "searches_on_device", lambda *shape: True)
    bad = tmp_path / "bad.csv"
    bad.write_text("sepal_length,sepal_width,petal_len,petal_width\n5,3,1,0.2\n")
    with pytest.raises(ProjectionError, match="missing petal_length"):
        project_apart(iris_run, bad)
