"""Sources that stream (som_studio.core.data.stream): folders, globs and files read in batches."""

from __future__ import annotations

import gzip
import os
import shlex
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from som_studio.core.data import (
    DataError,
    moments,
    stream,
)


def values(rows: int = 1000, features: int = 3, seed: int = 0, missing: float = 0.05) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, features)) * np.arange(1, features + 1)
    x[rng.random(x.shape) < missing] = np.nan
    x[np.isnan(x).all(axis=1), 0] = 1.0  # every row knows a feature
    return x


def write_parquet(folder: Path, x: np.ndarray, cuts: list[int], group: int = 128, labels: bool = True) -> None:
    """``x`` split into files at ``cuts``, row groups of ``group`` rows, a text label column in the middle."""
    folder.mkdir(parents=True, exist_ok=True)
    edges = [0, *cuts, len(x)]
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        cols = {"a": x[a:b, 0]}
        if labels:
            cols["kind"] = [f"k{j % 3}" for j in range(a, b)]
        cols.update({f"f{j}": x[a:b, j] for j in range(1, x.shape[1])})
        pq.write_table(pa.table(cols), folder / f"part{i:02d}.parquet", row_group_size=group)


def test_a_folder_reads_as_its_files_in_order(tmp_path):
    x = values()
    write_parquet(tmp_path / "d", x, [300, 650])
    src = stream.open_source(tmp_path / "d", labels="kind")
    assert (src.rows, src.files, src.features) == (1000, 3, 3)
    assert src.feature_names == ("a", "f1", "f2")
    assert src.bytes == sum(f.stat().st_size for f in (tmp_path / "d").iterdir())
    got, labels, _ids = src.read_all()
    np.testing.assert_array_equal(got, x)
    assert list(labels[:4]) == ["k0", "k1", "k2", "k0"]
    batches = list(src.reader(333))
    assert [b.rows for b in batches] == [333, 333, 333, 1]
    assert [b.first for b in batches] == [0, 333, 666, 999]


def test_a_glob_arrow_npy_and_csv(tmp_path):
    x = values(400, 2, missing=0.0)
    for i in range(2):
        feather.write_feather(
            pa.table({"p": x[i * 200 : (i + 1) * 200, 0], "q": x[i * 200 : (i + 1) * 200, 1]}), tmp_path / f"a{i}.arrow"
        )
        np.save(tmp_path / f"n{i}.npy", x[i * 200 : (i + 1) * 200])
        rows = "\n".join(f"{u:.17g},{v:.17g}" for u, v in x[i * 200 : (i + 1) * 200])
        (tmp_path / f"c{i}.csv").write_text("p,q\n" + rows + "\n")
    for pattern in ("a*.arrow", "n*.npy", "c*.csv"):
        src = stream.open_source(str(tmp_path / pattern))
        assert src.rows == 400 and src.files == 2
        np.testing.assert_array_equal(src.read_all()[0], x)


@pytest.mark.parametrize("groups", [1, 40], ids=["thread-ends-first", "queue-full"])
def test_a_reader_dropped_unread_lets_its_thread_end(tmp_path, groups):
    # One batch: its thread queues it and the end, and ends. Many: its queue fills and it waits to put the next;
    # only the reader, collected once dropped, can tell it to stop.
    write_parquet(tmp_path / "d", values(50 * groups), [], group=50)
    reader = stream.open_source(tmp_path / "d", labels="kind").reader(50, workers=1)
    thread = reader._thread
    if groups > 1:
        end = time.monotonic() + 30
        while not reader._queue.full():
            assert time.monotonic() < end, "the reader's queue never filled"
            time.sleep(0.01)
    del reader
    thread.join(10)
    assert not thread.is_alive()


def test_a_position_saved_and_restored_continues_with_the_next_row(tmp_path):
    x = values()
    write_parquet(tmp_path / "d", x, [450], group=100)
    src = stream.open_source(tmp_path / "d", labels="kind")
    reader = src.reader(70)
    first = [next(reader) for _ in range(4)]
    state = reader.get_state()
    assert state == {"row": 280}
    rest = list(reader)
    again = src.reader(70, state=state)
    np.testing.assert_array_equal(np.concatenate([b.values for b in again]), x[280:])
    np.testing.assert_array_equal(np.concatenate([b.values for b in first + rest]), x)
    reader = src.reader(70)
    reader.set_state({"row": 999})
    assert [b.values.shape[0] for b in reader] == [1]


