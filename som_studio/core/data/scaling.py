"""Per-feature scaling (``none``, ``minmax``, ``zscore``), fitted ignoring missing values and kept with a run so new
data is scaled the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from som_studio.core.data.checks import DataError
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


def fit_scaling(values: np.ndarray, method: str) -> Scaling:
    """The scaling ``method`` fitted to ``values`` (N, D), ignoring missing values (NaN)."""
    if method not in SCALINGS:
        raise DataError(unknown_scaling(method))
    if method == "none":  # before any copy: a float32 table stays as it is
        return Scaling.identity(np.shape(values)[1])
    x = np.asarray(values, dtype=np.float64)
    known = ~np.isnan(x)
    # Every column has a known value (read_table refuses an all-missing column), but
    # stay quiet and neutral for arrays built elsewhere.
    has = known.any(axis=0)
    safe = np.where(known, x, 0.0)
    # Values near float64's limit overflow here; Table.scaled refuses the feature by name.
    with np.errstate(over="ignore", invalid="ignore"):
        if method == Method.MINMAX:
            lo = np.where(has, np.min(np.where(known, x, np.inf), axis=0), 0.0)
            hi = np.where(has, np.max(np.where(known, x, -np.inf), axis=0), 1.0)
            span = hi - lo
            return Scaling(Method.MINMAX, lo, np.where(span > 0, span, 1.0))
        n = known.sum(axis=0)
        mean = np.where(n > 0, safe.sum(axis=0) / np.maximum(n, 1), 0.0)
        sq = np.where(known, (x - mean) ** 2, 0.0).sum(axis=0)
        std = np.sqrt(sq / np.maximum(n - 1, 1))
    return Scaling(Method.ZSCORE, mean, np.where(std > 0, std, 1.0))
