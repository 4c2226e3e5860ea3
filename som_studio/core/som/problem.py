"""One SOM, defined once: data, initial map, schedules and sample order.

Every implementation trains from a :class:`Problem` built by :func:`make_problem`,
so they all see the same seeded numbers. The formulas (also in docs/internals.md):

* iteration ``t`` in ``0 .. T-1``, ``T`` steps (online) or epochs (batch);
* exponential decay from start to end: ``v(t) = v0 * (v1 / v0) ** (t / (T - 1))``
  (``v(0) = v0``, ``v(T-1) = v1``; ``T = 1`` uses ``v0``), for the radius on each
  axis (``sigma_x``, ``sigma_y``) and for the online learning rate;
* Gaussian neighbourhood of unit ``(x, y)`` around the best-matching unit
  ``(bx, by)``: ``h = exp(-dx^2 / sigma_x^2) * exp(-dy^2 / sigma_y^2)``, with
  ``dx, dy`` the plane offsets of the map's topology (rect: ``x - bx``,
  ``y - by``; hex and toroid: :mod:`som_studio.core.som.topology`);
* best-matching unit: smallest squared Euclidean distance over the example's
  known features, first in row-major (``y`` then ``x``) order on ties;
* online step ``t``: sample ``order[t]``; ``W += lr(t) * h * (x - W)``; the order
  is the seeded stream's ``integers(0, N)`` drawn one per step, or the rows in order,
  ``t mod N``, when the problem says so (:attr:`Problem.in_order`: a streamed run's order);
* batch epoch ``t``: BMUs of all samples against the map at the epoch's start;
  ``W = sum_i h_i x_i / sum_i h_i`` for each unit whose total weight
  ``sum_i h_i`` exceeds :data:`MIN_WEIGHT`; other units keep their weights.

Schedules and the sample order are made a block of :data:`BLOCK` iterations at a
time (:class:`Schedule`), never for the whole run: a run's memory does not grow
with its step count. The blocks hold exactly the numbers one whole-run array
would (the decay is elementwise in ``t``; NumPy's bounded integers draw the
same stream whether asked for at once or in consecutive pieces), so a run's
map does not depend on the block size.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from som_studio.config import RunConfig
from som_studio.core import jax_runtime
from som_studio.core.data import (
    DataError,
    Table,
    any_missing,
    column_flag,
    default_feature_names,
    random_colours,
    read_table,
    refuse_empty,
    refuse_empty_array_columns,
)
from som_studio.core.data.checks import largest_magnitude, range_refusal
from som_studio.core.som.init import initial_map

if TYPE_CHECKING:
    from som_studio.core.data import Scaling
    from som_studio.core.data.moments import Gather, Moments
    from som_studio.core.data.stream import Reader, Source

# Units whose total batch neighbourhood weight is below this keep their weights:
# far from every best-matching unit the Gaussian underflows (in float32 below
# ~1e-38), and the ratio of two underflowing sums is noise, not an average.
MIN_WEIGHT = 1e-30

# Iterations per schedule block: 65,536 steps hold 1 MiB of schedules and order in
# float32 and last seconds at the fastest online step, so a new block is rare.
BLOCK = 1 << 16


@dataclass(frozen=True, eq=False)
class Streamed:
    """Where a streamed problem's rows come from: each pass reads ``source`` in batches.

    ``scaling`` turns the file's values into the run's (applied to each batch); ``moments`` are the
    source's statistics (one pass, before training, over every process's share); ``share`` is this
    process's ``(index, count)`` of the source's units, the only rows it reads; ``gather`` (over
    several processes, :data:`~som_studio.core.data.moments.Gather`) brings what each process
    counted of its share to every process.
    """

    source: Source
    batch_rows: int
    scaling: Scaling
    moments: Moments
    share: tuple[int, int] = (0, 1)
    gather: Gather | None = None

    @property
    def rows(self) -> int:
        return self.source.share_rows(*self.share)

    def scaled(self, values: np.ndarray, dtype: np.dtype, own: bool = False) -> np.ndarray:
        """A batch of the file's values in the run's scaled space and precision (NaN kept); ``own``: the
        values are the caller's to overwrite (a reader's batch), scaled where they are."""
        if self.scaling.method == "none":  # one copy, not three
            return np.ascontiguousarray(values, dtype=dtype)
        if own and values.dtype == np.float64 and values.flags.writeable:
            return np.ascontiguousarray(self.scaling.apply_in_place(values), dtype=dtype)
        return np.ascontiguousarray(self.scaling.apply(values), dtype=dtype)

    def reader(self, dtype: np.dtype, state: dict[str, int] | None = None) -> Reader:
        """A pass over this process's share whose batches are in the run's scaled space and precision.

        The reader's threads convert and scale each batch (:meth:`scaled`), so the training thread
        only trains. Unscaled, the values are read straight into ``dtype``: from a float32 file, one
        copy; scaled, they are read in float64 and scaled there, as the table in memory is.
        """
        if self.scaling.method == "none":
            return self.source.reader(self.batch_rows, self.share, state, dtype=dtype)
        scale = lambda v: self.scaled(v, dtype, own=True)  # the batch is the reader's own
        return self.source.reader(self.batch_rows, self.share, state, transform=scale)


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything an implementation needs, as host NumPy arrays in the run's precision.

    Attributes
    ----------
    data : (N, D) array; (0, D) for a streamed problem, whose rows come from ``stream``
    init_map : (H, W, D) array; rows are the grid's y axis
    iterations : steps (online) or epochs (batch)
    in_order : online step ``t`` takes row ``t mod N``, the rows in the data's order wrapping
        around at its end, instead of a seeded random row: a streamed run's order (its rows come
        in batches as the source gives them), and in memory the exact reference of one

    The radius per iteration (``sigma_x``, ``sigma_y``), the online learning
    rate and the sample order come a block at a time from :meth:`schedule`.
    """

    config: RunConfig
    kind: str
    data: np.ndarray
    init_map: np.ndarray
    iterations: int
    stream: Streamed | None = None
    in_order: bool = False

    @property
    def dtype(self) -> np.dtype:
        return self.init_map.dtype

    @property
    def height(self) -> int:
        return int(self.init_map.shape[0])

    @property
    def width(self) -> int:
        return int(self.init_map.shape[1])

    @property
    def features(self) -> int:
        return int(self.init_map.shape[2])

    @property
    def samples(self) -> int:
        return self.stream.rows if self.stream is not None else int(self.data.shape[0])

    @functools.cached_property
    def missing(self) -> bool:
        """Whether the data hold missing values (NaN): looked for once (a scan of every value)."""
        return self.stream.moments.missing if self.stream is not None else any_missing(self.data)

    @property
    def block_length(self) -> int:
        """Iterations in every block of :meth:`schedule` (the last one padded): the run's, up to :data:`BLOCK`."""
        return max(1, min(self.iterations, BLOCK))

    def schedule(self) -> Schedule:
        """A reader of this run's schedules and sample order, block by block (one per trainer)."""
        return Schedule(self)

    def whole(self) -> Block:
        """Every iteration's schedules and order at once: run-sized arrays, for tests and other
        libraries' trainers that take them whole (:mod:`bench.peers`), never for training here."""
        cfg, T = self.config, self.iterations
        (sx0, sy0), (sx1, sy1) = cfg.sigmas
        order = None
        if self.kind == "online" and self.in_order:
            order = rows_in_order(0, T, self.samples)
        elif self.kind == "online":
            order = seed_streams(cfg.seed)[2].integers(0, self.samples, size=T).astype(np.int32)
        dt = self.dtype
        return Block(
            0,
            0,
            T,
            decay(sx0, sx1, T).astype(dt),
            decay(sy0, sy1, T).astype(dt),
            decay(cfg.lr_start, cfg.lr_end, T).astype(dt),
            order,
        )