def test_float32_batches_are_the_float64_ones_rounded_and_transformed_on_the_reader(tmp_path):
    # float32, integer and float64 columns with missing values; batches that straddle row groups and
    # files.
    x = values(700, 3)
    folder = tmp_path / "d"
    folder.mkdir()
    for i, (a, b) in enumerate([(0, 250), (250, 700)]):
        cols = {
            "a": pa.array(x[a:b, 0], pa.float32(), from_pandas=True),
            "n": pa.array(np.arange(a, b) * 1_000_003, pa.int64()),
            "c": x[a:b, 2],
        }
        pq.write_table(pa.table(cols), folder / f"part{i}.parquet", row_group_size=90)
    src = stream.open_source(folder)
    wide = list(src.reader(100))
    narrow = list(src.reader(100, dtype=np.float32))
    doubled = list(src.reader(100, transform=lambda v: 2 * v))
    assert [b.first for b in narrow] == [b.first for b in wide] == list(range(0, 700, 100))
    for w, n, d in zip(wide, narrow, doubled, strict=True):
        assert n.values.dtype == np.float32 and w.values.dtype == np.float64
        np.testing.assert_array_equal(n.values, w.values.astype(np.float32))
        np.testing.assert_array_equal(d.values, 2 * w.values)
    whole = np.concatenate([b.values for b in wide])
    np.testing.assert_array_equal(whole[:, 0], x[:, 0].astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(whole[:, 1], np.arange(700) * 1_000_003.0)
    np.testing.assert_array_equal(whole[:, 2], x[:, 2])


def test_batches_checked_and_scaled_on_several_threads_come_in_order_as_on_one(tmp_path):
    x = values()
    write_parquet(tmp_path / "d", x, [450], group=100)
    src = stream.open_source(tmp_path / "d", labels="kind")

    def doubled(v: np.ndarray) -> np.ndarray:
        time.sleep(0.005)  # the reading thread reaches the end while batches are still being finished
        return 2 * v

    one = list(src.reader(70, transform=doubled, workers=1))
    many = list(src.reader(70, transform=doubled, workers=3))
    assert [b.first for b in many] == [b.first for b in one] == list(range(0, 1000, 70))
    for a, b in zip(one, many, strict=True):
        np.testing.assert_array_equal(b.values, a.values)
        assert list(b.labels) == list(a.labels)
    reader = src.reader(70, workers=3)
    _ = [next(reader) for _ in range(4)]
    assert reader.get_state() == {"row": 280}
    reader.close()
    x[777, 1] = np.inf  # row 328 of the second file
    write_parquet(tmp_path / "bad", x, [450], group=100)
    bad = stream.open_source(tmp_path / "bad", labels="kind")
    reader = bad.reader(70, workers=3)
    with pytest.raises(DataError, match=r"part01.parquet: infinite value inf at row 328, column f1"):
        list(reader)
    assert list(reader) == []


def test_shares_split_the_units_deterministically(tmp_path):
    x = values()
    write_parquet(tmp_path / "d", x, [450], group=100)
    src = stream.open_source(tmp_path / "d", labels="kind")
    parts = [np.concatenate([b.values for b in src.reader(64, share=(i, 3))]) for i in range(3)]
    assert [len(p) for p in parts] == [src.share_rows(i, 3) for i in range(3)]
    np.testing.assert_array_equal(np.concatenate(parts), x)
    assert min(len(p) for p in parts) > 0


def test_statistics_merge_to_the_in_memory_figures(tmp_path):
    x = values(900, 4, missing=0.1)
    write_parquet(tmp_path / "d", x, [200, 500], labels=False)
    m = moments.statistics(stream.open_source(tmp_path / "d"), 77)
    assert m.missing and m.rows == 900
    np.testing.assert_allclose(m.mean, np.nanmean(x, axis=0), rtol=1e-13)
    np.testing.assert_array_equal(m.low, np.nanmin(x, axis=0))
    filled = np.where(np.isnan(x), np.nanmean(x, axis=0), x)
    np.testing.assert_allclose(m.comoments() / 899, np.cov(filled, rowvar=False), rtol=1e-12, atol=1e-13)
    rows = np.array([899, 3, 3, 500])
    src = stream.open_source(tmp_path / "d")
    np.testing.assert_array_equal(moments.gather_rows(src, rows, 64), x[rows])


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda d: None, "holds no data files"),
        (lambda d: (np.save(d / "x.npy", np.ones((3, 2))), (d / "y.csv").write_text("1,2\n")), "mixes formats"),
        (lambda d: pq.write_table(pa.table({"a": [1.0], "c": [2.0]}), d / "z.parquet"), "'f1'"),
        (lambda d: pq.write_table(pa.table({"a": [1.0], "f1": ["x"], "f2": [1.0]}), d / "z.parquet"), "'f1' is"),
        (lambda d: (d / "z.parquet").write_bytes(b"PAR1 not really"), "z.parquet: cannot read as Parquet"),
    ],
)
def test_bad_folders_are_refused_naming_the_file_and_column(tmp_path, make, words):
    d = tmp_path / "d"
    if "no data" not in words and "mixes" not in words:
        write_parquet(d, values(50, 3), [], labels=False)
    d.mkdir(exist_ok=True)
    make(d)
    with pytest.raises(DataError, match=words.replace("(", r"\(")):
        stream.open_source(d)


