"""A CSV table read row by row with bounded memory: header and column roles first, then chunks of rows; messages
name the file's own lines.
"""

from __future__ import annotations

import csv
import importlib.util
import itertools
import math
import re
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core.data.checks import (
    DataError,
    check_known_rows,
    check_path,
    column_flag,
    data_suffix,
    no_such_column,
)
from som_studio.core.data.encoding import detect_encoding
from som_studio.core.data.files import READ_ERRORS, open_text, unreadable
from som_studio.core.data.table import default_feature_names
from som_studio.i18n import _, ngettext

#: :data:`MISSING`'s texts as messages write them (beside "an empty cell"): the spellings pandas's ``read_csv`` reads
#: as missing by default (but Windows C libraries' ``1.#IND`` family and Bloomberg's ``#N/A N/A``), here in any case,
#: so what ``train(pd.read_csv(path))`` reads as missing reads so here too: R's and databases' NA and NULL, Python's
#: None, Excel's #N/A.
MISSING_SHOWN = ("NA", "NaN", "N/A", "NULL", "None", "#N/A", "#NA", "<NA>")
# Cell texts read as a missing value (compared in lower case).
MISSING = frozenset({""} | {m.lower() for m in MISSING_SHOWN})
#: Other ways tables write "no value" (SPSS and SAS exports, hand-made tables): not read as missing (pandas does not
#: either: a "-" or "." may be a value), but a cell holding one is refused as such, not as a text column's first cell.
OTHER_MISSING = frozenset({"?", "-", "--", ".", "n.a.", "missing"})
# A row whose first value is missing as Excel writes it (#N/A, #NA): data, not a comment line.
EXCEL_NA = re.compile(r"#n/?a[ \t]*[,;\t]", re.IGNORECASE)
# A number written with a decimal comma (thousands grouped by points or not): "5,1", "-1.234,5", and as pyarrow
# reads them with a decimal comma too (both parsers take the same cells): "1,5e3", ",5", "5,".
DECIMAL_COMMA = re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+,\d*|\d+,\d*|,\d+)(?:[eE][+-]?\d+)?")
# A number that may be written with its thousands grouped by commas: "1,234", "12,345,678.5".
GROUPED = re.compile(r"[+-]?\d{1,3}(,\d{3})+(\.\d+)?")

#: Files whose text is this long or longer are parsed by pyarrow: importing it takes about 0.24 s, what the text
#: reader takes for some 8 MB (wine.csv read in 1.8 ms by the text reader, 237 ms with pyarrow's import).
ARROW_MIN_BYTES = 8 << 20

#: Bytes of the file pyarrow's CSV reader parses at a time (its batches; a chunk holds at most ``rows`` of them).
#: It decodes ahead of its reader by some 40 blocks, so this bounds its memory (1,000,000 x 30: blocks of 1 MiB
#: held 42 MB at most and read in 1.15 s; 4 MiB, 169 MB and 1.47 s; 16 MiB, 341 MB, all the file).
ARROW_BLOCK_BYTES = 1 << 20


def _spellings(words: Sequence[str]) -> list[str]:
    """Every upper/lower-case spelling of ``words`` (pyarrow compares null values exactly)."""
    out: set[str] = set()
    for w in words:
        out.update("".join(t) for t in itertools.product(*({c.lower(), c.upper()} for c in w)))
    return sorted(out)


#: What pyarrow reads as missing: :data:`MISSING` and the spellings of NaN Python's ``float`` reads, in any case.
ARROW_MISSING = _spellings(sorted(MISSING | {"-nan", "+nan"}))


@dataclass(frozen=True, eq=False)
class Chunk:
    """Consecutive data rows of a table: ``first`` is the 0-based index of the first."""

    first: int
    values: np.ndarray
    labels: np.ndarray | None
    ids: np.ndarray | None
    lines: np.ndarray


