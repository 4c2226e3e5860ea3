"""Bounded histories for the live views: the whole run stays visible in fixed memory.

A live plot that appends one point per chunk grows without end over an
hours-long run (the app, measured: +0.65 MB a minute). A
:class:`MinMaxSeries` keeps the newest points exactly and folds older ones into
buckets that remember only their lowest and highest point, the way pyqtgraph's
"peak" downsampling draws a long curve: spikes survive, the envelope of the run
is intact, and the number of points kept never exceeds ``max_points``
whatever the run's length.

When the buckets fill, neighbouring pairs merge (each bucket then covers twice
as many points), so memory stays fixed and the old part of the run gets
coarser, never shorter. Every point costs amortised O(1).

Qt-free: the widgets in ``som_studio.qt.widgets`` draw what :meth:`arrays`
returns.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["MinMaxSeries"]

# A bucket: (x_lo, y_lo, x_hi, y_hi), the points with the lowest and highest y
# among the points it covers.
_Bucket = tuple[float, float, float, float]


def _merge(a: _Bucket, b: _Bucket) -> _Bucket:
    # ``a[1] != a[1]``: a NaN extreme gives way to any number.
    xl, yl = (b[0], b[1]) if b[1] < a[1] or a[1] != a[1] else (a[0], a[1])
    xh, yh = (b[2], b[3]) if b[3] > a[3] or a[3] != a[3] else (a[2], a[3])
    return (xl, yl, xh, yh)


def _ordered(b: _Bucket) -> list[tuple[float, float]]:
    """A bucket's two points in x order (one when the same point is both extremes)."""
    lo, hi = (b[0], b[1]), (b[2], b[3])
    if lo == hi or (math.isnan(lo[1]) and math.isnan(hi[1]) and lo[0] == hi[0]):
        return [lo]
    return [lo, hi] if lo[0] <= hi[0] else [hi, lo]


class MinMaxSeries:
    """An (x, y) series of bounded size: recent points exact, older ones min/max per bucket.

    Parameters
    ----------
    max_points : int
        The most points :meth:`arrays` ever returns (at least 16). Half are kept
        for the newest points, exact; the other half hold the older part of the
        run as min/max pairs.

    Notes
    -----
    Points are expected in increasing x (iterations of one run). NaN values of
    y are kept but never chosen as a bucket's extreme over a number.
    """

    def __init__(self, max_points: int = 4000) -> None:
        if max_points < 16:
            raise ValueError(f"max_points must be at least 16, not {max_points}")
        self.max_points = max_points
        self._recent_cap = max_points // 2
        # Each closed bucket draws as two points; one more open bucket and the first point.
        self._bucket_cap = max(2, (max_points - self._recent_cap - 3) // 2)
        self.clear()

    def clear(self) -> None:
        """Forget every point (a new run)."""
        self._first: tuple[float, float] | None = None
        self._recent_x: list[float] = []
        self._recent_y: list[float] = []
        self._buckets: list[_Bucket] = []
        self._open: _Bucket | None = None
        self._open_count = 0
        self._span = 1  # points per closed bucket
        self._count = 0

    def __len__(self) -> int:
        """How many points were appended since the last :meth:`clear` (not how many are kept)."""
        return self._count

    @property
    def span(self) -> int:
        """How many original points one bucket of the old part covers now."""
        return self._span

    def append(self, x: float, y: float) -> None:
        """Add one point (x after every point before it)."""
        x, y = float(x), float(y)
        if self._first is None:
            self._first = (x, y)
        self._count += 1
        self._recent_x.append(x)
        self._recent_y.append(y)
        if len(self._recent_x) > self._recent_cap:
            # Fold the oldest exact half at once: list slicing beats popping one by one.
            n = self._recent_cap // 2
            for ox, oy in zip(self._recent_x[:n], self._recent_y[:n]):
                self._fold(ox, oy)
            del self._recent_x[:n]
            del self._recent_y[:n]

    def extend(self, xs: object, ys: object) -> None:
        """Add several points (two iterables of equal length)."""
        for x, y in zip(xs, ys):  # type: ignore[call-overload]
            self.append(x, y)

    def _fold(self, x: float, y: float) -> None:
        point: _Bucket = (x, y, x, y)
        self._open = point if self._open is None else _merge(self._open, point)
        self._open_count += 1
        if self._open_count < self._span:
            return
        self._buckets.append(self._open)
        self._open, self._open_count = None, 0
        if len(self._buckets) > self._bucket_cap:
            # Pairs merge: half as many buckets, each twice as wide. An odd
            # last bucket stays as it is (it covers fewer points; harmless).
            b = self._buckets
            merged = [_merge(b[i], b[i + 1]) for i in range(0, len(b) - 1, 2)]
            if len(b) % 2:
                merged.append(b[-1])
            self._buckets = merged
            self._span *= 2

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The points to draw, in x order: the first point, the buckets' extremes, the recent points."""
        pts: list[tuple[float, float]] = []
        for b in self._buckets:
            pts.extend(_ordered(b))
        if self._open is not None:
            pts.extend(_ordered(self._open))
        if self._first is not None and (not pts or pts[0] != self._first) and self._count > len(self._recent_x):
            pts.insert(0, self._first)  # the run's start stays on the axis
        n_old = len(pts)
        x = np.empty(n_old + len(self._recent_x))
        y = np.empty_like(x)
        if n_old:
            x[:n_old], y[:n_old] = zip(*pts)
        x[n_old:] = self._recent_x
        y[n_old:] = self._recent_y
        return x, y

    def last(self) -> tuple[float, float] | None:
        """The newest point, or ``None`` when empty."""
        if not self._recent_x:
            return None
        return self._recent_x[-1], self._recent_y[-1]