def test_files_whose_columns_are_all_missing_or_categories_read_with_the_others(tmp_path):
    # pandas writes a label column of categories dictionary-encoded, and one with no value at all of type null.
    d = tmp_path / "d"
    d.mkdir()
    kinds = pa.array(["a", "b", "a"])
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "kind": kinds, "y": [1.0, 2.0, 3.0]}), d / "p0.parquet")
    pq.write_table(
        pa.table({"x": [4.0, 5.0, 6.0], "kind": kinds.dictionary_encode(), "y": [3.0, 2.0, 1.0]}), d / "p1.parquet"
    )
    nothing = pa.nulls(3)
    pq.write_table(pa.table({"x": [7.0, 8.0, 9.0], "kind": nothing, "y": nothing}), d / "p2.parquet")
    values, labels, _ = stream.open_source(d, labels="kind").read_all()
    assert list(labels) == ["a", "b", "a"] * 2 + [""] * 3
    np.testing.assert_array_equal(values[6:, 1], np.nan)
    # A feature column of text after files where it held numbers, or none at all, is refused by name, in that file.
    pq.write_table(pa.table({"x": [1.0], "kind": ["c"], "y": ["oops"]}), d / "p3.parquet")
    with pytest.raises(DataError, match="p3.parquet: column 'y' is text here but number in p0.parquet"):
        stream.open_source(d, labels="kind")
    e = tmp_path / "e"
    e.mkdir()
    (d / "p2.parquet").rename(e / "p2.parquet")
    (d / "p3.parquet").rename(e / "p3.parquet")
    with pytest.raises(DataError, match=r"p3.parquet: column 'y' is not numeric \(string\)"):
        stream.open_source(e, labels="kind")
    # Text and numbers in one column across files: refused, named in words.
    pq.write_table(pa.table({"x": [1.0], "kind": [2.0], "y": [1.0]}), d / "p3.parquet")
    with pytest.raises(DataError, match="column 'kind' is number here but text in p0.parquet"):
        stream.open_source(d, labels="kind")


def test_a_partitioned_folder_is_named_by_a_pattern_and_subfolders_beside_files_are_said_to_be_left_out(tmp_path):
    x = values(60, 3, missing=0.0)
    for part in ("sample=A", "sample=B"):  # Hive's and Spark's layout
        write_parquet(tmp_path / "hive" / part, x, [], labels=False)
    with pytest.raises(DataError) as info:
        stream.open_source(tmp_path / "hive")
    pattern = tmp_path / "hive" / "*" / "*.parquet"
    assert str(info.value).endswith(
        f"its subfolders do (sample=A, sample=B): name them with a pattern, as {shlex.quote(str(pattern))}"
    )
    assert stream.open_source(str(pattern)).rows == 120  # as the message says
    write_parquet(tmp_path / "hive", x, [], labels=False)  # files of its own beside them
    assert stream.open_source(tmp_path / "hive").notes == (
        f"{tmp_path / 'hive'}: left out its subfolders sample=A, sample=B: a folder's own files are read; theirs "
        "with a pattern",
    )
    (tmp_path / "bz2").mkdir()
    (tmp_path / "bz2" / "a.csv.bz2").write_bytes(b"")
    with pytest.raises(DataError, match=r"holds no data files .*; it holds a.csv.bz2$"):
        stream.open_source(tmp_path / "bz2")


