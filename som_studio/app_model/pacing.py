"""How often a live view may draw, from what its draws cost the app's process.

Watching a run must not slow it: on a machine whose cores all train, every CPU second the app
spends drawing is taken from the training. So each live view (the map, the timing plot) measures
what a draw costs it (the process's CPU time, to set the picture and paint it) and draws at most
as often as keeps that cost within its share of one core: a cheap view moves often, a costly
one (a large map, a slow display) less often, never less than its least rate.

Qt-free: the views book the costs they measured and ask for the interval.
"""

from __future__ import annotations

import statistics
from collections import deque


class DrawPacer:
    """Least seconds between two draws of a live view, kept within ``share`` of one core.

    The interval is the median of the last ``kept`` draws' costs (one slow paint, a resize's,
    does not slow the view) over ``share``, bounded by ``least_s`` (the most draws a second
    worth making) and ``most_s`` (the view still moves, whatever a draw costs). Before any
    draw was measured: ``least_s``.

    Parameters
    ----------
    share : the share of one core the view's draws may take (0.01: 10 ms of CPU a second).
    least_s, most_s : the bounds of the interval, in seconds.
    kept : how many of the last draws' costs the median is taken over.
    """

    def __init__(self, share: float, least_s: float, most_s: float, kept: int = 7) -> None:
        if share <= 0 or least_s < 0 or most_s < least_s:
            raise ValueError(f"DrawPacer: share {share} > 0 and 0 <= least {least_s} <= most {most_s}")
        self.share = share
        self.least_s = least_s
        self.most_s = most_s
        self._costs: deque[float] = deque(maxlen=kept)

    def book(self, seconds: float) -> None:
        """One draw cost ``seconds`` of the process's CPU time."""
        self._costs.append(max(seconds, 0.0))

    def clear(self) -> None:
        """Forget the costs (another view, another display)."""
        self._costs.clear()

    @property
    def cost_s(self) -> float | None:
        """The median cost of the last draws, or ``None`` before one was booked."""
        return statistics.median(self._costs) if self._costs else None

    def interval_s(self) -> float:
        """Least seconds from one draw to the next."""
        cost = self.cost_s
        if cost is None:
            return self.least_s
        return min(max(self.least_s, cost / self.share), self.most_s)

    def wait_s(self, last_draw: float | None, now: float) -> float:
        """Seconds still to wait at ``now`` before drawing again after a draw at ``last_draw`` (0: draw now)."""
        if last_draw is None:
            return 0.0
        return max(0.0, last_draw + self.interval_s() - now)
