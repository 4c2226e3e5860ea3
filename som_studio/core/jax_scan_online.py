"""``jax-scan-online``: whole chunks of online steps in one compiled program.

Online step (:func:`online_step`): distances of one example to every unit in
the reference's form ``sum_d (w - x)^2``, the first minimum found by rows (row
minima, the first row holding the least, then the first column of that row),
then the full-map update ``W += lr * hy hx^T * (x - W)``. A window of +/- k
sigma around the BMU was considered and not kept: see :class:`ScanOnline`.
"""

from __future__ import annotations

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.jax_fused import _FusedTrainer, sq_distances
from som_studio.core.problem import Problem

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def first_argmin_2d(values: jax.Array) -> tuple[jax.Array, jax.Array]:
    """(row, column) of the first minimum of a 2-D array in row-major order (int32).

    Row minima, the first row holding the least of them, then the first
    column of that row holding it: exact, and on the CPU several times faster
    than ``jnp.argmin``'s variadic reduction over the flattened array
    (measured on the playbook map: ~35 us against ~440 us per step).
    """
    row_min = jnp.min(values, axis=1)
    r = jnp.argmin(row_min).astype(jnp.int32)
    c = jnp.argmin(lax.dynamic_index_in_dim(values, r, 0, keepdims=False)).astype(jnp.int32)
    return r, c


def online_step(w: jax.Array, x: jax.Array, sx, sy, lr, xs: jax.Array, ys: jax.Array) -> jax.Array:
    """One online step on a feature-major map ``w`` (D, H, W) with example ``x`` (D,)."""
    diff = w - x[:, None, None]
    dist = sq_distances(w, x[:, None, None])
    r, c = first_argmin_2d(dist)
    by, bx = r.astype(w.dtype), c.astype(w.dtype)
    hy = jnp.exp(-((ys - by) ** 2) / (sy * sy)) * lr
    hx = jnp.exp(-((xs - bx) ** 2) / (sx * sx))
    return w - (hy[:, None] * hx[None, :])[None] * diff


class ScanOnline(_FusedTrainer):
    """``jax-scan-online``: whole chunks of online steps in one jitted ``fori_loop``.

    Every step updates the full map; no +/- k sigma window. Measured on the
    playbook workload here, the full-map update is ~5 us of a ~40 us step; the
    rest is the exhaustive BMU search over all 32,400 units, which a window
    cannot shorten. For a window to be indistinguishable from the full update,
    ``k`` must make ``exp(-k^2)`` vanish next to float32 rounding (``k >= 4.2``:
    ``exp(-k^2) < 2^-24``); with the playbook's radii (60 x 34 units at the
    start) a +/- 4.2 sigma window spans the whole map for the first ~25 % of
    the steps and would save at most ~3 us of ~40 us over the run. A window
    also needs a static size, so following the decaying radius means several
    compiled programs or a ``lax.switch`` per step. Not worth it here; the full
    update is exact by construction.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        put = lambda a: jax.device_put(a, self.device)
        dt = problem.dtype
        self.order = put(problem.order)
        self.xs = put(np.arange(problem.width, dtype=dt))
        self.ys = put(np.arange(problem.height, dtype=dt))

        def chunk(w, first, count, data, order, sx, sy, lr, xs, ys):
            def body(t, w):
                return online_step(w, data[order[t]], sx[t], sy[t], lr[t], xs, ys)

            return lax.fori_loop(first, first + count, body, w)

        self._program = jax.jit(chunk, donate_argnums=0)

    def _args(self) -> tuple:
        return (self.data, self.order, self.sx, self.sy, self.lr, self.xs, self.ys)
