"""Best-matching units of many rows on a trained map, on the device: projection's fast search.

:func:`som_studio.core.som.metrics.nearest_units` is the NumPy reference (float64,
the expanded form re-checked directly). Projecting many rows onto a big map
(``som-studio project`` of 100,000 x 50 onto 256 x 256: 3.3e11 multiply-adds)
runs instead the kernel plan of the device (:mod:`som_studio.core.plans.fused_plan`:
the blocked search on the CPU, direct or matmul on an accelerator), the very
search training ran, exact in the run's precision: the first smallest direct
distance over the row's known features wins, first in row-major order on ties.

Rows come in chunks of a fixed size (the last padded), so one compiled program
serves a whole file however long it is; the caller streams the chunks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.plans import fused_plan, kernels

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
else:
    jax = jax_runtime.jax()


class DeviceNearest:
    """The best-matching unit of rows of ``rows`` or fewer on ``weights`` (M, D), searched on ``device``.

    Parameters
    ----------
    weights : (M, D) codebook, in the space the rows are given in (scaled).
    rows : rows per call at most; every call is padded to it (one compile).
    dtype : the run's precision: distances are ranked in it, as training ranked them.
    device : where to search; default JAX's first device.
    """

    def __init__(self, weights: np.ndarray, rows: int, dtype: Any, device: Any = None) -> None:
        self.dtype = np.dtype(dtype)
        self.device = device if device is not None else jax.devices()[0]
        m, d = weights.shape
        self.rows, self.features = rows, d
        self.plan = fused_plan.choose(self.device.platform, m, d, rows, self.dtype.itemsize)
        self._wt = jax.device_put(np.ascontiguousarray(np.asarray(weights, self.dtype).T), self.device)
        plan = self.plan

        def search(wt: jax.Array, x: jax.Array, known: jax.Array | None) -> jax.Array:
            return kernels.bmus(wt, x, plan, known)

        self._search = jax.jit(search)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(n,) int64 flat unit index of each row of ``x`` (n <= ``rows``, D); NaN marks a missing value."""
        n = len(x)
        if n > self.rows:
            raise ValueError(f"at most {self.rows} rows per call, got {n}")
        # One copy in the search's precision, padded in place; NaN become 0 beside a mask.
        xp = np.zeros((self.rows, self.features), self.dtype)
        xp[:n] = x
        known = ~np.isnan(xp)
        mask = None
        if not known.all():
            xp[~known] = 0
            mask = known.astype(self.dtype)
        put = lambda a: jax.device_put(a, self.device)
        first = self._search(self._wt, put(xp), None if mask is None else put(mask))
        return np.asarray(first, dtype=np.int64)[:n]
