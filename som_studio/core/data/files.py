"""Which files ``--data`` names: one file, a folder's data files or a glob's matches, and their format."""

from __future__ import annotations

import glob as globmod
import gzip
import io
import os
import shlex
import zlib
from pathlib import Path
from typing import IO

from som_studio.core.data.checks import (
    DATA_SUFFIXES,
    GZIP_SUFFIXES,
    DataError,
    cannot_read,
    data_suffix,
    unsupported_type,
)
from som_studio.i18n import _

#: The formats a source reads, by file suffix.
FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".feather": "arrow",
    ".ipc": "arrow",
    ".npy": "npy",
    ".csv": "csv",
    ".tsv": "csv",
    ".txt": "csv",
}
#: Files whose rows are known from their headers and footers, without reading them.
SIZED_SUFFIXES: tuple[str, ...] = (".parquet", ".arrow", ".feather", ".ipc", ".npy")


#: The data files read, as the file dialogs' patterns.
DATA_PATTERNS = " ".join(f"*{suffix}" for suffix in (*DATA_SUFFIXES, *GZIP_SUFFIXES))


#: Text files that are data only where they are all a folder or a glob holds: beside other data files, a
#: ``README.txt`` is a note on them.
PROSE_SUFFIXES: tuple[str, ...] = (".txt",)


#: What reading a data file's bytes raises: a gzip'd file's whose bytes are not gzip's (:class:`gzip.BadGzipFile`,
#: an :class:`OSError`) or end early (:class:`EOFError`), or whose compressed data is corrupt (:class:`zlib.error`).
READ_ERRORS: tuple[type[Exception], ...] = (OSError, EOFError, zlib.error)


def open_bytes(p: Path) -> io.BufferedIOBase:
    """``p``'s bytes to read: a gzip'd text table's decompressed (:func:`~.checks.data_suffix`)."""
    return gzip.open(p, "rb") if data_suffix(p).gzip else open(p, "rb")


def open_text(p: Path, encoding: str) -> IO[str]:
    """``p``'s text in ``encoding``, its line ends as written (the CSV reader's rule): decompressed if gzip'd."""
    if data_suffix(p).gzip:
        return gzip.open(p, "rt", encoding=encoding, newline="")
    return open(p, encoding=encoding, newline="")


def unreadable(p: Path, exc: Exception) -> DataError:
    """Reading ``p`` raised ``exc`` (one of :data:`READ_ERRORS`): a gzip'd file that is not gzip, or is cut or
    corrupt, is said to be so; otherwise the system's reason."""
    if data_suffix(p).gzip and isinstance(exc, (gzip.BadGzipFile, EOFError, zlib.error)):
        return DataError(_("{path}: not a valid gzip file ({why})").format(path=p, why=exc))
    if isinstance(exc, OSError):
        return DataError(cannot_read(p, exc))
    return DataError(_("{path}: cannot read ({why})").format(path=p, why=exc))


def data_files(spec: str | os.PathLike[str], notes: list[str] | None = None) -> list[Path]:
    """The files ``spec`` names: a folder's data files, a glob's matches or the one file (sorted by name).

    An empty folder or a glob matching nothing is refused, as is a folder holding several formats. A
    ``.txt`` file beside other data files is left out, and said in ``notes`` (where given).
    """
    text = str(spec)
    p = Path(text)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and data_suffix(f).suffix in FORMATS)
        below = sorted(d for d in p.iterdir() if d.is_dir() and _holds_data(d))
        if not files:
            message = _(
                "{path}: the folder holds no data files (.parquet, .arrow, .feather, .npy, .csv, .tsv or .csv.gz)"
            )
            if below:  # a partitioned data set (Hive's, Spark's: sample=A/part-0.parquet)
                message += _("; its subfolders do ({names}): name them with a pattern, as {pattern}")
            else:
                message += _("; it holds {names}")
            others = below or sorted(f for f in p.iterdir() if not f.name.startswith("."))
            names = ", ".join(f.name for f in others[:3]) + (", ..." if len(others) > 3 else "")
            pattern = shlex.quote(str(p / "*" / f"*{_holds_data(below[0])}")) if below else ""
            raise DataError(message.format(path=p, names=names or _("nothing"), pattern=pattern))
        if below and notes is not None:
            notes.append(
                _(
                    "{path}: left out its subfolders {names}: a folder's own files are read; theirs with a pattern"
                ).format(path=p, names=", ".join(d.name for d in below[:3]) + (", ..." if len(below) > 3 else ""))
            )
    elif any(c in text for c in "*?["):
        files = sorted(Path(f) for f in globmod.glob(text) if Path(f).is_file())
        if not files:
            raise DataError(_("{path}: no file matches this pattern").format(path=text))
        odd = [f for f in files if data_suffix(f).suffix not in FORMATS]
        if odd:
            raise DataError(
                _("{path}: not a data file (.parquet, .arrow, .feather, .npy, .csv, .tsv or .csv.gz)").format(
                    path=odd[0]
                )
            )
    else:
        if not p.exists():
            raise DataError(_("{path}: no such file").format(path=p))
        if data_suffix(p).suffix not in FORMATS:
            raise unsupported_type(p)
        files = [p]
    prose = [f for f in files if data_suffix(f).suffix in PROSE_SUFFIXES]
    if prose and len(prose) < len(files):
        files = [f for f in files if data_suffix(f).suffix not in PROSE_SUFFIXES]
        if notes is not None:
            notes.append(
                _(
                    "{path}: left out {names}: a .txt file beside other data files is taken for a note on them; "
                    "to read .txt tables, name them alone ({pattern})"
                ).format(
                    path=text,
                    names=", ".join(f.name for f in prose[:3]) + (", ..." if len(prose) > 3 else ""),
                    pattern=shlex.quote(str(Path(text if p.is_dir() else os.path.dirname(text)) / "*.txt")),
                )
            )
    kinds = {file_format(f) for f in files}
    if len(kinds) > 1:
        first = files[0]
        other = next(f for f in files if file_format(f) != file_format(first))
        raise DataError(
            _("{path}: mixes formats ({a}: {fa}; {b}: {fb}); a data set is one format").format(
                path=text,
                a=first.name,
                fa=file_format(first),
                b=other.name,
                fb=file_format(other),
            )
        )
    return files


def file_format(path: Path) -> str:
    """The format of a data file :func:`data_files` gave (a key of :data:`FORMATS`'s values: ``csv`` for
    ``cells.csv.gz`` as for ``cells.csv``)."""
    return FORMATS[data_suffix(path).suffix]


def _holds_data(folder: Path) -> str:
    """The suffix of the first data file ``folder`` holds (``.csv.gz`` for a gzip'd one), ``""`` for none."""
    try:
        return next(
            (
                "".join(f.suffixes[-2:]) if data_suffix(f).gzip else f.suffix
                for f in sorted(folder.iterdir())
                if data_suffix(f).suffix in FORMATS and f.is_file()
            ),
            "",
        )
    except OSError:
        return ""


def is_streamable(spec: str | None) -> bool:
    """Whether ``--data`` names more than one file's worth of rows: a folder or a glob."""
    if spec is None:
        return False
    return Path(spec).is_dir() or any(c in spec for c in "*?[")
