"""Per-feature scaling (``none``, ``minmax``, ``zscore``), fitted ignoring missing values and kept with a run so new
data is scaled the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.core.data.checks import DataError, any_missing
from som_studio.i18n import _
from som_studio.run_settings import Scaling as Method

SCALINGS: tuple[str, ...] = tuple(Method)


@dataclass(frozen=True, eq=False)
class Scaling:
    """A per-feature affine scaling ``(x - offset) / scale``, kept so new data is scaled the same way.

    ``method`` is ``none``, ``minmax`` (to [0, 1]; constant features become 0) or
    ``zscore`` (mean 0, standard deviation 1 with the N-1 divisor, as the SOM
    Toolbox's ``var``; constant features become 0). Missing values stay missing.
    """

    method: str
    offset: np.ndarray
    scale: np.ndarray

    def apply(self, values: np.ndarray) -> np.ndarray:
        """``values`` (N, D) in the scaled space (float64)."""
        scaled: np.ndarray = (np.asarray(values, dtype=np.float64) - self.offset) / self.scale
        return scaled

    def apply_in_place(self, values: np.ndarray) -> np.ndarray:
        """:meth:`apply` written over ``values`` (float64, N x D): the same numbers, no temporary arrays."""
        np.subtract(values, self.offset, out=values)
        np.divide(values, self.scale, out=values)
        return values

    def invert(self, values: np.ndarray) -> np.ndarray:
        """Back from the scaled space to the data's original units (float64)."""
        original: np.ndarray = np.asarray(values, dtype=np.float64) * self.scale + self.offset
        return original

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "offset": self.offset.tolist(), "scale": self.scale.tolist()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Scaling:
        method = str(d.get("method", "none"))
        if method not in SCALINGS:
            raise DataError(unknown_scaling(method))
        offset = np.asarray(d["offset"], dtype=np.float64)
        scale = np.asarray(d["scale"], dtype=np.float64)
        finite = bool(np.all(np.isfinite(offset)) and np.all(np.isfinite(scale)))
        if offset.shape != scale.shape or offset.ndim != 1 or not finite or not np.all(scale > 0):
            raise DataError(
                _(
                    "scaling parameters are damaged (offset and scale must be matching rows of finite numbers, "
                    "scale > 0)"
                )
            )
        return cls(method, offset, scale)

    @classmethod
    def identity(cls, features: int) -> Scaling:
        return cls("none", np.zeros(features), np.ones(features))


def unknown_scaling(method: str) -> str:
    return _("unknown scaling {method!r}; expected one of {choices}").format(method=method, choices=", ".join(SCALINGS))


#: Rows of a table fitted and scaled at a time: about this many bytes of float64, so that neither makes an array
#: as large as the table. Each fresh one is paid in page faults, and there were five: 200,000 x 1,000 float32
#: took 12-14 s to fit minmax and peaked at 2.5 GB, where reading it takes 0.1-0.3 s.
BLOCK_BYTES = 1 << 22


def row_blocks(rows: int, features: int) -> list[slice]:
    """Slices of ``rows`` rows of ``features`` float64 numbers, about :data:`BLOCK_BYTES` each, in order."""
    step = max(1, BLOCK_BYTES // (8 * max(features, 1)))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def _column_sums(values: np.ndarray, term: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the sum of ``term(block)`` over its known values (added row after row, in the rows' order, as
    ``sum(axis=0)`` over the whole table adds them) and how many values are known."""
    d = values.shape[1]
    total, count = np.zeros(d), np.zeros(d, np.int64)
    for rows in row_blocks(values.shape[0], d):
        x = np.asarray(values[rows], dtype=np.float64)
        if any_missing(x):
            known = ~np.isnan(x)
            count += known.sum(axis=0)
            terms = np.where(known, term(x), 0.0)
        else:
            count += x.shape[0]
            terms = term(x)
        # The running sums as the block's first row: the same additions, in the same order, as over the table.
        total = np.concatenate([total[None, :], terms]).sum(axis=0)
    return total, count


def fit_scaling(values: np.ndarray, method: str) -> Scaling:
    """The scaling ``method`` fitted to ``values`` (N, D), ignoring missing values (NaN), a block of rows at a time."""
    if method not in SCALINGS:
        raise DataError(unknown_scaling(method))
    if method == "none":  # before any copy: a float32 table stays as it is
        return Scaling.identity(np.shape(values)[1])
    values = np.asarray(values)
    # Values near float64's limit overflow here; Table.scaled refuses the feature by name.
    with np.errstate(over="ignore", invalid="ignore"):
        if method == Method.MINMAX:
            # fmin and fmax pass over NaN: a column's extremes of its known values, NaN where it has none (read_table
            # refuses such a column, but stay quiet and neutral for arrays built elsewhere). Exact in any precision.
            lo = np.fmin.reduce(values, axis=0).astype(np.float64)
            hi = np.fmax.reduce(values, axis=0).astype(np.float64)
            has = ~np.isnan(lo)
            lo, hi = np.where(has, lo, 0.0), np.where(has, hi, 1.0)
            span = hi - lo
            return Scaling(Method.MINMAX, lo, np.where(span > 0, span, 1.0))
        total, n = _column_sums(values, lambda x: x)
        mean = np.where(n > 0, total / np.maximum(n, 1), 0.0)
        sq, _n = _column_sums(values, lambda x: (x - mean) ** 2)
        std = np.sqrt(sq / np.maximum(n - 1, 1))
    return Scaling(Method.ZSCORE, mean, np.where(std > 0, std, 1.0))
