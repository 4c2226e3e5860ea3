"""Trained maps on real data: iris, --save-runs, `som-studio project`, load_run without Qt."""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from som_studio import cli
from som_studio.resources import root

IRIS = root() / "resources" / "data" / "iris.csv"
HEX = ["--impl", "numpy-batch", "--topology", "hex", "--scaling", "zscore", "--labels", "species"]


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def iris_run(tmp_path_factory):
    """A 12x8 hex map of iris (numpy-batch, pca, zscore), saved as a .somrun, with its --json record."""
    folder = tmp_path_factory.mktemp("runs")
    argv = [
        "bench", "--data", IRIS, *HEX, "--grid", "12x8", "--init", "pca", "--epochs", "20",
        "--precision", "float64", "--clusters", "3", "--id", "row_id",
        "--save-runs", folder / "saved", "--json", folder / "runs.json", "--quiet",
    ]  # fmt: skip
    # an id column to carry through: the row number as text
    rows = IRIS.read_text().splitlines()
    data = folder / "iris_ids.csv"
    data.write_text("\n".join([rows[0] + ",row_id"] + [f"{r},r{i}" for i, r in enumerate(rows[1:])]) + "\n")
    argv[2] = data
    assert cli.main([str(a) for a in argv]) == 0
    record = json.loads((folder / "runs.json").read_text())["runs"][0]
    return folder / "saved" / "numpy-batch.somrun", record, data


def test_iris_hex_map_label_purity_and_record_config(iris_run):
    path, record, _ = iris_run
    assert path.is_file()
    assert record["quality"]["label_purity"] >= 0.9
    cfg = record["config"]
    assert (cfg["topology"], cfg["toroid"], cfg["init"], cfg["scaling"], cfg["labels"]) == (
        "hex", False, "pca", "zscore", "species",
    )  # fmt: skip
    assert cfg["feature_names"] == ["sepal_length", "sepal_width", "petal_length", "petal_width"]


def test_load_run_imports_no_qt_and_gives_the_model(iris_run):
    path = iris_run[0]
    probe = (
        "import sys, som_studio\n"
        f"run = som_studio.load_run({str(path)!r})\n"
        "print(run.codebook.shape, run.feature_names, run.labels.shape, sorted(set(run.labels.ravel())))\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in ('jax', 'PySide6', 'pyqtgraph')))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    first, mods = out.stdout.splitlines()
    assert first.startswith("(8, 12, 4) ['sepal_length', 'sepal_width', 'petal_length', 'petal_width'] (8, 12)")
    assert "setosa" in first and mods == ""


def test_codebook_is_in_original_units_and_projection_gives_the_training_bmus(iris_run):
    from som_studio.core.data import read_table
    from som_studio.core.som import metrics
    from som_studio.trained import load_run

    path, _, data = iris_run
    run = load_run(path)
    table = read_table(IRIS, labels="species")
    lo, hi = table.values.min(axis=0), table.values.max(axis=0)
    assert np.all(run.codebook.min(axis=(0, 1)) > lo - 1) and np.all(run.codebook.max(axis=(0, 1)) < hi + 1)
    first, _, _ = metrics.best_two(run.scaling.apply(run.codebook), run.scaling.apply(table.values))
    proj = run.project(table.values)
    np.testing.assert_array_equal(proj.bmu_row * 12 + proj.bmu_col, first)
    by_file = run.project(data)
    np.testing.assert_array_equal(by_file.bmu_col, proj.bmu_col)
    assert by_file.ids[:2].tolist() == ["r0", "r1"]
    assert set(proj.cluster.tolist()) <= {0, 1, 2}


def test_project_command_writes_the_contract_columns(iris_run, capsys, tmp_path):
    path, _, data = iris_run
    out = tmp_path / "p.csv"
    code, _, err = _run(capsys, "project", path, data, "--out", out)
    assert code == 0, err
    rows = list(csv.reader(out.open()))
    assert rows[0] == ["row", "bmu_col", "bmu_row", "distance", "cluster", "label", "row_id"]
    assert len(rows) == 151 and rows[1][0] == "0" and rows[150][0] == "149"
    assert rows[1][5] == "setosa" and rows[150][6] == "r149"
    assert float(rows[1][3]) >= 0 and rows[1][4] in {"0", "1", "2"}
    # columns are matched by name: a reordered file without the label/id columns lands alike
    table = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(0, 1, 2, 3))
    shuffled = tmp_path / "reordered.csv"
    shuffled.write_text(
        "petal_width,sepal_length,petal_length,sepal_width\n" + "".join(f"{r[3]},{r[0]},{r[2]},{r[1]}\n" for r in table)
    )
    code, stdout, err = _run(capsys, "project", path, shuffled, "--out", "-", "--clusters", "4")
    lines = list(csv.reader(stdout.splitlines()))
    assert code == 0 and [r[1:3] for r in lines[1:]] == [r[1:3] for r in rows[1:]]
    assert lines[1][6] == "" and {r[4] for r in lines[1:]} <= {"0", "1", "2", "3"}
    assert f"{shuffled}: has no column 'row_id', the run's id column: its rows' ids are left empty" in err
    # As a run's --clusters takes them: 0 was said to need "at least 1", and 1 was then refused.
    for k in (0, 1):
        with pytest.raises(SystemExit) as refused:  # by the flag's parser
            _run(capsys, "project", path, shuffled, "--out", "-", "--clusters", k)
        assert refused.value.code == 2 and f"--clusters: must be at least 2, got {k}" in capsys.readouterr().err
    code, _, err = _run(capsys, "project", path, shuffled, "--out", "-", "--clusters", 97)
    assert code == 2 and "--clusters: must be between 2 and 96 (the units), got 97" in err


