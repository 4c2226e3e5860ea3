"""Raw data out of a comparison: CSV of the timed chunks, PNG of the final maps.

The CSV has one row per timed chunk per run, with the numbers exactly as the
JSON records hold them (floats written with ``repr``, which reads back to the
same value), so either file can be checked against the other.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence

import numpy as np

from som_studio.session.record import RunRecord

CSV_COLUMNS = ("impl", "kind", "status", "chunk", "first", "count", "seconds", "iteration_s", "compile_s")
"""Columns of :func:`chunks_csv`: ``chunk`` numbers a run's chunks from 0;
``iteration_s`` is ``seconds / count``; ``compile_s`` repeats the run's compile
and warm-up time (timed apart from every chunk) on each of its rows."""


def chunks_csv(records: Sequence[RunRecord]) -> str:
    """One row per timed chunk per run (runs without timed chunks have no rows)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for r in records:
        for i, c in enumerate(r.chunks):
            w.writerow(
                [
                    r.impl,
                    r.kind,
                    r.status,
                    i,
                    c.first,
                    c.count,
                    repr(c.seconds),
                    repr(c.seconds / c.count) if c.count else "",
                    repr(r.compile_s),
                ]
            )
    return buf.getvalue()


def safe_file_stem(name: str) -> str:
    """A file name stem for a run name: letters, digits, ``-``, ``_`` and ``.`` only."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return stem or "run"


def upscale(image: np.ndarray, target: int = 480) -> np.ndarray:
    """Enlarge a small map picture by a whole factor (nearest), so one unit stays one crisp block.

    The longer side becomes at least ``target`` pixels; large maps keep their size.
    """
    h, w = image.shape[:2]
    k = max(1, -(-target // max(h, w)))
    return np.repeat(np.repeat(image, k, axis=0), k, axis=1) if k > 1 else image
