from __future__ import annotations

import gzip
import os

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.data import DATA_SUFFIXES, DataError, check_data, load_data
from som_studio.core.data.checks import data_suffix
from som_studio.core.data.files import DATA_PATTERNS
from som_studio.core.som.problem import decay, load_problem_data, make_problem


def test_random_colours_are_seeded_and_in_unit_cube():
    a = load_problem_data(RunConfig(data=DataSpec(samples=50), seed=4))
    b = load_problem_data(RunConfig(data=DataSpec(samples=50), seed=4))
    c = load_problem_data(RunConfig(data=DataSpec(samples=50), seed=5))
    assert a.shape == (50, 3)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert a.min() >= 0 and a.max() <= 1


def test_npy_and_csv_of_any_width(tmp_path):
    arr = np.arange(20, dtype=np.float32).reshape(4, 5)
    np.save(tmp_path / "x.npy", arr)
    np.testing.assert_array_equal(load_data(tmp_path / "x.npy"), arr)
    (tmp_path / "h.csv").write_text("a,b\n1,2\n3,4.5\n")
    np.testing.assert_array_equal(load_data(tmp_path / "h.csv"), [[1, 2], [3, 4.5]])
    (tmp_path / "n.csv").write_text("1;2;3\n4;5;6\n")
    np.testing.assert_array_equal(load_data(tmp_path / "n.csv"), [[1, 2, 3], [4, 5, 6]])
    np.save(tmp_path / "one.npy", np.array([1.0, 2.0, 3.0]))
    assert load_data(tmp_path / "one.npy").shape == (3, 1)


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (lambda z: z[:-20], "Compressed file ended before the end-of-stream marker was reached"),
        (lambda z: b"a,b\n1,2\n", "Not a gzipped file (b'a,')"),  # plain text under a gzip name
        (lambda z: z[:-8] + bytes(b ^ 0xFF for b in z[-8:-4]) + z[-4:], "CRC check failed"),
        (lambda z: z[:12] + b"\xff" * 8 + z[20:], ""),  # its compressed data
    ],
)
def test_a_damaged_gzip_file_is_named_and_said_to_be_no_valid_gzip(tmp_path, damage, why):
    text = "a,b\n" + "".join(f"{i},{i * i}\n" for i in range(200))
    p = tmp_path / "cells.csv.gz"
    p.write_bytes(damage(gzip.compress(text.encode())))
    with pytest.raises(DataError) as info:
        load_data(p)
    assert str(info.value).startswith(f"{p}: not a valid gzip file ({why}")


def test_a_gzipd_file_is_known_by_the_suffix_before_its_gz():
    assert data_suffix("x.CSV.Gz") == (".csv", True) and data_suffix("a/b.tsv.gz") == (".tsv", True)
    assert data_suffix("x.csv") == (".csv", False) and data_suffix("x.PARQUET") == (".parquet", False)
    for name in ("x.parquet.gz", "x.gz", ".csv.gz", "x.csv.bz2"):
        assert not data_suffix(name).gzip and data_suffix(name).suffix not in DATA_SUFFIXES, name
    assert all(f"*{s}" in DATA_PATTERNS.split() for s in (".csv", ".csv.gz", ".tsv.gz", ".txt.gz", ".parquet"))


