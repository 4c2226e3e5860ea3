"""Initial maps and the default map size for a data set.

* ``random``: each feature uniform between its smallest and largest value
  (the default for generated colours);
* ``pca``: the map spans the first two principal components, as the SOM
  Toolbox's ``lininit``: unit coordinates run from -1 to 1 along each side and
  each side follows one component scaled by its standard deviation, the larger
  component along the longer side (the default for data files);
* ``sample``: each unit starts at a random example.

Missing values are left out (``random``: per-feature range of the known values;
``pca``: the covariance of the data with missing values set to their feature's
mean; ``sample``: a missing value is replaced by its feature's mean).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from som_studio.core.data.checks import any_missing
from som_studio.core.data.moments import Moments, fitted_scaling, scaled_summary, statistics
from som_studio.core.data.stream import Source
from som_studio.core.som import topology as topo
from som_studio.run_settings import Topology

# The SOM Toolbox's rule: about 5 * sqrt(N) units.
UNITS_PER_SQRT_SAMPLE = 5.0
# A side ratio past this (a data set with one dominant direction) gives a thread, not a map.
MAX_SIDE_RATIO = 8.0
# Up to this many features the components come from the covariance's full eigendecomposition
# (D x D: exact, and cheap below a few hundred features); past it, from a randomized subspace
# iteration on the data, O(N D k) a pass: a 5,000-column table's covariance and eigh took most
# of a minute, the iteration a second or two.
EXACT_PCA_FEATURES = 256
# The subspace iteration: extra directions beyond k, and passes over the data. The top two
# components converge as (lambda_{k+p+1} / lambda_k)^(2 q), tight for any spectrum a map spans.
PCA_OVERSAMPLE, PCA_PASSES = 10, 4
# Bytes of float64 rows the subspace iteration holds at once: a block within the caches.
PCA_BLOCK_BYTES = 1 << 22


def principal_components(data: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean, variances, directions)`` of the ``k`` largest principal components.

    ``directions`` is (k, D) with unit rows; a data set with fewer than ``k``
    features, or fewer than two examples, gives zero variances for the missing ones.
    """
    n, d = data.shape
    if d > EXACT_PCA_FEATURES:
        mean = _known_mean(data)
        if n < 2:
            return mean, np.zeros(k), np.eye(k, d)
        vals, vecs = _subspace_components(data, mean, k)
        return mean, *_signed(vals, vecs, k, d)
    # The covariance from the table's moments, a block of rows at a time: what numpy.cov gives of the
    # filled table, without its whole-table copies.
    moments = Moments.of_table(data)
    if n < 2:
        return moments.mean, np.zeros(k), np.eye(k, d)
    return moments.mean, *covariance_components(np.atleast_2d(moments.comoments() / (n - 1)), k)


