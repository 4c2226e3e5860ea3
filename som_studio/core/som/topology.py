"""Map topology: where units sit on the plane, their neighbourhoods and which units are adjacent.

The lattice is ``rect`` or ``hex`` and the map is planar or a toroid. Unit
(row ``r``, column ``c``) sits at

* ``rect``: ``x = c``, ``y = r``;
* ``hex``: ``x = c + 0.5 * (r mod 2)``, ``y = r * sqrt(3) / 2`` (odd rows shifted
  right by half a unit, rows ``sqrt(3)/2`` apart, so adjacent units are 1 apart).

Grid distances are Euclidean between those points; on a toroid each axis wraps
with period ``width`` (x) and ``height`` (rect) or ``height * sqrt(3) / 2`` (hex),
which is why a hex toroid needs an even height. The Gaussian neighbourhood is
``exp(-dx^2 / sigma_x^2) * exp(-dy^2 / sigma_y^2)``: separable on a rect map, and
on a hex map once the rows are split by parity.

Adjacency (topographic error, U-matrix): ``rect`` follows the square grid (TE:
the 8 surrounding units; U-matrix: the 4 edge neighbours); ``hex``: the 6
touching units. A toroid wraps both.
"""

from __future__ import annotations

import numpy as np

from som_studio.run_settings import HEX_ROW as HEX_ROW
from som_studio.run_settings import Topology


def unit_xy(height: int, width: int, topology: str = Topology.RECT) -> tuple[np.ndarray, np.ndarray]:
    """Plane coordinates ``(x, y)`` of every unit, each (height, width) float64."""
    r = np.arange(height, dtype=np.float64)[:, None]
    c = np.arange(width, dtype=np.float64)[None, :]
    if topology == Topology.HEX:
        x = c + 0.5 * (np.arange(height)[:, None] % 2)
        y = np.broadcast_to(r * HEX_ROW, (height, width))
    else:
        x = np.broadcast_to(c, (height, width))
        y = np.broadcast_to(r, (height, width))
    return np.array(x, dtype=np.float64), np.array(y, dtype=np.float64)


def periods(height: int, width: int, topology: str = Topology.RECT) -> tuple[float, float]:
    """Wrap periods ``(x, y)`` of a toroid in plane units."""
    return float(width), height * HEX_ROW if topology == Topology.HEX else float(height)


def _wrap(d: np.ndarray, period: float) -> np.ndarray:
    """Signed differences wrapped to the nearest image: |d| <= period / 2."""
    return d - period * np.round(d / period)


