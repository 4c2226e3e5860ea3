"""A batch's block of values filled from the pieces a file is read in: an (n, D) array, D columns, or rows
of a ``.npy`` file read when filled (:class:`FileRows`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from som_studio.core.data.checks import changed_while_read
from som_studio.core.data.npy import load_npy, npy_header


@dataclass(frozen=True)
class FileRows:
    """Rows of a C-ordered ``.npy`` file, read with ``readinto`` when a batch is filled: straight into the batch
    when the types match, on whichever thread fills it.

    Not mapped: a mapped file cut short while it is read (saved over) kills the process with a bus error; a
    read comes back short, and the pass stops naming the file (``where``).
    """

    path: Path
    offset: int  # bytes from the file's start to this piece's first row
    rows: int
    features: int
    dtype: np.dtype
    where: str

    @property
    def nbytes(self) -> int:
        return self.rows * self.features * self.dtype.itemsize

    def fill(self, dst: np.ndarray, at: int) -> None:
        """``dst`` (n, D) from this piece's rows ``at`` to ``at + n``."""
        n = dst.shape[0]
        direct = dst.dtype == self.dtype and self.dtype.isnative and dst.flags.c_contiguous
        buf = dst if direct else np.empty((n, self.features), self.dtype)
        row_bytes = self.features * self.dtype.itemsize
        with open(self.path, "rb") as f:
            f.seek(self.offset + at * row_bytes)
            got = f.readinto(memoryview(buf.reshape(-1)).cast("B"))
        if got != n * row_bytes:
            raise changed_while_read(self.where)
        if not direct:
            fill_block(dst, buf, 0)


Piece = np.ndarray | list[np.ndarray] | FileRows


def npy_rows(path: Path, first: int, rows: int, where: str) -> np.ndarray | FileRows:
    """Rows ``first .. first + rows`` of a ``.npy`` file as a piece: read when filled, or mapped when the file is
    in Fortran order (its rows are not contiguous)."""
    shape, fortran, dtype, offset = npy_header(path)
    if fortran:
        arr = load_npy(path, mmap=True)[first : first + rows]
        return arr.reshape(arr.shape[0], -1)
    d = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    return FileRows(path, offset + first * d * dtype.itemsize, rows, d, dtype, where)


def piece_rows(values: Piece) -> int:
    """The rows of a piece: an (n, D) array's, its columns' or a file's."""
    if isinstance(values, FileRows):
        return values.rows
    return int(values.shape[0]) if isinstance(values, np.ndarray) else int(values[0].shape[0])


def fill_block(dst: np.ndarray, values: Piece, at: int) -> None:
    """``dst`` (n, D) from rows ``at`` to ``at + n`` of ``values``, converted to ``dst``'s type."""
    n = dst.shape[0]
    if isinstance(values, FileRows):
        values.fill(dst, at)
        return
    if isinstance(values, np.ndarray):
        part = values[at : at + n]
        if np.float64 not in (part.dtype, dst.dtype) and part.dtype != dst.dtype:  # through float64, as a table loads
            part = part.astype(np.float64)
        dst[...] = part
        return
    # One interleaving copy in C: a column at a time from Python cost a call per column and slice of rows,
    # most of a wide batch's fill (4,096 x 1,000 float32: 8.6 against 4.8 ms; 2,048 x 4,000: 56 against 10).
    np.stack([col[at : at + n] for col in values], axis=1, out=dst)
