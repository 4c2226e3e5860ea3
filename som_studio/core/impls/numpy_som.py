"""The NumPy reference implementations, ports of the playbook's NumPy SOM.

They are the ground truth every other implementation is compared with, so they
are written for clarity first: one example at a time, as the playbook does.

Topology (:mod:`som_studio.core.som.topology`): a rect planar map keeps the
separable neighbourhood it always had (bit for bit); hex and toroid maps take
the neighbourhood of their plane distances. Missing values (NaN): the BMU
search and the update use each example's known features only, as the SOM
Toolbox does; a batch epoch then averages each feature over the examples that
know it.
"""

from __future__ import annotations

import numpy as np

from som_studio.core.som import topology as topo
from som_studio.core.som.problem import MIN_WEIGHT, Block, Problem
from som_studio.run_settings import Topology

# numpy-batch keeps each best-matching unit's neighbourhood for the rest of the
# epoch once computed, up to this many bytes; past it, neighbourhoods are
# recomputed. (The playbook reserves a full M x M cache instead.)
NEIGHBOURHOOD_CACHE_BYTES = 256 << 20


def bmu_index(weights: np.ndarray, x: np.ndarray) -> tuple[int, int]:
    """(y, x) of the unit nearest to ``x`` (first in row-major order on ties); NaN features are left out."""
    known = ~np.isnan(x)
    if known.all():
        diff = weights - x
    else:
        diff = weights[:, :, known] - x[known]
    dist = np.einsum("hwd,hwd->hw", diff, diff)
    by, bx = divmod(int(np.argmin(dist)), weights.shape[1])
    return by, bx


class _NumpyTrainer:
    """Shared state of the NumPy trainers (host memory, nothing to compile)."""

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.weights = problem.init_map.copy()
        dt = problem.dtype
        self._xs = np.arange(problem.width, dtype=dt)
        self._ys = np.arange(problem.height, dtype=dt)
        cfg = problem.config
        self._separable = cfg.topology == Topology.RECT and not cfg.toroid
        self._missing = problem.missing
        self._schedule = problem.schedule()

    def _h1(self, b: Block, t: int, by: int, bx: int) -> tuple[np.ndarray, np.ndarray]:
        hy = np.exp(-((self._ys - by) ** 2) / b.sigma_y[t] ** 2)
        hx = np.exp(-((self._xs - bx) ** 2) / b.sigma_x[t] ** 2)
        return hy, hx

    def _h(self, b: Block, t: int, by: int, bx: int) -> np.ndarray:
        """The (height, width) neighbourhood of unit (by, bx) at iteration ``t`` of block ``b``, unscaled."""
        if self._separable:
            hy, hx = self._h1(b, t, by, bx)
            return np.outer(hy, hx)
        p, cfg = self.p, self.p.config
        return topo.neighbourhood(
            p.height, p.width, by, bx, b.sigma_x[t], b.sigma_y[t], cfg.topology, cfg.toroid, p.dtype
        )

    def warmup(self) -> None:
        """Nothing compiles in NumPy."""

    def get_map(self) -> np.ndarray:
        return self.weights.copy()

    def close(self) -> None:
        self.weights = self.weights[:0]


class NumpyOnline(_NumpyTrainer):
    """``numpy-online``: one example per step, full-map update.

    In memory step ``t`` takes row ``order[t]`` of the data; streamed
    (:class:`~som_studio.core.impls.protocol.StepRows`) it takes the rows it was fed, in order.
    Both run the same steps, so the same rows give the same map.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        self._rows = problem.data[:0]

    def run(self, first: int, count: int) -> None:
        for block, local, n in self._schedule.segments(first, count):
            assert block.order is not None
            self._steps(block, local, self.p.data[block.order[local : local + n]])

    # -- steps fed their rows (protocol.StepRows): a streamed run's batches ------------------
    def take_rows(self, rows: np.ndarray) -> None:
        """Hold a batch of rows (n, D) in the run's precision, NaN for missing values."""
        self._rows = rows

    def run_rows(self, first: int, count: int, offset: int) -> None:
        """Train steps ``first .. first + count - 1`` on held rows ``offset ..``, in order."""
        for block, local, n in self._schedule.segments(first, count):
            self._steps(block, local, self._rows[offset : offset + n])
            offset += n

    def _steps(self, b: Block, first: int, rows: np.ndarray) -> None:
        """Steps ``first ..`` of block ``b``, one per row of ``rows``."""
        p, w = self.p, self.weights
        if self._separable and not self._missing:
            for t, x in enumerate(rows, first):
                diff = w - x
                dist = np.einsum("hwd,hwd->hw", diff, diff)
                by, bx = divmod(int(np.argmin(dist)), p.width)
                hy, hx = self._h1(b, t, by, bx)
                h = np.outer(hy * b.lr[t], hx)
                w -= h[:, :, None] * diff
            return
        for t, x in enumerate(rows, first):
            known = ~np.isnan(x)
            by, bx = bmu_index(w, x)
            h = self._h(b, t, by, bx) * b.lr[t]
            if known.all():
                w -= h[:, :, None] * (w - x)
            else:
                # Only the known features move: a missing value says nothing about them.
                w[:, :, known] -= h[:, :, None] * (w[:, :, known] - x[known])