def test_project_leaves_out_the_columns_the_run_has_no_features_for(iris_run, capsys, tmp_path):
    path, _, _ = iris_run
    noted = tmp_path / "noted.csv"
    plain = tmp_path / "plain.csv"
    body = [("5.1", "3.5", "1.4", "0.2"), ("6.7", "3.0", "5.2", "2.3"), ("5.9", "3.0", "4.2", "1.5")]
    header = "sepal_length,sepal_width,petal_length,petal_width"
    plain.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in body))
    noted.write_text(header + ",notes\n" + "".join(",".join(r) + ",seen in May\n" for r in body))
    code, want, _ = _run(capsys, "project", path, plain, "--out", "-")
    code2, got, err = _run(capsys, "project", path, noted, "--out", "-")
    assert code == code2 == 0 and got == want and got.count("\n") == 4
    assert "left out, the run has no such features: notes" in err
    # A bad cell in a feature is a bad cell: no advice of flags that project does not have.
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "\n" + "5.1,oops,1.4,0.2\n")
    code, _, err = _run(capsys, "project", path, bad, "--out", "-")
    assert code == 2 and "non-numeric value 'oops' at line 2, column 2" in err and "--labels" not in err


def test_project_refusals_exit_2_and_leave_no_file(iris_run, capsys, tmp_path):
    path, _, _ = iris_run
    bad = tmp_path / "bad.csv"
    bad.write_text("sepal_length,sepal_width,petal_len,petal_width,colour\n1,2,3,4,5\n")
    out = tmp_path / "out.csv"
    code, _, err = _run(capsys, "project", path, bad, "--out", out)
    assert code == 2 and not out.exists()
    assert "missing petal_length" in err and "unexpected petal_len, colour" in err
    code, stdout, err = _run(capsys, "project", path, bad, "--out", "-")
    assert code == 2 and stdout == "" and "missing petal_length" in err  # no header before the error
    late = tmp_path / "late.csv"  # a bad row far down: the output is already being written
    late.write_text("sepal_length,sepal_width,petal_length,petal_width\n" + "5,3,1,0.2\n" * 50 + "NA,,nan,NA\n")
    code, _, err = _run(capsys, "project", path, late, "--out", out)
    assert code == 2 and not out.exists() and "data row 51" in err
    assert list(tmp_path.glob(".out.csv.*")) == []