class CsvReader:
    """A CSV table read row by row: the header and column roles first, then chunks of rows.

    Memory is bounded by the chunk size, so projecting a file of any length
    does not grow with its row count. Messages name the file's own lines
    (blank and ``#`` comment lines counted; see :meth:`_lines` for a ``#`` line that is a row).
    """

    def __init__(
        self,
        path: str | Path,
        labels: str | None = None,
        ignore: Sequence[str] = (),
        id_column: str | None = None,
        *,
        optional: Sequence[str] = (),
        roles: bool = True,
        keep_index: bool = False,
    ) -> None:
        # ``roles``: whether the reader's caller can still give a column a role (a table to train on); a
        # projection reads a run's columns, whose roles are set, and a bad cell is then only a bad cell.
        # ``keep_index``: an unnamed first column that counts the rows (pandas' index) is a feature, not left
        # out (a run trained on one projects its rows).
        self.roles = roles
        self.path = p = check_path(path)
        enc = detect_encoding(p)
        self.encoding = enc.codec
        #: Bytes of text the file holds: a gzip'd file's decompressed, several times its size on disk.
        self.text_bytes = enc.size
        #: What was decided without certainty (the encoding, the header, unnamed columns), one line each.
        self.notes: list[str] = [enc.note] if enc.note else []
        lines = self._lines()
        first = next(lines, None)
        if first is None:
            raise DataError(_("{path}: the file is empty").format(path=p))
        line, text = first
        self._first_line = line
        below = [t for _n, t in itertools.islice(lines, 2)]
        lines.close()
        self.delimiter = _delimiter(text, below[0] if below else None)
        cells = self._split(text)
        rows = [self._split(t) for t in below]
        #: Numbers are written with a decimal comma ("5,1"), as spreadsheets save them in many European languages:
        #: only where cells are not separated by commas, and seen in the first lines.
        self.decimal_comma = self.delimiter != "," and any(
            DECIMAL_COMMA.fullmatch(c) for row in (cells, *rows) for c in row
        )
        if self.decimal_comma:
            self.notes.append(
                _(
                    "{path}: numbers are written with a decimal comma ({example}), as a spreadsheet saves them in "
                    "many languages, and are read so"
                ).format(path=p, example=next(c for row in (cells, *rows) for c in row if DECIMAL_COMMA.fullmatch(c)))
            )
        self.header = self._is_header(
            [self._pointed(c) for c in cells], [self._pointed(c) for c in rows[0]] if rows else None
        )
        self.width = len(cells)
        names = self._names(cells) if self.header else list(default_feature_names(len(cells)))
        self.columns: tuple[str, ...] = tuple(names)
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise DataError(
                _("{path}: the header names column {name!r} twice; column names must be unique").format(
                    path=p, name=dup
                )
            )
        self.label_index = self._column(labels, "--labels", optional)
        self.id_index = self._column(id_column, "--id", optional)
        skip = {self._column(c, "--ignore", optional) for c in ignore}
        taken = {self.label_index, self.id_index} | skip
        #: The row number the first data row holds in an unnamed first column that counts the rows, as pandas
        #: writes its index: that column is left out (``None``: there is none, or it has a role or is kept).
        self.index_start = None if keep_index or 0 in taken else self._index_start(cells, rows)
        if self.index_start is not None:
            taken.add(0)
        for j, cell in enumerate(cells if self.header else ()):
            if cell == "" and not (j == 0 and self.index_start is not None):
                self.notes.append(
                    _("{path}: column {number} has no name in the header; it is called {name!r}").format(
                        path=p, number=j + 1, name=names[j]
                    )
                )
        self.feature_columns = [j for j in range(self.width) if j not in taken]
        if not self.feature_columns:
            raise DataError(
                _("{path}: no feature column is left once labels, id and ignored columns are set aside").format(path=p)
            )
        self.feature_names: tuple[str, ...] = tuple(names[j] for j in self.feature_columns)
        # Which feature columns hold a number in the rows read so far: a bad cell below numbers is a typo or an
        # unknown mark of a missing value, not a text column to give a role.
        self._numbers = np.zeros(len(self.feature_columns), bool)

    def _is_header(self, cells: list[str], below: list[str] | None) -> bool:
        """Whether the first row ``cells`` names the columns (``below``: the next row's cells, if any).

        A header names columns: none of its cells is a number. A first row with some numbers is
        data, and a bad cell in it is an error, not a header to drop; except a row whose numbers
        are years in order (``2019,2020,2021``, or ``country,2019,2020``) above a row whose numbers
        are not: that is a header, and a note says so, as it does when such a row is kept as data. So is a
        row that numbers the columns (``0,1,2,3`` or ``1,2,3``: pandas' names for a table's unnamed columns)
        after an empty cell (pandas' index has no name), or above a row with a number written with a point.
        """
        numbers = [c for c in cells if _is_number(c)]
        if not numbers:
            return True
        if _numbers_columns(cells):
            return self._numbered_header(cells, below)
        if below is None or not _years_in_order(numbers):
            return False
        shown = ", ".join(cells[:6]) + (", ..." if len(cells) > 6 else "")
        under = [c for j, c in enumerate(below) if j < len(cells) and _is_number(cells[j])]
        if under and all(_is_year(c) for c in under):
            self.notes.append(
                _(
                    "{path}: the first line ({cells}) looks like a header of years, but the line below holds "
                    "years too: both are read as data; to make it a header, name the columns with text "
                    "(y{year})"
                ).format(path=self.path, cells=shown, year=numbers[0])
            )
            return False
        self.notes.append(
            _(
                "{path}: the first line ({cells}) is read as the header: its numbers are years in order and "
                "the line below holds other numbers; if it is data, add a header line of column names"
            ).format(path=self.path, cells=shown)
        )
        return True

    def _numbered_header(self, cells: list[str], below: list[str] | None) -> bool:
        """Whether ``cells``, which number the columns, are the header (``below``: the next row's cells)."""
        shown = ", ".join(cells[:6]) + (", ..." if len(cells) > 6 else "")
        if cells[0] != "":
            if below is None:
                return False
            # A number written with a point or an exponent below tells a table of measurements under its column
            # numbers; whole numbers below may be a table of counts whose first row happens to count up.
            if all(_is_whole(c) or not _is_number(c) or math.isnan(float(c)) for c in below):
                self.notes.append(
                    _(
                        "{path}: the first line ({cells}) looks like a header of column numbers, but the line below "
                        "holds only whole numbers (or missing values): both are read as data; to make it a header, "
                        "name the columns with text"
                    ).format(path=self.path, cells=shown)
                )
                return False
        self.notes.append(
            _(
                "{path}: the first line ({cells}) is read as the header: it numbers the columns, as pandas names "
                "a table's unnamed columns; if it is data, add a header line of column names"
            ).format(path=self.path, cells=shown)
        )
        return True

    def _names(self, cells: list[str]) -> list[str]:
        """The header's column names; an empty cell gets ``x<column>`` (or a name no other column has)."""
        names = list(cells)
        taken = set(cells)
        for j, cell in enumerate(cells):
            if cell:
                continue
            base = name = f"x{j + 1}"
            k = 2
            while name in taken:
                name, k = f"{base}_{k}", k + 1
            names[j] = name
            taken.add(name)
        return names

    def _index_start(self, cells: list[str], rows: list[list[str]]) -> int | None:
        """The first row's number where the first column is pandas' index (``None`` where it is not): unnamed
        in the header (``cells``), it counts the first data ``rows`` (two at least) one by one: from 0, from 1 as
        R's row names do, or from where the part of a table written to this file starts. A note says it is left
        out; a later row that breaks the count is refused as it is read.
        """
        if not self.header or cells[0] != "" or self.width < 2 or len(rows) < 2:
            return None
        firsts = [r[0] if r else "" for r in rows]
        if not (firsts[0].isdigit() and firsts[0].isascii() and str(int(firsts[0])) == firsts[0]):
            return None
        start = int(firsts[0])
        if firsts != [str(start + k) for k in range(len(firsts))]:
            return None
        self.notes.append(
            _(
                "{path}: column 1 has no name in the header and counts the rows from {start}, as pandas writes a "
                "table's index: it is left out; to train on it, name it in the header"
            ).format(path=self.path, start=start)
        )
        return start

    def _column(self, name: str | None, flag: str, optional: Sequence[str]) -> int | None:
        if name is None:
            return None
        if name in self.columns:
            return self.columns.index(name)
        if name in optional:
            return None
        raise no_such_column(self.path, flag, name, self.columns)

    def _lines(self, table: bool = False) -> Generator[tuple[int, str]]:
        """``(line number, text)`` of the lines that are neither blank nor ``#`` comments.

        A line starting with ``#`` is a row where it cannot be a comment: Excel's ``#N/A`` as its first cell, or
        (``table``, the table's shape known) below the first line, as many cells as the table has columns where the
        first column is text (a label such as ``#A12``): pyarrow's reader has no comments and reads such a line as a
        row too, so the two readers count the same rows. Where the first column is a feature, a ``#`` cell is no
        number: a comment, whatever its commas.
        """
        try:
            with open_text(self.path, self.encoding) as f:
                for n, ln in enumerate(f, 1):
                    s = ln.strip()
                    if not s:
                        continue
                    if s.startswith("#") and not EXCEL_NA.match(s):
                        if not (
                            table and n > self._first_line and self._text_first and len(self._split(s)) == self.width
                        ):
                            continue
                    yield n, ln.rstrip("\r\n")
        except READ_ERRORS as exc:
            raise unreadable(self.path, exc) from None

    def _split(self, text: str) -> list[str]:
        if '"' in text:  # quoted cells: the csv module's rules
            row = next(csv.reader([text], delimiter=self.delimiter, skipinitialspace=True), [])
        else:  # the common case, ~4x cheaper than a csv.reader per line
            row = text.split(self.delimiter)
        row = [c.strip() for c in row]
        return [c for c in row if c != ""] if self.delimiter == " " else row

    def chunks(self, rows: int = 65536) -> Iterator[Chunk]:
        """The data rows in chunks of at most ``rows``.

        Where pyarrow is installed and the file is plain UTF-8 separated by commas, semicolons or tabs, and
        large enough to repay importing pyarrow (:data:`ARROW_MIN_BYTES`), its C++ reader parses it (5-6x
        faster than Python's); from the first of its blocks that holds anything it
        would read otherwise than this reader (a blank or comment line, an infinite value, a row of missing
        values, a cell it cannot convert, a ragged row), the lines are read here, with this reader's messages.
        """
        rest: int | None = 0
        if self._arrow_reads():
            rest = yield from self._arrow_chunks(rows)
            if rest is None:
                return
        yield from self._text_chunks(rows, skip=rest or 0)

    def _arrow_reads(self) -> bool:
        return (
            self.delimiter != " "  # runs of spaces are one separator here, not in pyarrow
            and self.encoding in ("utf-8-sig", "utf-8")
            and self._first_line == 1  # lines before the first are comments or blank: their numbers count
            and self.text_bytes >= ARROW_MIN_BYTES
            and importlib.util.find_spec("pyarrow") is not None
        )

    def _arrow_chunks(self, rows: int) -> Generator[Chunk, None, int | None]:
        """Chunks parsed by pyarrow; returns ``None`` at the file's end, else the data rows read so far."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        names = list(self.columns)
        features = [names[j] for j in self.feature_columns]
        texts = {j: names[j] for j in (self.label_index, self.id_index) if j is not None}
        types = {n: pa.float64() for n in features} | {n: pa.string() for n in texts.values()}
        counted = [names[0]] if self.index_start is not None else []  # an index: checked, a whole number a row
        types |= {n: pa.int64() for n in counted}
        try:
            reader = pacsv.open_csv(
                # A gzip'd file decompressed as pyarrow parses it; the stream closes with the reader, as a path's.
                pa.input_stream(str(self.path), compression="gzip" if data_suffix(self.path).gzip else None),
                read_options=pacsv.ReadOptions(
                    column_names=names, skip_rows=1 if self.header else 0, block_size=ARROW_BLOCK_BYTES
                ),
                parse_options=pacsv.ParseOptions(delimiter=self.delimiter, ignore_empty_lines=False),
                convert_options=pacsv.ConvertOptions(
                    column_types=types,
                    include_columns=features + list(texts.values()) + counted,
                    null_values=ARROW_MISSING,
                    decimal_point="," if self.decimal_comma else ".",
                    strings_can_be_null=False,
                    quoted_strings_can_be_null=False,
                ),
            )
        except (pa.ArrowException, OSError):
            return 0
        done, line = 0, self._first_line + (1 if self.header else 0)
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                return None
            except (pa.ArrowException, OSError):
                return done
            values = np.empty((batch.num_rows, len(features)), np.float64)
            for k, n in enumerate(features):
                values[:, k] = batch.column(n).to_numpy(zero_copy_only=False)
            known = ~np.isnan(values)
            if np.isinf(values).any() or not known.any(axis=1).all():
                return done  # a blank line (pyarrow's row of nulls), an unknown row or an infinite value
            self._numbers |= known.any(axis=0)
            if counted and self.index_start is not None:
                count = np.arange(self.index_start + done, self.index_start + done + batch.num_rows)
                index = batch.column(counted[0])
                if index.null_count or not np.array_equal(index.to_numpy(), count):
                    return done  # the count broken: refused in the text reader's words
            labels = _stripped(batch.column(texts[self.label_index])) if self.label_index is not None else None
            ids = _stripped(batch.column(texts[self.id_index])) if self.id_index is not None else None
            for at in range(0, batch.num_rows, rows):
                n = min(rows, batch.num_rows - at)
                yield Chunk(
                    done + at,
                    values[at : at + n],
                    None if labels is None else labels[at : at + n],
                    None if ids is None else ids[at : at + n],
                    np.arange(line + done + at, line + done + at + n, dtype=np.int64),
                )
            done += batch.num_rows

    @property
    def _text_first(self) -> bool:
        """Whether the first column holds text (labels, ids, ignored): a ``#`` cell there may be a value."""
        return 0 not in self.feature_columns and self.index_start is None

    def _text_chunks(self, rows: int, skip: int = 0) -> Iterator[Chunk]:
        """The data rows from row ``skip`` on, read line by line here."""
        lines = self._lines(table=True)
        if self.header:
            next(lines)
        for _read in itertools.islice(lines, skip):  # parsed already (``_`` is the translator here)
            pass
        cols = self.feature_columns
        done = skip
        buf_v: list[list[float]] = []
        buf_l: list[str] = []
        buf_i: list[str] = []
        buf_n: list[int] = []
        empty: list[int] = []  # lines of rows with nothing in any cell, not yet known to end the table
        for n, text in lines:
            r = self._split(text)
            # The first cell first: one test a row where it holds something (nearly every row).
            if not r[0].strip() and len(r) == self.width and not any(c.strip() for c in r):
                empty.append(n)
                continue
            for m in empty:  # rows within the table: refused as rows with no known feature value
                buf_v.append([math.nan] * len(cols))
                buf_l.append("")
                buf_i.append("")
                buf_n.append(m)
            empty.clear()
            if done == 0 and not buf_v and not any(_is_number(self._pointed(c)) or c.lower() in MISSING for c in r):
                # The first data row has no number at all: prose or another text file, not a table with a bad row;
                # or numbers with decimal commas, which the first of them says.
                for j in cols:
                    if j < len(r) and DECIMAL_COMMA.fullmatch(r[j].strip()):
                        self._number(r[j], n, j)
                raise DataError(
                    _(
                        "{path}: no numeric data: line {line} holds text, not numbers; expected a table of "
                        "examples x features (numbers separated by commas, semicolons, tabs or spaces)"
                    ).format(path=self.path, line=n)
                )
            if len(r) != self.width:
                raise DataError(
                    _("{path}: ragged rows: line {line} has {n} columns, expected {width}").format(
                        path=self.path, line=n, n=len(r), width=self.width
                    )
                )
            if self.index_start is not None and r[0] != str(self.index_start + done + len(buf_v)):
                raise DataError(self._not_an_index(r[0], n, self.index_start + done + len(buf_v)))
            try:
                buf_v.append([self._number(r[j], n, j) for j in cols])
            except _NotANumber as bad:
                k = cols.index(bad.column)
                above = bool(self._numbers[k]) or any(not math.isnan(row[k]) for row in buf_v)
                others = [] if above else [j for j in cols if j != bad.column and _is_text(r[j])]
                raise DataError(self._not_a_number(r[bad.column], n, bad.column, above, others)) from None
            if self.label_index is not None:
                buf_l.append(r[self.label_index])
            if self.id_index is not None:
                buf_i.append(r[self.id_index])
            buf_n.append(n)
            if len(buf_v) >= rows:
                yield self._chunk(done, buf_v, buf_l, buf_i, buf_n)
                done += len(buf_v)
                buf_v, buf_l, buf_i, buf_n = [], [], [], []
        if buf_v:
            yield self._chunk(done, buf_v, buf_l, buf_i, buf_n)
        if empty:
            # What a spreadsheet leaves below a table it saves as CSV (",,,"): not rows of the table.
            self.notes.append(
                ngettext(
                    "{path}: its last row (line {first}) has nothing in any cell, as a spreadsheet leaves below a "
                    "table, and is left out",
                    "{path}: its last {n} rows (lines {first}-{last}) have nothing in any cell, as a spreadsheet "
                    "leaves below a table, and are left out",
                    len(empty),
                ).format(path=self.path, n=len(empty), first=empty[0], last=empty[-1])
            )

    def _chunk(self, first: int, v: list[list[float]], lab: list[str], ids: list[str], lines: list[int]) -> Chunk:
        values = np.array(v, dtype=np.float64).reshape(len(v), len(self.feature_columns))
        if not self._numbers.all():
            self._numbers |= ~np.isnan(values).all(axis=0)
        line_arr = np.array(lines, dtype=np.int64)
        check_known_rows(values, str(self.path), line_arr, first)
        return Chunk(
            first,
            values,
            np.array(lab, dtype=str) if self.label_index is not None else None,
            np.array(ids, dtype=str) if self.id_index is not None else None,
            line_arr,
        )

    def _pointed(self, cell: str) -> str:
        """``cell`` as a number with a decimal point where the file writes a decimal comma ("1.234,5": "1234.5")."""
        if self.decimal_comma and "," in cell and DECIMAL_COMMA.fullmatch(cell.strip()):
            return cell.replace(".", "").replace(",", ".")
        return cell

    def _number(self, cell: str, line: int, j: int) -> float:
        try:
            v = float(self._pointed(cell) if self.decimal_comma else cell)  # "nan" spellings: NaN, missing
        except ValueError:
            if cell.lower() in MISSING:
                return np.nan
            if GROUPED.fullmatch(cell.strip()):  # "1,234": a thousand and more, or 1.234 in a European locale
                raise DataError(
                    _(
                        "{path}: {value!r} at line {line}, column {column}{named} has a comma, grouping thousands or "
                        "as a decimal comma; numbers are read with a decimal point and no grouping: save the table "
                        "without thousands separators and with '.' as its decimal separator"
                    ).format(path=self.path, value=cell, line=line, column=j + 1, named=self._named(j))
                ) from None
            if DECIMAL_COMMA.fullmatch(cell.strip()):  # "5,1" from a spreadsheet saved in a European locale
                raise DataError(
                    _(
                        "{path}: {value!r} at line {line}, column {column}{named} has a decimal comma; numbers are "
                        "read with a decimal point: save the table with '.' as its decimal separator"
                    ).format(path=self.path, value=cell, line=line, column=j + 1, named=self._named(j))
                ) from None
            raise _NotANumber(j) from None
        if self.decimal_comma and "." in cell and "," not in cell:  # "1.234" in a table of "5,1": 1,234 or 1234?
            raise DataError(
                _(
                    "{path}: {value!r} at line {line}, column {column}{named} has a point, but the file writes "
                    "numbers with a decimal comma, where a point groups thousands: write it with a comma "
                    "({comma}) or without the point"
                ).format(
                    path=self.path,
                    value=cell,
                    line=line,
                    column=j + 1,
                    named=self._named(j),
                    comma=cell.strip().replace(".", ","),
                )
            )
        if math.isinf(v):
            raise DataError(
                _("{path}: infinite value {value!r} at line {line}, column {column}{named}").format(
                    path=self.path, value=cell, line=line, column=j + 1, named=self._named(j)
                )
            )
        # float() reads "nan" spellings the MISSING set does not list ("-nan", "NAN ")
        return v

    def _named(self, j: int) -> str:
        """Column ``j``'s name for a message, after its number (`` ('b')``); ``""`` without a header."""
        return f" ({self.columns[j]!r})" if self.header else ""

    def _not_an_index(self, cell: str, line: int, expected: int) -> str:
        """The message for an index column (:attr:`index_start`) whose count ``cell`` at ``line`` breaks."""
        return _(
            "{path}: column 1 has no name in the header and counted the rows from {start}, as pandas writes a "
            "table's index, so it was left out; but line {line} holds {value!r} there, not {expected}: to train on "
            "it, name it in the header, or leave it out ({ignore})"
        ).format(
            path=self.path,
            start=self.index_start,
            line=line,
            value=cell,
            expected=expected,
            ignore=column_flag("--ignore", self.columns[0]),
        )

    def _not_a_number(self, cell: str, line: int, j: int, above: bool, others: Sequence[int] = ()) -> str:
        """The message for ``cell``, neither a number nor a missing value, at ``line`` in column ``j``; ``above``:
        whether the column holds a number in a row above it (then it is a column of numbers with one bad cell);
        ``others``: the row's other feature columns that hold text, named too so that one run fixes them all."""
        markers = ", ".join(MISSING_SHOWN)
        named = self._named(j)
        where = {"path": self.path, "value": cell, "line": line, "column": j + 1, "named": named, "markers": markers}
        if not self.roles:  # a run's feature: a column of numbers
            return _(
                "{path}: non-numeric value {value!r} at line {line}, column {column}{named}: neither a number nor "
                "a missing value (an empty cell or {markers}, in upper or lower case)"
            ).format(**where)
        name = self.columns[j]
        if cell.strip().lower() in OTHER_MISSING:
            return _(
                "{path}: {value!r} at line {line}, column {column}{named} is not read as a missing value: write "
                "missing values as empty cells or {markers} (in upper or lower case), or leave the column out "
                "({ignore})"
            ).format(**where, ignore=column_flag("--ignore", name))
        if above:
            return _(
                "{path}: non-numeric value {value!r} at line {line}, column {column}{named}, which holds numbers in "
                "the rows above: neither a number nor a missing value (an empty cell or {markers}, in upper or lower "
                "case); write it as a number or as one of those, or leave the column out ({ignore})"
            ).format(**where, ignore=column_flag("--ignore", name))
        said = _(
            "{path}: non-numeric value {value!r} at line {line}, column {column}{named}: a text column can be the "
            "labels ({labels}), left out ({ignore}) or carried through ({id}); in a column of numbers, a missing "
            "value is an empty cell or {markers}, in upper or lower case"
        ).format(
            **where,
            labels=column_flag("--labels", name),
            ignore=column_flag("--ignore", name),
            id=column_flag("--id", name),
        )
        if not others:
            return said
        names = [self.columns[k] for k in others]
        return said + ngettext(
            "; column {names} holds text in that line too (left out with {ignore})",
            "; columns {names} hold text in that line too (left out with {ignore})",
            len(names),
        ).format(
            names=", ".join(f"{n!r}" for n in names),
            ignore=" ".join(column_flag("--ignore", n) for n in names),
        )


