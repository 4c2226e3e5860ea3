"""Map quality: quantization error, topographic error and the U-matrix.

Computed on the host in float64, in blocks of examples so memory stays bounded
(no full N x M distance matrix for large problems). The topographic error and
the U-matrix follow the map's topology (:mod:`som_studio.core.som.topology`).
Missing values (NaN) are left out of each example's distances, as in training.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from som_studio.core.som import topology as topo
from som_studio.run_settings import Topology

_BLOCK_ELEMENTS = 1 << 22  # examples x units per block (32 MiB of float64)


def best_two(weights: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each example: flat index of its best and second-best unit, and its squared distance to the best."""
    h, w, d = weights.shape
    codebook = weights.reshape(h * w, d).astype(np.float64)
    x = np.asarray(data, dtype=np.float64)
    m = codebook.shape[0]
    if np.isnan(x).any():
        return _best_two_missing(codebook, x)
    cb_sq = np.einsum("md,md->m", codebook, codebook)
    block = max(1, _BLOCK_ELEMENTS // max(m, 1))
    first = np.empty(len(x), dtype=np.int64)
    second = np.empty(len(x), dtype=np.int64)
    best_d2 = np.empty(len(x), dtype=np.float64)
    for s in range(0, len(x), block):
        xb = x[s : s + block]
        # |x - w|^2 = |x|^2 - 2 x.w + |w|^2; |x|^2 is constant per row for ranking.
        d2 = cb_sq[None, :] - 2.0 * (xb @ codebook.T)
        if m >= 2:
            two = np.argpartition(d2, 1, axis=1)[:, :2]
            vals = np.take_along_axis(d2, two, axis=1)
            swap = vals[:, 1] < vals[:, 0]
            two[swap] = two[swap][:, ::-1]
            first[s : s + len(xb)], second[s : s + len(xb)] = two[:, 0], two[:, 1]
        else:
            first[s : s + len(xb)] = 0
            second[s : s + len(xb)] = 0
        fb = first[s : s + len(xb)]
        exact = xb - codebook[fb]  # exact distance to the best, free of cancellation
        best_d2[s : s + len(xb)] = np.einsum("nd,nd->n", exact, exact)
    return first, second, best_d2


def _best_two_missing(codebook: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`best_two` over each example's known features only."""
    m = codebook.shape[0]
    known = ~np.isnan(x)
    xz = np.where(known, x, 0.0)
    cb_sq = codebook * codebook
    block = max(1, _BLOCK_ELEMENTS // max(m, 1))
    first = np.empty(len(x), dtype=np.int64)
    second = np.empty(len(x), dtype=np.int64)
    best_d2 = np.empty(len(x), dtype=np.float64)
    for s in range(0, len(x), block):
        xb, kb = xz[s : s + block], known[s : s + block]
        d2 = kb @ cb_sq.T - 2.0 * (xb @ codebook.T)
        order = np.argsort(d2, axis=1, kind="stable")[:, :2] if m >= 2 else np.zeros((len(xb), 2), dtype=np.int64)
        first[s : s + len(xb)], second[s : s + len(xb)] = order[:, 0], order[:, 1]
        exact = np.where(kb, xb - codebook[order[:, 0]], 0.0)
        best_d2[s : s + len(xb)] = np.einsum("nd,nd->n", exact, exact)
    return first, second, best_d2


def nearest_units(weights: np.ndarray, data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each example: flat index of its best-matching unit and its squared distance (known features).

    :func:`best_two` without the second unit, for projecting many rows: an
    argmin per row instead of a partition. Ties go to the first unit in row-major order.
    """
    h, w, d = weights.shape
    codebook = weights.reshape(h * w, d).astype(np.float64)
    m = codebook.shape[0]
    cb_sq = codebook * codebook
    cb_norm = cb_sq.sum(axis=1)
    block = max(1, _BLOCK_ELEMENTS // max(m, 1))
    first = np.empty(len(data), dtype=np.int64)
    best_d2 = np.empty(len(data), dtype=np.float64)
    for s in range(0, len(data), block):
        # float64 a block at a time: a float32 table is never copied whole.
        xb = np.asarray(data[s : s + block], dtype=np.float64)
        known = ~np.isnan(xb)
        missing = not known.all()
        if missing:
            xb = np.where(known, xb, 0.0)
        cross = xb @ codebook.T
        cross *= -2.0
        cross += (known @ cb_sq.T) if missing else cb_norm[None, :]
        fb = np.argmin(cross, axis=1)
        first[s : s + len(xb)] = fb
        exact = xb - codebook[fb]  # exact distance to the best, free of cancellation
        if missing:
            exact[~known] = 0.0
        best_d2[s : s + len(xb)] = np.einsum("nd,nd->n", exact, exact)
    return first, best_d2


#: A row's label when it has none: the readers give an empty cell, and a frame's None, NaN or null, as ``""``.
NO_LABEL = ""


def label_purity(weights: np.ndarray, data: np.ndarray, labels: np.ndarray) -> float | None:
    """Share of labelled examples whose best-matching unit's majority label is their own (0-1; ``None``: no labels).

    Examples without a label (:data:`NO_LABEL`) are left out: they neither agree nor disagree.
    """
    first, _, _ = best_two(weights, data)
    return label_measures(first, labels, weights.shape[0] * weights.shape[1])[2]


def unit_labels(bmus: np.ndarray, labels: np.ndarray, units: int) -> np.ndarray:
    """Majority label of each unit (flat, ``""`` for units without labelled hits; ties: the first label in sorted
    order); examples without a label are left out."""
    return label_measures(bmus, labels, units)[0]


def label_measures(bmus: np.ndarray, labels: np.ndarray, units: int) -> tuple[np.ndarray, np.ndarray, float | None]:
    """Each unit's majority label and purity (flat) and the map's label purity, from each example's best unit.

    Examples without a label (:data:`NO_LABEL`) are left out of all three; see :func:`majority_labels`.
    """
    lab = np.asarray(labels, dtype=str)
    known = lab != NO_LABEL
    names, codes = np.unique(lab[known], return_inverse=True)
    counts = np.zeros((units, len(names)), dtype=np.int64)
    np.add.at(counts, (np.asarray(bmus)[known], codes), 1)
    return majority_labels(names, counts)


def majority_labels(names: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, float | None]:
    """``(unit labels, unit purity, purity)`` from each label's examples per unit.

    ``names`` are the labels in sorted order (ties go to the first) and ``counts`` (units, labels) their
    examples in each unit. A unit's label is ``""`` and its purity NaN where no labelled example lands; its
    purity is the share of its labelled examples that carry its label; the map's purity is the share of
    all labelled examples that carry their unit's label, ``None`` when there are none.
    """
    units = counts.shape[0]
    labelled = counts.sum(axis=1)
    if counts.shape[1] == 0:
        return np.full(units, NO_LABEL, dtype=str), np.full(units, np.nan), None
    best = np.argmax(counts, axis=1)
    agree = counts[np.arange(units), best]
    out = np.asarray(names, dtype=object)[best]
    out[labelled == 0] = NO_LABEL
    unit_purity = np.where(labelled > 0, agree / np.maximum(labelled, 1), np.nan)
    total = int(labelled.sum())
    return out.astype(str), unit_purity, float(agree.sum() / total) if total else None


def hits(bmus: np.ndarray, units: int) -> np.ndarray:
    """Examples per unit (flat, int64)."""
    return np.bincount(np.asarray(bmus), minlength=units).astype(np.int64)


def quantization_error(weights: np.ndarray, data: np.ndarray) -> float:
    """Mean Euclidean distance from each example to its best-matching unit."""
    _, _, d2 = best_two(weights, data)
    return float(np.mean(np.sqrt(d2)))


def topographic_error(
    weights: np.ndarray, data: np.ndarray, topology: str = Topology.RECT, toroid: bool = False
) -> float:
    """Fraction of examples whose two best units are not adjacent (rect: 8-neighbourhood; hex: 6)."""
    return quality(weights, data, topology, toroid)[1]


def quality(
    weights: np.ndarray, data: np.ndarray, topology: str = Topology.RECT, toroid: bool = False
) -> tuple[float, float]:
    """(QE, TE) in one pass over the data."""
    qe, te, _ = measure(weights, data, topology, toroid)
    return qe, te


def measure(
    weights: np.ndarray, data: np.ndarray, topology: str = Topology.RECT, toroid: bool = False
) -> tuple[float, float, np.ndarray]:
    """(QE, TE, each example's best unit) in one pass over the data."""
    first, second, d2 = best_two(weights, data)
    qe = float(np.mean(np.sqrt(d2)))
    if weights.shape[0] * weights.shape[1] < 2:
        return qe, 0.0, first
    height, width = weights.shape[:2]
    if topology == Topology.RECT and not toroid:
        fy, fx = np.divmod(first, width)
        sy, sx = np.divmod(second, width)
        adjacent = (np.abs(fy - sy) <= 1) & (np.abs(fx - sx) <= 1)
    else:
        adjacent = topo.adjacent(height, width, first, second, topology, toroid)
    return qe, float(np.mean(~adjacent)), first


def u_matrix(weights: np.ndarray, topology: str = Topology.RECT, toroid: bool = False) -> np.ndarray:
    """Mean distance of each unit to its neighbours (rect: 4; hex: 6; wrapped on a toroid), shape (height, width)."""
    w = np.asarray(weights, dtype=np.float64)
    h, wd, _ = w.shape
    if topology != Topology.RECT or toroid:
        flat = w.reshape(h * wd, -1)
        pairs, count = _neighbour_pairs(h, wd, topology, toroid)
        diff = flat[pairs[:, 0]] - flat[pairs[:, 1]]
        dist = np.sqrt(np.einsum("pd,pd->p", diff, diff))
        total = np.bincount(pairs[:, 0], dist, h * wd) + np.bincount(pairs[:, 1], dist, h * wd)
        return np.where(count > 0, total / np.maximum(count, 1), 0.0).reshape(h, wd)
    total = np.zeros((h, wd))
    count = np.zeros((h, wd))
    dy = np.linalg.norm(w[1:] - w[:-1], axis=-1)
    dx = np.linalg.norm(w[:, 1:] - w[:, :-1], axis=-1)
    total[1:] += dy
    total[:-1] += dy
    count[1:] += 1
    count[:-1] += 1
    total[:, 1:] += dx
    total[:, :-1] += dx
    count[:, 1:] += 1
    count[:, :-1] += 1
    return np.where(count > 0, total / np.maximum(count, 1), 0.0)


@lru_cache(maxsize=8)
def _neighbour_pairs(height: int, width: int, topology: str, toroid: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~som_studio.core.som.topology.neighbour_pairs` and each unit's neighbour count, cached.

    The U-matrix of a live frame is drawn ~30 times a second; finding the pairs
    (a sort of all of them) costs more than the distances, and never changes in a run.
    """
    pairs = topo.neighbour_pairs(height, width, topology, toroid)
    units = height * width
    count = np.bincount(pairs[:, 0], minlength=units) + np.bincount(pairs[:, 1], minlength=units)
    pairs.setflags(write=False)
    count.setflags(write=False)
    return pairs, count


def to_rgb(weights: np.ndarray, lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """(H, W, 3) uint8 image of a 3-feature map, scaled from [lo, hi] (default [0, 1])."""
    w = np.asarray(weights, dtype=np.float64)[..., :3]
    lo = np.zeros(w.shape[-1]) if lo is None else np.asarray(lo)[:3]
    hi = np.ones(w.shape[-1]) if hi is None else np.asarray(hi)[:3]
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.clip((w - lo) / span * 255.0 + 0.5, 0, 255).astype(np.uint8)