def test_project_writes_parquet_with_the_csv_rows_and_leaves_nothing_on_failure(iris_run, capsys, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    path, _, data = iris_run
    assert _run(capsys, "project", path, data, "--out", tmp_path / "p.csv")[0] == 0
    code, _, err = _run(capsys, "project", path, data, "--out", tmp_path / "p.parquet")
    assert code == 0, err
    table = pq.read_table(tmp_path / "p.parquet")
    # The mode a plain open() gives, not the private one of the temporary file renamed into place.
    mask = os.umask(0o022)
    os.umask(mask)
    assert {(tmp_path / n).stat().st_mode & 0o777 for n in ("p.csv", "p.parquet")} == {0o666 & ~mask}
    assert table.column_names == ["row", "bmu_col", "bmu_row", "distance", "cluster", "label", "row_id"]
    rows = list(csv.reader((tmp_path / "p.csv").open()))[1:]
    got = table.to_pylist()
    assert [[str(r["row"]), str(r["bmu_col"]), str(r["bmu_row"])] for r in got] == [r[:3] for r in rows]
    assert [f"{r['distance']:.9g}" for r in got] == [r[3] for r in rows]
    assert [r["label"] or "" for r in got] == [r[5] for r in rows] and got[149]["row_id"] == "r149"
    late = tmp_path / "late.csv"  # a bad row partway: the output file was already open
    late.write_text("sepal_length,sepal_width,petal_length,petal_width\n" + "5,3,1,0.2\n" * 50 + "NA,,nan,NA\n")
    code, _, err = _run(capsys, "project", path, late, "--out", tmp_path / "late.parquet")
    assert code == 2 and "data row 51" in err
    assert not (tmp_path / "late.parquet").exists() and list(tmp_path.glob(".late.parquet.*")) == []
    code, _, err = _run(capsys, "project", path, data, "--out", tmp_path / "p.json")
    assert code == 2 and "expected a .csv or .parquet file name" in err


def test_a_parquet_file_is_projected_a_batch_at_a_time_as_its_csv_is(iris_run, capsys, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = iris_run[0]
    values = np.tile(np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(0, 1, 2, 3)), (60, 1))  # 9,000 rows
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    pq.write_table(
        pa.table({n: values[:, i] for i, n in enumerate(names)}), tmp_path / "x.parquet", row_group_size=1000
    )
    (tmp_path / "x.csv").write_text(
        ",".join(names) + "\n" + "".join(",".join(repr(float(v)) for v in r) + "\n" for r in values)
    )
    for name in ("x.parquet", "x.csv"):
        code, _, err = _run(capsys, "project", path, tmp_path / name, "--out", tmp_path / f"{name}.out.csv")
        assert code == 0, err
    got = (tmp_path / "x.parquet.out.csv").read_text()
    assert got == (tmp_path / "x.csv.out.csv").read_text() and got.count("\n") == 9001


def test_integer_ids_are_written_back_as_integers(iris_run, capsys, tmp_path):
    # They came back as text: "10" sorted before "9", and a join on the source's ids found nothing.
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pytest.importorskip("pandas")
    from som_studio import load_run

    path = iris_run[0]
    values = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(0, 1, 2, 3))
    names = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
    ids = np.random.default_rng(0).permutation(150) * 1000
    columns = {n: values[:, i] for i, n in enumerate(names)}
    pq.write_table(pa.table({**columns, "row_id": ids}), tmp_path / "x.parquet")
    code, _, err = _run(capsys, "project", path, tmp_path / "x.parquet", "--out", tmp_path / "out.parquet")
    assert code == 0, err
    out = pq.read_table(tmp_path / "out.parquet")
    assert out.schema.field("row_id").type == pa.int64() and out.column("row_id").to_pylist() == ids.tolist()
    frame = load_run(path).project(tmp_path / "x.parquet").to_pandas()
    assert frame["id"].dtype == np.int64 and frame["id"].tolist() == ids.tolist()
    missing = pa.array([None if i == 3 else int(v) for i, v in enumerate(ids)], pa.int64())
    pq.write_table(pa.table({**columns, "row_id": missing}), tmp_path / "y.parquet")
    frame = load_run(path).project(tmp_path / "y.parquet").to_pandas()
    assert str(frame["id"].dtype) == "Int64" and frame["id"].isna().tolist() == [i == 3 for i in range(150)]
    # Integer ids with a gap, as pandas writes them: doubles. They came back as text, the gap as "".
    floats = pa.array([None if i == 3 else float(v) for i, v in enumerate(ids)], pa.float64())
    pq.write_table(pa.table({**columns, "row_id": floats}), tmp_path / "z.parquet")
    code, _, err = _run(capsys, "project", path, tmp_path / "z.parquet", "--out", tmp_path / "out_z.parquet")
    assert code == 0, err
    out = pq.read_table(tmp_path / "out_z.parquet").column("row_id")
    assert out.type == pa.float64() and out.to_pylist() == floats.to_pylist()
    # Ids of text stay text (iris_run's own: "r0", "r1"...).
    assert load_run(path).project(iris_run[2]).to_pandas()["id"].tolist()[:2] == ["r0", "r1"]


