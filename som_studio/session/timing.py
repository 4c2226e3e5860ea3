"""Timing arithmetic of a run, as pure functions: chunk sizes, quality pacing, figures.

Kept apart from the session so each rule is tested alone:

* :func:`next_chunk`: how many iterations the next chunk runs, aiming at the
  session's target wall time per chunk;
* :class:`QualityPacer`: whether a quality measurement fits the run's budget
  for measurements (a share of the training time so far);
* :class:`FramePacer`: whether a map frame for a watcher fits its budget (a
  share of the training time so far, and at most so many frames a second);
* :func:`weighted_percentile`, :func:`mean_per_iteration`: per-iteration
  figures in which every *iteration* counts once (a warm-up chunk of one
  iteration weighs one iteration, not as much as a chunk of thousands);
* :func:`is_noisy`: the "noisy iterations" test shared by ``bench`` and the report;
* :func:`end_to_end_speedup`, :func:`break_even_iterations`: what a rung is
  worth to someone who waits for the whole run, compile included.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Each chunk may run at most this many times the iterations of the one before
#: (the first chunk, of one iteration, measures the rate with per-call overhead
#: in it). Growing 1, 4, 16, ... takes eight chunks to reach 50,000 steps; those
#: warm-up chunks are few *iterations*, so percentiles weighted by iterations
#: (:func:`weighted_percentile`) are not set by them.
GROWTH = 4
#: Share of the training time so far that quality measurements may take together.
QUALITY_SHARE = 0.10
#: Share of the training time so far that map frames for a watcher may cost together: the copy
#: on the training thread and the picture made of it on the same machine's cores.
FRAME_SHARE = 0.02
#: The most map frames a second: a moving map reads as moving at this rate, and a frame more
#: costs the training more than it shows the eye.
FRAME_HZ = 15
#: Least seconds between a streamed epoch's progress events: four a second keep an epoch of hours
#: visibly moving, and cost the training nothing measurable (one small event, between batches).
PROGRESS_INTERVAL_S = 0.25
#: A measurement predicted to take less than this always fits: it is not worth
#: skipping (a small map's QE/TE on the host takes microseconds).
QUALITY_FREE_S = 0.02
#: What one chunk costs beyond its iterations (a dispatch and a wait for the
#: result): ~10 us for a jitted call, less for NumPy.
CHUNK_OVERHEAD_S = 10e-6
#: A quality point may cut a chunk short only where the cut chunk still runs at
#: least this long, so its overhead stays under 2 % (a 50-epoch GPU run of
#: ~90 us epochs is not cut into 5-epoch chunks of 0.45 ms).
MIN_CUT_S = 50 * CHUNK_OVERHEAD_S
#: A run is flagged noisy when its p95 per-iteration time exceeds the median by this factor.
NOISY_RATIO = 2.0
#: ... and only when it has at least this many timed chunks.
FEW_CHUNKS = 5


def next_chunk(count: int, seconds: float, target_s: float, max_chunk: int | None = None) -> int:
    """Iterations for the next chunk after one of ``count`` iterations that took ``seconds``.

    Aims at ``target_s`` of wall time at the rate just measured, growing at
    most :data:`GROWTH`-fold (a first tiny chunk's rate carries per-call
    overhead) and never below one iteration; ``max_chunk`` caps it.
    """
    count = max(count, 1)
    per = seconds / count
    want = int(target_s / per) if per > 0 else count * GROWTH
    nxt = max(1, min(want, count * GROWTH))
    return min(nxt, max_chunk) if max_chunk else nxt


def worth_cutting(iterations: int, per_iteration_s: float | None) -> bool:
    """Whether a chunk cut to ``iterations`` at ``per_iteration_s`` each still runs :data:`MIN_CUT_S`.

    Unknown rate (no chunk timed yet): yes.
    """
    return per_iteration_s is None or iterations * per_iteration_s >= MIN_CUT_S


def weighted_percentile(values: Sequence[float], weights: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile of ``values``, each counted ``weights`` times (inverted CDF).

    With per-iteration times of chunks weighted by their iterations, this is
    the percentile over iterations: the time below which ``q`` % of the run's
    iterations ran.
    """
    if not len(values):
        return None
    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if not np.any(w > 0):
        return None
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order]
    cum = np.cumsum(w)
    k = int(np.searchsorted(cum, q / 100.0 * cum[-1], side="left"))
    return float(v[min(k, len(v) - 1)])


NOTHING_COMPILED_S = 1e-3
"""A warm-up without compiles shorter than this is no compile time (:func:`nothing_compiled`)."""


def mean_per_iteration(counts: Sequence[int], seconds: Sequence[float]) -> float | None:
    """Training seconds per iteration over all chunks: total time / total iterations."""
    n = sum(counts)
    return float(sum(seconds)) / n if n else None


def is_noisy(median_s: float | None, p95_s: float | None, chunks: int) -> bool:
    """Whether a run's per-iteration times spread enough to distrust its median.

    The p95 more than :data:`NOISY_RATIO` times the median, over at least
    :data:`FEW_CHUNKS` timed chunks.
    """
    return bool(median_s and p95_s and chunks >= FEW_CHUNKS and p95_s / median_s > NOISY_RATIO)


def nothing_compiled(seconds: float, compiles: int | None) -> bool:
    """Whether a warm-up compiled nothing and took no time worth a figure (a NumPy rung's first iteration:
    microseconds), where a compile time would read as one. A JAX run whose programs came from the persistent
    cache compiles nothing either, but its tracing and loading take tens of milliseconds, which are shown."""
    return not compiles and seconds < NOTHING_COMPILED_S


