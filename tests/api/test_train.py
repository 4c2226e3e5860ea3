"""som_studio.train and SOM: the CLI's run in-process, keywords from the one declaration of settings."""

from __future__ import annotations

import inspect
import traceback
from pathlib import Path

import numpy as np
import pytest

import som_studio
from som_studio import cli
from som_studio import config as cfgmod
from som_studio.api import SOM, keywords
from som_studio.session.events import ChunkTimed, Finished, Started

IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"


def test_train_gives_the_clis_map(tmp_path):
    data = IRIS
    argv = ["bench", "--data", str(data), "--labels", "species", "--impl", "numpy-batch", "--grid", "6x4"]
    argv += ["--topology", "hex", "--scaling", "zscore", "--epochs", "8", "--seed", "2", "--sigma-end", "1x0.8"]
    assert cli.main([*argv, "--save-runs", str(tmp_path), "--quiet"]) == 0
    saved = som_studio.load_run(tmp_path / "numpy-batch.somrun")
    run = som_studio.train(
        data, labels="species", impl="numpy-batch", grid=(6, 4), topology="hex", scaling="zscore", epochs=8, seed=2,
        sigma_end="1x0.8",
    )  # fmt: skip
    assert type(run) is type(saved)
    np.testing.assert_array_equal(run.codebook, saved.codebook)
    assert run.codebook.shape == (4, 6, 4) and run.feature_names == saved.feature_names
    np.testing.assert_array_equal(run.labels, saved.labels)
    assert run.record["config"] == saved.record["config"]
    assert run.record["quality"]["qe"] == pytest.approx(saved.record["quality"]["qe"])
    assert run.record["timings"]["wall_s"] > 0
    # save writes what load_run reads back
    again = som_studio.load_run(run.save(tmp_path / "again.somrun"))
    np.testing.assert_array_equal(again.codebook, run.codebook)
    assert again.record["quality"] == run.record["quality"]
    # never over a file unless asked, in this call's own words
    with pytest.raises(ValueError, match=r"exists; pass force=True"):
        run.save(tmp_path / "again.somrun")
    assert run.save(tmp_path / "again.somrun", force=True).exists()


def test_keywords_are_the_declared_settings():
    names = {s.name for s in cfgmod.SETTINGS} - {"data"}
    assert set(keywords()) == names
    # How a run is watched and saved is not a setting of the map.
    controls = {"data", "progress", "schedule", "checkpoint", "checkpoint_every", "resume"}
    signature = set(inspect.signature(som_studio.train).parameters) - controls
    assert signature <= names
    assert set(SOM().get_params()) == names - {"samples", "labels", "ignore", "id_column", "stream", "batch_rows"}
    assert set(SOM().get_params()) == set(inspect.signature(SOM).parameters)


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (dict(sigma=1.0), TypeError, r"unknown keyword 'sigma'; choose from impl, grid, samples"),
        (dict(grid="8by6"), ValueError, r"grid: expected WIDTHxHEIGHT"),
        (dict(grid=(0, 6)), ValueError, r"grid: width and height must be positive"),
        (dict(topology="square"), ValueError, r"topology: must be one of rect, hex"),
        (dict(impl="numpy-fast"), ValueError, r"impl: unknown implementation 'numpy-fast'"),
        (dict(sigma_end=-1), ValueError, r"sigma_end: radii must be finite and > 0"),
        # Its square underflows in float32: the NumPy rungs trained nothing where jax-fused-batch trained.
        (dict(sigma_end=1e-30), ValueError, r"sigma_end: radii must be at least 1e-06 \(a smaller one weights"),
        (dict(stream=True), ValueError, r"stream: reads a data file in batches; data given in memory is read already"),
        (dict(impl=3), ValueError, r"impl: expected an implementation's name or a list of them, got 3"),
        # Dropped without a word, where the command line refused it.
        (
            dict(impl="numpy-online", steps=10),
            ValueError,
            r"epochs: applies to batch implementations and none is listed \(numpy-online trains in steps\); leave it",
        ),
    ],
)
def test_bad_keywords_are_refused_by_name(call, error, words):
    with pytest.raises(error, match=words) as err:
        som_studio.train(np.random.default_rng(0).random((20, 3)), epochs=2, **call)
    assert [f.name for f in traceback.extract_tb(err.value.__traceback__)][1:] == ["train"]


