"""Every data source the API and the CLI read gives the same table, names and map."""

from __future__ import annotations

import gzip
import traceback
from pathlib import Path

import numpy as np
import pytest

import som_studio
from som_studio import cli
from som_studio.core.data import DataError, read_table

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
feather = pytest.importorskip("pyarrow.feather")
pq = pytest.importorskip("pyarrow.parquet")

NAMES = ["x1", "x2", "x3", "x4"]
SMALL = dict(impl="numpy-batch", grid="4x3", epochs=5, seed=3)


@pytest.fixture(scope="module")
def values() -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.normal(size=(60, 4)) * [1, 2, 3, 4] + [0, 1, 2, 3]


@pytest.fixture(scope="module")
def sources(values, tmp_path_factory) -> dict[str, object]:
    folder = tmp_path_factory.mktemp("sources")
    frame = pd.DataFrame(values, columns=NAMES)
    csv = folder / "t.csv"
    frame.to_csv(csv, index=False, float_format="%.17g")
    npy = folder / "t.npy"
    np.save(npy, values)
    parquet = folder / "t.parquet"
    pq.write_table(pa.Table.from_pandas(frame), parquet)
    arrow = folder / "t.arrow"
    feather.write_feather(pa.Table.from_pandas(frame), arrow)
    gz = folder / "t.csv.gz"
    gz.write_bytes(gzip.compress(csv.read_bytes()))
    parts = folder / "parts"  # a plain part and a gzip'd one: one format, CSV
    parts.mkdir()
    frame.iloc[:25].to_csv(parts / "a.csv", index=False, float_format="%.17g")
    frame.iloc[25:].to_csv(parts / "b.csv.gz", index=False, float_format="%.17g")  # pandas gzips by the suffix
    return {
        "array": values,
        "pandas": frame,
        "polars": pl.from_pandas(frame),
        "pyarrow": pa.Table.from_pandas(frame),
        "csv": csv,
        "npy": npy,
        "parquet": parquet,
        "arrow": arrow,
        "csv.gz": gz,
        "csv.gz glob": str(parts / "*.csv*"),
    }


def test_every_source_trains_the_same_map_with_the_same_names(sources):
    runs = {name: som_studio.train(data, **SMALL) for name, data in sources.items()}
    first = runs["array"]
    for name, run in runs.items():
        assert run.feature_names == NAMES, name
        np.testing.assert_allclose(run.codebook, first.codebook, rtol=1e-6, err_msg=name)
        assert run.record["config"]["init"] == "pca", name  # init=None: pca for every data source


def test_gzipd_parts_stream_the_map_their_text_does(sources, tmp_path):
    parts = Path(sources["csv.gz glob"]).parent
    for f in parts.iterdir():
        (tmp_path / f.name.removesuffix(".gz")).write_bytes(
            gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
        )
    zipped = som_studio.train(sources["csv.gz glob"], stream=True, batch_rows=16, **SMALL)
    plain = som_studio.train(tmp_path, stream=True, batch_rows=16, **SMALL)
    assert zipped.record["extra"]["stream"]["rows"] == 60 and zipped.record["extra"]["stream"]["files"] == 2
    np.testing.assert_array_equal(zipped.codebook, plain.codebook)


@pytest.mark.filterwarnings("ignore::som_studio.api.DataNote")
def test_a_frame_pandas_wrote_with_its_index_or_its_column_numbers_trains_as_the_array(values, tmp_path):
    """pandas' ``to_csv`` writes a header of column numbers (``0,1,2,3``) and, by default, its index as an unnamed
    first column that counts the rows: the header is a header and the index is no feature, read whole, streamed
    or projected, and the notes say so."""
    frame = pd.DataFrame(values)
    plain, indexed, parts = tmp_path / "plain.csv", tmp_path / "indexed.csv", tmp_path / "parts"
    frame.to_csv(plain, index=False, float_format="%.17g")
    frame.to_csv(indexed, float_format="%.17g")
    parts.mkdir()
    frame.iloc[:25].to_csv(parts / "a.csv", float_format="%.17g")
    frame.iloc[25:].to_csv(parts / "b.csv", float_format="%.17g")  # its index goes on from 25
    want = som_studio.train(values, **SMALL)
    for data, stream in ((plain, False), (indexed, False), (parts, False), (parts, True)):
        with pytest.warns(som_studio.api.DataNote) as noted:
            run = som_studio.train(data, **SMALL, stream=stream)
        said = " ".join(str(w.message) for w in noted)
        assert run.feature_names == ["0", "1", "2", "3"], data
        assert run.record["samples"] == 60, data
        if not stream:  # a streamed run's initial map is its sample's
            np.testing.assert_allclose(run.codebook, want.codebook, rtol=1e-6, err_msg=str(data))
        assert "is read as the header: it numbers the columns" in said
        assert ("counts the rows from 0, as pandas writes a table's index: it is left out" in said) == (data != plain)
        projected = run.project(data)
        np.testing.assert_array_equal(projected.bmu_row, run.project(values).bmu_row)


