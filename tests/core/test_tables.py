"""Real tables: header, label / ignore / id columns, encodings, missing values, scaling."""

from __future__ import annotations

import gzip
import importlib.util

import numpy as np
import pytest

from som_studio.core.data import CsvReader, DataError, Scaling, fit_scaling, read_table

IRIS_HEAD = (
    "sepal_length,sepal_width,petal_length,petal_width,species\n"
    "5.1,3.5,1.4,0.2,setosa\n"
    "7.0,3.2,4.7,1.4,versicolor\n"
    "6.3,3.3,6.0,2.5,virginica\n"
)


def test_header_names_and_label_column(tmp_path):
    p = tmp_path / "iris.csv"
    p.write_text(IRIS_HEAD)
    t = read_table(p, labels="species")
    assert t.feature_names == ("sepal_length", "sepal_width", "petal_length", "petal_width")
    assert t.values.shape == (3, 4)
    assert t.labels.tolist() == ["setosa", "versicolor", "virginica"]
    assert t.label_column == "species" and t.ids is None


def test_a_tab_separated_file_reads_as_its_csv_twin(tmp_path):
    # .txt was read as CSV (its delimiter sniffed) while .tsv was refused as an unknown type.
    csv_path, tsv = tmp_path / "iris.csv", tmp_path / "iris.tsv"
    csv_path.write_text(IRIS_HEAD)
    tsv.write_text(IRIS_HEAD.replace(",", "\t"))
    a, b = read_table(csv_path, labels="species"), read_table(tsv, labels="species")
    assert b.feature_names == a.feature_names and np.array_equal(b.values, a.values)
    assert b.labels.tolist() == a.labels.tolist()


def test_ignore_and_id_columns(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,date,a,b,kind\nr1,2024-01-01,1,2,x\nr2,2024-01-02,3,4,y\n")
    t = read_table(p, labels="kind", ignore=["date"], id_column="id")
    assert t.feature_names == ("a", "b")
    np.testing.assert_array_equal(t.values, [[1, 2], [3, 4]])
    assert t.ids.tolist() == ["r1", "r2"] and t.labels.tolist() == ["x", "y"]


def test_non_numeric_column_is_named_with_the_flags(tmp_path):
    p = tmp_path / "iris.csv"
    p.write_text(IRIS_HEAD)
    with pytest.raises(DataError) as info:
        read_table(p)
    msg = str(info.value)
    assert "non-numeric value 'setosa' at line 2, column 5 ('species')" in msg
    for flag in ("--labels species", "--ignore species", "--id species"):
        assert flag in msg


SPACED = "sepal length (cm),sepal width (cm),target\n" + "".join(f"5.{i},3.{i},{i % 3}\n" for i in range(9))


@pytest.mark.parametrize("arrow", [True, False])
def test_a_bad_cell_below_numbers_is_said_to_be_no_number_nor_missing_value(tmp_path, monkeypatch, arrow):
    from som_studio.core.data import csv_reader

    p = tmp_path / "q.csv"
    p.write_text(SPACED.replace("\n5.5,3.5,", "\n5.5,3..5,"))
    if arrow:  # pyarrow's blocks of a few rows: the numbers above it were read by pyarrow
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 64)
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    with pytest.raises(DataError) as info:
        read_table(p, labels="target")
    assert str(info.value) == (
        f"{p}: non-numeric value '3..5' at line 7, column 2 ('sepal width (cm)'), which holds numbers in the rows "
        "above: neither a number nor a missing value (an empty cell or NA, NaN, N/A, NULL, None, #N/A, #NA, <NA>, "
        "in upper or lower case); write "
        "it as a number or as one of those, or leave the column out (--ignore 'sepal width (cm)')"
    )
    assert {m.lower() for m in csv_reader.MISSING_SHOWN} | {""} == csv_reader.MISSING  # the markers named are read


def test_every_text_column_of_the_refused_line_is_named_so_that_one_run_fixes_them_all(tmp_path):
    # A date and a city: the refusal named the date; left out, the next run named the city.
    p = tmp_path / "air.csv"
    p.write_text("date,temp,city,site,pm25\n2023-01-01,17.1,Incheon,north,13.5\n2023-01-02,16.0,Seoul,south,NA\n")
    with pytest.raises(DataError) as info:
        read_table(p)
    assert str(info.value).endswith(
        "; columns 'city', 'site' hold text in that line too (left out with --ignore city --ignore site)"
    ), info.value
    with pytest.raises(DataError) as info:
        read_table(p, ignore=("date",))
    assert "non-numeric value 'Incheon'" in str(info.value)
    assert str(info.value).endswith("; column 'site' holds text in that line too (left out with --ignore site)")
    assert read_table(p, labels="city", ignore=("date", "site")).feature_names == ("temp", "pm25")