class NumpyBatch(_NumpyTrainer):
    """``numpy-batch``: the playbook's per-example loop over each epoch.

    Each best-matching unit's neighbourhood is the separable outer product
    ``hy ⊗ hx``, computed when first needed in an epoch and kept (up to
    :data:`NEIGHBOURHOOD_CACHE_BYTES`) for the rest of it, instead of
    reserving an M x M cache up front. The epoch's sums accumulate in float64.
    """

    def run(self, first: int, count: int) -> None:
        for t in range(first, first + count):
            self.begin_epoch(t)
            self.add_rows(self.p.data)
            self.end_epoch(t)

    # -- an epoch in pieces (protocol.EpochSums): the in-memory run is one piece of all rows --
    def begin_epoch(self, iteration: int) -> None:
        """Start epoch ``iteration``'s sums (float64 whatever the precision) against the current map."""
        p, w = self.p, self.weights
        index, self._t = divmod(iteration, self._schedule.length)
        self._block = self._schedule.block(index)
        # The running sums are float64 whatever the precision: a float32 sum
        # of 1000 neighbourhood-weighted examples drifts (QE 29 % off float64
        # on the playbook workload), and the reference must not.
        self._num = np.zeros(w.shape, dtype=np.float64)
        # With missing values each feature has its own total weight: the examples that know it.
        self._den = np.zeros(w.shape if self._missing else w.shape[:2], dtype=np.float64)
        self._cache: dict[tuple[int, int], np.ndarray] = {}
        self._budget = NEIGHBOURHOOD_CACHE_BYTES // max(p.height * p.width * p.dtype.itemsize, 1)

    def add_rows(self, rows: np.ndarray) -> None:
        """Add ``rows`` (n, D) in the run's precision, NaN for missing values, to the epoch's sums."""
        w, b, t, num, den, cache = self.weights, self._block, self._t, self._num, self._den, self._cache
        for x in rows:
            u = bmu_index(w, x)
            h = cache.get(u)
            if h is None:
                h = self._h(b, t, *u)
                if len(cache) < self._budget:
                    cache[u] = h
            if self._missing:
                known = ~np.isnan(x)
                num[:, :, known] += h[:, :, None] * x[known]
                den[:, :, known] += h[:, :, None]
            else:
                num += h[:, :, None] * x
                den += h

    def epoch_sums(self) -> dict[str, np.ndarray]:
        return {"num": self._num.copy(), "den": self._den.copy()}

    def set_epoch_sums(self, sums: dict[str, np.ndarray]) -> None:
        self._num = np.array(sums["num"], dtype=np.float64).reshape(self._num.shape)
        self._den = np.array(sums["den"], dtype=np.float64).reshape(self._den.shape)

    def end_epoch(self, iteration: int) -> None:
        """Move each unit to its neighbourhood-weighted mean (units of too little weight stay)."""
        w, num, den = self.weights, self._num, self._den
        ok = den > MIN_WEIGHT
        if self._missing:
            self.weights = np.where(ok, num / np.where(ok, den, 1), w).astype(w.dtype)
        else:
            safe = np.where(ok, den, 1)[:, :, None]
            self.weights = np.where(ok[:, :, None], num / safe, w).astype(w.dtype)
        self._cache = {}