def test_a_run_trained_on_a_column_of_row_numbers_projects_with_it(values, tmp_path):
    """A run whose features hold a column named as an unnamed column of row numbers is called (``x1``: a file
    that named it so, or one read before such a column was left out) projects a file with that column on it."""
    named, unnamed = tmp_path / "named.csv", tmp_path / "unnamed.csv"
    frame = pd.DataFrame(values[:, :2], columns=["a", "b"])
    frame.rename_axis("x1").to_csv(named, float_format="%.17g")
    frame.to_csv(unnamed, float_format="%.17g")
    from som_studio.api import DataNote

    with pytest.warns(DataNote, match="column 'x1' holds a different whole number on every row"):
        run = som_studio.train(named, **SMALL)
    assert run.feature_names == ["x1", "a", "b"]
    np.testing.assert_array_equal(run.project(unnamed).bmu_row, run.project(named).bmu_row)


def test_columnar_files_read_as_tables_with_labels(tmp_path, values):
    frame = pd.DataFrame(values, columns=NAMES).assign(kind=["a", "b", "c"] * 20, row=[f"r{i}" for i in range(60)])
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    table = read_table(path, labels="kind", id_column="row")
    assert table.feature_names == tuple(NAMES)
    assert list(table.labels[:3]) == ["a", "b", "c"] and table.ids[-1] == "r59"
    with pytest.raises(DataError, match=r"column 'kind' is not numeric .*--labels kind"):
        read_table(path, id_column="row")


