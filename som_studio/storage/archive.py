"""A ``.somrun`` archive read without trusting it: every array's header is checked before any array is loaded.

A run file comes from anywhere: a crash mid-write, a disk error, a hand-edit or
a file made to do harm. :class:`RunArchive` reads the ``.npy`` header of each
member of the zip first (dtype and shape, no data) and refuses, naming the file
and the array, one whose kind or shape is not what ``docs/somrun-format.md``
says, one whose shape disagrees with the map's or its siblings', and one that
claims more memory than the machine has or more bytes than its entry holds.
Only then are arrays loaded, each checked for values it must not hold (a map
with NaN, negative hits). Nothing is unpickled. Qt-free.
"""

from __future__ import annotations

import math
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from som_studio.core.impls import memory
from som_studio.i18n import _, format_bytes, ngettext

NPY = ".npy"

# What each array of a run file may be: its dtype kinds ("u1" is uint8 alone) and its dimensions, by name.
# A name binds at its first use (the map's H, W, D first), and every later use must agree.
_SPECS: dict[str, tuple[str, tuple[str, ...]]] = {
    "final_map": ("fiu", ("H", "W", "D")),
    "meta": ("u1", ("bytes",)),
    "model_meta": ("u1", ("bytes",)),
    "frame_iterations": ("iu", ("F",)),
    "frames_png_sizes": ("iu", ("F",)),
    "frames_png": ("u1", ("bytes",)),
    "final_image": ("u1", ("h", "w", "3")),
    "unit_labels": ("U", ("H", "W")),
    "hits": ("iu", ("H", "W")),
    "unit_purity": ("f", ("H", "W")),
    "clusters": ("iu", ("H", "W")),
}
# Dimensions that cannot be empty: a map, a picture, their channels.
_NOT_EMPTY = frozenset({"H", "W", "D", "h", "w"})


class ArchiveError(ValueError):
    """A run archive is refused; the message names the file and the problem."""


@dataclass(frozen=True)
class Header:
    """One ``.npy`` member's header: what loading it would give, read without loading it."""

    shape: tuple[int, ...]
    dtype: np.dtype
    nbytes: int  # what the array takes in memory
    stored: int  # bytes the member holds after its header