def _is_text(cell: str) -> bool:
    """Whether ``cell`` is neither a number nor a missing value (what refuses a column as a feature)."""
    try:
        float(cell)
    except ValueError:
        return (
            cell.lower() not in MISSING
            and not GROUPED.fullmatch(cell.strip())
            and not DECIMAL_COMMA.fullmatch(cell.strip())
        )
    return False


def _delimiter(first: str, below: str | None) -> str:
    """The delimiter of a table whose first line is ``first`` (``below``: the next line, if any), sniffed on the
    first line: a header names its columns with no quotes to guide the sniffing.

    Spaces separate only where the line below has one too: a one-column file's name may hold spaces
    (``sepal length (cm)`` above ``5.1``), and is one name.
    """
    for d in ";\t":  # numbers with decimal commas, no header: "5,1;3,5" reads as three cells split on its commas
        cells = [c.strip() for c in first.split(d)]
        if len(cells) > 1 and any(DECIMAL_COMMA.fullmatch(c) for c in cells):
            if all(DECIMAL_COMMA.fullmatch(c) or _is_number(c) or c.lower() in MISSING for c in cells):
                return d
    candidates = ",;\t "
    if below is not None and " " not in below.strip():
        candidates = ",;\t"
    try:
        return csv.Sniffer().sniff(first, delimiters=candidates).delimiter
    except csv.Error:
        return ","