def test_a_bad_cell_with_nothing_above_it_may_be_a_text_column_and_flags_are_quoted(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text(SPACED.replace("\n5.0,3.0,", "\n5.0,high,"))  # the first row: a text column's first cell, perhaps
    with pytest.raises(DataError) as info:
        read_table(p, labels="target")
    assert str(info.value) == (
        f"{p}: non-numeric value 'high' at line 2, column 2 ('sepal width (cm)'): a text column can be the labels "
        "(--labels 'sepal width (cm)'), left out (--ignore 'sepal width (cm)') or carried through "
        "(--id 'sepal width (cm)'); in a column of numbers, a missing value is an empty cell or NA, NaN, N/A, "
        "NULL, None, #N/A, #NA, <NA>, in upper or lower case"
    )
    q = tmp_path / "m.csv"  # missing values above it are no numbers
    q.write_text(SPACED.replace("\n5.0,3.0,", "\n5.0,NA,").replace("\n5.1,3.1,", "\n5.1,oops,"))
    with pytest.raises(DataError, match="a text column can be the labels"):
        read_table(q, labels="target")


@pytest.mark.parametrize("marker", ["?", "-", ".", "n.a."])
def test_another_spelling_of_no_value_is_refused_as_such_in_the_first_row_or_below(tmp_path, marker):
    # "?" in the first row read as the first cell of a text column: "it can be the labels".
    for line in ("\n5.0,3.0,", "\n5.5,3.5,"):
        p = tmp_path / "q.csv"
        p.write_text(SPACED.replace(line, line[:5] + f"{marker},"))  # the second column's cell
        with pytest.raises(DataError) as info:
            read_table(p, labels="target")
        assert f"{marker!r} at line" in str(info.value) and str(info.value).endswith(
            "('sepal width (cm)') is not read as a missing value: write missing values as empty cells or NA, NaN, "
            "N/A, NULL, None, #N/A, #NA, <NA> (in upper or lower case), or leave the column out "
            "(--ignore 'sepal width (cm)')"
        ), info.value


def test_a_bad_cell_in_a_runs_feature_names_the_missing_values(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text(SPACED.replace("\n5.0,3.0,", "\n5.0,?,"))
    with pytest.raises(DataError) as info:
        list(CsvReader(p, labels="target", roles=False).chunks())
    assert str(info.value).endswith(
        "column 2 ('sepal width (cm)'): neither a number nor a missing value (an empty cell or NA, NaN, N/A, "
        "NULL, None, #N/A, #NA, <NA>, in upper or lower case)"
    )


@pytest.mark.parametrize("arrow", [True, False])
def test_a_row_whose_label_starts_with_a_hash_is_a_row_and_a_comment_line_is_not(tmp_path, monkeypatch, arrow):
    from som_studio.core.data import csv_reader

    p = tmp_path / "tags.csv"
    p.write_text("name,a,b\n#A12,1.5,2.5\nB7,3.5,4.5\n# a note\n#C3,5.5,6.5\n")
    if arrow:  # pyarrow reads the first block, then the lines from the comment's block on
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 32)
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    t = read_table(p, labels="name")
    assert t.values.tolist() == [[1.5, 2.5], [3.5, 4.5], [5.5, 6.5]]
    assert list(t.labels) == ["#A12", "B7", "#C3"]


@pytest.mark.parametrize(
    "text",
    [
        "x\n1\n# end of data\n3\n",  # one column: every comment has its cell count
        "a,b,c\n1,2,3\n# generated, by, me\n3,4,5\n",  # a comment with the table's commas
        "#NA values were removed\na,b,c\n1,2,3\n#NA note\n3,4,5\n",  # #NA words, no cells
    ],
    ids=["one-column", "commas", "na-words"],
)
def test_a_comment_line_is_skipped_where_the_first_column_holds_numbers(tmp_path, text):
    p = tmp_path / "c.csv"
    p.write_text(text)
    values = read_table(p).values
    assert values[:, 0].tolist() == [1.0, 3.0]


@pytest.mark.parametrize("arrow", [True, False])
def test_the_missing_values_pandas_reads_are_read_as_missing_by_both_parsers(tmp_path, monkeypatch, arrow):
    from som_studio.core.data import csv_reader

    pd = pytest.importorskip("pandas")
    markers = ["NA", "nan", "N/A", "NULL", "null", "None", "#N/A", "#NA", "<NA>", "n/a", ""]
    rows = [f"{m},{i}.5,{i % 3}" for i, m in enumerate(markers)]
    p = tmp_path / "db.csv"
    p.write_text("a,b,target\n" + "\n".join(rows) + "\n1.25,2.5,0\n")
    if arrow:
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 64)
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    got = read_table(p, labels="target").values
    want = pd.read_csv(p)[["a", "b"]].to_numpy(dtype=float)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got[:-1, 0]).all() and got[-1, 0] == 1.25


@pytest.mark.parametrize(
    ("text", "names", "rows"),
    [
        ("sepal length (cm)\n5.1\n4.9\n4.7\n", ("sepal length (cm)",), 3),  # one column: its name holds spaces
        ("a b  c\n1 2  3\n4 5 6\n", ("a", "b", "c"), 2),  # spaces still separate where the rows have them
    ],
)
def test_a_name_with_spaces_above_one_column_is_one_name(tmp_path, text, names, rows):
    p = tmp_path / "one.csv"
    p.write_text(text)
    assert CsvReader(p).columns == names
    t = read_table(p)
    assert t.feature_names == names and t.values.shape == (rows, len(names))


def test_unknown_column_lists_the_columns(tmp_path):
    p = tmp_path / "iris.csv"
    p.write_text(IRIS_HEAD)
    with pytest.raises(DataError, match=r"--labels kind: no such column; the columns are sepal_length, "):
        read_table(p, labels="kind")