@dataclass(frozen=True, eq=False)
class Block:
    """Iterations ``first .. first + size - 1`` of a run: its schedules and sample order.

    Every array has the run's :attr:`Problem.block_length`, so one compiled
    program takes every block; the last block's padding repeats its last
    iteration (finite radii, a valid sample) and is never trained.
    ``order`` is ``None`` for a batch run.
    """

    index: int
    first: int
    size: int
    sigma_x: np.ndarray
    sigma_y: np.ndarray
    lr: np.ndarray
    order: np.ndarray | None


class Schedule:
    """A run's schedules and sample order, made one :class:`Block` at a time.

    Reading blocks in order costs one block's work each; going back to an
    earlier block redraws the order from the seed (the order is a stream).
    """

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.length = problem.block_length
        self._current: Block | None = None
        self._rng: np.random.Generator | None = None
        self._next = 0  # the block the generator stands before

    def block(self, index: int) -> Block:
        """Block ``index`` (iterations ``index * length ..``)."""
        if self._current is not None and self._current.index == index:
            return self._current
        p, n = self.p, self.length
        first = index * n
        size = max(0, min(n, p.iterations - first))
        if not 0 <= first < max(p.iterations, 1):
            raise IndexError(f"block {index} is past the run's {p.iterations} iterations")
        cfg = p.config
        (sx0, sy0), (sx1, sy1) = cfg.sigmas
        order = None
        if p.kind == "online" and p.in_order:
            order = _padded(rows_in_order(first, size, p.samples), n)
        elif p.kind == "online":
            if self._rng is None or index < self._next:
                _, _, self._rng = seed_streams(cfg.seed)
                self._next = 0
            while self._next < index:  # skipped blocks still draw their numbers
                self._rng.integers(0, p.samples, size=n)
                self._next += 1
            order = _padded(self._rng.integers(0, p.samples, size=size).astype(np.int32), n)
            self._next = index + 1

        def sched(v0: float, v1: float) -> np.ndarray:
            return _padded(decay(v0, v1, p.iterations, first, size).astype(p.dtype), n)

        self._current = Block(
            index, first, size, sched(sx0, sx1), sched(sy0, sy1), sched(cfg.lr_start, cfg.lr_end), order
        )
        return self._current

    def segments(self, first: int, count: int) -> Iterator[tuple[Block, int, int]]:
        """Iterations ``first .. first + count - 1`` as ``(block, local first, count)`` pieces, one per block."""
        end = first + count
        while first < end:
            index, local = divmod(first, self.length)
            n = min(end - first, self.length - local)
            yield self.block(index), local, n
            first += n