def test_a_run_file_from_a_newer_version_is_refused(iris_run, tmp_path, capsys):
    import io
    import zipfile

    path = iris_run[0]
    z = np.load(path, allow_pickle=False)
    arrays = {k: z[k] for k in z.files}
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["version"] = 99
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    newer = tmp_path / "newer.somrun"
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    newer.write_bytes(buf.getvalue())
    assert zipfile.is_zipfile(newer)
    code, _, err = _run(capsys, "project", newer, IRIS, "--out", tmp_path / "x.csv")
    assert code == 2 and "newer SOM Studio (format 99" in err


def test_default_grid_for_a_data_file_is_said(capsys):
    code, _, err = _run(capsys, "bench", "--data", IRIS, *HEX, "--epochs", "1")
    assert code == 0
    assert "grid: " in err and "5*sqrt(N)" in err


def test_an_implementation_without_hex_refuses_it_with_a_reason(capsys):
    pytest.importorskip("jax")
    import dataclasses

    from som_studio.core.impls import registry

    # Every built-in implementation trains hex maps; one that declares rect only is refused.
    rect_only = dataclasses.replace(registry.get("jax-vmap-batch"), name="jax-rect-only", topologies=("rect",))
    with registry.registered(rect_only):
        code, out, err = _run(
            capsys, "bench", "--grid", "6x4", "--samples", "20", "--epochs", "1", "--impl", "jax-rect-only",
            "--topology", "hex", "--quiet",
        )  # fmt: skip
    assert code == 2  # refused up front by the one preflight, before any data is read
    assert "--impl: jax-rect-only trains rect maps only, not hex" in out + err


def test_an_iris_row_without_a_label_column_is_refused_naming_the_flags(capsys):
    code, _, err = _run(capsys, "bench", "--data", IRIS, "--impl", "numpy-batch", "--epochs", "1", "--quiet")
    assert code == 2
    assert "'species'" in err and "--labels species" in err


def test_resources_ship_the_iris_licence():
    text = (Path(IRIS).parent / "README.md").read_text()
    assert "Fisher" in text and "CC BY 4.0" in text


def test_history_keeps_the_model_when_a_run_is_saved_again(iris_run, tmp_path):
    from som_studio.storage import StoredRun
    from som_studio.trained import load_run

    run = StoredRun.load(iris_run[0])
    assert run.record.model is not None and run.record.model.feature_names[0] == "sepal_length"
    again = run.save(tmp_path / "again.somrun")
    a, b = load_run(iris_run[0]), load_run(again)
    np.testing.assert_array_equal(a.codebook, b.codebook)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.clusters, b.clusters)