def end_to_end_speedup(base_total_s: float | None, total_s: float | None) -> float | None:
    """The baseline's whole-run time over this run's (compile and warm-up included)."""
    if not base_total_s or not total_s:
        return None
    return base_total_s / total_s


def break_even_iterations(
    base_compile_s: float, base_per_it_s: float | None, compile_s: float, per_it_s: float | None
) -> int | None:
    """Iterations from which this run's whole time beats the baseline's ("faster after N iterations").

    The least ``N`` with ``compile_s + N * per_it_s < base_compile_s + N * base_per_it_s``:
    0 when this run is ahead from the start, ``None`` when it never catches up
    (not faster per iteration) or a figure is missing.
    """
    if base_per_it_s is None or per_it_s is None:
        return None
    extra = compile_s - base_compile_s
    if extra < 0 or (extra == 0 and per_it_s < base_per_it_s):
        return 0
    gain = base_per_it_s - per_it_s
    if gain <= 0:
        return None
    return math.floor(extra / gain) + 1


@dataclass
class QualityPacer:
    """Decides which quality measurements a run can afford.

    Measurements together take at most ``share`` of the training time so far:
    one is made when the time they took already plus its predicted time fit
    that budget (or when it is predicted to be negligible, under
    :data:`QUALITY_FREE_S`); otherwise that point is skipped. The session always
    measures the final map regardless.

    The prediction is the last measurement's time (not one that compiled, see
    :meth:`spend`) or, before one, ``first_guess_s``. ``share=None``: every
    measurement is made (runs across processes, which must cut the same chunks).
    """

    share: float | None = QUALITY_SHARE
    first_guess_s: float = 0.0
    spent_s: float = 0.0
    last_s: float | None = None

    def predicted_s(self) -> float:
        return self.first_guess_s if self.last_s is None else self.last_s

    def allow(self, train_s: float) -> bool:
        """Whether a measurement now fits, ``train_s`` seconds of training in."""
        if self.share is None:
            return True
        p = self.predicted_s()
        return p < QUALITY_FREE_S or self.spent_s + p <= self.share * train_s

    def spend(self, seconds: float, compile_s: float = 0.0, first: bool = False) -> None:
        """Book one measurement: ``seconds`` in all, of which ``compile_s`` was a one-off compile.

        A measurement that compiled, or the ``first`` run of its program, does not set the prediction: a
        program's first execution carries one-off costs (measured: ~14 ms for a 0.5 ms program on a loaded
        CPU; a process's first product through XLA's own GEMM 25 ms), so the next prediction stays as it
        was. Taken for the rate of every later point, the app's default run measured its initial map and
        then only its final one.
        """
        self.spent_s += seconds
        if compile_s <= 0 and not first:
            self.last_s = seconds


class FramePacer:
    """Decides when a run gives its watcher a map frame.

    A frame is due when at least ``interval_s`` has passed since the last one and
    the frames' cost so far plus the predicted cost of one more fit ``share`` of
    the training time so far. A frame's cost is what the training thread spent
    copying the map and what its consumer reports spending on its picture
    (:meth:`spend`, from any thread: rendering on another thread still takes
    the cores the training runs on). The prediction is the last frame's cost.
    ``share=None``: every ``interval_s``, whatever it costs.

    Threads: :meth:`due` and :meth:`taken` on the training thread, :meth:`spend` from any.
    """

    def __init__(self, interval_s: float, share: float | None = FRAME_SHARE) -> None:
        self.interval_s = interval_s
        self.share = share
        self._lock = threading.Lock()
        self._spent_s = 0.0
        self._last_cost_s = 0.0
        self._last_at: float | None = None

    @property
    def spent_s(self) -> float:
        """Seconds booked for frames so far, by every thread."""
        with self._lock:
            return self._spent_s

    def due(self, train_s: float, now: float) -> bool:
        """Whether a frame fits now, ``train_s`` seconds of training in, at ``now`` (a monotonic clock)."""
        if self._last_at is not None and now - self._last_at < self.interval_s:
            return False
        if self.share is None:
            return True
        with self._lock:
            return self._spent_s + self._last_cost_s <= self.share * train_s

    def taken(self, now: float) -> None:
        """A frame was taken at ``now``: the next one waits ``interval_s`` from here."""
        self._last_at = now

    def spend(self, seconds: float, *, new_frame: bool = True) -> None:
        """Book ``seconds`` for frames; ``new_frame``: they start a frame's cost (else add to the last one)."""
        with self._lock:
            self._spent_s += seconds
            self._last_cost_s = seconds if new_frame else self._last_cost_s + seconds


def quality_iterations(total: int, points: int) -> list[int]:
    """The iterations where a run of ``total`` iterations plans to measure quality: 0, then every
    ``step`` and the last, ``step`` the smallest round number (1, 2 or 5 times a power of ten) that
    keeps to ``points`` intervals, so the points fall on the iterations a plot's axis labels
    (0, 5,000, 10,000, ... for 50,000 steps; 0, 5, 10, ... for 50 epochs), equally spaced.
    ``points`` <= 0: none.
    """
    if points <= 0 or total < 0:
        return []
    want = max(total / points, 1.0)
    step = min(m * 10**e for e in range(0, 19) for m in (1, 2, 5) if m * 10**e >= want)
    return sorted({*range(0, total + 1, int(step)), total})


def predict_quality_s(samples: int, units: int, features: int, pairs_per_s: float) -> float:
    """A first guess at one quality measurement's time: example-unit pairs x features at a rate."""
    return samples * units * max(features, 1) / pairs_per_s