def test_gzipd_csv_files_stream_as_their_text_beside_plain_ones_and_by_a_glob(tmp_path):
    """A folder may mix ``.csv`` and ``.csv.gz`` files (one format: CSV); each reads as its text would, whole or
    in batches across the files."""
    x = values(300, 3)
    plain, mixed, zipped = (tmp_path / n for n in ("plain", "mixed", "zipped"))
    for d in (plain, mixed, zipped):
        d.mkdir()
    for i, (a, b) in enumerate([(0, 100), (100, 220), (220, 300)]):
        cells = ([("" if np.isnan(v) else repr(float(v))) for v in r] for r in x[a:b])  # an empty cell: missing
        text = ("a,b,c\n" + "".join(",".join(r) + "\n" for r in cells)).encode()
        (plain / f"p{i}.csv").write_bytes(text)
        (mixed / (f"p{i}.csv.gz" if i % 2 else f"p{i}.csv")).write_bytes(gzip.compress(text) if i % 2 else text)
        (zipped / f"p{i}.csv.gz").write_bytes(gzip.compress(text))
    want = stream.open_source(plain)
    for spec in (mixed, str(zipped / "*.csv.gz")):
        src = stream.open_source(spec)
        assert (src.format, src.rows, src.files, src.feature_names) == ("csv", 300, 3, ("a", "b", "c"))
        assert src.bytes == sum(p.stat().st_size for p in src.paths)  # on disk: the compressed bytes
        np.testing.assert_array_equal(src.read_all()[0], x)
        batches = list(src.reader(64))
        assert [b.first for b in batches] == [b.first for b in want.reader(64)]
        np.testing.assert_array_equal(np.concatenate([b.values for b in batches]), x)


@pytest.mark.parametrize("glob", [False, True])
def test_a_readme_beside_the_data_files_is_left_out_and_said_to_be(tmp_path, glob):
    x = values(40, 2, missing=0.0)
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.csv").write_text("p,kind\n" + "".join(f"{float(u)!r},k{i % 2}\n" for i, u in enumerate(x[:, 0])))
    (d / "README.txt").write_text("hi\n")
    spec = str(d / "*") if glob else d
    src = stream.open_source(spec, labels="kind")
    assert src.paths == (d / "a.csv",) and src.rows == 40
    assert src.notes == (
        f"{spec}: left out README.txt: a .txt file beside other data files is taken for a note on them; to read "
        f".txt tables, name them alone ('{d / '*.txt'}')",
    )
    np.save(d / "a.npy", x)  # beside a .npy file too, never a second format
    (d / "a.csv").unlink()
    assert stream.open_source(spec).format == "npy"