def rows_in_order(first: int, count: int, rows: int) -> np.ndarray:
    """The rows of steps ``first .. first + count - 1`` in order: ``t mod rows`` (int32)."""
    return (np.arange(first, first + count, dtype=np.int64) % max(rows, 1)).astype(np.int32)


def _padded(a: np.ndarray, n: int) -> np.ndarray:
    """``a`` to length ``n``, its last value repeated (a zero when empty)."""
    if a.shape[0] == n:
        return a
    if a.shape[0] == 0:
        return np.zeros(n, a.dtype)
    return np.pad(a, (0, n - a.shape[0]), mode="edge")


def decay(start: float, end: float, iterations: int, first: int = 0, count: int | None = None) -> np.ndarray:
    """Exponential decay from ``start`` to ``end`` over ``iterations`` values (float64).

    ``first`` and ``count`` give only values ``first .. first + count - 1``
    (default: to the end), equal to that slice of the whole.
    """
    n = iterations - first if count is None else count
    if iterations <= 1:
        return np.full(max(n, 0), float(start))
    t = np.arange(first, first + n, dtype=np.float64) / (iterations - 1)
    return float(start) * (float(end) / float(start)) ** t


def seed_streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Independent generators for (data, initial map, sample order)."""
    children = np.random.SeedSequence(seed).spawn(3)
    return tuple(np.random.default_rng(c) for c in children)  # type: ignore[return-value]


def load_problem_table(config: RunConfig) -> Table:
    """The run's data as a :class:`Table`, scaled as the config says (NaN = missing; scaled values in the run's
    precision, :meth:`Table.scaled`).

    A file is read with the config's label, ignored and id columns; otherwise
    seeded random colours (features ``r``, ``g``, ``b``).
    """
    if config.data.path is not None:
        table = read_table(config.data.path, config.labels, config.ignore, config.id_column)
        return table.scaled(config.scaling_method, np.dtype(config.precision))
    data_rng, _, _ = seed_streams(config.seed)
    values = random_colours(config.data.samples, data_rng)
    return Table(values, ("r", "g", "b") if values.shape[1] == 3 else default_feature_names(values.shape[1]))


def load_problem_data(config: RunConfig) -> np.ndarray:
    """The run's data (N, D): a file (scaled as the config says, :func:`load_problem_table`), or random colours."""
    return load_problem_table(config).values


