"""``.npy`` files: the header checked first (never unpickled: a data file never runs code), whole or memory-mapped."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from som_studio.core.data.checks import DataError, cannot_read, check_path, not_2d, not_numeric
from som_studio.i18n import _


def load_npy(p: Path, mmap: bool = False) -> np.ndarray:
    try:
        with open(p, "rb") as f:
            major, _minor = np.lib.format.read_magic(f)
            header = (np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0)(f)
            need = f.tell() + int(np.prod(header[0])) * header[2].itemsize
            have = os.fstat(f.fileno()).st_size
    except (ValueError, EOFError):
        raise DataError(
            _("{path}: not a .npy file (no NumPy array header; save one with numpy.save)").format(path=p)
        ) from None
    except OSError as exc:
        raise DataError(cannot_read(p, exc)) from None
    if header[2].hasobject:
        raise DataError(
            _(
                "{path}: holds Python objects, which would be unpickled to be read: a data file must "
                "never run code, so only numeric arrays are loaded"
            ).format(path=p)
        )
    if have < need:
        raise DataError(
            _(
                "{path}: cannot read as .npy (the file holds {have:,} of the {need:,} bytes its header says: truncated)"
            ).format(path=p, have=have, need=need)
        )
    try:
        arr: np.ndarray = np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (ValueError, OSError, EOFError) as exc:
        raise DataError(
            _("{path}: cannot read as .npy ({why})").format(path=p, why=exc or _("file is truncated"))
        ) from None
    return arr


def open_npy(path: str | Path) -> np.ndarray:
    """A ``.npy`` file mapped read-only (rows are read when used), its header checked as :func:`read_table` does."""
    p = check_path(path)
    arr = load_npy(p, mmap=True)
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise DataError(not_numeric(str(p), arr.dtype))
    if arr.ndim not in (1, 2):
        raise DataError(not_2d(str(p), arr))
    return arr