def test_a_folder_of_txt_tables_alone_reads_them(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    for i in range(2):
        (d / f"t{i}.txt").write_text("p q\n" + "".join(f"{i}.5 {j}\n" for j in range(10)))
    for spec in (d, str(d / "*.txt")):
        src = stream.open_source(spec)
        assert src.files == 2 and src.rows == 20 and src.feature_names == ("p", "q") and src.notes == ()


def _indexed_csv(path: Path, x: np.ndarray, start: int) -> None:
    """``x`` as pandas' ``to_csv`` writes it: an unnamed index column counting the rows from ``start``."""
    path.write_text(",a,b\n" + "".join(f"{start + i},{float(u)!r},{float(v)!r}\n" for i, (u, v) in enumerate(x)))


def test_a_folder_of_csv_parts_leaves_out_their_row_index_and_says_so_once(tmp_path):
    x = values(90, 2, missing=0.0)
    d = tmp_path / "d"
    d.mkdir()
    for i, (a, b) in enumerate([(0, 30), (30, 60), (60, 90)]):
        _indexed_csv(d / f"part{i}.csv", x[a:b], a)
    src = stream.open_source(d)
    assert src.columns == ("x1", "a", "b") and src.feature_names == ("a", "b") and src.rows == 90
    np.testing.assert_array_equal(src.read_all()[0], x)
    assert src.notes == (
        f"{d / 'part0.csv'}: column 1 has no name in the header and counts the rows from 0, as pandas writes a "
        "table's index: it is left out; to train on it, name it in the header",
        f"2 other files have notes of their own; the first one's: {d / 'part1.csv'}: column 1 has no name in the "
        "header and counts the rows from 30, as pandas writes a table's index: it is left out; to train on it, name "
        "it in the header",
    )
    with_ids = stream.open_source(d, id_column="x1")  # given a role, it is read in it
    assert with_ids.feature_names == ("a", "b") and with_ids.read_all()[2][-1] == "89"
    assert not any("counts the rows" in note for note in with_ids.notes)
    (d / "part1.csv").write_text((d / "part1.csv").read_text().replace("\n31,", "\n3.5,"))  # a feature now
    with pytest.raises(DataError) as info:
        stream.open_source(d)
    assert str(info.value) == (
        f"{d / 'part1.csv'}: its column 1 ('x1') is data, but part0.csv's counts the rows, as pandas writes a "
        "table's index, and is left out; every file must have the same columns: name the column in the headers"
    )


def test_a_pandas_index_written_with_the_rows_is_left_out_streamed_and_in_memory(tmp_path):
    pd = pytest.importorskip("pandas")
    from som_studio.core.data import read_table

    x = values(400, 2, missing=0.0)
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "cell": np.random.default_rng(1).permutation(400) * 7})
    d = tmp_path / "filtered"
    d.mkdir()
    # A filtered frame keeps its row numbers as its index: pandas writes them as ``__index_level_0__``.
    frame[frame.a > 0].to_parquet(d / "a.parquet")
    frame[frame.a <= 0].to_parquet(d / "b.parquet")
    src = stream.open_source(d)
    assert src.columns[-1] == "__index_level_0__" and src.feature_names == ("a", "b", "cell")
    assert src.notes == (
        f"{d / 'a.parquet'}: column '__index_level_0__' holds the index of the pandas table that wrote the file: it "
        "is left out of the features, as pandas reads it back (name it with --id to list examples by it)",
    )
    assert read_table(d / "a.parquet").feature_names == ("a", "b", "cell")
    # A named index too (one pyarrow cannot store as a range), unless a role names it.
    frame.set_index("cell").to_parquet(tmp_path / "named.parquet")
    assert stream.open_source(tmp_path / "named.parquet").feature_names == ("a", "b")
    table = read_table(tmp_path / "named.parquet", id_column="cell")
    assert table.feature_names == ("a", "b") and table.ids[0] == str(frame.cell[0]) and not table.notes
    assert stream.open_source(tmp_path / "named.parquet", ignore=["cell"]).notes == ()


def test_a_column_numbering_the_rows_is_said_to_be_trained_whatever_its_name(tmp_path):
    # pandas' to_csv writes a shuffled frame's index as an unnamed first column; a Korean table numbers its rows
    # under 번호. Both trained as features, with no word said (QE 3.7 against 0.26 without the index).
    from som_studio.core.data import read_table

    rng = np.random.default_rng(0)
    order = rng.permutation(30)
    rows = "".join(f"{k},{rng.normal():.4f},{rng.normal():.4f}\n" for k in order)
    (tmp_path / "shuffled.csv").write_text(",a,b\n" + rows)
    notes = read_table(tmp_path / "shuffled.csv").notes
    assert (
        f"{tmp_path / 'shuffled.csv'}: column 'x1' holds a different whole number on every row ({order[0]}, "
        f"{order[1]}, ...), and is trained as a feature; if it is an identifier, carry it with --id x1 or leave it "
        "out with --ignore x1"
    ) in notes, notes
    rows = "".join(f"{k + 1},{rng.normal():.4f},{rng.integers(0, 10**6)}\n" for k in range(30))
    (tmp_path / "numbered.csv").write_text("번호,a,count\n" + rows)
    notes = read_table(tmp_path / "numbered.csv").notes
    assert [n.split(": ")[1].split(" holds")[0] for n in notes] == ["column '번호'"], notes  # count: unordered
    assert read_table(tmp_path / "numbered.csv", ignore=("번호",)).notes == ()
    # Too few rows to tell a numbering from chance.
    (tmp_path / "few.csv").write_text("n,a\n" + "".join(f"{k},{rng.normal():.3f}\n" for k in range(19)))
    assert read_table(tmp_path / "few.csv").notes == ()


