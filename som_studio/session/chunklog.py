"""Every chunk of a run, stored compactly: 24 bytes a chunk instead of ~150.

The record keeps every chunk (the JSON's ``timings.chunks`` contract), so its
memory grows with the run, and a run of hours needs it stored compactly. A list of
``Chunk`` dataclasses costs an object, two ints and a float per chunk (the
tracemalloc of a 6-minute ``bench/soak.py`` traced ~100 bytes a chunk in the
app's controller alone, 22 chunks a second). :class:`ChunkLog` keeps three
typed arrays instead and hands out :class:`Chunk` objects only when read, so
code written for ``list[Chunk]`` (iteration, ``len``, indexing, ``[-1]``)
reads it unchanged. It is :attr:`RunRecord.chunks
<som_studio.session.record.RunRecord.chunks>` (the session's, the bench's, a
loaded record's) and the app controller's log of a live run.

Qt-free and JAX-free.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np

__all__ = ["Chunk", "ChunkLog"]


@dataclass(frozen=True)
class Chunk:
    """One timed call of a trainer: iterations ``first .. first + count - 1`` in ``seconds``."""

    first: int
    count: int
    seconds: float


class ChunkLog(Sequence[Chunk]):
    """An append-only sequence of :class:`Chunk` in three typed arrays (int64, int64, float64)."""

    __slots__ = ("_count", "_first", "_seconds")

    def __init__(self, chunks: Iterable[Chunk] = ()) -> None:
        self._first = array("q")
        self._count = array("q")
        self._seconds = array("d")
        self.extend(chunks)

    def append(self, chunk: Chunk) -> None:
        """Add one chunk (a :class:`Chunk`, or anything with ``first``, ``count``, ``seconds``)."""
        self.add(chunk.first, chunk.count, chunk.seconds)

    def add(self, first: int, count: int, seconds: float) -> None:
        """Add one chunk from its fields, with no object made for it."""
        self._first.append(int(first))
        self._count.append(int(count))
        self._seconds.append(float(seconds))

    def extend(self, chunks: Iterable[Chunk]) -> None:
        for c in chunks:
            self.append(c)

    def clear(self) -> None:
        del self._first[:], self._count[:], self._seconds[:]

    def __len__(self) -> int:
        return len(self._first)

    @overload
    def __getitem__(self, i: int) -> Chunk: ...
    @overload
    def __getitem__(self, i: slice) -> list[Chunk]: ...
    def __getitem__(self, i: int | slice) -> Chunk | list[Chunk]:
        if isinstance(i, slice):
            return [Chunk(f, c, s) for f, c, s in zip(self._first[i], self._count[i], self._seconds[i])]
        return Chunk(self._first[i], self._count[i], self._seconds[i])

    def __iter__(self) -> Iterator[Chunk]:
        for f, c, s in zip(self._first, self._count, self._seconds):
            yield Chunk(f, c, s)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ChunkLog):
            return (self._first, self._count, self._seconds) == (other._first, other._count, other._seconds)
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ChunkLog({len(self)} chunks)"

    def nbytes(self) -> int:
        """Bytes held by the chunks' data (the arrays' items, not their spare capacity)."""
        return sum(a.itemsize * len(a) for a in (self._first, self._count, self._seconds))

    # -- vectorised reads (no Chunk objects) -------------------------------------------------
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(first, count, seconds)`` as NumPy arrays (copies)."""
        return (
            np.array(self._first, dtype=np.int64),
            np.array(self._count, dtype=np.int64),
            np.array(self._seconds, dtype=np.float64),
        )

    def iterations_done(self) -> int:
        return int(sum(self._count))

    def iteration_seconds(self) -> np.ndarray:
        """Seconds per iteration of each chunk with at least one iteration."""
        _, count, seconds = self.arrays()
        keep = count > 0
        per: np.ndarray = seconds[keep] / count[keep]
        return per

    def to_dicts(self) -> list[dict[str, float | int]]:
        """The JSON form, as ``RunRecord.to_dict`` writes it (``timings.chunks``)."""
        return [{"first": f, "count": c, "seconds": s} for f, c, s in zip(self._first, self._count, self._seconds)]