def test_a_version_1_file_opens_as_an_unscaled_model(tmp_path):
    from som_studio.trained import load_run

    meta = {"format": "som-studio-run", "version": 1, "record": {"config": {"impl": "numpy-batch"}}}
    path = tmp_path / "old.somrun"
    with path.open("wb") as f:  # a file object: savez would add .npz to a name
        np.savez(
            f,
            meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
            final_map=np.arange(24, dtype=np.float32).reshape(2, 4, 3),
        )
    run = load_run(path)
    assert run.feature_names == ["x1", "x2", "x3"] and run.labels is None and run.clusters is None
    np.testing.assert_array_equal(run.codebook[1, 0], [12, 13, 14])
    assert run.project(np.array([[12.2, 13, 14]])).bmu_row.tolist() == [1]


def test_unit_and_codebook_exports(iris_run, tmp_path):
    from som_studio.trained import load_run

    run = load_run(iris_run[0])
    assert run.hits.sum() == 150 and run.hits.shape == (8, 12)
    units = list(csv.reader(run.export_units(tmp_path / "units.csv").open()))
    assert units[0] == ["unit", "row", "col", "hits", "label", "purity", "cluster", *run.feature_names]
    assert len(units) == 1 + 96
    hit = next(u for u in units[1:] if int(u[3]) > 0)
    assert hit[4] in {"setosa", "versicolor", "virginica"} and 0 < float(hit[5]) <= 1
    empty = next(u for u in units[1:] if u[3] == "0")
    assert empty[4] == "" and empty[5] == ""
    np.testing.assert_array_equal(np.load(run.export_codebook(tmp_path / "cb.npy")), run.codebook)
    rows = list(csv.reader(run.export_codebook(tmp_path / "cb.csv").open()))
    assert rows[0][:3] == ["row", "col", "sepal_length"] and len(rows) == 97
    np.testing.assert_allclose([float(v) for v in rows[13][2:]], run.codebook[1, 0], rtol=1e-8)


def test_exports_replace_an_existing_file_only_when_told(iris_run, tmp_path):
    """Exported over its own training data by a slip of the name, a run refused: the file stays as it was."""
    from som_studio.trained import load_run

    run = load_run(iris_run[0])
    data = tmp_path / "iris.csv"
    data.write_text("sepal_length,sepal_width\n5.1,3.5\n")
    for export in (run.export_units, run.export_codebook):
        with pytest.raises(FileExistsError, match=r"iris.csv: exists; pass force=True to overwrite it"):
            export(data)
        assert data.read_text() == "sepal_length,sepal_width\n5.1,3.5\n"
    assert next(csv.reader(run.export_codebook(data, force=True).open()))[:2] == ["row", "col"]
    with pytest.raises(ValueError, match=r"units.npy: the units export as a .csv file"):
        run.export_units(tmp_path / "units.npy")


def test_project_a_npy_file_in_chunks(iris_run, tmp_path):
    from som_studio.core.data import DataError
    from som_studio.trained import load_run

    run = load_run(iris_run[0])
    values = np.loadtxt(IRIS, delimiter=",", skiprows=1, usecols=(0, 1, 2, 3))
    np.save(tmp_path / "x.npy", values)
    whole = run.project(values)
    parts = list(run.project_chunks(tmp_path / "x.npy", rows=40))
    assert [len(p.bmu_row) for p in parts] == [40, 40, 40, 30]
    np.testing.assert_array_equal(np.concatenate([p.bmu_col for p in parts]), whole.bmu_col)
    values[95] = np.nan
    np.save(tmp_path / "y.npy", values)
    with pytest.raises(DataError, match="data row 96 has no known feature"):
        list(run.project_chunks(tmp_path / "y.npy", rows=40))
    np.save(tmp_path / "z.npy", values[:, :3])
    with pytest.raises(DataError, match="has 3 features; the run was trained on 4"):
        run.project(tmp_path / "z.npy")
    # Its rows are read chunk by chunk, not mapped: a file cut short meanwhile stops it naming the file (a mapped
    # one killed the process with a bus error).
    chunks = run.project_chunks(tmp_path / "x.npy", rows=40)
    next(chunks)
    os.truncate(tmp_path / "x.npy", 1000)
    with pytest.raises(DataError, match="x.npy: the file changed while the run read it"):
        list(chunks)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--grid", "6x5", "--topology", "hex", "--toroid"], "--toroid: a hex toroid needs an even height"),
        (["--data", IRIS, "--labels", "species", "--scale", "--scaling", "zscore"], "--scale is --scaling minmax"),
        (["--scaling", "zscore"], "--scaling: scales the features of a data file"),
        (["--data", IRIS, "--labels", "kind"], "--labels kind: no such column"),
    ],
)
def test_table_and_topology_flags_refuse_clearly(capsys, extra, message):
    code, _, err = _run(capsys, "bench", "--impl", "numpy-batch", "--epochs", "1", "--quiet", *extra)
    assert code == 2 and message in err