def test_headerless_columns_are_x1_x2(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text("1,2,a\n3,4,b\n")
    t = read_table(p, labels="x3")
    assert t.feature_names == ("x1", "x2") and t.labels.tolist() == ["a", "b"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp949"])
def test_utf8_with_or_without_bom_and_cp949(tmp_path, encoding):
    p = tmp_path / "k.csv"
    p.write_bytes("키,몸무게,종류\n170,60,사람\n30,4,고양이\n".encode(encoding))
    t = read_table(p, labels="종류")
    assert t.feature_names == ("키", "몸무게")
    assert t.labels.tolist() == ["사람", "고양이"]


def test_other_encodings_are_refused_naming_the_problem(tmp_path):
    p = tmp_path / "binary.csv"
    p.write_bytes(b"name,a\n" + bytes(range(1, 256)) * 4)  # NUL aside: a binary file, said so
    with pytest.raises(DataError, match=r"binary.csv: not a text file in a supported encoding.*UTF-8.*CP949"):
        read_table(p, labels="name")
    late = tmp_path / "late.csv"  # Windows-1252 for its first megabyte, then a byte it does not have
    late.write_bytes(b"name,a\n" + "café,1\n".encode("cp1252") * 200_000 + b"\x81,2\n")
    with pytest.raises(DataError, match=r"its start reads as Windows-1252 but byte 0x81 at offset 1400007 does not"):
        read_table(late, labels="name")
    p16 = tmp_path / "u16.csv"
    p16.write_bytes("a,b\n1,2\n".encode("utf-16"))
    with pytest.raises(DataError, match="UTF-16"):
        read_table(p16)


def test_missing_values_are_nan(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("a,b,c\n1,,3\nNA,2,NaN\n4,n/a,6\n")
    t = read_table(p)
    expect = np.array([[1, np.nan, 3], [np.nan, 2, np.nan], [4, np.nan, 6]])
    np.testing.assert_array_equal(t.values, expect)
    assert t.has_missing


def test_npy_nan_allowed_but_a_row_without_known_values_refused(tmp_path):
    np.save(tmp_path / "ok.npy", np.array([[1.0, np.nan], [np.nan, 2.0]]))
    assert np.isnan(read_table(tmp_path / "ok.npy").values).sum() == 2
    np.save(tmp_path / "bad.npy", np.array([[1.0, 2.0], [3.0, 4.0], [np.nan, np.nan]]))
    with pytest.raises(DataError, match=r"bad.npy: data row 3 has no known feature value"):
        read_table(tmp_path / "bad.npy")


@pytest.mark.parametrize("method", ["none", "minmax", "zscore"])
def test_scaling_round_trip_and_reapplied_to_new_data(method):
    rng = np.random.default_rng(0)
    x = rng.normal(5, 3, size=(40, 3))
    x[3, 1] = np.nan
    x[:, 2] = 7.0  # constant: scaled to 0 (minmax, zscore), not NaN
    s = fit_scaling(x, method)
    y = s.apply(x)
    np.testing.assert_allclose(s.invert(y), x)
    again = Scaling.from_dict(s.to_dict())
    np.testing.assert_array_equal(again.apply(x[:5]), y[:5])
    if method == "minmax":
        assert np.nanmin(y[:, :2]) == 0 and np.nanmax(y[:, :2]) == 1
        np.testing.assert_array_equal(y[:, 2], 0)
    if method == "zscore":
        np.testing.assert_allclose(np.nanmean(y[:, :2], axis=0), 0, atol=1e-12)
        np.testing.assert_allclose(np.nanstd(y[:, :2], axis=0, ddof=1), 1)
        np.testing.assert_array_equal(y[:, 2], 0)
    assert np.isnan(y[3, 1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_table_is_scaled_by_blocks_of_rows_as_it_would_be_whole(dtype, monkeypatch):
    """Fitted and scaled a block of rows at a time (no array as large as the table), every number is the one the
    whole table's arithmetic gives: the column sums add row after row in the same order, whatever the blocks."""
    from som_studio.core.data import scaling
    from som_studio.core.data.table import Table

    rng = np.random.default_rng(3)
    x = (rng.standard_normal((997, 5)) * [1, 1e3, 1e-3, 7, 1] + [0, 5e4, -2, 0, 1]).astype(dtype)
    x[rng.random(x.shape) < 0.1] = np.nan
    x[40:, 0] = np.nan  # known in a few rows only: blocks past them have none
    x[:, 4] = 1.5  # constant
    whole = {}
    for method in ("minmax", "zscore"):
        known = ~np.isnan(x)
        f = x.astype(np.float64)
        if method == "minmax":
            lo, hi = np.min(np.where(known, f, np.inf), axis=0), np.max(np.where(known, f, -np.inf), axis=0)
            offset, scale = lo, np.where(hi > lo, hi - lo, 1.0)
        else:
            n = known.sum(axis=0)
            offset = np.where(known, f, 0.0).sum(axis=0) / n
            std = np.sqrt(np.where(known, (f - offset) ** 2, 0.0).sum(axis=0) / (n - 1))
            offset, scale = offset, np.where(std > 0, std, 1.0)
        whole[method] = offset, scale, (f - offset) / scale
    for block in (8, 8 * 5 * 3, 8 * 5 * 100, 1 << 22):  # a row, 3 rows, 100 rows, all
        monkeypatch.setattr(scaling, "BLOCK_BYTES", block)
        for method, (offset, scale, values) in whole.items():
            t = Table(x, ("a", "b", "c", "d", "e")).scaled(method)
            np.testing.assert_array_equal(t.scaling.offset, offset)
            np.testing.assert_array_equal(t.scaling.scale, scale)
            np.testing.assert_array_equal(t.values, values)
            assert t.values.dtype == np.float64 and np.isnan(t.values).sum() == np.isnan(x).sum()
            # A float32 run's table: the same float64 arithmetic, each value rounded once.
            np.testing.assert_array_equal(
                Table(x, t.feature_names).scaled(method, np.float32).values, values.astype(np.float32)
            )


def test_a_float32_run_trains_on_its_scaled_table_itself(tmp_path):
    """Scaled for a float32 run, a table is kept in float32 and the problem's examples are its memory: one copy of
    the data, not a float64 table beside a float32 copy; a float64 run's stays float64."""
    from som_studio.config import DataSpec, RunConfig
    from som_studio.core.som.problem import load_problem_table, make_problem

    x = np.random.default_rng(0).normal(3, 2, (500, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    for precision in ("float32", "float64"):
        cfg = RunConfig(impl="jax-fused-batch", width=4, height=3, epochs=2, precision=precision, scaling="zscore",
                        data=DataSpec(path=str(tmp_path / "x.npy")))  # fmt: skip
        table = load_problem_table(cfg)
        assert table.values.dtype == np.dtype(precision)
        assert make_problem(cfg, "batch", table.values).data is table.values


def test_chunks_stream_rows_in_order(tmp_path):
    p = tmp_path / "big.csv"
    p.write_text("a,b,id\n" + "".join(f"{i},{2 * i},r{i}\n" for i in range(25)))
    reader = CsvReader(p, id_column="id")
    chunks = list(reader.chunks(rows=10))
    assert [c.first for c in chunks] == [0, 10, 20]
    assert [len(c.values) for c in chunks] == [10, 10, 5]
    assert chunks[2].ids.tolist() == [f"r{i}" for i in range(20, 25)]
    assert chunks[1].lines[0] == 12  # line 1 is the header


# -- what reading decides without certainty is said: tables' notes --------------------------
@pytest.mark.parametrize(
    ("header", "names", "unnamed"),
    [
        ("a,,c", ("a", "x2", "c"), [(2, "x2")]),
        (",a,b", ("x1", "a", "b"), [(1, "x1")]),  # pandas' to_csv: the index column has no name
        ("x2,,c", ("x2", "x2_2", "c"), [(2, "x2_2")]),  # never another column's name
        ("a;;c", ("a", "x2", "c"), [(2, "x2")]),
    ],
)
def test_an_empty_header_cell_is_named_for_its_own_column_and_said(tmp_path, header, names, unnamed):
    p = tmp_path / "h.csv"
    delimiter = ";" if ";" in header else ","
    p.write_text(f"{header}\n" + delimiter.join(["1", "2", "3"]) + "\n")
    t = read_table(p)
    assert t.feature_names == names
    assert list(t.notes) == [
        f"{p}: column {number} has no name in the header; it is called {name!r}" for number, name in unnamed
    ]


@pytest.mark.parametrize(
    ("text", "labels", "names", "rows"),
    [
        ("2019,2020,2021\n1.5,2.5,3.5\n4,5,6\n", None, ("2019", "2020", "2021"), 2),
        ("country,2019,2020,2021\nKorea,1.5,2.1,3\nJapan,2,3,4\n", "country", ("2019", "2020", "2021"), 2),
        ("2021;2020\n0.5;0.7\n", None, ("2021", "2020"), 1),  # falling years are a header too
    ],
)
def test_a_header_of_years_is_a_header_and_said_to_be(tmp_path, text, labels, names, rows):
    p = tmp_path / "years.csv"
    p.write_text(text)
    t = read_table(p, labels=labels)
    assert t.feature_names == names and len(t.values) == rows
    (note,) = t.notes
    assert note.startswith(f"{p}: the first line (") and "is read as the header: its numbers are years" in note


def test_years_above_years_stay_data_and_are_said_to(tmp_path):
    p = tmp_path / "born.csv"
    p.write_text("1984,1990\n2001,2005\n")
    t = read_table(p)
    assert t.feature_names == ("x1", "x2") and t.values.tolist() == [[1984, 1990], [2001, 2005]]
    (note,) = t.notes
    assert "looks like a header of years, but the line below holds years too: both are read as data" in note


@pytest.mark.parametrize("text", ["1,3,5\n4,5,6\n", "2019,2019\n1,2\n", "2020,2019,2021\n1,2,3\n", "1999,2003\n"])
def test_numbers_that_are_not_a_header_of_years_are_data_with_nothing_to_say(tmp_path, text):
    p = tmp_path / "n.csv"
    p.write_text(text)
    t = read_table(p)
    assert t.feature_names[0] == "x1" and t.notes == ()


@pytest.mark.parametrize(
    ("text", "names", "rows"),
    [
        ("0,1,2,3\n5.1,3.5,1.4,0.2\n4.9,3.0,1.4,0.2\n", ("0", "1", "2", "3"), 2),  # pandas' to_csv(index=False)
        ("1,2\n0.5,7\n4,5\n", ("1", "2"), 2),  # numbered from 1; a point below tells the header
        ("0,1\n5.0,NA\n1.5,2\n", ("0", "1"), 2),
        (",0,1\n0,3,7\n1,2,2\n", ("0", "1"), 2),  # pandas' to_csv(): its index unnamed, left out
    ],
)
def test_a_header_of_column_numbers_is_a_header_and_said_to_be(tmp_path, text, names, rows):
    p = tmp_path / "n.csv"
    p.write_text(text)
    t = read_table(p)
    assert t.feature_names == names and len(t.values) == rows
    note = t.notes[0]
    assert note.startswith(f"{p}: the first line (") and "is read as the header: it numbers the columns" in note


@pytest.mark.parametrize("text", ["0,1,2\n3,7,1\n1,0,2\n", "1,2\nNA,3\n"])
def test_column_numbers_above_whole_numbers_stay_data_and_are_said_to(tmp_path, text):
    p = tmp_path / "counts.csv"
    p.write_text(text)
    t = read_table(p)
    assert t.feature_names[0] == "x1" and len(t.values) == text.count("\n")
    (note,) = t.notes
    assert "looks like a header of column numbers, but the line below holds only whole numbers" in note


IRIS_INDEXED = "," + IRIS_HEAD.replace("\n5.1", "\n0,5.1").replace("\n7.0", "\n1,7.0").replace("\n6.3", "\n2,6.3")


@pytest.mark.parametrize(
    "text",
    [
        IRIS_INDEXED,  # pandas' to_csv() of a frame with named columns
        IRIS_INDEXED.replace("\n0,", "\n75,").replace("\n1,", "\n76,").replace("\n2,", "\n77,"),  # a later part
        '"",' + IRIS_HEAD.replace("\n5.1", '\n"1",5.1').replace("\n7.0", '\n"2",7.0').replace("\n6.3", '\n"3",6.3'),
    ],
)
def test_an_unnamed_column_that_counts_the_rows_is_left_out_and_said_to_be(tmp_path, monkeypatch, text):
    p = tmp_path / "indexed.csv"
    p.write_text(text)
    want = read_table(_write(tmp_path / "plain.csv", IRIS_HEAD), labels="species")
    for t, _chunks in _read_both(p, monkeypatch, labels="species"):
        assert t.feature_names == want.feature_names
        np.testing.assert_array_equal(t.values, want.values)
        assert t.labels.tolist() == want.labels.tolist()
        (note,) = t.notes  # no note that it is called x1: it is not read
        start = text.split("\n")[1].split(",")[0].strip('"')
        assert note == (
            f"{p}: column 1 has no name in the header and counts the rows from {start}, as pandas writes a table's "
            "index: it is left out; to train on it, name it in the header"
        )
    assert CsvReader(p).columns == ("x1", *IRIS_HEAD.split("\n")[0].split(","))  # still a column to give a role


def test_a_row_index_given_a_role_is_read_in_it_and_not_left_out(tmp_path):
    p = _write(tmp_path / "indexed.csv", IRIS_INDEXED)
    t = read_table(p, labels="species", id_column="x1")
    assert t.ids.tolist() == ["0", "1", "2"] and t.feature_names[0] == "sepal_length"
    assert not any("counts the rows" in n for n in read_table(p, labels="species", ignore=["x1"]).notes)
    kept = CsvReader(p, labels="species", keep_index=True)
    assert kept.index_start is None and kept.feature_names[0] == "x1"
    other = _write(tmp_path / "other.csv", ",a,b\n5.0,1,2\n7.5,3,4\n")  # a feature without a name, not a count
    t = read_table(other)
    assert t.feature_names == ("x1", "a", "b") and "it is called 'x1'" in t.notes[0]


def test_a_row_index_whose_count_breaks_is_refused_naming_the_line(tmp_path, monkeypatch):
    rows = "".join(f"{i if i != 30 else 31},{i}.5,{i % 4}\n" for i in range(40))  # filtered, say: 31 follows 29
    p = _write(tmp_path / "indexed.csv", ",a,b\n" + rows)
    fast, slow = _read_both(p, monkeypatch)
    assert (
        fast
        == slow
        == (
            f"{p}: column 1 has no name in the header and counted the rows from 0, as pandas writes a table's index, "
            "so it was left out; but line 32 holds '31' there, not 30: to train on it, name it in the header, or "
            "leave it out (--ignore x1)"
        )
    )
    assert read_table(p, ignore=["x1"]).values.shape == (40, 2)


def _write(p, text):
    p.write_text(text)
    return p


def test_a_windows_1252_file_is_read_as_windows_1252_and_said_to_be_a_guess(tmp_path):
    p = tmp_path / "w.csv"
    p.write_bytes("name,price\ncafé,1.5\nnaïve,2\ncrème brûlée,3\n".encode("cp1252"))
    t = read_table(p, labels="name")
    assert t.labels.tolist() == ["café", "naïve", "crème brûlée"]  # not Hangul or Chinese characters
    (note,) = t.notes
    assert note.startswith(f"{p}: not UTF-8 (byte 0xe9 at offset 14 is not UTF-8): read as Windows-1252")
    assert "(a guess)" in note
    q = tmp_path / "short.csv"  # two accented letters in a row are also a valid CP949 pair: still Windows-1252
    q.write_bytes("Þór,a\n1,2\n".encode("cp1252"))
    assert read_table(q).feature_names == ("Þór", "a")
    r = tmp_path / "rare.csv"  # rare letters side by side: too messy for charset-normalizer, still Windows-1252
    r.write_bytes("brûlée,Þór,cañón\n1,2,3\n".encode("cp1252"))
    assert read_table(r).feature_names == ("brûlée", "Þór", "cañón")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig"])
def test_utf8_is_certain_and_says_nothing(tmp_path, encoding):
    p = tmp_path / "k.csv"
    p.write_bytes("키,몸무게\n170,60\n".encode(encoding))
    assert read_table(p).notes == ()


def test_cp949_is_read_and_said_to_be_a_guess(tmp_path):
    p = tmp_path / "k.csv"
    p.write_bytes("키,몸무게\n1,2\n".encode("cp949"))
    t = read_table(p)
    assert t.feature_names == ("키", "몸무게") and "read as CP949" in t.notes[0]


@pytest.mark.parametrize("suffix", [".parquet", ".feather"])
def test_a_columnar_file_is_read_a_column_at_a_time_as_its_whole_table(tmp_path, suffix):
    """Read column by column (never a whole decoded copy beside the table), a columnar file gives the table its
    whole pyarrow table gives: numbers with nulls as NaN, integers and booleans as numbers, labels and ids."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    from som_studio.core.data import file_columns, frame_table

    rng = np.random.default_rng(0)
    n = 3000
    whole = pa.table(
        {
            "a": pa.array(rng.normal(size=n), mask=rng.random(n) < 0.1),
            "kind": pa.array([f"k{i % 3}" for i in range(n)]),
            "b": pa.array(rng.integers(-5, 5, n), type=pa.int32()),
            "id": pa.array([f"r{i}" for i in range(n)]),
            "c": pa.array(rng.random(n) < 0.5),
            "d": pa.array(rng.normal(size=n).astype(np.float32)),
        }
    )
    path = tmp_path / f"t{suffix}"
    if suffix == ".parquet":
        pq.write_table(whole, path, row_group_size=700)  # several row groups: a column is read across them
    else:
        feather.write_feather(whole, path)
    got = read_table(path, labels="kind", id_column="id")
    want = frame_table(whole, labels="kind", id_column="id", source=str(path))
    assert got.feature_names == want.feature_names == ("a", "b", "c", "d")
    np.testing.assert_array_equal(got.values, want.values)
    np.testing.assert_array_equal(got.labels, want.labels)
    np.testing.assert_array_equal(got.ids, want.ids)
    assert np.isnan(got.values[:, 0]).sum() == whole.column("a").null_count > 0
    assert file_columns(path) == ("a", "kind", "b", "id", "c", "d")
    assert got.values.dtype == np.float64  # mixed types: float64
    # Float32 features only (labels beside them): a float32 table, as a float32 array gives, nulls as NaN.
    single = whole.select(["kind", "d"]).append_column(
        "e", pa.array(rng.random(n).astype(np.float32), mask=rng.random(n) < 0.2)
    )
    if suffix == ".parquet":
        pq.write_table(single, path)
    else:
        feather.write_feather(single, path)
    got = read_table(path, labels="kind")
    assert got.values.dtype == np.float32 and got.feature_names == ("d", "e")
    want = np.stack([single.column(c).to_numpy(zero_copy_only=False) for c in ("d", "e")], axis=1)
    np.testing.assert_array_equal(got.values, want)
    assert np.isnan(got.values[:, 1]).sum() == single.column("e").null_count > 0


def test_a_frame_of_float32_columns_is_a_float32_table():
    pd = pytest.importorskip("pandas")
    from som_studio.core.data import frame_table

    x = np.random.default_rng(0).random((50, 3)).astype(np.float32)
    frame = pd.DataFrame({"p": x[:, 0], "q": x[:, 1], "r": x[:, 2]})
    got = frame_table(frame)
    assert got.values.dtype == np.float32
    np.testing.assert_array_equal(got.values, x)
    frame["r"] = frame["r"].astype(np.float64)
    assert frame_table(frame).values.dtype == np.float64


def _read_both(p, monkeypatch, **roles):
    """``p`` read by pyarrow's parser where it can (its blocks a few rows here) and by the text reader alone:
    each one's table, or its error's words."""
    from som_studio.core.data import csv_reader

    monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 64)
    monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    out = []
    for arrow in (True, False):
        with monkeypatch.context() as m:
            if not arrow:
                m.setattr(csv_reader.CsvReader, "_arrow_reads", lambda self: False)
            try:
                t = read_table(p, **roles)
                chunks = list(CsvReader(p, **roles).chunks(rows=3))
                out.append((t, [(c.first, c.lines.tolist()) for c in chunks]))
            except DataError as exc:
                out.append(str(exc))
    return out


PLAIN = "a,b,c,kind,id\n" + "".join(f"{i}.5,{-i}e-3,{i * 7 % 5},k{i % 3},r{i}\n" for i in range(40))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (PLAIN, None),
        (PLAIN.replace(",", ";"), None),
        (PLAIN.replace(",", "\t").replace("\n", "\r\n"), None),
        (PLAIN.replace("k1,", " k1 ,").replace("\n1.5,", "\n1.5, "), None),  # cells with spaces about them
        ("\ufeff" + PLAIN.replace("\n3.5,", '\n"3.5",').replace("k2,r5", '"k,2",r5'), None),  # BOM, quotes
        (PLAIN.replace("\n7.5,", "\nNA,").replace("\n9.5,", "\nn/a,").replace("\n11.5,", "\n-NaN,"), None),
        (PLAIN.replace("\n20.5,", "\n\n# a note\n20.5,"), None),  # a blank and a comment line far down
        (PLAIN.replace("\n30.5,", "\n30.5x,"), "non-numeric value '30.5x' at line 32"),
        (PLAIN.replace("\n25.5,", "\ninf,"), "infinite value 'inf' at line 27, column 1 ('a')"),
        (PLAIN.replace("\n33.5,-33e-3,", "\n,,"), "data row 34 (line 35 of the file) has no known feature"),
        (PLAIN.replace("\n35.5,", "\n35.5,1,"), "ragged rows: line 37 has 6 columns"),
        (PLAIN.replace("\n0.5,", "\n# a note\n0.5,"), None),  # a comment first: read as text throughout
        ("\n".join(f"{i} {i + 1}  {i + 2}" for i in range(30)) + "\n", None),  # runs of spaces
    ],
)
def test_pyarrows_parse_reads_what_the_text_reader_reads_and_refuses_in_its_words(tmp_path, monkeypatch, text, words):
    p = tmp_path / "t.csv"
    p.write_bytes(text.encode())
    roles = {"labels": "kind", "id_column": "id", "ignore": ["c"]} if text.startswith(("a", "\ufeffa")) else {}
    fast, slow = _read_both(p, monkeypatch, **roles)
    if words is not None:
        assert fast == slow and words in fast
        return
    (t, chunks), (u, text_chunks) = fast, slow
    np.testing.assert_array_equal(t.values, u.values)
    assert t.values.dtype == u.values.dtype and t.feature_names == u.feature_names and t.notes == u.notes
    for got, want in ((t.labels, u.labels), (t.ids, u.ids)):
        assert (got is None and want is None) or got.tolist() == want.tolist()
    # The same rows at the same file lines, however the chunks were cut.
    assert [n for _f, lines in chunks for n in lines] == [n for _f, lines in text_chunks for n in lines]
    firsts = [f for f, _lines in chunks]
    assert firsts == sorted(firsts) and firsts[0] == 0


def test_a_plain_csv_is_parsed_by_pyarrow_and_a_late_blank_line_by_the_text_reader(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from som_studio.core.data import csv_reader

    p = tmp_path / "t.csv"
    p.write_text(PLAIN)
    assert not CsvReader(p)._arrow_reads()  # a small file: reading it costs less than importing pyarrow
    monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 64)
    monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    skipped = []
    real = csv_reader.CsvReader._text_chunks
    monkeypatch.setattr(
        csv_reader.CsvReader, "_text_chunks", lambda self, rows, skip=0: skipped.append(skip) or real(self, rows, skip)
    )
    assert read_table(p, labels="kind", id_column="id").values.shape == (40, 3) and skipped == []
    p.write_text(PLAIN.replace("\n30.5,", "\n\n30.5,"))
    t = read_table(p, labels="kind", id_column="id")
    assert t.values.shape == (40, 3) and len(skipped) == 1 and 20 <= skipped[0] <= 30
    np.testing.assert_array_equal(t.values[:, 0], np.arange(40) + 0.5)


@pytest.mark.parametrize("name", ["t.csv.gz", "t.TSV.GZ", "t.txt.gz"])
def test_a_gzipd_table_reads_as_its_text_by_either_parser(tmp_path, monkeypatch, name):
    """The text reader and pyarrow's both read a gzip'd table as its text: the same values, names, labels, ids
    and file lines, and pyarrow parses it whole (its blocks a few rows here)."""
    pytest.importorskip("pyarrow")
    from som_studio.core.data import csv_reader

    text = PLAIN if ".csv" in name else PLAIN.replace(",", "\t")
    plain, zipped = tmp_path / name[: -len(".gz")], tmp_path / name
    plain.write_text(text)
    zipped.write_bytes(gzip.compress(text.encode()))
    roles = {"labels": "kind", "id_column": "id", "ignore": ["c"]}
    for (t, chunks), (u, want) in zip(
        _read_both(zipped, monkeypatch, **roles), _read_both(plain, monkeypatch, **roles)
    ):
        np.testing.assert_array_equal(t.values, u.values)
        assert t.feature_names == u.feature_names == ("a", "b") and chunks == want
        assert t.labels.tolist() == u.labels.tolist() and t.ids.tolist() == u.ids.tolist()
        assert t.source == str(zipped)
    skipped = []
    real = csv_reader.CsvReader._text_chunks
    monkeypatch.setattr(
        csv_reader.CsvReader, "_text_chunks", lambda self, rows, skip=0: skipped.append(skip) or real(self, rows, skip)
    )
    assert read_table(zipped, **roles).values.shape == (40, 2) and skipped == []  # pyarrow decompressed it all


def test_a_gzipd_files_text_is_sniffed_and_measured_not_its_compressed_bytes(tmp_path, monkeypatch):
    """Its encoding is told from its text (compressed bytes hold NULs and are no code page's), and its text's
    length, not its size on disk, chooses the parser."""
    from som_studio.core.data import csv_reader

    p = tmp_path / "t.csv.gz"
    text = PLAIN.replace("k1", "café").encode("cp1252")
    p.write_bytes(gzip.compress(text))
    r = CsvReader(p, labels="kind", id_column="id")
    assert r.encoding == "cp1252" and r.notes == [
        f"{p}: not UTF-8 (byte 0xe9 at offset {text.index(b'\xe9')} is not UTF-8): read as Windows-1252, the "
        "likeliest encoding of its text (a guess); if its words look wrong, save it as CSV UTF-8"
    ]
    assert "café" in read_table(p, labels="kind", id_column="id").labels.tolist()
    p.write_bytes(gzip.compress(PLAIN.encode()))
    assert CsvReader(p).text_bytes == len(PLAIN) > 2 * p.stat().st_size
    monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", len(PLAIN))
    assert CsvReader(p)._arrow_reads() == (importlib.util.find_spec("pyarrow") is not None)
    monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", len(PLAIN) + 1)
    assert not CsvReader(p)._arrow_reads()
    p.write_bytes(gzip.compress(PLAIN.encode("utf-16")))
    with pytest.raises(DataError, match="t.csv.gz: the text is UTF-16 encoded"):
        read_table(p)


@pytest.mark.parametrize("kind", ["pandas", "polars", "arrow"])
def test_a_frames_integer_ids_and_labels_read_as_the_same_table_written_to_csv(tmp_path, kind):
    pd = pytest.importorskip("pandas")
    from som_studio.core.data.frames import frame_features, frame_table

    frame = pd.DataFrame({"id": [115, 63, 34, 7], "a": [0.5, 1.5, 2.5, 3.5], "cls": [2, 0, 1, 2]})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    if kind == "polars":
        frame = pytest.importorskip("polars").from_pandas(frame)
    elif kind == "arrow":
        frame = pytest.importorskip("pyarrow").Table.from_pandas(frame)
    want = read_table(path, labels="cls", id_column="id")
    got = frame_table(frame, labels="cls", id_column="id")
    assert list(got.ids) == list(want.ids) == ["115", "63", "34", "7"]  # not "115.0"
    assert list(got.labels) == list(want.labels) == ["2", "0", "1", "2"]
    assert list(frame_features(frame, ["a"], "id")[1]) == ["115", "63", "34", "7"]  # a projection's ids


def test_a_frames_missing_ids_read_as_empty_text():
    pd = pytest.importorskip("pandas")
    from som_studio.core.data.frames import frame_features

    frame = pd.DataFrame({"id": pd.array([115, None, 34], dtype="Int64"), "a": [0.5, 1.5, 2.5]})
    assert list(frame_features(frame, ["a"], "id")[1]) == ["115", "", "34"]


@pytest.mark.parametrize("arrow", [True, False])
@pytest.mark.parametrize(
    "text",
    [
        "a;b;c\n5,1;3,5;1\n4,9;3,0;2\n1.234,5;-0,25;3\n",  # some whole numbers, thousands grouped by points
        "5,1;3,5;1\n4,9;3,0;2\n1.234,5;-0,25;3\n",  # no header: split on the semicolons, not the commas
        "a\tb\tc\n5,1\t3,5\t1\n4,9\t3,0\t2\n1.234,5\t-0,25\t3\n",
    ],
    ids=["semicolons", "no-header", "tabs"],
)
def test_numbers_with_decimal_commas_are_read_where_commas_do_not_separate_the_cells(
    tmp_path, monkeypatch, text, arrow
):
    from som_studio.core.data import csv_reader

    p = tmp_path / "euro.csv"
    p.write_text(text)
    if arrow:  # pyarrow's blocks of a few rows: the grouped thousands are read by the text reader after them
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 32)
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    t = read_table(p)
    assert t.values.tolist() == [[5.1, 3.5, 1.0], [4.9, 3.0, 2.0], [1234.5, -0.25, 3.0]]
    assert t.notes == (f"{p}: numbers are written with a decimal comma (5,1), as a spreadsheet saves them in many "
                       "languages, and are read so",)  # fmt: skip


@pytest.fixture(params=["pyarrow", "lines"])
def either_parser(request, monkeypatch):
    """Each test twice: the file read by pyarrow's parser (whatever its size), then by the line reader."""
    from som_studio.core.data import csv_reader

    if request.param == "pyarrow":
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    return request.param


def test_decimal_commas_with_exponents_or_no_digits_on_one_side_read_alike_by_both_parsers(tmp_path, either_parser):
    p = tmp_path / "euro.csv"
    p.write_text("a;b\n5,1;3,5\n1,5e3;,5\n5,;-,25\n2,5E-3;+7,\n")
    assert read_table(p).values.tolist() == [[5.1, 3.5], [1500.0, 0.5], [5.0, -0.25], [0.0025, 7.0]]


@pytest.mark.parametrize("sep", [";", "\t"], ids=["semicolons", "tabs"])
def test_a_headerless_file_of_such_decimal_commas_is_split_on_its_separator_alike_by_both_parsers(
    tmp_path, sep, either_parser
):
    # No header to guide the sniffing: the first line's cells tell the separator, so ",5" and "5," must count there.
    p = tmp_path / "euro.csv"
    p.write_text("\n".join(sep.join(r) for r in [[",5", "5,"], ["1,5e3", "-,25"], ["2,5E-3", "+7,"]]) + "\n")
    assert read_table(p).values.tolist() == [[0.5, 5.0], [1500.0, -0.25], [0.0025, 7.0]]


def test_a_decimal_comma_first_seen_below_the_lines_sniffed_is_refused_alike_by_both_parsers(tmp_path, either_parser):
    # Whether commas are decimal points is decided on the first lines: decided later, a "1.234" above, read as
    # 1.234 already, would have meant 1234. So a decimal comma seen later is refused, naming the cell.
    p = tmp_path / "euro.csv"
    p.write_text("a;b\n1;2\n3;4\n5;6\n7;8\n5,1;9\n")
    with pytest.raises(DataError) as info:
        read_table(p)
    assert str(info.value) == (
        f"{p}: '5,1' at line 6, column 1 ('a') has a decimal comma; numbers are read with a decimal point: save the "
        "table with '.' as its decimal separator"
    )


@pytest.mark.parametrize("cell", [",", "-,", ",e3", "1,5e", "1,,5"])
def test_a_comma_that_makes_no_number_is_refused_naming_the_cell(tmp_path, cell):
    p = tmp_path / "euro.csv"
    p.write_text(f"a;b\n5,1;3,5\n{cell};2\n")
    with pytest.raises(DataError, match=f"'{cell}' at line 3, column 1"):
        read_table(p)


def test_a_point_in_a_table_of_decimal_commas_is_refused_as_it_may_group_thousands(tmp_path):
    p = tmp_path / "euro.csv"
    p.write_text("a;b\n5,1;3,5\n1.234;2\n")
    with pytest.raises(DataError) as info:
        read_table(p)
    assert str(info.value) == (
        f"{p}: '1.234' at line 3, column 1 ('a') has a point, but the file writes numbers with a decimal comma, "
        "where a point groups thousands: write it with a comma (1,234) or without the point"
    )


def test_a_decimal_comma_where_commas_separate_the_cells_is_named_as_such(tmp_path):
    p = tmp_path / "quoted.csv"
    p.write_text('a,b\n"5,1",2\n3,4\n')
    with pytest.raises(DataError, match=r"'5,1' at line 2, column 1 \('a'\) has a decimal comma"):
        read_table(p)


@pytest.mark.parametrize("cell", ['"1,234"', '"12,345,678.5"'])
def test_numbers_that_may_group_thousands_by_commas_are_named_as_such(tmp_path, cell):
    # "1,234" was said to have a decimal comma: in a table of counts it more likely groups thousands.
    p = tmp_path / "counts.csv"
    p.write_text(f"a,b\n{cell},2\n3,4\n")
    with pytest.raises(DataError, match=r"at line 2, column 1 \('a'\) has a comma, grouping thousands or as a decimal"):
        read_table(p)


def test_a_column_named_nearly_so_is_suggested_wherever_it_lies_in_the_header(tmp_path):
    """A cytometry table's columns are many: the one meant was past the list's end, its case mistyped."""
    import pandas as pd

    from som_studio.core.data import stream

    names = ["cell_id", *(f"CD{k}" for k in range(20)), "sample"]
    frame = pd.DataFrame(np.arange(4 * len(names)).reshape(4, len(names)), columns=names)
    frame.to_csv(tmp_path / "cells.csv", index=False)
    frame.to_parquet(tmp_path / "cells.parquet")
    for path in (tmp_path / "cells.csv", tmp_path / "cells.parquet"):
        for flag, given, meant in (("labels", "Sample", "sample"), ("id_column", "cellid", "cell_id")):
            for read in (read_table, stream.open_source):
                with pytest.raises(
                    DataError, match=rf"no such column; did you mean '{meant}'\? The columns are cell_id"
                ):
                    read(path, **{flag: given})
    with pytest.raises(DataError, match=r"--labels kind: no such column; the columns are cell_id"):
        read_table(tmp_path / "cells.csv", labels="kind")  # nothing like it: no guess


@pytest.mark.parametrize("arrow", [True, False])
def test_rows_a_spreadsheet_leaves_empty_below_the_table_are_left_out_and_said_to_be(tmp_path, monkeypatch, arrow):
    from som_studio.core.data import csv_reader, stream

    rows = "".join(f"{i}.5;{i % 3};k{i % 2}\r\n" for i in range(30))
    p = tmp_path / "sheet.csv"
    p.write_text("a;b;kind\r\n" + rows + ";;\r\n" * 4, newline="")
    if arrow:  # pyarrow's blocks of a few rows: the empty ones in a block of their own, read here
        pytest.importorskip("pyarrow")
        monkeypatch.setattr(csv_reader, "ARROW_BLOCK_BYTES", 64)
        monkeypatch.setattr(csv_reader, "ARROW_MIN_BYTES", 0)
    t = read_table(p, labels="kind")
    assert t.values.shape == (30, 2) and t.labels[-1] == "k1"
    note = (
        f"{p}: its last 4 rows (lines 32-35) have nothing in any cell, as a spreadsheet leaves below a table, "
        "and are left out"
    )
    assert note in t.notes
    src = stream.open_source(p, labels="kind")
    assert src.rows == 30 and note in src.notes
    np.testing.assert_array_equal(np.concatenate([b.values for b in src.reader(7)]), t.values)
    # Within the table, such a row is a row with no value: refused as before, by its line.
    p.write_text("a;b;kind\r\n" + rows.replace("\r\n", "\r\n;;\r\n", 1) + ";;\r\n", newline="")
    with pytest.raises(DataError, match=r"data row 2 \(line 3 of the file\) has no known feature value"):
        read_table(p, labels="kind")