def test_min_max_scaling(tmp_path):
    (tmp_path / "s.csv").write_text("10,5\n20,5\n30,5\n")
    out = load_data(tmp_path / "s.csv", scale=True)
    np.testing.assert_allclose(out[:, 0], [0, 0.5, 1])
    np.testing.assert_array_equal(out[:, 1], 0)


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("missing.csv", None, "no such file"),
        ("empty.csv", "", "empty"),
        ("header_only.csv", "a,b\n", "zero rows"),
        ("words.csv", "1,2\n3,x\n", "non-numeric value 'x' at line 2, column 2"),
        ("ragged.csv", "1,2\n3,4,5\n", "ragged"),
        ("all_missing.csv", "1,2\nnan,NA\n", "data row 2 (line 2 of the file) has no known feature value"),
        ("inf.csv", "1,inf\n", "infinite value 'inf' at line 1, column 2"),
        ("data.txt2", "1,2\n", "unsupported file type"),
        # another compression than gzip: named by both suffixes, beside what is read
        (
            "data.csv.bz2",
            "1,2\n",
            "unsupported file type '.csv.bz2'; use .npy, .csv (.tsv, .txt), .csv.gz (.tsv.gz, .txt.gz), .parquet",
        ),
        ("data.parquet.gz", "1,2\n", "unsupported file type '.parquet.gz'"),  # only text is read gzip'd
        # a first row with numbers is data: its bad cell is reported, the row is not dropped as a header
        ("trailing.csv", "1,2,3,\n4,5,6,\n", "column 4 ('x4') has no values"),
        (
            "hollow.csv",
            "a,b,c\n1,,2\n3,,4\n",
            "column 2 ('b') has no values (every cell is empty or missing); leave it out with --ignore b",
        ),
        (  # its remedy pasted into a shell names the column, not the words of its name
            "spaced.csv",
            "a,b c,d\n1,,2\n3,,4\n",
            "column 2 ('b c') has no values (every cell is empty or missing); leave it out with --ignore 'b c'",
        ),
        ("typo.csv", "1,2,x\n3,4,5\n", "non-numeric value 'x' at line 1, column 3"),
        ("zeros.csv", "\x00" * 1000, "holds NUL bytes: a binary file, not a text table"),  # 'a header but no rows'
        ("padded.csv", "a,b\n1,2\x00\n", "holds NUL bytes"),
        # rows are the file's lines, blank and comment lines counted
        ("gaps.csv", "a,b\n\n# note\n1,2\n3\n", "line 5 has 1 columns"),
        ("nan_line.csv", "a,b\n1,2\n\nnan,\n", "data row 2 (line 4 of the file)"),
    ],
)
def test_bad_text_files_name_file_and_problem(tmp_path, name, content, problem):
    p = tmp_path / name
    if content is not None:
        p.write_text(content)
    with pytest.raises(DataError) as info:
        load_data(p)
    assert name in str(info.value)
    assert problem in str(info.value)


def test_bad_npy_files(tmp_path):
    np.save(tmp_path / "cube.npy", np.zeros((2, 3, 4)))
    with pytest.raises(DataError, match="2-D"):
        load_data(tmp_path / "cube.npy")
    np.save(tmp_path / "rows0.npy", np.zeros((0, 3)))
    with pytest.raises(DataError, match="zero rows"):
        load_data(tmp_path / "rows0.npy")
    np.save(tmp_path / "text.npy", np.array(["a", "b"]))
    with pytest.raises(DataError, match="numeric"):
        load_data(tmp_path / "text.npy")
    (tmp_path / "junk.npy").write_bytes(b"not an npy file at all")
    with pytest.raises(DataError, match="junk.npy: not a .npy file"):
        load_data(tmp_path / "junk.npy")


def test_an_array_column_with_no_values_is_refused_by_its_place(tmp_path):
    """As a CSV column with no values is: named by its place, with how to take it out of the array."""
    from som_studio.session.resolve import read_source

    x = np.random.default_rng(0).random((50, 4)).astype(np.float32)
    x[0, 0] = np.nan  # missing in the first row only: a column with values, kept
    x[:, 2] = np.nan
    np.save(tmp_path / "gap.npy", x)
    want = r"column 3 \('x3'\) has no values \(every cell is empty or missing\); leave it out with "
    want += r"numpy.delete\(array, 2, axis=1\)"
    with pytest.raises(DataError, match="gap.npy: " + want):
        load_data(tmp_path / "gap.npy")
    with pytest.raises(DataError, match="array: " + want):
        read_source(x, None, (), None)
    np.save(tmp_path / "gap.npy", np.delete(x, 2, axis=1))
    assert load_data(tmp_path / "gap.npy").shape == (50, 3)