def test_the_bench_table_shows_label_purity(capsys, tmp_path):
    out_json = tmp_path / "runs.json"
    argv = ["bench", "--data", IRIS, *HEX, "--grid", "6x4", "--epochs", "2", "--json", out_json]
    code, out, _ = _run(capsys, *argv)
    assert code == 0
    head, _, row = out.splitlines()[:3]
    purity = row[head.index("label purity") :].split()[0]  # columns are aligned; cells may hold spaces
    assert purity == f"{json.loads(out_json.read_text())['runs'][0]['quality']['label_purity']:.3f}"


def test_the_bench_table_shows_label_purity_when_labels_are_given(iris_run):
    import dataclasses

    from som_studio.commands.bench import format_table
    from som_studio.session.record import RunRecord

    record = RunRecord.from_dict(iris_run[1])
    head, _, row = format_table([record]).splitlines()[:3]
    at = head.index("label purity")  # cells are left-aligned under their headings
    assert row[at:].split()[0] == f"{record.label_purity:.3f}" and record.label_purity >= 0.9
    # a run without labels has no purity to show: no column for it
    assert "purity" not in format_table([dataclasses.replace(record, label_purity=None)]).splitlines()[0]


def test_what_reading_a_table_guessed_is_a_warning_line(tmp_path, capsys):
    data = tmp_path / "w.csv"
    data.write_bytes(
        ("name,,2019,2020\n" + "".join(f"café {i},{i % 3},{i / 10},{(i * 7) % 10}\n" for i in range(30))).encode(
            "cp1252"
        )
    )
    runs = tmp_path / "runs"
    argv = ["bench", "--data", data, "--labels", "name", "--impl", "numpy-batch", "--grid", "3x2", "--epochs", "1"]
    code, _, err = _run(capsys, *argv, "--save-runs", runs, "--quiet")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 3, err
    assert f"warning: {data}: not UTF-8 (" in warnings[0] and "read as Windows-1252" in warnings[0]
    assert f"warning: {data}: the first line (name, , 2019, 2020) is read as the header" in warnings[1]
    assert warnings[2] == f"warning: {data}: column 2 has no name in the header; it is called 'x2'"
    code, out, err = _run(capsys, "project", runs / "numpy-batch.somrun", data, "--out", "-")
    assert code == 0 and out.startswith("row,bmu_col") and err.count("warning: ") == 3


def test_what_reading_a_streamed_folder_decided_is_a_warning_line(tmp_path, capsys):
    folder = tmp_path / "parts"
    folder.mkdir()
    rows = IRIS.read_text().splitlines()
    for name, first in (("a.csv", 0), ("b.csv", 75)):  # pandas' parts of one frame: their index goes on
        body = rows[1 + first : 76 + first]
        (folder / name).write_text("," + rows[0] + "\n" + "".join(f"{first + i},{r}\n" for i, r in enumerate(body)))
    argv = ["bench", "--data", folder, "--stream", "--labels", "species", "--impl", "numpy-batch", "--grid", "3x2"]
    code, _, err = _run(capsys, *argv, "--epochs", "1", "--quiet")
    assert code == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        f"warning: {folder / 'a.csv'}: column 1 has no name in the header and counts the rows from 0, as pandas "
        "writes a table's index: it is left out; to train on it, name it in the header",
        f"warning: 1 other file has notes of its own; its first: {folder / 'b.csv'}: column 1 has no name in the "
        "header and counts the rows from 75, as pandas writes a table's index: it is left out; to train on it, name "
        "it in the header",
    ]


