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
  ``y - by``; hex and toroid: :mod:`som_studio.core.topology`);
* best-matching unit: smallest squared Euclidean distance over the example's
  known features, first in row-major (``y`` then ``x``) order on ties;
* online step ``t``: sample ``order[t]``; ``W += lr(t) * h * (x - W)``;
* batch epoch ``t``: BMUs of all samples against the map at the epoch's start;
  ``W = sum_i h_i x_i / sum_i h_i`` for each unit whose total weight
  ``sum_i h_i`` exceeds :data:`MIN_WEIGHT`; other units keep their weights.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from som_studio.config import RunConfig
from som_studio.core.data import DataError, Table, default_feature_names, random_colours, read_table
from som_studio.core.init import initial_map
from som_studio.i18n import _

# Units whose total batch neighbourhood weight is below this keep their weights:
# far from every best-matching unit the Gaussian underflows (in float32 below
# ~1e-38), and the ratio of two underflowing sums is noise, not an average.
MIN_WEIGHT = 1e-30


@dataclass(frozen=True, eq=False)
class Problem:
    """Everything an implementation needs, as host NumPy arrays in the run's precision.

    Attributes
    ----------
    data : (N, D) array
    init_map : (H, W, D) array; rows are the grid's y axis
    sigma_x, sigma_y : (T,) arrays, radius per iteration
    lr : (T,) array, online learning rate per step (batch: unused, still filled)
    order : (T,) int32 array of sample indices for online steps, or ``None`` (batch)
    """

    config: RunConfig
    kind: str
    data: np.ndarray
    init_map: np.ndarray
    sigma_x: np.ndarray
    sigma_y: np.ndarray
    lr: np.ndarray
    order: np.ndarray | None

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
        return int(self.data.shape[0])

    @property
    def iterations(self) -> int:
        return int(self.sigma_x.shape[0])


def decay(start: float, end: float, iterations: int) -> np.ndarray:
    """Exponential decay from ``start`` to ``end`` over ``iterations`` values (float64)."""
    if iterations <= 1:
        return np.full(max(iterations, 0), float(start))
    t = np.arange(iterations, dtype=np.float64) / (iterations - 1)
    return float(start) * (float(end) / float(start)) ** t


def seed_streams(seed: int) -> tuple[np.random.Generator, np.random.Generator, np.random.Generator]:
    """Independent generators for (data, initial map, sample order)."""
    children = np.random.SeedSequence(seed).spawn(3)
    return tuple(np.random.default_rng(c) for c in children)  # type: ignore[return-value]


def load_problem_table(config: RunConfig) -> Table:
    """The run's data as a :class:`Table`, scaled as the config says (float64, NaN = missing).

    A file is read with the config's label, ignored and id columns; otherwise
    seeded random colours (features ``r``, ``g``, ``b``).
    """
    if config.data.path is not None:
        table = read_table(config.data.path, config.labels, config.ignore, config.id_column)
        return table.scaled(config.scaling_method)
    data_rng, _, _ = seed_streams(config.seed)
    values = random_colours(config.data.samples, data_rng)
    return Table(values, ("r", "g", "b") if values.shape[1] == 3 else default_feature_names(values.shape[1]))


def load_problem_data(config: RunConfig) -> np.ndarray:
    """The run's data as float64 (N, D): a file (scaled as the config says), or seeded random colours."""
    return load_problem_table(config).values


def check_range(data: np.ndarray, precision: str, name: str = "data") -> None:
    """Refuse data too large for the run's precision (:class:`DataError`).

    Every implementation sums squared differences of examples and units, which
    can reach ``4 * D * max|x|^2``: past the precision's largest number they are
    infinite, best-matching units become arbitrary and the map turns to NaN.
    """
    if data.size == 0:
        return
    limit = math.sqrt(float(np.finfo(np.dtype(precision)).max) / (4 * data.shape[1]))
    top = float(np.nanmax(np.abs(data)))
    if top >= limit:
        fix = (
            _("min-max scale the data to [0, 1] or use float64")
            if precision != "float64"
            else _("min-max scale the data to [0, 1]")
        )
        raise DataError(
            _(
                "{path}: values up to {top:.3g} are too large for {precision}: squared distances of "
                "{features}-feature examples overflow past {limit:.3g}; {fix}"
            ).format(path=name, top=top, precision=precision, features=data.shape[1], limit=limit, fix=fix)
        )


def make_problem(config: RunConfig, kind: str, data: np.ndarray | None = None) -> Problem:
    """Build the seeded problem for ``config``; ``data`` skips loading it again."""
    if data is None:
        data = load_problem_data(config)
    dtype = np.dtype(config.precision)
    _, init_rng, order_rng = seed_streams(config.seed)
    init = initial_map(config.init_method, data, config.height, config.width, init_rng, config.topology)
    T = config.iterations
    (sx0, sy0), (sx1, sy1) = config.sigmas
    order = None
    if kind == "online":
        order = order_rng.integers(0, data.shape[0], size=T).astype(np.int32)
    return Problem(
        config=config,
        kind=kind,
        data=np.ascontiguousarray(data, dtype=dtype),
        init_map=np.ascontiguousarray(init, dtype=dtype),
        sigma_x=decay(sx0, sx1, T).astype(dtype),
        sigma_y=decay(sy0, sy1, T).astype(dtype),
        lr=decay(config.lr_start, config.lr_end, T).astype(dtype),
        order=order,
    )