def test_npy_is_read_into_a_table_of_its_own(tmp_path, monkeypatch):
    """A ``.npy`` becomes a table that owns its rows, in memory JAX's CPU device takes without a copy: float32
    as float32, any other type as float64, in the machine's byte order; a short file is named."""
    from som_studio.core import jax_runtime
    from som_studio.core.data import npy

    monkeypatch.setattr(npy, "READ_BLOCK", 7)  # reads that end inside a number: the loop must carry on there
    for dtype, kept in (("<f4", np.float32), (">f4", np.float32), (">f8", np.float64), ("<f8", np.float64),
                        ("<i2", np.float64), ("<f2", np.float64)):  # fmt: skip
        arr = np.arange(12).reshape(4, 3).astype(dtype)
        np.save(tmp_path / "x.npy", arr)
        got = load_data(tmp_path / "x.npy")
        assert got.dtype == np.dtype(kept) and got.flags.writeable and not isinstance(got, np.memmap)
        assert got.ctypes.data % jax_runtime.HOST_ALIGN == 0
        np.save(tmp_path / "x.npy", arr * 0)  # the file changes: the table does not
        np.testing.assert_array_equal(got, arr.astype(np.float64))
    np.save(tmp_path / "f.npy", np.asfortranarray(np.arange(12.0).reshape(4, 3)))
    got = load_data(tmp_path / "f.npy")
    assert got.flags.c_contiguous
    np.testing.assert_array_equal(got, np.arange(12.0).reshape(4, 3))
    np.save(tmp_path / "short.npy", np.ones((100, 3)))
    whole = (tmp_path / "short.npy").read_bytes()
    (tmp_path / "short.npy").write_bytes(whole[:-40])
    with pytest.raises(
        DataError, match=f"short.npy: cannot read as .npy .*{len(whole) - 40:,} of the {len(whole):,} bytes"
    ):
        load_data(tmp_path / "short.npy")


def test_npy_never_unpickles(tmp_path):
    marker = tmp_path / "pwned"
    obj = np.array([_Evil(str(marker))], dtype=object)
    np.save(tmp_path / "evil.npy", obj, allow_pickle=True)
    with pytest.raises(DataError, match="evil.npy"):
        load_data(tmp_path / "evil.npy")
    assert not marker.exists()


class _Evil:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_decay_hits_both_ends():
    v = decay(10.0, 1.0, 5)
    assert v[0] == pytest.approx(10.0) and v[-1] == pytest.approx(1.0)
    assert np.all(np.diff(v) < 0)
    assert decay(3.0, 1.0, 1).tolist() == [3.0]


def test_problem_is_seeded_and_in_the_requested_precision():
    cfg = RunConfig(impl="numpy-online", width=6, height=4, steps=50, data=DataSpec(samples=30), seed=1)
    p1, p2 = make_problem(cfg, "online"), make_problem(cfg, "online")
    np.testing.assert_array_equal(p1.init_map, p2.init_map)
    o1, o2 = p1.whole().order, p2.whole().order
    np.testing.assert_array_equal(o1, o2)
    assert p1.init_map.shape == (4, 6, 3) and p1.dtype == np.float32
    assert o1.min() >= 0 and o1.max() < 30 and o1.shape == (50,)
    p64 = make_problem(cfg.replace(precision="float64"), "online")
    assert p64.dtype == np.float64 and p64.whole().lr.dtype == np.float64
    assert make_problem(cfg.replace(epochs=3, steps=None), "batch").schedule().block(0).order is None


@pytest.mark.cpu_backend
@pytest.mark.parametrize("stored", ["<f4", "<f8"])
def test_the_trainer_places_the_problems_own_rows_without_a_copy(tmp_path, stored):
    """A float32 file's table is the float32 problem's data, and JAX's CPU device takes the problem's rows as
    they are (no second copy of the examples); a float64 table gives float32 rows once, placed as they are."""
    import jax

    from som_studio.core.data import read_table

    x = np.random.default_rng(0).random((20000, 7)).astype(stored)  # past malloc: NumPy aligns it to 16 only
    np.save(tmp_path / "x.npy", x)
    table = read_table(tmp_path / "x.npy")
    cfg = RunConfig(impl="jax-fused-batch", width=4, height=3, epochs=1, data=DataSpec(path=str(tmp_path / "x.npy")))
    p = make_problem(cfg, "batch", table.values)
    assert p.data.dtype == np.float32 and (p.data is table.values) == (stored == "<f4")
    np.testing.assert_array_equal(p.data, x.astype(np.float32))
    placed = jax.device_put(p.data, jax.devices("cpu")[0])
    assert placed.unsafe_buffer_pointer() == p.data.ctypes.data