def covariance_components(cov: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """``(variances, directions)`` of the ``k`` largest principal components of a (D, D) covariance.

    The exact eigendecomposition :func:`principal_components` takes below
    :data:`EXACT_PCA_FEATURES` features; a streamed run passes the covariance it summed.
    """
    d = cov.shape[0]
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(vals)[::-1]
    return _signed(np.clip(vals[order], 0.0, None), vecs[:, order].T, k, d)


def _signed(vals: np.ndarray, vecs: np.ndarray, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``k`` components, each direction's largest entry positive, zero-padded past the features."""
    # A deterministic sign: each direction's largest component is positive.
    signs = np.sign(vecs[np.arange(len(vecs)), np.argmax(np.abs(vecs), axis=1)])
    vecs = vecs * np.where(signs == 0, 1.0, signs)[:, None]
    out_vals = np.zeros(k)
    out_vecs = np.zeros((k, d))
    n = min(k, len(vals))
    out_vals[:n], out_vecs[:n] = vals[:n], vecs[:n]
    return out_vals, out_vecs


def _block_rows(d: int) -> int:
    """Rows of ``d`` features a wide table is read in at a time: about :data:`PCA_BLOCK_BYTES` of float64."""
    return max(1, PCA_BLOCK_BYTES // (8 * d))


def _known_mean(data: np.ndarray) -> np.ndarray:
    """Each feature's mean over its known values (0 for a feature with none), a block of rows at a time."""
    n, d = data.shape
    sums, counts = np.zeros(d), np.zeros(d)
    rows = _block_rows(d)
    for at in range(0, n, rows):
        block = np.asarray(data[at : at + rows], dtype=np.float64)
        known = ~np.isnan(block)
        sums += np.where(known, block, 0.0).sum(axis=0)
        counts += known.sum(axis=0)
    return np.divide(sums, counts, out=np.zeros(d), where=counts > 0)


def _subspace_components(data: np.ndarray, mean: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(variances, directions (k', D)) of ``data`` less ``mean``, its missing values at their feature's mean,
    by a randomized subspace iteration.

    Seeded, so every implementation of a run starts from the same map; the
    directions are orthonormal and the variances those of the data along them.
    The table is read a block of rows at a time, never copied whole: a million
    rows of a thousand features are 8 GB in float64.
    """
    n, d = data.shape
    rows = _block_rows(d)
    missing = any_missing(data)  # once: a table without missing values has no mask to make a block at a time

    def centred(at: int) -> np.ndarray:
        block = data[at : at + rows].astype(np.float64)  # a copy, changed in place
        block -= mean
        if missing:
            np.copyto(block, 0.0, where=np.isnan(block))  # a missing value sits at its feature's mean
        return block

    width = min(d, n, k + PCA_OVERSAMPLE)
    q = np.random.default_rng(0).standard_normal((d, width))
    for _ in range(PCA_PASSES):
        product = np.zeros((d, width))
        for at in range(0, n, rows):
            xc = centred(at)
            product += xc.T @ (xc @ q)
        q, _r = np.linalg.qr(product)
    # The data in that subspace, rotated to its principal axes.
    _u, sv, vt = np.linalg.svd(np.concatenate([centred(at) @ q for at in range(0, n, rows)]), full_matrices=False)
    vecs = (q @ vt.T).T[:k]
    return np.clip(sv[:k] ** 2 / (n - 1), 0.0, None), vecs


def principal_variances(source: Source, scaling: str, batch_rows: int = 1 << 16) -> tuple[int, np.ndarray]:
    """``(rows, the two largest principal variances)`` of ``source`` scaled by ``scaling``: one pass."""
    moments = statistics(source, batch_rows)
    cov = scaled_summary(moments, fitted_scaling(moments, scaling))[3]
    return moments.rows, _grid_variances(lambda: covariance_components(np.atleast_2d(cov), 2)[0])


def grid_variances(data: np.ndarray) -> np.ndarray:
    """The two largest principal variances of ``data``, as the default grid's sides take them."""
    return _grid_variances(lambda: principal_components(data, 2)[1])


def _grid_variances(variances: Callable[[], np.ndarray]) -> np.ndarray:
    """``variances()``, or equal ones (a square map) where values too large for the arithmetic leave them
    unknown: the eigendecomposition of an infinite covariance raised a bare ``LinAlgError`` before the run's own
    check could refuse such values by name and say what to do."""
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            var = variances()
        except np.linalg.LinAlgError:
            return np.ones(2)
    return var if np.all(np.isfinite(var)) else np.ones(2)


def default_grid(data: np.ndarray, topology: str = Topology.RECT, toroid: bool = False) -> tuple[int, int]:
    """``(width, height)`` for ``data``: about 5*sqrt(N) units, sides in the ratio of the first two components.

    The SOM Toolbox's ``som_topol_struct`` rule; the longer side is the width,
    and on a hex lattice the height counts rows ``sqrt(3)/2`` apart. A hex
    toroid gets an even height.
    """
    return grid_for(data.shape[0], grid_variances(data), topology, toroid)


def grid_for(n: int, var: np.ndarray, topology: str = Topology.RECT, toroid: bool = False) -> tuple[int, int]:
    """:func:`default_grid` for ``n`` examples whose two largest principal variances are ``var``."""
    units = max(4, math.ceil(UNITS_PER_SQRT_SAMPLE * math.sqrt(n)))
    ratio = math.sqrt(var[0] / var[1]) if var[1] > 0 else MAX_SIDE_RATIO
    ratio = min(max(ratio, 1.0), MAX_SIDE_RATIO)
    row = topo.HEX_ROW if topology == Topology.HEX else 1.0
    # width / (height * row) = ratio and width * height = units.
    height = max(2, round(math.sqrt(units / (ratio * row))))
    if topology == Topology.HEX and toroid and height % 2:
        height += 1
    width = max(2, round(units / height))
    return width, height


def initial_map(
    method: str,
    data: np.ndarray,
    height: int,
    width: int,
    rng: np.random.Generator,
    topology: str = Topology.RECT,
) -> np.ndarray:
    """The (height, width, D) float64 initial map by ``method`` (``random``, ``pca`` or ``sample``)."""
    if method == "random":
        if any_missing(data):
            lo, hi = np.nanmin(data, axis=0), np.nanmax(data, axis=0)
        else:
            # These exact draws: the agreement tests and stored runs depend on them.
            lo, hi = data.min(axis=0), data.max(axis=0)
        # In float64 whatever the table's type: a float32 table draws the map its float64 twin draws.
        lo, hi = lo.astype(np.float64), hi.astype(np.float64)
        drawn: np.ndarray = lo + (hi - lo) * rng.random((height, width, data.shape[1]))
        return drawn
    if method == "sample":
        rows = rng.integers(0, data.shape[0], size=height * width)
        picked = np.asarray(data[rows], dtype=np.float64)
        if np.isnan(picked).any():  # a missing value becomes its feature's mean, the table's
            picked = np.where(np.isnan(picked), Moments.of_table(data).mean[None, :], picked)
        return picked.reshape(height, width, data.shape[1])
    if method == "pca":
        return _pca_map(data, height, width, topology)
    raise ValueError(f"unknown initialisation {method!r}")


def _pca_map(data: np.ndarray, height: int, width: int, topology: str) -> np.ndarray:
    return pca_map(*principal_components(data, 2), height, width, topology)


def pca_map(mean: np.ndarray, var: np.ndarray, vecs: np.ndarray, height: int, width: int, topology: str) -> np.ndarray:
    """The ``pca`` initial map spanned by two components (``var`` (2,), ``vecs`` (2, D)) around ``mean``."""
    x, y = topo.unit_xy(height, width, topology)
    # Coordinates from -1 to 1 along each side (a side of one unit sits at 0).
    cx = _spread(x)
    cy = _spread(y)
    sd = np.sqrt(var)
    span_x = float(np.ptp(x)) if width > 1 else 0.0
    span_y = float(np.ptp(y)) if height > 1 else 0.0
    # The larger component along the longer side, as lininit does.
    first, second = (cx, cy) if span_x >= span_y else (cy, cx)
    out = mean + first[..., None] * (sd[0] * vecs[0]) + second[..., None] * (sd[1] * vecs[1])
    return np.ascontiguousarray(out)


def _spread(v: np.ndarray) -> np.ndarray:
    lo, hi = float(v.min()), float(v.max())
    if hi <= lo:
        return np.zeros_like(v)
    return (v - lo) / (hi - lo) * 2.0 - 1.0