def offsets(
    height: int, width: int, by: int, bx: int, topology: str = Topology.RECT, toroid: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Plane offsets ``(dx, dy)`` of every unit from unit (``by``, ``bx``), each (height, width) float64."""
    x, y = unit_xy(height, width, topology)
    dx = x - x[by, bx]
    dy = y - y[by, bx]
    if toroid:
        px, py = periods(height, width, topology)
        dx, dy = _wrap(dx, px), _wrap(dy, py)
    return dx, dy


def grid_distance(
    height: int, width: int, a: np.ndarray, b: np.ndarray, topology: str = Topology.RECT, toroid: bool = False
) -> np.ndarray:
    """Euclidean plane distance between units of flat indices ``a`` and ``b`` (same shapes)."""
    x, y = unit_xy(height, width, topology)
    xf, yf = x.ravel(), y.ravel()
    dx = xf[a] - xf[b]
    dy = yf[a] - yf[b]
    if toroid:
        px, py = periods(height, width, topology)
        dx, dy = _wrap(dx, px), _wrap(dy, py)
    dist: np.ndarray = np.sqrt(dx * dx + dy * dy)
    return dist


def neighbourhood(
    height: int,
    width: int,
    by: int,
    bx: int,
    sigma_x: float,
    sigma_y: float,
    topology: str = Topology.RECT,
    toroid: bool = False,
    dtype: np.dtype | type = np.float64,
) -> np.ndarray:
    """Gaussian neighbourhood (height, width) around unit (``by``, ``bx``) in ``dtype``.

    Separable, also on a hex lattice once rows are split by parity: a unit's x
    offset depends only on its column and its row's parity, so the map is
    ``hy[r] * hx[r mod 2][c]``: ``height + 2 * width`` exponentials instead of
    two per unit. The factors are rounded in ``dtype`` before their product,
    as the rect-planar reference rounds them, so that every lattice agrees with it.
    """
    dt = np.dtype(dtype)
    hexa = topology == Topology.HEX
    row = HEX_ROW if hexa else 1.0
    y = np.arange(height, dtype=np.float64) * row
    dy = y - float(by) * row
    c = np.arange(width, dtype=np.float64)
    bxp = bx + 0.5 * (by % 2) if hexa else float(bx)
    dxs = [c + 0.5 * q - bxp for q in ((0, 1) if hexa else (0,))]
    if toroid:
        px, py = periods(height, width, topology)
        dy = _wrap(dy, py)
        dxs = [_wrap(d, px) for d in dxs]
    sx, sy = dt.type(sigma_x), dt.type(sigma_y)
    hy = np.exp(-(dy.astype(dt) ** 2) / sy**2)
    hx = [np.exp(-(d.astype(dt) ** 2) / sx**2) for d in dxs]
    if not hexa:
        return np.outer(hy, hx[0])
    rows_hx = np.where((np.arange(height) % 2 == 1)[:, None], hx[1][None, :], hx[0][None, :])
    grid: np.ndarray = hy[:, None] * rows_hx
    return grid


def adjacent(
    height: int, width: int, a: np.ndarray, b: np.ndarray, topology: str = Topology.RECT, toroid: bool = False
) -> np.ndarray:
    """Whether units of flat indices ``a`` and ``b`` are adjacent (or the same unit) for the topographic error.

    ``rect``: within one row and one column (the 8 surrounding units), wrapped on a
    toroid; ``hex``: at plane distance 1 at most (the 6 touching units).
    """
    a, b = np.asarray(a), np.asarray(b)
    if topology == Topology.HEX:
        return grid_distance(height, width, a, b, topology, toroid) <= 1.0 + 1e-9
    ay, ax = np.divmod(a, width)
    by_, bx_ = np.divmod(b, width)
    dy, dx = np.abs(ay - by_), np.abs(ax - bx_)
    if toroid:
        dy, dx = np.minimum(dy, height - dy), np.minimum(dx, width - dx)
    return (dy <= 1) & (dx <= 1)


def neighbour_pairs(height: int, width: int, topology: str = Topology.RECT, toroid: bool = False) -> np.ndarray:
    """Each unordered pair of neighbouring units once, as flat indices (P, 2), for the U-matrix.

    ``rect``: the 4 edge neighbours; ``hex``: the 6 touching units. On a toroid
    the edges wrap; a side too short to wrap (1 or 2 units) adds no duplicate pairs.
    """
    grid_r, grid_c = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    r, c = grid_r.ravel(), grid_c.ravel()
    # Half of each unit's neighbours (the other half are found from the other side).
    if topology == Topology.HEX:
        even = [(0, 1), (1, -1), (1, 0)]
        odd = [(0, 1), (1, 0), (1, 1)]
    else:
        even = odd = [(0, 1), (1, 0)]
    pairs = []
    for parity, steps in ((0, even), (1, odd)):
        sel = (r % 2) == parity
        for drow, dcol in steps:
            rr, cc = r[sel] + drow, c[sel] + dcol
            if toroid:
                rr, cc = rr % height, cc % width
                ok = np.ones(rr.shape, dtype=bool)
            else:
                ok = (rr >= 0) & (rr < height) & (cc >= 0) & (cc < width)
            a = (r[sel] * width + c[sel])[ok]
            b = (rr * width + cc)[ok]
            pairs.append(np.stack([a, b], axis=1))
    out: np.ndarray = np.concatenate(pairs) if pairs else np.empty((0, 2), dtype=np.int64)
    out = out[out[:, 0] != out[:, 1]]
    out = np.sort(out, axis=1)
    return np.asarray(np.unique(out, axis=0))