def test_progress_takes_a_callable_or_a_bar(capsys):
    seen = []
    data = np.random.default_rng(0).random((30, 3))
    som_studio.train(data, impl="numpy-batch", grid="3x3", epochs=4, progress=seen.append)
    assert isinstance(seen[0], Started) and isinstance(seen[-1], Finished)
    assert sum(ev.count for ev in seen if isinstance(ev, ChunkTimed)) == 4
    with pytest.raises(TypeError, match=r"progress: expected True, False, None or a callable .*, got 'yes'"):
        som_studio.train(data, impl="numpy-batch", grid="3x3", epochs=4, progress="yes")
    pytest.importorskip("tqdm")
    som_studio.train(data, impl="numpy-batch", grid="3x3", epochs=4, progress=True)
    assert "4/4" in capsys.readouterr().err


def test_a_bar_in_a_jupyter_kernel_without_ipywidgets_is_the_text_bar_without_a_warning(capsys, monkeypatch):
    """tqdm picks its bar when it is first imported: a notebook's kernel without ipywidgets gets the text bar, and
    tqdm warned in red that 'IProgress not found', which reads as an error."""
    pytest.importorskip("tqdm")
    import sys
    import types
    import warnings

    class ZMQInteractiveShell:  # what a Jupyter kernel's get_ipython() is
        pass

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = ZMQInteractiveShell  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", types.ModuleType("ipykernel.zmqshell"))
    monkeypatch.setitem(sys.modules, "ipywidgets", None)  # not installed
    for name in ("tqdm.auto", "tqdm.autonotebook", "tqdm.notebook"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    data = np.random.default_rng(0).random((30, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        som_studio.train(data, impl="numpy-batch", grid="3x3", epochs=4, progress=True)
    assert "4/4" in capsys.readouterr().err
    assert not [w for w in caught if "IProgress" in str(w.message)]


def test_your_own_class_trains_from_python_as_impl_takes_it_on_the_command_line(forget):
    mine = Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_som.py"
    data = np.random.default_rng(0).random((60, 3))
    run = som_studio.train(data, impl=f"{mine}:MySom", grid="8x6", epochs=3)
    assert run.record["impl"] == "my_som.py:MySom" and run.record["extra"]["agreement"]["agrees"] is True
    with pytest.raises(ValueError, match="my_som.py: defines no Nope"):
        som_studio.train(data, impl=f"{mine}:Nope", grid="8x6", epochs=3)


def test_your_own_class_that_disagrees_with_the_reference_is_said_to(forget, tmp_path):
    """bench's table says so and compare does not rank it; a run returned to Python warns and shows it."""
    mine = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_som.py").read_text(encoding="utf-8")
    sloppy = mine.replace("/ sigma_y**2", "/ (2 * sigma_y**2)").replace("/ sigma_x**2", "/ (2 * sigma_x**2)")
    assert sloppy != mine
    (tmp_path / "sloppy.py").write_text(sloppy, encoding="utf-8")
    data = np.random.default_rng(0).random((60, 3))
    from som_studio.api import Disagreement

    with pytest.warns(Disagreement, match="disagrees with numpy-batch") as said:
        run = som_studio.train(data, impl=f"{tmp_path / 'sloppy.py'}:MySom", grid="8x6", epochs=5)
    assert said[0].filename == __file__  # the warning points at the call
    assert "disagrees with numpy-batch" in run._repr_html_()


def test_a_column_refused_is_named_by_the_keyword_that_named_it():
    """The reader words it with the command line's flags; from Python, train()'s keywords."""
    for given, words in (({"labels": "nope"}, "labels=nope"), ({"id_column": "nope"}, "id_column=nope")):
        with pytest.raises(ValueError, match=f"iris.csv: {words}: no such column; the columns are sepal_length"):
            som_studio.train(IRIS, epochs=1, **given)


def test_a_masked_arrays_masked_cells_are_missing_values():
    """np.asarray drops a mask: the sentinels it hid (999 here) were trained on as data."""
    x = np.random.default_rng(0).random((60, 3))
    x[::10, 0] = 999.0
    masked = np.ma.masked_equal(x, 999.0)
    holes = np.where(x == 999.0, np.nan, x)
    kw = {"impl": "numpy-batch", "grid": "4x3", "epochs": 3, "scaling": "minmax"}
    run = som_studio.train(masked, **kw)
    np.testing.assert_array_equal(run.codebook, som_studio.train(holes, **kw).codebook)
    assert run.codebook[..., 0].max() < 1
    assert run.project(masked[:5]).bmu_row.tolist() == run.project(holes[:5]).bmu_row.tolist()
    with pytest.raises(ValueError, match=r"a 1-D array is one column.*for one row, pass x.reshape\(1, -1\)"):
        run.project(x[1])  # one row, as a frame's row comes (a Series)


def test_a_runs_quality_u_matrix_and_projection_are_at_hand():
    """Without the record's keys or private arrays: a notebook's user reaches for run.qe and run.u_matrix()."""
    import pandas as pd

    from som_studio.core.som import metrics

    x = np.random.default_rng(2).random((40, 4))
    run = som_studio.train(x, impl="numpy-batch", grid="5x4", epochs=3, topology="hex", toroid=True, scaling="zscore")
    assert (run.qe, run.te) == (run.record["quality"]["qe"], run.record["quality"]["te"]) and run.qe > 0
    um = run.u_matrix()
    assert um.shape == (4, 5)
    # The map's in the space it was trained in, not the codebook's in the data's units.
    np.testing.assert_array_equal(um, metrics.u_matrix(run._trained, "hex", True))
    assert not np.allclose(um, metrics.u_matrix(run.codebook, "hex", True))
    frame = pd.DataFrame(x[:6], index=list("abcdef"))
    got = run.project(x[:6]).to_pandas(index=frame.index)
    assert list(got.columns) == ["row", "col", "distance", "cluster", "label"] and list(got.index) == list("abcdef")
    assert len(run.project(x[:6])) == 6


def test_a_path_as_bytes_is_a_path_and_load_run_names_what_it_wants():
    run = som_studio.train(bytes(IRIS), labels="species", impl="numpy-batch", grid="4x3", epochs=1)
    assert run.feature_names[0] == "sepal_length"  # read as the file, not refused as an array of characters
    with pytest.raises(TypeError, match=r"expected the path of a .somrun file, got None"):
        som_studio.load_run(None)


def test_the_package_lists_what_a_user_reaches_for():
    assert dir(som_studio) == sorted(som_studio.__all__)


def test_a_run_shows_itself_in_a_notebook():
    run = som_studio.train(np.random.default_rng(0).random((30, 3)), impl="numpy-batch", grid="5x4", epochs=3)
    html = run._repr_html_()
    assert html.count("data:image/png;base64,") == 1
    for words in ("numpy-batch", "median / it", "wall", "QE", "TE"):
        assert words in html
    assert run.path is None and "5x4" in repr(run)
    assert "U-matrix" not in html  # three features: their colours, each named
    assert "Red, green and blue are x1, x2 and x3, each over its range in the data." in html
    # Four features on a toroid: the picture is the U-matrix, and says so; the lattice says it wraps.
    four = som_studio.train(
        np.random.default_rng(0).random((30, 4)), impl="numpy-batch", grid="5x4", epochs=3, toroid=True
    )._repr_html_()
    assert "The U-matrix shows each unit" in four and "5x4 rect, toroid" in four


def test_the_estimator_fits_predicts_and_scores():
    rng = np.random.default_rng(1)
    X = rng.random((80, 3))
    X[3, 1] = np.nan  # missing values are allowed
    som = SOM("4x3", impl="numpy-batch", epochs=5)
    units = som.fit_predict(X)
    assert units.shape == (80,) and units.min() >= 0 and units.max() < 12
    assert som.codebook_.shape == (3, 4, 3) and som.n_features_in_ == 3
    d = som.transform(X)
    assert d.shape == (80, 12)
    np.testing.assert_array_equal(np.argmin(d, axis=1), units)
    assert som.score(X) == pytest.approx(-np.mean(np.min(d, axis=1)))
    assert som.set_params(grid="2x2").get_params()["grid"] == "2x2"


def test_the_estimator_refuses_a_row_with_no_known_value_as_project_does():
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(2).random((40, 4))
    som = SOM("6x4", impl="numpy-batch", epochs=3).fit(X)
    unknown = np.array([[0.1, 0.2, 0.3, 0.4], [np.nan] * 4])
    with pytest.raises(ValueError, match="has no known feature value") as projected:
        som.run_.project(unknown)
    words = r"^X: data row 2 has no known feature value \(all missing\); a row needs at least one$"
    for call in (som.predict, som.transform, som.score):
        with pytest.raises(ValueError, match=words) as err:
            call(unknown)
        assert type(err.value) is type(projected.value)
    with pytest.raises(ValueError, match=words):
        som.predict(pd.DataFrame(unknown, columns=som.run_.feature_names))
    assert som.predict(unknown[:1, :]).shape == (1,)


def test_check_estimator_fails_at_most_five_checks():
    estimator_checks = pytest.importorskip("sklearn.utils.estimator_checks")
    results = estimator_checks.check_estimator(SOM(grid="3x2", impl="numpy-batch", epochs=3), on_fail=None)
    failed = sorted(r["check_name"] for r in results if r["status"] == "failed")
    assert len(failed) <= 5, failed
    documented = (Path(__file__).resolve().parents[2] / "docs" / "python.md").read_text()
    for name in failed:
        assert name in documented, f"{name} fails and docs/python.md does not say why"


@pytest.mark.parametrize(
    ("impl", "init", "scaling", "precision"),
    [
        ("numpy-batch", "random", "none", "float64"),
        ("numpy-batch", "sample", "zscore", "float32"),
        ("jax-fused-batch", "pca", "none", "float32"),
        ("jax-fused-batch", "random", "minmax", "float32"),
    ],
)
def test_a_float32_file_trains_as_its_float64_twin(tmp_path, impl, init, scaling, precision):
    """A float32 file's table stays float32, and its run is the run of the same numbers stored in float64."""
    rng = np.random.default_rng(3)
    x = (rng.normal(size=(240, 5)) * [1, 10, 0.1, 3, 100] + 7).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    np.save(tmp_path / "f32.npy", x)
    np.save(tmp_path / "f64.npy", x.astype(np.float64))
    assert som_studio.core.data.read_table(tmp_path / "f32.npy").values.dtype == np.float32
    runs = [
        som_studio.train(
            str(tmp_path / name), impl=impl, init=init, scaling=scaling, precision=precision, grid=(5, 4), epochs=3
        )
        for name in ("f32.npy", "f64.npy")
    ]
    np.testing.assert_array_equal(runs[0].codebook, runs[1].codebook)
    # The final measures; the history's points are paced by the clock.
    assert [r.record["quality"]["qe"] for r in runs] == [runs[1].record["quality"]["qe"]] * 2
    assert [r.record["quality"]["te"] for r in runs] == [runs[1].record["quality"]["te"]] * 2
    np.testing.assert_array_equal(runs[0].project(x).bmu_row, runs[1].project(x).bmu_row)


def test_the_documented_examples_name_a_shipped_file_and_its_label_column():
    import re

    from som_studio.commands import sweep as sweep_command

    root = Path(__file__).resolve().parents[2]
    texts = {
        "docs/python.md": (root / "docs" / "python.md").read_text(),
        "som_studio/api.py": (root / "som_studio" / "api.py").read_text(),
        "som_studio/sweeps.py": (root / "som_studio" / "sweeps.py").read_text(),
        "sweep --help": sweep_command.DESCRIPTION,
    }
    # Python: train("file.csv", ..., labels="column"); the command line: --data file.csv --labels column.
    call = re.compile(r'"([^"\s]+\.csv)",.*?labels="([^"]+)"', re.S)
    flags = re.compile(r"--data (\S+\.csv) --labels (\S+)")
    found = {name: call.findall(text) + flags.findall(text) for name, text in texts.items()}
    assert all(found.values()), found
    for name, examples in found.items():
        for path, column in examples:
            assert (root / path).is_file(), f"{name}: {path} is not shipped"
            header = (root / path).read_text().splitlines()[0].split(",")
            assert column in header, f"{name}: {path} has no column {column!r}"