def test_data_too_large_for_the_precision_is_refused(tmp_path):
    from som_studio.core.som.problem import check_range

    data = np.array([[1e19, 2.0], [3.0, 4.0]])
    with pytest.raises(DataError, match="too large for float32"):  # squares would overflow to inf
        check_range(data, "float32", "big.csv")
    check_range(data, "float64")
    check_range(np.array([[1e18, 0.0]]), "float32")


def test_session_fails_clearly_on_data_too_large(tmp_path):
    from som_studio.session.session import Session, run_to_completion

    (tmp_path / "big.csv").write_text("1e200,2\n3e200,4\n5,6\n")
    cfg = RunConfig(
        impl="numpy-batch",
        width=3,
        height=2,
        epochs=1,
        precision="float64",
        data=DataSpec(path=str(tmp_path / "big.csv")),
    )
    rec = run_to_completion(Session(cfg))
    assert rec.status == "failed" and "too large for float64" in rec.message


def test_a_value_marking_a_missing_one_is_refused_with_its_remedy_not_a_traceback(tmp_path, capsys):
    """float64's largest number written for "no value", the grid left to the data: the default grid's principal
    components raised a bare LinAlgError before the run's check could name the value (the API's too)."""
    from som_studio import cli

    p = tmp_path / "sentinel.csv"
    p.write_text("a,b\n" + "".join(f"{i / 7:.3f},{i % 5}\n" for i in range(30)) + "1.7976931348623157e308,1\n")
    assert cli.main(["bench", "--data", str(p), "--impl", "numpy-batch", "--epochs", "1", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "values up to 1.8e+308 are too large for float32" in err and "Traceback" not in err, err
    assert "a value this large often marks a missing one: write those as empty cells or NA" in err
    assert cli.main(["bench", "--data", str(p), "--scaling", "zscore", "--impl", "numpy-batch", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "feature 'a' cannot be scaled with zscore" in err and "marks a missing one" in err, err
    assert "or leave it out with --ignore a" in err
    from som_studio.api import TrainError, train

    with pytest.raises(TrainError, match="too large for float32"):
        train(str(p), epochs=1)


@pytest.mark.parametrize(
    ("method", "column"),
    [
        ("minmax", "1e308\n-1e308\n0"),  # the range overflows
        ("zscore", "1e308\n-1e308\n0"),  # the sum and the squares overflow
        ("zscore", "1e200\n2e200\n3e200"),  # the mean is fine, the squares overflow: every value would scale to 0
    ],
)
def test_a_feature_too_large_to_scale_is_refused_by_name(tmp_path, method, column):
    from som_studio.core.data import read_table

    p = tmp_path / "wide.csv"
    p.write_text("ok,price\n" + "".join(f"{i},{v}\n" for i, v in enumerate(column.split("\n"))))
    table = read_table(p)
    with pytest.raises(DataError) as info:
        table.scaled(method)
    text = str(info.value)
    assert text.startswith(f"{p}: feature 'price' cannot be scaled with {method}: its values (up to ")
    assert "--ignore" in text
    assert not np.isnan(table.scaled("none").values).any()  # unscaled, the same table is kept whole


def test_bench_refuses_a_feature_too_large_to_scale_and_saves_nothing(tmp_path, capsys):
    from som_studio import cli

    p = tmp_path / "wide.csv"
    p.write_text("a,b\n1,1e308\n2,-1e308\n3,0\n")
    runs = tmp_path / "runs"
    argv = ["bench", "--data", str(p), "--scaling", "minmax", "--impl", "numpy-batch", "--epochs", "1"]
    assert cli.main([*argv, "--grid", "3x2", "--save-runs", str(runs), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "feature 'b' cannot be scaled with minmax" in err and "Traceback" not in err
    assert not runs.exists()


def test_any_missing_is_whether_any_value_is_nan():
    from som_studio.core.data import any_missing

    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        x = rng.standard_normal((40, 7)).astype(dtype)
        x[3, 2] = -np.inf  # the smallest value is not a missing one
        assert not any_missing(x)
        for where in [(0, 0), (39, 6), (17, 3)]:
            y = x.copy()
            y[where] = np.nan
            assert any_missing(y) and any_missing(y[:, 2:]) == bool(np.isnan(y[:, 2:]).any())
    assert not any_missing(np.arange(6).reshape(3, 2)) and not any_missing(np.zeros((0, 3)))


@pytest.mark.parametrize("block", [16, 48, 1 << 22])  # a row, three rows, all of them at a time
def test_a_row_with_no_known_value_is_named_whatever_the_blocks_checked(monkeypatch, block):
    from som_studio.core.data import check_known_rows, checks

    monkeypatch.setattr(checks, "CHECK_BLOCK_BYTES", block)
    values = np.arange(20.0).reshape(10, 2)
    values[3, 0] = np.nan  # one of two missing: a row with a value
    values[7] = np.nan
    lines = np.arange(10) + 5
    with pytest.raises(DataError, match=r"t.csv: data row 108 \(line 12 of the file\) has no known feature value"):
        check_known_rows(values, "t.csv", lines, first_row=100)
    values[7, 1] = 1.0
    check_known_rows(values, "t.csv", lines, first_row=100)


def test_an_infinite_value_in_an_array_is_refused_at_its_place_among_missing_ones():
    """Found by the extremes that pass over missing values: NaN beside it does not hide it."""
    x = np.ones((50, 3), np.float32)
    x[::7, 1] = np.nan
    x[31, 2] = -np.inf
    x[40, 0] = np.inf
    with pytest.raises(DataError, match=r"a.npy: 2 values are infinite \(first at index \[31, 2\]\)"):
        check_data(x, "a.npy")
    # A file's rows (a chunk from its row 100 on): its 1-based row and its column's name, as a stream says it.
    with pytest.raises(DataError, match=r"^p.parquet: infinite value -inf at row 132, column c$"):
        check_data(x, "p.parquet", first_row=100, columns=("a", "b", "c"))
    x[31, 2] = x[40, 0] = 2.0
    assert check_data(x, "a.npy").dtype == np.float32


def test_parquet_integers_past_2_53_read_rounded_and_repeated_names_refused(tmp_path):
    """Arrow's safe cast refused a whole int64 column past 2^53 with a traceback, where NumPy and pandas round
    it; two columns of one name broke the reader ('Column a does not exist in schema')."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from som_studio.core.data import DataError, read_table, stream

    big = np.full(40, 2**62, np.int64) + np.arange(40)
    pq.write_table(pa.table({"a": np.linspace(0, 1, 40), "i": big}), tmp_path / "big.parquet")
    np.testing.assert_array_equal(read_table(str(tmp_path / "big.parquet")).values[:, 1], big.astype(np.float64))
    batches = list(stream.open_source(str(tmp_path / "big.parquet")).reader(16))
    np.testing.assert_array_equal(np.concatenate([b.values for b in batches])[:, 1], big.astype(np.float64))
    two = pa.table({"a": np.zeros(5), "b": np.ones(5)}).rename_columns(["a", "a"])
    pq.write_table(two, tmp_path / "two.parquet")
    for read in (lambda p: read_table(p), lambda p: stream.open_source(p)):
        with pytest.raises(DataError, match=r"two.parquet: has two columns named 'a'; column names must be unique"):
            read(str(tmp_path / "two.parquet"))
    import pandas as pd

    import som_studio

    run = som_studio.train(pd.DataFrame({"a": np.linspace(0, 1, 20), "b": np.ones(20)}), grid="3x2", epochs=1)
    pq.write_table(pa.table({"a": np.zeros(3), "b": np.ones(3), "c": np.ones(3)}).rename_columns(["a", "b", "b"]),
                   tmp_path / "abb.parquet")  # fmt: skip
    with pytest.raises(DataError, match=r"abb.parquet: has two columns named 'b'"):
        run.project(tmp_path / "abb.parquet")  # it projected on one of the two, silently


def test_a_named_pipe_is_refused_not_read_until_it_hangs(tmp_path):
    """Its encoding was read, then its rows from the start again: the second read waited for ever."""
    from som_studio.core.data import DataError, read_table

    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match=r"rows.csv: is not a regular file \(a pipe or a device\)"):
        read_table(str(fifo))
