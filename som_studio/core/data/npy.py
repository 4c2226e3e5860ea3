"""``.npy`` files: the header checked first (never unpickled: a data file never runs code), whole or memory-mapped."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.data.checks import DataError, cannot_read, check_path, not_2d, not_numeric
from som_studio.i18n import _

#: Bytes a read asks of the file at a time: a read stops at 2 GiB on Linux, and Ctrl-C is seen between reads.
READ_BLOCK = 1 << 26


def npy_header(p: Path) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """A ``.npy`` file's ``(shape, fortran_order, dtype, data offset)``, refused unless its data are all there."""
    try:
        with open(p, "rb") as f:
            major, _minor = np.lib.format.read_magic(f)
            shape, fortran, dtype = (
                np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            )(f)
            offset = f.tell()
            have = os.fstat(f.fileno()).st_size
    except (ValueError, EOFError):
        raise DataError(
            _("{path}: not a .npy file (no NumPy array header; save one with numpy.save)").format(path=p)
        ) from None
    except OSError as exc:
        raise DataError(cannot_read(p, exc)) from None
    if dtype.hasobject:
        raise DataError(
            _(
                "{path}: holds Python objects, which would be unpickled to be read: a data file must "
                "never run code, so only numeric arrays are loaded"
            ).format(path=p)
        )
    need = offset + int(np.prod(shape)) * dtype.itemsize
    if have < need:
        raise DataError(
            _(
                "{path}: cannot read as .npy (the file holds {have:,} of the {need:,} bytes its header says: truncated)"
            ).format(path=p, have=have, need=need)
        )
    return shape, fortran, dtype, offset


def load_npy(p: Path, mmap: bool = False) -> np.ndarray:
    npy_header(p)
    try:
        arr: np.ndarray = np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(
            _("{path}: cannot read as .npy ({why})").format(path=p, why=exc or _("file is truncated"))
        ) from None
    return arr


def read_npy(p: Path) -> np.ndarray:
    """A ``.npy`` file's array as a table takes it: float32 or float64 in the machine's byte order, row by row,
    read straight into memory JAX's CPU device places without a copy; any other array mapped (``np.memmap``),
    for the table's copy to convert.

    Reading into the table's own memory takes the file's bytes once: 200,000 x 1,000 float32 (800 MB) in
    0.07-0.17 s here, against 0.08-1.7 s for mapping it and copying the mapped pages.
    """
    shape, fortran, dtype, offset = npy_header(p)
    if fortran or not dtype.isnative or dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return load_npy(p, mmap=True)
    out = jax_runtime.host_array(shape, dtype)
    view = memoryview(out.reshape(-1)).cast("B")
    try:
        with open(p, "rb") as f:
            f.seek(offset)
            done = 0
            while done < len(view):
                got = f.readinto(view[done : done + READ_BLOCK])
                if not got:  # shorter than its header said when checked: cut while being read
                    raise DataError(_("{path}: cannot read as .npy ({why})").format(path=p, why=_("file is truncated")))
                done += got
    except OSError as exc:
        raise DataError(cannot_read(p, exc)) from None
    return out


def open_npy(path: str | Path) -> np.ndarray:
    """A ``.npy`` file mapped read-only (rows are read when used), its header checked as :func:`read_table` does."""
    p = check_path(path)
    arr = load_npy(p, mmap=True)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(not_numeric(str(p), arr.dtype))
    if arr.ndim not in (1, 2):
        raise DataError(not_2d(str(p), arr))
    return arr
