"""Clusters of a trained map: k-means on its codebook.

Seeded k-means++ then Lloyd's iterations in float64, NumPy only, so a run's
clusters are the same wherever they are computed. Clusters are numbered by
the row-major position of their first unit, so the numbering does not depend
on the order the centres were found in.
"""

from __future__ import annotations

import numpy as np

MAX_ITERATIONS = 300


def kmeans(codebook: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    """Cluster number (0 .. k-1) of each unit of a (H, W, D) codebook, shape (H, W) int32."""
    h, w, d = codebook.shape
    x = np.nan_to_num(np.asarray(codebook, dtype=np.float64).reshape(h * w, d))
    m = len(x)
    if not 1 <= k <= m:
        raise ValueError(f"k-means needs 1 <= k <= {m} units, got k={k}")
    rng = np.random.default_rng(seed)
    centres = [x[rng.integers(m)]]
    d2 = np.sum((x - centres[0]) ** 2, axis=1)
    for _ in range(1, k):
        total = d2.sum()
        i = int(rng.choice(m, p=d2 / total)) if total > 0 else int(rng.integers(m))
        centres.append(x[i])
        d2 = np.minimum(d2, np.sum((x - x[i]) ** 2, axis=1))
    c = np.array(centres)
    assign = np.full(m, -1)
    for _ in range(MAX_ITERATIONS):
        dist = np.sum(x * x, axis=1)[:, None] - 2 * x @ c.T + np.sum(c * c, axis=1)[None, :]
        new = np.argmin(dist, axis=1)
        if np.array_equal(new, assign):
            break
        assign = new
        for j in range(k):
            members = x[assign == j]
            if len(members):
                c[j] = members.mean(axis=0)
    # Renumber by first appearance in row-major order.
    _, first = np.unique(assign, return_index=True)
    order = np.argsort(first)
    relabel = np.empty(assign.max() + 1, dtype=np.int32)
    relabel[np.unique(assign)[order]] = np.arange(len(order), dtype=np.int32)
    labels: np.ndarray = relabel[assign].reshape(h, w)
    return labels


def ward(codebook: np.ndarray, k: int) -> np.ndarray:
    """Cluster number (0 .. k-1) of each unit by Ward's hierarchy on a (H, W, D) codebook, shape (H, W) int32.

    SciPy's agglomerative clustering (Ward's minimum-variance linkage) cut at ``k``
    clusters; deterministic, numbered as :func:`kmeans` numbers its clusters (by
    the row-major position of their first unit). SciPy comes with JAX; without it
    this raises ``ImportError`` naming it.
    """
    from scipy.cluster.hierarchy import fcluster, linkage  # type: ignore[import-untyped]

    h, w, d = codebook.shape
    x = np.nan_to_num(np.asarray(codebook, dtype=np.float64).reshape(h * w, d))
    m = len(x)
    if not 1 <= k <= m:
        raise ValueError(f"Ward's clustering needs 1 <= k <= {m} units, got k={k}")
    if m == 1:
        return np.zeros((h, w), dtype=np.int32)
    assign = fcluster(linkage(x, method="ward"), t=k, criterion="maxclust") - 1
    return _number_by_first_unit(np.asarray(assign, dtype=np.int64)).reshape(h, w)


def _number_by_first_unit(assign: np.ndarray) -> np.ndarray:
    """Cluster numbers renumbered 0, 1, ... in the row-major order of each cluster's first unit."""
    values, first = np.unique(assign, return_index=True)
    relabel = np.empty(int(values.max()) + 1, dtype=np.int32)
    relabel[values[np.argsort(first)]] = np.arange(len(values), dtype=np.int32)
    out: np.ndarray = relabel[assign]
    return out