def check_range(data: np.ndarray, precision: str, name: str = "data") -> None:
    """Refuse data too large for the run's precision (:class:`DataError`; :func:`range_refusal` says why)."""
    if data.size == 0:
        return
    refusal = range_refusal(largest_magnitude(data), data.shape[1], precision, name)
    if refusal:
        raise DataError(refusal)


def make_problem(config: RunConfig, kind: str, data: np.ndarray | None = None) -> Problem:
    """Build the seeded problem for ``config``; ``data`` skips loading it again."""
    if data is None:
        data = load_problem_data(config)
    dtype = np.dtype(config.precision)
    _, init_rng, _ = seed_streams(config.seed)
    init = initial_map(config.init_method, data, config.height, config.width, init_rng, config.topology)
    return Problem(
        config=config,
        kind=kind,
        data=jax_runtime.placeable(data, dtype),
        init_map=np.ascontiguousarray(init, dtype=dtype),
        iterations=config.iterations,
    )


def refuse_empty_features(source: Source, empty: np.ndarray) -> None:
    """Refuse a feature of ``source`` with no value in any row, naming it as a table read whole names it
    (its range would otherwise read as infinite, and the run be refused as too large for its precision)."""
    if source.format == "npy":
        refuse_empty_array_columns(empty, source.spec)
        return
    names = source.feature_names
    numbers = [source.columns.index(n) + 1 if n in source.columns else j + 1 for j, n in enumerate(names)]
    refuse_empty(empty, source.spec, numbers, names, lambda name: column_flag("--ignore", name))


def make_stream_problem(
    config: RunConfig,
    kind: str,
    source: Source,
    batch_rows: int,
    share: tuple[int, int] = (0, 1),
    gather: Gather | None = None,
) -> Problem:
    """The seeded problem of ``config`` over a streamed ``source``: the in-memory run's scaling and initial map.

    One pass over the source gives its statistics (:func:`~som_studio.core.data.moments.statistics`);
    the scaling, ``random``'s ranges and ``pca``'s components follow from them; ``sample`` reads its
    seeded rows in a second pass. Each gives what :func:`make_problem` gives for the same rows in memory.
    Over several processes each reads only its ``share`` and ``gather`` combines the processes' parts:
    every process gets the statistics and the initial map of the whole source. Online steps take the
    rows in the source's order (:attr:`Problem.in_order`): the order they are read in.
    """
    from som_studio.core.data import moments as passes
    from som_studio.core.som.init import covariance_components, pca_map

    moments = passes.statistics(source, batch_rows, share, gather)
    refuse_empty_features(source, np.diag(moments.known) == 0)
    scaling = passes.fitted_scaling(moments, config.scaling_method)
    lo, hi, mean, cov = passes.scaled_summary(moments, scaling)
    top = float(np.max(np.maximum(np.abs(lo), np.abs(hi))))
    refusal = range_refusal(top, source.features, config.precision, source.spec)
    if refusal:
        raise DataError(refusal)
    _, rng, _ = seed_streams(config.seed)
    h, w, d = config.height, config.width, source.features
    method = config.init_method
    if method == "random":
        init = lo + (hi - lo) * rng.random((h, w, d))
    elif method == "sample":
        rows = rng.integers(0, moments.rows, size=h * w)
        picked = scaling.apply(passes.gather_rows(source, rows, batch_rows, share, gather))
        init = np.where(np.isnan(picked), mean[None, :], picked).reshape(h, w, d)
    elif method == "pca":
        if moments.rows < 2:
            var, vecs = np.zeros(2), np.eye(2, d)
        else:
            var, vecs = covariance_components(np.atleast_2d(cov), 2)
        init = pca_map(mean, var, vecs, h, w, config.topology)
    else:
        raise ValueError(f"unknown initialisation {method!r}")
    dtype = np.dtype(config.precision)
    return Problem(
        config=config,
        kind=kind,
        data=np.empty((0, d), dtype=dtype),
        init_map=np.ascontiguousarray(init, dtype=dtype),
        iterations=config.iterations,
        stream=Streamed(source, batch_rows, scaling, moments, share, gather),
        in_order=True,
    )
