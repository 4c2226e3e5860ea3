"""Map quality on the run's device: QE, TE and the U-matrix as compiled JAX programs.

The same measures as :mod:`som_studio.core.metrics` (the NumPy reference, which
stays the definition), computed where a JAX run's map already is, so a big run
does not wait on a host pass over examples x units:

* **best two units** of each example by the direct form ``sum_d (x_d - w_d)^2``
  (elementwise: no matrix product, so no TF32 on a GPU, and no cancellation),
  the first in row-major order on ties, by plain reductions (``min`` then the
  first index holding it: on the CPU several times faster than ``argmin``'s
  variadic reduction over wide rows);
* **QE** from the exact distance to the chosen unit, recomputed from the
  example and that unit (in float64 where JAX has it), averaged in float64;
* **TE**: the share of examples whose two best units are not adjacent, as
  :func:`som_studio.core.topology.adjacent` says (rect: the 8 surrounding
  units; hex: the 6 touching ones; wrapped on a toroid);
* **missing values** (NaN): each example's distances over its known features
  only, as in training (the program is compiled for data with or without them).

Examples are processed in equal chunks (``lax.map``) so the working set is
``chunk x units`` elements within :data:`QUALITY_ELEMENTS`, never ``N x M``.
One program is compiled per map and data shape; :class:`DeviceQuality` keeps
the padded data on the device across measurements.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core import topology as topo

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
else:
    jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax

#: Bound on one chunk's distance matrix, in elements (64 MiB in float32): the
#: distances and the masks the reductions read, whatever N and M are.
QUALITY_ELEMENTS = 1 << 24


#: Units per block of the two-pass search (:func:`_chunk_best_two`): about
#: ``2 sqrt(M)``, between these. Measured on the 2-core CPU: 256 units per block
#: best for the playbook's 32,400 units (8 ms for 1000 examples, 1024: 13 ms),
#: 2048 for 1024 x 1024 units (1.9e9 pairs/s, 512: 1.0e9).
MIN_BLOCK, MAX_BLOCK = 256, 2048
#: Examples per chunk on the CPU at most. Measured on the playbook map (2-core
#: AVX-512): chunks of 64-128 examples take 8-10 ms for all 1000 examples,
#: chunks of 1000 take 50 ms (their work no longer stays in cache), one block
#: of all units (four reductions over the stored distances) 89 ms.
CPU_CHUNK = 128


@dataclass(frozen=True)
class QualityPlan:
    """How one quality program cuts its work: examples per chunk, units per block."""

    chunk: int
    block: int

    def describe(self) -> str:
        return f"direct/best-two/chunk={self.chunk}/block={self.block}"


def _equal_chunks(samples: int, per: int) -> int:
    """The size of the fewest equal chunks of at most ``per`` examples (padding under one per chunk)."""
    chunks = -(-max(samples, 1) // max(per, 1))
    return max(1, -(-max(samples, 1) // chunks))


def unit_block(units: int) -> int:
    """Units per block for a map of ``units`` units: ``2 sqrt(M)`` to a multiple of 128, within bounds."""
    b = 2 * math.isqrt(max(units, 1))
    return min(MAX_BLOCK, max(MIN_BLOCK, -(-b // 128) * 128))


def plan(backend: str, samples: int, units: int, features: int, budget: int = QUALITY_ELEMENTS) -> QualityPlan:
    """The quality plan on ``backend`` for ``samples`` examples, ``units`` units and ``features`` features.

    Up to :func:`unit_block` units, one block (direct distances to every unit,
    ranked); beyond, blocks of that many units and the two-pass search. The
    examples per chunk keep what one chunk may hold at once (all its direct
    distances, should pass 1 materialise them, plus two candidate blocks with
    their distances and the ranking's masks) within ``budget`` elements; on the
    CPU at most :data:`CPU_CHUNK`, which keeps a chunk's work in cache.
    """
    block = unit_block(units)
    if units <= block:
        per_example = 3 * max(units, 1)
        block = max(units, 1)
    else:
        per_example = units + 2 * block * (features + 3)
    per = budget // per_example
    if backend.lower() == "cpu":
        per = min(per, CPU_CHUNK)
    return QualityPlan(_equal_chunks(samples, per), block)


def _first_min(dist: jax.Array, col: jax.Array, m: int) -> tuple[jax.Array, jax.Array]:
    """(index of the first minimum of each row, the minimum)."""
    low = jnp.min(dist, axis=1, keepdims=True)
    return jnp.min(jnp.where(dist == low, col, m), axis=1), low[:, 0]


def _known_diff(diff: jax.Array, known: jax.Array | None, k: int, shape: tuple) -> jax.Array:
    """``diff`` where feature ``k`` of the example is known, else 0 (``known`` (n, D) bool, or None: all)."""
    if known is None:
        return diff
    return jnp.where(known[:, k].reshape(shape), diff, jnp.zeros((), diff.dtype))


def _direct(wt: jax.Array, x: jax.Array, known: jax.Array | None = None) -> jax.Array:
    """``sum_d (x_d - w_d)^2`` for every example of ``x`` (n, D) and unit of ``wt`` (D, B): (n, B).

    ``known`` (n, D) bool leaves each example's unknown features out (``x`` is 0 there).
    """
    dist = jnp.zeros((), wt.dtype)
    for k in range(wt.shape[0]):  # features in order, as the reference sums them
        diff = _known_diff(x[:, k : k + 1] - wt[k][None, :], known, k, (-1, 1))
        dist = dist + diff * diff if k else diff * diff
    # Materialised once, so every reduction reads the very same values.
    return lax.optimization_barrier(dist)


def _block_best_two(dist: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """(first, its distance, second, its distance) of each row, first in order on ties."""
    m = dist.shape[1]
    col = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    i1, v1 = _first_min(dist, col, m)
    masked = jnp.where(col == i1[:, None], jnp.asarray(jnp.inf, dist.dtype), dist)
    i2, v2 = _first_min(masked, col, m)
    return i1, v1, jnp.minimum(i2, m - 1), v2


def _chunk_best_two(
    wt: jax.Array, x: jax.Array, block: int, known: jax.Array | None = None
) -> tuple[jax.Array, jax.Array]:
    """First and second best unit (flat, row-major first on ties) of each example in ``x`` (n, D).

    With one block: the direct distances to every unit, ranked. With ``G > 1``
    blocks of ``block`` units, two passes (as ``jax-fused-batch`` finds BMUs):

    1. each block's least direct distance, one fused reduction over all units
       that never writes the ``n x M`` distances out; each example keeps its
       two best blocks (the first on ties);
    2. the units of those two blocks, in row-major order, ranked again with
       the direct distance, materialised once.

    Exact: the best unit lies in the best block, and the second best either
    there too or it is the least unit of another block, so of the second best.
    """
    d, m = wt.shape
    n = x.shape[0]
    if m < 2:
        zero = jnp.zeros((n,), jnp.int32)
        return zero, zero
    g = -(-m // block)
    if g == 1:
        i1, _, i2, _ = _block_best_two(_direct(wt, x, known))
        return i1, i2
    # Padding units at +inf in every feature: an infinite distance, last in order.
    wp = jnp.pad(wt, ((0, 0), (0, g * block - m)), constant_values=jnp.asarray(jnp.inf, wt.dtype))
    wb = wp.reshape(d, g, block)
    acc = jnp.zeros((), wt.dtype)
    for k in range(d):
        diff = _known_diff(x[:, k, None, None] - wb[k][None], known, k, (-1, 1, 1))
        acc = acc + diff * diff if k else diff * diff
    lo = jnp.min(acc, axis=2)  # (n, G)
    col = lax.broadcasted_iota(jnp.int32, lo.shape, 1)
    g1, _ = _first_min(lo, col, g)
    g2, _ = _first_min(jnp.where(col == g1[:, None], jnp.asarray(jnp.inf, lo.dtype), lo), col, g)
    g2 = jnp.minimum(g2, g - 1)
    glo, ghi = jnp.minimum(g1, g2), jnp.maximum(g1, g2)
    blocks = wb.transpose(1, 0, 2)  # (G, D, B): a gathered block is one contiguous run
    cand = jnp.take(blocks, jnp.stack([glo, ghi], axis=1), axis=0)  # (n, 2, D, B)
    cand = cand.transpose(0, 2, 1, 3).reshape(n, d, 2 * block)
    dist = jnp.zeros((), wt.dtype)
    for k in range(d):
        diff = _known_diff(x[:, k, None] - cand[:, k], known, k, (-1, 1))
        dist = dist + diff * diff if k else diff * diff
    i1, _, i2, _ = _block_best_two(lax.optimization_barrier(dist))

    def unit(i):
        return jnp.where(i < block, glo * block + i, ghi * block + i - block)

    return unit(i1), unit(i2)


def _exact_d2(wt: jax.Array, x: jax.Array, first: jax.Array, known: jax.Array | None = None) -> jax.Array:
    """Squared distance of each example to its chosen unit (known features), in float64 where JAX has it."""
    acc = _wide()
    w = jnp.take(wt, first, axis=1).T.astype(acc)  # (n, D)
    diff = x.astype(acc) - w
    if known is not None:
        diff = jnp.where(known, diff, jnp.zeros((), acc))
    return jnp.sum(diff * diff, axis=1)


def _wide() -> Any:
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def best_two_program(
    wt: jax.Array, xp: jax.Array, block: int, missing: bool = False
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``(first, second, d2)`` for padded, chunked examples ``xp`` (chunks, n, D); flattened.

    ``missing``: ``xp`` may hold NaN (missing values), left out of each example's distances.
    """

    def one(x):
        known = None
        if missing:
            known = ~jnp.isnan(x)
            x = jnp.where(known, x, 0)
        first, second = _chunk_best_two(wt, x, block, known)
        return first, second, _exact_d2(wt, x, first, known)

    first, second, d2 = lax.map(one, xp)
    return first.reshape(-1), second.reshape(-1), d2.reshape(-1)


def adjacent(first: jax.Array, second: jax.Array, shape: tuple[int, int], lattice: tuple[str, bool]) -> jax.Array:
    """Whether units ``first`` and ``second`` (flat) are adjacent, as :func:`topology.adjacent` decides."""
    height, width = shape
    topology, wrap = lattice
    fy, fx = first // width, first % width
    sy, sx = second // width, second % width
    if topology != "hex":
        dy, dx = jnp.abs(fy - sy), jnp.abs(fx - sx)
        if wrap:
            dy, dx = jnp.minimum(dy, height - dy), jnp.minimum(dx, width - dx)
        return (dy <= 1) & (dx <= 1)
    # Plane distance at most 1 (the 6 touching units), wrapped on a toroid, in float64 where JAX has it.
    acc = _wide()
    px, py = topo.periods(height, width, topology)

    def xy(r, c):
        return c.astype(acc) + 0.5 * (r % 2).astype(acc), r.astype(acc) * topo.HEX_ROW

    (ax, ay), (bx, by) = xy(fy, fx), xy(sy, sx)
    dx, dy = ax - bx, ay - by
    if wrap:
        dx, dy = dx - px * jnp.round(dx / px), dy - py * jnp.round(dy / py)
    return jnp.sqrt(dx * dx + dy * dy) <= 1.0 + 1e-9


def quality_program(
    wt: jax.Array,
    xp: jax.Array,
    valid: jax.Array,
    width: int,
    block: int,
    lattice: tuple[str, bool] = ("rect", False),
    missing: bool = False,
) -> tuple[jax.Array, jax.Array]:
    """(sum of distances to the best unit, count of topographic errors) over the valid examples."""
    first, second, d2 = best_two_program(wt, xp, block, missing)
    adj = adjacent(first, second, (wt.shape[1] // width, width), lattice)
    acc = d2.dtype
    qe_sum = jnp.sum(jnp.where(valid, jnp.sqrt(d2), jnp.zeros((), acc)))
    te_count = jnp.sum(jnp.where(valid & ~adj, 1, 0))
    return qe_sum, te_count


def u_matrix_program(w: jax.Array) -> jax.Array:
    """Mean distance of each unit of ``w`` (H, W, D) to its 4-neighbours, as :func:`metrics.u_matrix`."""
    h, wd, _ = w.shape
    total = jnp.zeros((h, wd), w.dtype)
    count = jnp.zeros((h, wd), w.dtype)
    dy = jnp.sqrt(jnp.sum((w[1:] - w[:-1]) ** 2, axis=-1))
    dx = jnp.sqrt(jnp.sum((w[:, 1:] - w[:, :-1]) ** 2, axis=-1))
    total = total.at[1:].add(dy).at[:-1].add(dy).at[:, 1:].add(dx).at[:, :-1].add(dx)
    count = count.at[1:].add(1).at[:-1].add(1).at[:, 1:].add(1).at[:, :-1].add(1)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0)


def u_matrix_pairs_program(w: jax.Array, pairs: jax.Array) -> jax.Array:
    """Mean distance of each unit of ``w`` (H, W, D) to its neighbours, listed once per pair in ``pairs`` (P, 2).

    Any lattice (:func:`som_studio.core.topology.neighbour_pairs`: hex, toroid), as :func:`metrics.u_matrix`.
    """
    h, wd, d = w.shape
    flat = w.reshape(h * wd, d)
    dist = jnp.sqrt(jnp.sum((flat[pairs[:, 0]] - flat[pairs[:, 1]]) ** 2, axis=-1))
    ends = jnp.concatenate([pairs[:, 0], pairs[:, 1]])
    total = jax.ops.segment_sum(jnp.concatenate([dist, dist]), ends, num_segments=h * wd)
    count = jax.ops.segment_sum(jnp.ones(ends.shape, w.dtype), ends, num_segments=h * wd)
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0).reshape(h, wd)


_quality = jax.jit(quality_program, static_argnums=(3, 4, 5, 6))
_best_two = jax.jit(best_two_program, static_argnums=(2, 3))
_u_matrix = jax.jit(u_matrix_program)
_u_matrix_pairs = jax.jit(u_matrix_pairs_program)


class DeviceQuality:
    """QE and TE of maps of one run, computed on ``device``; the examples are placed once.

    Thread: used from the session's thread only.

    Parameters
    ----------
    data : (N, D) examples.
    height, width : the map's grid.
    dtype : the run's precision; distances are ranked in it (as training ranks them).
    device : where to compute; default JAX's first device.
    budget : elements of one chunk's distance matrix.
    topology, toroid : the map's lattice (the topographic error's adjacency).
    """

    def __init__(
        self,
        data: np.ndarray,
        height: int,
        width: int,
        dtype: Any,
        device: Any = None,
        budget: int = QUALITY_ELEMENTS,
        topology: str = "rect",
        toroid: bool = False,
    ) -> None:
        self.height, self.width = height, width
        self.lattice = (topology, bool(toroid))
        self.missing = bool(np.isnan(data).any())
        self.dtype = np.dtype(dtype)
        self.device = device if device is not None else jax.devices()[0]
        n, d = data.shape
        self.samples, self.features = n, d
        self.plan = plan(self.device.platform, n, height * width, d, budget)
        self._xp = jax.device_put(_chunked(data, self.plan.chunk, self.dtype), self.device)
        chunks, nc = self._xp.shape[:2]
        self._valid = jax.device_put(np.arange(chunks * nc) < n, self.device)
        self._compiled: Any = None
        #: Seconds the one compile took (0 until the first measurement).
        self.compile_s = 0.0

    def _wt(self, weights: np.ndarray) -> jax.Array:
        w = np.asarray(weights, dtype=self.dtype).reshape(self.height * self.width, self.features)
        return jax.device_put(np.ascontiguousarray(w.T), self.device)

    def compile(self) -> None:
        """Compile the program now (once), timing it apart in :attr:`compile_s`."""
        if self._compiled is None:
            t0 = time.perf_counter()
            spec = jax.ShapeDtypeStruct((self.features, self.height * self.width), self.dtype)
            self._compiled = _quality.lower(
                spec, self._xp, self._valid, self.width, self.plan.block, self.lattice, self.missing
            ).compile()
            self.compile_s = time.perf_counter() - t0

    def __call__(self, weights: np.ndarray) -> tuple[float, float]:
        """(QE, TE) of ``weights`` (H, W, D)."""
        self.compile()
        qe_sum, te_count = self._compiled(self._wt(weights), self._xp, self._valid)
        n = max(self.samples, 1)
        te = float(te_count) / n if self.height * self.width >= 2 else 0.0
        return float(qe_sum) / n, te

    def close(self) -> None:
        for a in (self._xp, self._valid):
            a.delete()


def _chunked(data: np.ndarray, chunk: int, dtype: Any) -> np.ndarray:
    """``data`` (N, D) zero-padded to whole chunks: (chunks, chunk, D)."""
    n, d = data.shape
    chunks = -(-max(n, 1) // chunk)
    xp = np.zeros((chunks * chunk, d), dtype)
    xp[:n] = data
    return xp.reshape(chunks, chunk, d)


def best_two(
    weights: np.ndarray, data: np.ndarray, plan_: QualityPlan | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(first, second, squared distance to the first) per example, as :func:`metrics.best_two` gives them.

    On JAX's default device, with ``plan_`` or the one :func:`plan` picks.
    """
    h, w, d = weights.shape
    dtype = np.asarray(weights).dtype
    n = data.shape[0]
    p = plan_ or plan(jax.default_backend(), n, h * w, d)
    wt = np.ascontiguousarray(np.asarray(weights).reshape(h * w, d).T)
    first, second, d2 = _best_two(wt, _chunked(data, p.chunk, dtype), p.block, bool(np.isnan(data).any()))
    return np.asarray(first)[:n], np.asarray(second)[:n], np.asarray(d2)[:n]


def quality(
    weights: np.ndarray,
    data: np.ndarray,
    device: Any = None,
    budget: int = QUALITY_ELEMENTS,
    topology: str = "rect",
    toroid: bool = False,
):
    """(QE, TE) of ``weights`` (H, W, D) on ``data``, computed on ``device`` (one-off: compiles each call)."""
    h, w, _ = weights.shape
    q = DeviceQuality(data, h, w, np.asarray(weights).dtype, device, budget, topology, toroid)
    try:
        return q(weights)
    finally:
        q.close()


def u_matrix(weights: np.ndarray, device: Any = None, topology: str = "rect", toroid: bool = False) -> np.ndarray:
    """:func:`metrics.u_matrix` of ``weights`` (H, W, D) on its lattice, computed on ``device``."""
    device = device if device is not None else jax.devices()[0]
    w = jax.device_put(np.asarray(weights), device)
    if topology == "rect" and not toroid:
        return np.asarray(_u_matrix(w))
    h, wd, _ = w.shape
    pairs = topo.neighbour_pairs(h, wd, topology, toroid).astype(np.int32).reshape(-1, 2)
    return np.asarray(_u_matrix_pairs(w, jax.device_put(pairs, device)))