class _NotANumber(Exception):
    """A feature cell in column ``column`` (0-based) is neither a number nor a missing value."""

    def __init__(self, column: int) -> None:
        super().__init__(column)
        self.column = column


def _stripped(column: Any) -> np.ndarray:
    """A pyarrow text column as an array of ``str``, each cell stripped as :meth:`CsvReader._split` strips it."""
    import pyarrow.compute as pc

    return np.asarray(pc.utf8_trim_whitespace(column).to_numpy(zero_copy_only=False), dtype=str)


def _is_year(text: str) -> bool:
    """A cell written as a year: four digits, 1000 to 2999."""
    return len(text) == 4 and text.isdigit() and text.isascii() and "1000" <= text <= "2999"


def _years_in_order(cells: list[str]) -> bool:
    """Two or more years, rising or falling (a header of years is written in order)."""
    if len(cells) < 2 or not all(_is_year(c) for c in cells):
        return False
    years = [int(c) for c in cells]
    steps = {b > a for a, b in zip(years, years[1:])}
    return len(steps) == 1 and len(set(years)) == len(years)


def _numbers_columns(cells: list[str]) -> bool:
    """Whether ``cells`` number the columns from 0 or 1 (``0,1,2``), after an empty first cell or not: two numbers
    at least, or one after the empty cell (a one-column table with pandas' index)."""
    body = cells[1:] if cells and cells[0] == "" else cells
    if len(body) < (1 if len(body) < len(cells) else 2) or body[0] not in ("0", "1"):
        return False
    start = int(body[0])
    return body == [str(start + k) for k in range(len(body))]


def _is_whole(text: str) -> bool:
    """A cell written as a whole number (``12``, ``-3``), as a table of counts holds."""
    return text.lstrip("+-").isdigit() and text.isascii()


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
