"""One pass of statistics over a :class:`~som_studio.core.data.stream.Source`, exact at any size.

Each batch's moments (count, shifted sum and co-moments per feature, missing values left out) merge
with the others' (Chan et al.'s parallel update), so batches, files and processes add up to the
whole table's statistics: the in-memory run's z-score and min-max scaling, its ranges, mean and
covariance (PCA's initial map), and the rows a seeded ``sample`` initialisation picks.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from som_studio.core.data.checks import DataError
from som_studio.core.data.scaling import SCALINGS, Scaling
from som_studio.core.data.stream import Source
from som_studio.i18n import _
from som_studio.run_settings import Scaling as Method

#: Every process's copy of a small host array, stacked on a new first axis, on every process (each process
#: calls it at the same point): how the passes of a run over several processes combine their shares.
Gather = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True, eq=False)
class Moments:
    """Sums over rows that merge exactly (additions in float64), around a fixed ``shift`` per feature.

    With ``y = x - shift`` at known values and 0 at missing ones, ``k`` the 0/1 mask of known
    values: ``rows``; ``known = k^T k`` (pairs known together); ``sums = y^T k`` (``sums[j, l]``:
    ``y_j`` summed over rows that know ``l``); ``squares = y^T y``; ``low``, ``high`` per feature.
    Means, variances and the covariance of the data with each missing value set to its
    feature's mean (what the in-memory PCA computes) follow without another pass.
    """

    shift: np.ndarray
    rows: int
    known: np.ndarray
    sums: np.ndarray
    squares: np.ndarray
    low: np.ndarray
    high: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, shift: np.ndarray) -> Moments:
        n, d = values.shape
        y = values - np.asarray(shift, np.float64)  # float64 whatever the table's type
        k = ~np.isnan(values)
        if k.all():  # the common case: three of the four products are column sums
            col = y.sum(axis=0)
            return cls(
                shift,
                n,
                np.full((d, d), float(n)),
                np.repeat(col[:, None], d, axis=1),
                y.T @ y,
                values.min(axis=0),
                values.max(axis=0),
            )
        kf = k.astype(np.float64)
        y[~k] = 0.0
        low = np.where(k, values, np.inf).min(axis=0)
        high = np.where(k, values, -np.inf).max(axis=0)
        return cls(shift, n, kf.T @ kf, y.T @ kf, y.T @ y, low, high)

    @classmethod
    def first(cls, values: np.ndarray) -> Moments:
        """The moments of a first batch, around its own mean (the later ones' sums stay small against their
        spread), 0 where a feature has no known value."""
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a feature with no known value: its mean is NaN
            shift = np.nan_to_num(np.nanmean(values, axis=0, dtype=np.float64))
        return cls.of(values, shift)

    @classmethod
    def of_table(cls, values: np.ndarray, rows: int = 1 << 13) -> Moments:
        """The moments of a table in memory, ``rows`` at a time: its temporaries are a block's, within the
        caches, not the table's (at 1,000,000 x 16, three float64 copies of the whole table took 0.6 s, most
        of it the operating system handing out their fresh pages; a block's moments take 0.13 s in all)."""
        total = cls.first(values[:rows])
        for at in range(rows, values.shape[0], rows):
            total = total.merge(cls.of(values[at : at + rows], total.shift))
        return total

    @classmethod
    def empty(cls, features: int) -> Moments:
        """The moments of no rows (a process whose share holds none)."""
        d = features
        z = np.zeros((d, d))
        return cls(np.zeros(d), 0, z, z, z, np.full(d, np.inf), np.full(d, -np.inf))

    def shifted(self, shift: np.ndarray) -> Moments:
        """The same moments around another ``shift`` (exact up to float64 rounding)."""
        dl = self.shift - shift  # y' = y + dl at known values
        sums = self.sums + dl[:, None] * self.known
        squares = self.squares + self.sums * dl[None, :] + self.sums.T * dl[:, None] + np.outer(dl, dl) * self.known
        return Moments(shift, self.rows, self.known, sums, squares, self.low, self.high)

    def flat(self) -> np.ndarray:
        """Everything in one float64 vector (for :data:`Gather`); :meth:`from_flat` reads it back."""
        parts = [self.shift, [float(self.rows)], self.known.ravel(), self.sums.ravel(), self.squares.ravel()]
        return np.concatenate([np.asarray(p, np.float64) for p in (*parts, self.low, self.high)])

    @classmethod
    def from_flat(cls, v: np.ndarray) -> Moments:
        d = round(float(np.sqrt(9 + 12 * (v.size - 1)) - 3) / 6)  # size = 3 d^2 + 3 d + 1
        at = [0, d, d + 1, d + 1 + d * d, d + 1 + 2 * d * d, d + 1 + 3 * d * d, 2 * d + 1 + 3 * d * d]
        part = [v[a:b] for a, b in zip(at, [*at[1:], v.size])]
        known, sums, squares = (p.reshape(d, d) for p in part[2:5])
        return cls(part[0], int(part[1][0]), known, sums, squares, part[5], part[6])

    def merge(self, other: Moments) -> Moments:
        """The moments of both sets of rows (the same ``shift``)."""
        return Moments(
            self.shift,
            self.rows + other.rows,
            self.known + other.known,
            self.sums + other.sums,
            self.squares + other.squares,
            np.minimum(self.low, other.low),
            np.maximum(self.high, other.high),
        )

    @property
    def count(self) -> np.ndarray:
        """Known values per feature."""
        return np.diag(self.known).copy()

    @property
    def missing(self) -> bool:
        return bool((self.count < self.rows).any())

    @property
    def mean(self) -> np.ndarray:
        n = self.count
        return np.where(n > 0, self.shift + np.diag(self.sums) / np.maximum(n, 1), 0.0)

    def comoments(self) -> np.ndarray:
        """``sum (x_j - mean_j)(x_l - mean_l)`` over rows knowing both: the filled data's covariance times N-1."""
        n = self.count
        m = np.where(n > 0, np.diag(self.sums) / np.maximum(n, 1), 0.0)  # the mean less the shift
        out: np.ndarray = self.squares - self.sums * m[None, :] - self.sums.T * m[:, None] + self.known * np.outer(m, m)
        return out