def test_a_feature_column_named_as_an_identifier_is_said_to_be_trained(tmp_path):
    # A cell_id column of unique integers trained as a feature made the map of the numbering, without a word.
    from som_studio.core.data import read_table

    rows = "".join(f"{i * 0.5},{i % 7},{1000 + i},{1.33 + i % 5 / 100}\n" for i in range(40))
    (tmp_path / "cells.csv").write_text("CD3,CD45,cell_id,refractive_index\n" + rows)
    said = (
        f"{tmp_path / 'cells.csv'}: column 'cell_id' is named like an identifier, and is trained as a feature; if "
        "it is an identifier, carry it with --id cell_id or leave it out with --ignore cell_id"
    )
    assert read_table(tmp_path / "cells.csv").notes == (said,)
    assert stream.open_source(tmp_path / "cells.csv").notes == (said,)
    assert read_table(tmp_path / "cells.csv", id_column="cell_id").notes == ()  # carried: nothing to say


def test_a_text_feature_column_is_refused_by_name(tmp_path):
    write_parquet(tmp_path / "d", values(50, 2), [])
    with pytest.raises(DataError, match="'kind' is not numeric"):
        stream.open_source(tmp_path / "d")


def test_a_file_that_changes_during_a_pass_stops_it_naming_the_row_group(tmp_path):
    x = values()
    write_parquet(tmp_path / "d", x, [500], group=100)
    src = stream.open_source(tmp_path / "d", labels="kind")
    later = tmp_path / "d" / "part01.parquet"
    reader = src.reader(100)
    next(reader)
    later.write_bytes(later.read_bytes()[:-40])  # truncated while the run reads the first file
    os.utime(later, ns=(1, 1))
    with pytest.raises(DataError, match=r"part01.parquet, row group 0: the file changed"):
        list(reader)


@pytest.mark.parametrize("workers", [1, 3])
def test_a_npy_file_cut_short_while_its_rows_are_read_stops_the_pass_naming_it(tmp_path, workers):
    """Its rows are read when a batch is filled, not mapped: a mapped file cut short (saved over) killed the
    process with a bus error."""
    np.save(tmp_path / "p0.npy", values(3000, missing=0.0))
    src = stream.open_source(tmp_path)
    reader = src.reader(100, workers=workers)
    next(reader)
    os.truncate(tmp_path / "p0.npy", 1000)
    with pytest.raises(DataError, match=r"p0.npy, rows 1-3000: the file changed while the run read it"):
        list(reader)


@pytest.mark.parametrize("change", ["append", "cut mid-line"])
def test_a_csv_file_changed_while_a_pass_reads_it_stops_the_pass(tmp_path, change):
    """A CSV is one unit, its rows counted when it opened: rows added or cut since are not the ones counted."""
    x = values(3000, missing=0.0)
    path = tmp_path / "t.csv"
    path.write_text("a,b,c\n" + "".join(f"{u:.17g},{v:.17g},{w:.17g}\n" for u, v, w in x))
    src = stream.open_source(path)
    reader = src.reader(100)
    next(reader)
    if change == "append":
        with path.open("a") as f:
            f.write("1,2,3\n" * 50)
    else:
        os.truncate(path, path.stat().st_size // 2 + 3)
    with pytest.raises(DataError, match=r"t.csv: the file changed while the run read it"):
        list(reader)


def test_readers_of_big_batches_get_fewer_threads(tmp_path, monkeypatch):
    """Each thread holds a batch: at 2^20 rows x 3 features (24 MiB a batch) ten fit the read-ahead; at 2^24, one."""
    x = values(300)
    write_parquet(tmp_path / "d", x, [150], group=100)
    src = stream.open_source(tmp_path / "d", labels="kind")
    monkeypatch.setattr(stream, "read_workers", lambda: 4)
    assert src.reader(1 << 20).workers == 4
    assert src.reader(1 << 24).workers == 1
    assert src.reader(1 << 24, workers=3).workers == 3  # asked for