def test_the_cli_trains_on_parquet_and_projects_it(tmp_path, values, capsys):
    frame = pd.DataFrame(values, columns=NAMES)
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    runs = tmp_path / "runs"
    argv = ["bench", "--data", str(path), "--impl", "numpy-batch", "--grid", "4x3", "--epochs", "5", "--seed", "3"]
    assert cli.main([*argv, "--save-runs", str(runs), "--quiet"]) == 0
    out = tmp_path / "p.csv"
    assert cli.main(["project", str(runs / "numpy-batch.somrun"), str(path), "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert len(lines) == 61
    projected = som_studio.load_run(runs / "numpy-batch.somrun").project(frame)
    assert [f"{c},{r}" for c, r in zip(projected.bmu_col, projected.bmu_row)] == [
        ",".join(line.split(",")[1:3]) for line in lines[1:]
    ]


def test_the_estimator_says_which_keywords_are_trains_and_what_fit_takes(values):
    # SOM.fit fits every column of X: train()'s column keywords are not the estimator's.
    frame = pd.DataFrame(values, columns=NAMES).assign(name=["a"] * 60)
    with pytest.raises(ValueError, match=r"labels='name'.*keywords of som_studio\.train.*X\.drop\(columns="):
        som_studio.SOM("4x3", impl="numpy-batch", epochs=2).fit(frame)


def test_a_frames_column_read_as_text_for_one_cell_quotes_that_cell(values):
    """pandas' read_csv reads a column as text for one "-": the refusal quoted its first cell, a valid number."""
    cells = [f"{v:.3f}" for v in values[:, 0]]
    frame = pd.DataFrame({"a": cells, "b": values[:, 1], "kind": ["x", "y"] * 30})
    with pytest.raises(ValueError, match=r"column 'a' holds numbers written as text \('-?\d\.\d{3}' at row 1"):
        som_studio.train(frame, labels="kind", **SMALL)
    cells[40] = "-"
    with pytest.raises(ValueError, match=r"column 'a' is not numeric \(str\) \(value '-' at row 41 \(index 40\)\)"):
        som_studio.train(frame.assign(a=cells), labels="kind", **SMALL)


def test_a_frame_refuses_what_a_csv_refuses_in_the_apis_words(values):
    frame = pd.DataFrame(values, columns=NAMES).assign(name=["a"] * 60)
    with pytest.raises(ValueError, match=r"column 'name' is not numeric.*labels='name'") as err:
        som_studio.train(frame, **SMALL)
    # Raised by train itself, not from deep inside: the traceback is this test's line and train's.
    assert [f.name for f in traceback.extract_tb(err.value.__traceback__)][1:] == ["train"]
    with pytest.raises(ValueError, match="contains no examples"):
        som_studio.train(frame.iloc[:0], labels="name", **SMALL)
    with pytest.raises(ValueError, match="no such column"):
        som_studio.train(frame, labels="nom", **SMALL)


def test_a_frame_projected_is_refused_in_words_that_fit_a_trained_runs_features(values):
    """A feature column of text cannot be the labels or left out: the run was trained on it; a renamed column
    is named beside the missing one, as a CSV's is."""
    frame = pd.DataFrame(values, columns=NAMES).assign(kind=["a"] * 60)
    run = som_studio.train(frame, labels="kind", **SMALL)
    bad = frame.astype({NAMES[1]: object})
    bad.loc[3, NAMES[1]] = "x"
    with pytest.raises(ValueError, match=rf"column '{NAMES[1]}' is not numeric .*: the run was trained on it as a "):
        run.project(bad)
    renamed = frame.rename(columns={NAMES[2]: "renamed"})
    with pytest.raises(ValueError, match=rf"missing {NAMES[2]}; unexpected renamed$"):  # its labels are no surprise
        run.project(renamed)


def test_a_pandas_frames_bad_row_is_named_by_its_index_label_too():
    """Row 2 is index 1 of a default index, and a user looks it up by the label: both are said."""
    holes = pd.DataFrame({"a": [1, np.nan, 3.0], "b": [1, np.nan, 2.0]})
    with pytest.raises(ValueError, match=r"DataFrame: data row 2 \(index 1\) has no known feature value"):
        som_studio.train(holes, **SMALL)
    text = pd.DataFrame({"a": [1, "x", 3], "b": [1.0, 2, 3]}, index=[10, 20, 30])
    with pytest.raises(ValueError, match=r"\(value 'x' at row 2 \(index 20\)\)"):
        som_studio.train(text, **SMALL)
    endless = pd.DataFrame({"a": [1, np.inf, 3], "b": [1.0, 2, 3]}, index=["r1", "r2", "r3"])
    with pytest.raises(ValueError, match=r"infinite value inf at row 2 \(index r2\), column a"):
        som_studio.train(endless, **SMALL)
    with pytest.raises(ValueError, match=r"data row 2 has no known feature value"):  # no index to name
        som_studio.train(pl.from_pandas(holes), **SMALL)


def _label_sources(values, folder) -> dict[str, object]:
    """The same labelled table, every tenth label missing, as each reader meets a missing label."""
    kinds = np.array(["a", "b", "c"] * 20, dtype=object)
    kinds[::10] = None
    frame = pd.DataFrame(values, columns=NAMES).assign(kind=kinds)
    csv = folder / "l.csv"
    frame.to_csv(csv, index=False, float_format="%.17g")  # an empty cell
    parquet = folder / "l.parquet"
    frame.to_parquet(parquet)  # a null
    return {
        "csv": csv,
        "csv-arrow": csv,
        "parquet": parquet,
        "parquet-streamed": parquet,
        "pandas-none": frame,
        "pandas-nan": frame.assign(kind=frame["kind"].where(frame["kind"].notna(), np.nan)),
        "pandas-string": frame.astype({"kind": "string"}),  # pd.NA
        "polars": pl.from_pandas(frame),
        "pyarrow": pa.Table.from_pandas(frame),
    }


@pytest.mark.parametrize(
    "source",
    ["csv", "csv-arrow", "parquet", "parquet-streamed", "pandas-none", "pandas-nan", "pandas-string", "polars",
     "pyarrow"],
)  # fmt: skip
def test_rows_without_a_label_are_left_out_of_label_purity(values, tmp_path, monkeypatch, source):
    from collections import Counter

    from som_studio.core.data import csv_reader

    data = _label_sources(values, tmp_path)[source]
    if source == "csv-arrow":
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    extra = dict(stream=True, batch_rows=16, impl="jax-fused-batch") if source == "parquet-streamed" else {}
    run = som_studio.train(data, labels="kind", **{**SMALL, **extra})
    assert ("stream" in run.record["extra"]) == (source == "parquet-streamed")  # its counts, batch by batch
    kinds = np.array(["a", "b", "c"] * 20)
    labelled = np.arange(60) % 10 != 0
    units = run.project(values)
    flat = units.bmu_row * 4 + units.bmu_col
    for u in range(12):  # each unit's majority among its labelled rows (ties: the first in sorted order)
        mine = Counter(kinds[(flat == u) & labelled])
        expected = min(mine.items(), key=lambda kv: (-kv[1], kv[0]))[0] if mine else ""
        assert run.labels.ravel()[u] == expected, (source, u)
        if mine:
            assert run.purity.ravel()[u] == pytest.approx(mine[expected] / mine.total()), (source, u)
        else:
            assert np.isnan(run.purity.ravel()[u]), (source, u)
    own = run.labels.ravel()[flat] == kinds
    assert run.record["quality"]["label_purity"] == pytest.approx(np.mean(own[labelled])), source
    assert run.record["extra"]["unlabelled"] == 6, source


def test_a_column_named_like_an_identifier_is_said_in_pythons_words_for_frames_and_files(values, tmp_path):
    from som_studio.api import DataNote

    frame = pd.DataFrame(values, columns=["id", "a", "b", "c"])
    frame.to_csv(tmp_path / "cells.csv", index=False)
    for data in (frame, tmp_path / "cells.csv"):
        with pytest.warns(DataNote) as noted:
            run = som_studio.train(data, **SMALL)
        said = " ".join(str(w.message) for w in noted)
        assert run.feature_names == ["id", "a", "b", "c"]
        assert "column 'id' is named like an identifier" in said and "--" not in said, said
        assert "id_column=" in said and "ignore=" in said


def test_a_frames_column_numbering_its_rows_is_said_in_pythons_words(values):
    from som_studio.api import DataNote

    frame = pd.DataFrame(values[:, 1:], columns=["a", "b", "c"])
    frame.insert(0, "No", np.arange(1, len(frame) + 1))
    with pytest.warns(DataNote) as noted:
        som_studio.train(frame, **SMALL)
    said = " ".join(str(w.message) for w in noted)
    assert "column 'No' holds a different whole number on every row (1, 2, ...)" in said, said
    assert "id_column='No'" in said and "--" not in said, said


def test_a_column_given_for_its_name_is_refused_in_one_line_naming_it(values):
    # labels=df["kind"] printed the whole Series in the refusal.
    frame = pd.DataFrame(values[:, :3], columns=["a", "b", "c"]).assign(kind=["x", "y"] * 30)
    with pytest.raises(ValueError) as err:
        som_studio.train(frame, labels=frame["kind"], **SMALL)
    assert str(err.value) == "labels: a column name is required, got a Series; give its name, 'kind'"


def test_integer_labels_read_the_same_whether_or_not_a_label_is_missing(values, tmp_path):
    """pandas holds an integer column with a missing cell as floats: its labels were "1.0" there, "1" elsewhere."""
    frame = pd.DataFrame(values, columns=["a", "b", "c", "d"])
    frame["kind"] = np.arange(len(frame)) % 3
    gappy = frame.astype({"kind": float})
    gappy.loc[::7, "kind"] = np.nan
    gappy.to_parquet(tmp_path / "gappy.parquet")
    whole = som_studio.train(frame, labels="kind", **SMALL)
    for data in (gappy, tmp_path / "gappy.parquet", pl.from_pandas(gappy)):
        run = som_studio.train(data, labels="kind", **SMALL)
        assert set(np.unique(run.labels)) <= {"", "0", "1", "2"}, data
        assert set(np.unique(run.labels)) - {""} == set(np.unique(whole.labels)) - {""}
    halves = frame.assign(kind=frame["kind"] + 0.5)  # not whole numbers: as they are
    assert "0.5" in set(som_studio.train(halves, labels="kind", **SMALL).labels.ravel())