def statistics(
    source: Source, batch_rows: int, share: tuple[int, int] = (0, 1), gather: Gather | None = None
) -> Moments:
    """One pass over ``source``: its :class:`Moments` (raises :class:`DataError` on bad rows).

    Over several processes each reads its ``share`` and ``gather`` brings every process's moments to
    every process, which merges them (in process order, so all hold the same statistics).
    """
    total: Moments | None = None
    with source.reader(batch_rows, share) as reader:
        for batch in reader:
            if total is None:
                total = Moments.first(batch.values)
            else:
                total = total.merge(Moments.of(batch.values, total.shift))
    if total is None:  # a share of no rows (an open source has rows)
        total = Moments.empty(source.features)
    if gather is None:
        return total
    every = [Moments.from_flat(v) for v in gather(total.flat())]
    held = [m for m in every if m.rows > 0]
    merged = held[0]
    for m in held[1:]:
        merged = merged.merge(m.shifted(merged.shift))
    return merged


def gather_rows(
    source: Source,
    rows: np.ndarray,
    batch_rows: int,
    share: tuple[int, int] = (0, 1),
    gather: Gather | None = None,
) -> np.ndarray:
    """Rows ``rows`` (indices into the source, any order, repeats allowed) in one pass, as (len(rows), D).

    Over several processes each reads its ``share`` (whose rows follow the earlier shares') and the
    rows each holds are gathered, so every process has them all.
    """
    out = np.full((len(rows), source.features), np.nan)
    held = np.zeros(len(rows), np.float64)
    start = sum(source.share_rows(q, share[1]) for q in range(share[0]))
    order = np.argsort(rows, kind="stable")
    wanted = rows[order] - start
    with source.reader(batch_rows, share) as reader:
        for batch in reader:
            lo, hi = np.searchsorted(wanted, [batch.first, batch.first + batch.rows])
            if hi > lo:
                out[order[lo:hi]] = batch.values[wanted[lo:hi] - batch.first]
                held[order[lo:hi]] = 1.0
    if gather is None:
        return out
    every = gather(np.concatenate([out, held[:, None]], axis=1))  # (processes, rows, D + 1)
    holder = np.argmax(every[:, :, -1], axis=0)
    picked: np.ndarray = every[holder, np.arange(len(rows)), :-1]
    return picked


def fitted_scaling(moments: Moments, method: str) -> Scaling:
    """The scaling ``method`` fitted to a source's :class:`Moments`: what :func:`fit_scaling` gives in memory."""
    d = moments.shift.shape[0]
    if method not in SCALINGS:
        raise DataError(
            _("unknown scaling {method!r}; expected one of {choices}").format(
                method=method, choices=", ".join(SCALINGS)
            )
        )
    if method == Method.NONE:
        return Scaling.identity(d)
    n = moments.count
    if method == Method.MINMAX:
        lo = np.where(n > 0, moments.low, 0.0)
        hi = np.where(n > 0, moments.high, 1.0)
        span = hi - lo
        return Scaling(Method.MINMAX, lo, np.where(span > 0, span, 1.0))
    std = np.sqrt(np.diag(moments.comoments()) / np.maximum(n - 1, 1))
    return Scaling(Method.ZSCORE, moments.mean, np.where(std > 0, std, 1.0))


def scaled_summary(moments: Moments, scaling: Scaling) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(low, high, mean, covariance)`` of the data in ``scaling``'s space, missing values set to the mean.

    The covariance is the filled data's, divided by N - 1 (what ``numpy.cov`` gives in memory).
    """
    lo = scaling.apply(moments.low[None, :])[0]
    hi = scaling.apply(moments.high[None, :])[0]
    mean = scaling.apply(moments.mean[None, :])[0]
    cov = moments.comoments() / max(moments.rows - 1, 1) / np.outer(scaling.scale, scaling.scale)
    return lo, hi, mean, cov