def test_project_a_folder_or_a_glob_of_files_in_name_order(iris_run, capsys, tmp_path):
    path, _, data = iris_run
    folder = tmp_path / "parts"
    folder.mkdir()
    for name in ("b.csv", "a.csv"):
        (folder / name).write_text(data.read_text())
    assert _run(capsys, "project", path, data, "--out", tmp_path / "one.csv")[0] == 0
    one = list(csv.reader((tmp_path / "one.csv").open()))
    for source in (folder, str(folder / "*.csv")):
        code, _, err = _run(capsys, "project", path, source, "--out", tmp_path / "two.csv", "--force")
        assert code == 0, err
        two = list(csv.reader((tmp_path / "two.csv").open()))
        assert len(two) == 301 and two[0] == one[0] and two[300][0] == "299"  # rows numbered on across files
        assert [r[1:] for r in two[1:151]] == [r[1:] for r in two[151:]] == [r[1:] for r in one[1:]]
    code, _, err = _run(capsys, "project", path, folder, "--out", folder / "out.csv")
    assert code == 2 and "whose files are being read" in err and not (folder / "out.csv").exists()
    (folder / "c.npy").write_bytes(b"")
    code, _, err = _run(capsys, "project", path, folder, "--out", tmp_path / "three.csv")
    assert code == 2 and "mixes formats" in err and not (tmp_path / "three.csv").exists()


def test_project_a_gzipd_file_or_a_folder_mixing_plain_and_gzipd_files_as_their_text(iris_run, capsys, tmp_path):
    path, _, data = iris_run
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "a.csv").write_text(data.read_text())
    (folder / "b.csv.gz").write_bytes(gzip.compress(data.read_bytes()))
    assert _run(capsys, "project", path, data, "--out", tmp_path / "one.csv")[0] == 0
    one = (tmp_path / "one.csv").read_text().splitlines()
    code, _, err = _run(capsys, "project", path, folder / "b.csv.gz", "--out", tmp_path / "gz.csv")
    assert code == 0, err
    assert (tmp_path / "gz.csv").read_text().splitlines() == one
    code, _, err = _run(capsys, "project", path, folder, "--out", tmp_path / "two.csv")
    assert code == 0, err
    two = (tmp_path / "two.csv").read_text().splitlines()
    assert len(two) == 301 and [r.split(",", 1)[1] for r in two[151:]] == [r.split(",", 1)[1] for r in one[1:]]


def test_an_output_another_command_wrote_meanwhile_is_kept(iris_run, capsys, tmp_path, monkeypatch):
    """Two projections into one --out at once: both passed the check before either wrote, and the second's
    rename replaced the first's rows without --force. The output is placed only where no file is."""
    from som_studio.commands import project

    path, _, data = iris_run
    out = tmp_path / "p.csv"
    write = project._write

    def another_command_finishes_first(f, *args):
        out.write_text("the other command's rows\n")
        return write(f, *args)

    monkeypatch.setattr(project, "_write", another_command_finishes_first)
    code, _, err = _run(capsys, "project", path, data, "--out", out)
    assert code == 2 and f"--out: {out}: exists; use --force to overwrite it" in err
    assert out.read_text() == "the other command's rows\n" and [p.name for p in tmp_path.iterdir()] == ["p.csv"]
    assert _run(capsys, "project", path, data, "--out", out, "--force")[0] == 0
    assert out.read_text().startswith("row,")