class RunArchive:
    """The arrays of an opened ``.somrun`` zip, headers checked at once, each loaded when asked for.

    ``files`` lists the array keys (as :class:`numpy.lib.npyio.NpzFile` does), so
    :func:`~som_studio.core.data.model_file.read_model` reads it like ``numpy.load``'s result.
    """

    def __init__(self, zf: zipfile.ZipFile, path: Path) -> None:
        self.path = path
        self._zf = zf
        self.headers: dict[str, Header] = {}
        # Only the arrays the format has are read: a newer version's extra ones are no concern of
        # this reader, and a zip of a million members costs no more than its directory.
        for info in zf.infolist():
            key = info.filename[: -len(NPY)]
            if info.filename.endswith(NPY) and key in _SPECS and not info.is_dir():
                self.headers[key] = self._header(info)
        self.files = list(self.headers)
        self.dims: dict[str, tuple[int, str]] = {}  # a dimension's size, and the array that set it
        for key in _SPECS:
            if key in self.headers:
                self._check_spec(key)
        self._check_memory(list(self.headers))

    # -- headers ----------------------------------------------------------------------------
    def _header(self, info: zipfile.ZipInfo) -> Header:
        key = info.filename[: -len(NPY)]
        with self._zf.open(info) as f:
            try:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, _fortran, dtype = np.lib.format.read_array_header_2_0(f)
                else:
                    raise ValueError(_("unknown .npy version {version}").format(version=version))
            except (ValueError, SyntaxError, TypeError, EOFError) as exc:
                raise self.damaged(_("array {key} has no readable header ({why})").format(key=key, why=exc)) from None
            offset = f.tell()
        if dtype.hasobject:
            raise ArchiveError(
                _("{path}: not a SOM Studio run file: it holds Python objects, which SOM Studio never loads").format(
                    path=self.path
                )
            )
        nbytes = math.prod(shape) * dtype.itemsize
        return Header(tuple(int(n) for n in shape), dtype, nbytes, max(0, info.file_size - offset))

    def _check_spec(self, key: str) -> None:
        head = self.headers[key]
        kinds, names = _SPECS[key]
        if not _dtype_fits(head.dtype, kinds):
            raise self.damaged(
                _("array {key} holds {dtype}; expected {expected}").format(
                    key=key, dtype=head.dtype, expected=_describe_kinds(kinds)
                )
            )
        if len(head.shape) != len(names):
            raise self.damaged(
                _("array {key} has shape {shape}; expected {ndim} dimensions").format(
                    key=key, shape=head.shape, ndim=len(names)
                )
            )
        for size, name in zip(head.shape, names):
            if name.isdigit():
                if size != int(name):
                    raise self.damaged(
                        _("array {key} has shape {shape}; its last dimension must be {n}").format(
                            key=key, shape=head.shape, n=name
                        )
                    )
            elif name == "bytes":
                continue
            elif size == 0 and name in _NOT_EMPTY:
                raise self.damaged(_("array {key} has shape {shape}: it is empty").format(key=key, shape=head.shape))
            elif name in self.dims:
                known, other = self.dims[name]
                if size != known:
                    raise self.damaged(
                        _("array {key} has shape {shape}, which does not match {other} {other_shape}").format(
                            key=key, shape=head.shape, other=other, other_shape=self.headers[other].shape
                        )
                    )
            else:
                self.dims[name] = (size, key)

    def _check_memory(self, keys: list[str]) -> None:
        have = memory.host_available()
        for key in keys:
            head = self.headers[key]
            if head.nbytes > have:
                raise ArchiveError(
                    _(
                        "{path}: cannot open: array {key} ({shape} of {dtype}) would need {need} of memory, "
                        "more than the {have} available"
                    ).format(
                        path=self.path,
                        key=key,
                        shape=head.shape,
                        dtype=head.dtype,
                        need=format_bytes(head.nbytes),
                        have=format_bytes(have),
                    )
                )
            if head.nbytes > head.stored:
                raise self.damaged(
                    _("array {key} claims {need} of data but its entry holds {stored}").format(
                        key=key, need=format_bytes(head.nbytes), stored=format_bytes(head.stored)
                    )
                )
        total = sum(self.headers[k].nbytes for k in keys)
        if total > have:
            raise ArchiveError(
                _("{path}: cannot open: its arrays would need {need} of memory, more than the {have} available").format(
                    path=self.path, need=format_bytes(total), have=format_bytes(have)
                )
            )

    # -- arrays -----------------------------------------------------------------------------
    def __contains__(self, key: str) -> bool:
        return key in self.headers

    def __getitem__(self, key: str) -> np.ndarray:
        """The array ``key``, loaded and checked for values it must not hold."""
        if key not in self.headers:
            raise KeyError(key)
        with self._zf.open(key + NPY) as f:
            try:
                arr: np.ndarray = np.lib.format.read_array(f, allow_pickle=False)
            except ValueError as exc:  # the data ends before the header's shape is filled
                raise self.damaged(_("array {key} cannot be read ({why})").format(key=key, why=exc)) from None
        self._check_values(key, arr)
        return arr

    def get(self, key: str) -> np.ndarray | None:
        return self[key] if key in self.headers else None

    def _check_values(self, key: str, arr: np.ndarray) -> None:
        if key == "final_map":
            bad = int(np.count_nonzero(~np.isfinite(arr))) if arr.dtype.kind == "f" else 0
            if bad:
                raise self.damaged(
                    ngettext(
                        "its map holds {n} value that is not a finite number (NaN or infinity)",
                        "its map holds {n} values that are not finite numbers (NaN or infinity)",
                        bad,
                    ).format(n=bad)
                )
        elif key in ("hits", "frame_iterations", "frames_png_sizes") and arr.size and int(arr.min()) < 0:
            raise self.damaged(_("array {key} holds negative counts").format(key=key))
        elif key == "clusters" and arr.size and (int(arr.min()) < 0 or int(arr.max()) >= arr.size):
            raise self.damaged(_("array clusters holds cluster numbers outside 0 .. {most}").format(most=arr.size - 1))
        elif key == "unit_purity":
            known = arr[~np.isnan(arr)]
            if known.size and not (np.all(known >= 0) and np.all(known <= 1)):
                raise self.damaged(_("array unit_purity holds shares outside 0 .. 1"))

    def damaged(self, problem: str) -> ArchiveError:
        """The refusal of this file as damaged, for ``problem``."""
        return ArchiveError(_("{path}: damaged SOM Studio run file ({why})").format(path=self.path, why=problem))


def _dtype_fits(dtype: np.dtype, kinds: str) -> bool:
    if kinds == "u1":
        return dtype == np.uint8
    return dtype.kind in kinds and not dtype.fields


def _describe_kinds(kinds: str) -> str:
    return {
        "u1": _("bytes (uint8)"),
        "fiu": _("numbers"),
        "iu": _("whole numbers"),
        "f": _("floating-point numbers"),
        "U": _("text (Unicode)"),
    }[kinds]
