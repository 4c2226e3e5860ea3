"""``jax-scan-online``: whole chunks of online steps in one compiled program.

Online step (:func:`online_step`): distances of one example to every unit in
the reference's form ``sum_d (w - x)^2`` (elementwise: no matrix product, so
no TF32 on a GPU), the first minimum in row-major order, then the full-map
update ``W += lr * hy hx^T * (x - W)``. A window of +/- k sigma around the BMU
was considered and not kept: see :class:`ScanOnline`.

A chunk runs as one ``fori_loop`` whose trips each hold ``K`` steps written
out straight-line (:func:`chunk_program`); ``K`` and the argmin's form are the
kernel plan, chosen per device and size by :func:`som_studio.core.plans.online_plan.choose`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.impls.fed_rows import FedRows
from som_studio.core.impls.jax_fused import _FusedTrainer
from som_studio.core.plans.distances import sq_distances
from som_studio.core.plans.neighbourhood import grid_weights
from som_studio.core.plans.online_plan import Argmin, OnlinePlan, choose
from som_studio.core.som.problem import Problem
from som_studio.run_settings import Topology

if TYPE_CHECKING:  # the same module, named so that annotations like jax.Array resolve
    import jax
else:
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


def first_argmin_all(values: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The same (row, column) as :func:`first_argmin_2d`, by one argmin over the whole array.

    On a GPU this is one fused reduction instead of three dependent ones.
    """
    flat = jnp.argmin(values.reshape(-1)).astype(jnp.int32)
    return flat // values.shape[1], flat % values.shape[1]


def online_step(
    w: jax.Array,
    x: jax.Array,
    sx: Any,
    sy: Any,
    lr: Any,
    xs: jax.Array,
    ys: jax.Array,
    argmin: Argmin = "rows",
    lattice: tuple[str, bool] = (Topology.RECT, False),
    missing: bool = False,
) -> jax.Array:
    """One online step on a feature-major map ``w`` (D, H, W) with example ``x`` (D,).

    With ``lr == 0`` the map comes back bit for bit as it was (``w - 0 * diff``
    with a finite ``diff``): the masked tail of :func:`chunk_program` relies on it.
    ``lattice`` (topology, toroid) other than a planar rect map takes
    :func:`~som_studio.core.plans.neighbourhood.grid_weights`; ``missing``: ``x`` may hold
    NaN, and the search and the update use its known features only (static,
    so data without NaN compile the plain step).
    """
    known = None
    if missing:
        known = ~jnp.isnan(x)
        x = jnp.where(known, x, 0)
    diff = w - x[:, None, None]
    if known is not None:
        diff = jnp.where(known[:, None, None], diff, jnp.zeros((), w.dtype))
    dist = sq_distances(w, x[:, None, None], None if known is None else known[:, None, None], loop=False)
    r, c = (first_argmin_2d if argmin == "rows" else first_argmin_all)(dist)
    if lattice != (Topology.RECT, False):
        h = grid_weights(r, c, sx, sy, (w.shape[1], w.shape[2]), lattice, w.dtype) * lr
        return w - h[None] * diff
    by, bx = r.astype(w.dtype), c.astype(w.dtype)
    hy = jnp.exp(-((ys - by) ** 2) / (sy * sy)) * lr
    hx = jnp.exp(-((xs - bx) ** 2) / (sx * sx))
    return w - (hy[:, None] * hx[None, :])[None] * diff


def chunk_program(
    plan: OnlinePlan, lattice: tuple[str, bool] = (Topology.RECT, False), missing: bool = False, fed: bool = False
) -> Any:
    """The chunk program of ``plan``: ``(w, first, count, data, order, sx, sy, lr, xs, ys) -> w``.

    ``ceil(count / K)`` trips of ``K`` straight-line steps. A step past
    ``first + count`` (the tail of the last trip) runs with learning rate 0 and
    its indices clamped into range, which leaves the map as it was, so every
    chunk size runs through the one compiled program. ``K = 1`` is the plain
    one-step-per-trip loop. Step ``t`` takes ``data[order[t]]``; ``fed`` (a streamed
    run's batch of rows, :mod:`~som_studio.core.impls.fed_rows`): ``order`` is a scalar
    ``shift`` and step ``t`` takes ``data[t - shift]``.
    """
    k = plan.steps_per_trip

    def example(data, order, t):
        if fed:
            return data[jnp.clip(t - order, 0, data.shape[0] - 1)]
        return data[order[t]]

    def chunk(w, first, count, data, order, sx, sy, lr, xs, ys):
        if k == 1:

            def body1(t, w):
                x = example(data, order, t)
                return online_step(w, x, sx[t], sy[t], lr[t], xs, ys, plan.argmin, lattice, missing)

            return lax.fori_loop(first, first + count, body1, w)

        end = first + count
        last = lr.shape[0] - 1
        zero = jnp.zeros((), lr.dtype)

        def body(trip, w):
            t0 = first + trip * k
            for j in range(k):
                t = t0 + j
                ti = jnp.minimum(t, last)
                rate = jnp.where(t < end, lr[ti], zero)
                x = example(data, order, ti)
                w = online_step(w, x, sx[ti], sy[ti], rate, xs, ys, plan.argmin, lattice, missing)
            return w

        return lax.fori_loop(0, (count + (k - 1)) // k, body, w)

    return chunk


class ScanOnline(FedRows, _FusedTrainer):
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

    Streamed (:class:`~som_studio.core.impls.fed_rows.FedRows`), a chunk is the same one dispatch
    over the batch of rows already on the device.

    Parameters
    ----------
    problem : the run.
    plan : force a kernel plan (tests run every plan); default: the one
        :func:`~som_studio.core.plans.online_plan.choose` picks for the device and size.
    """

    def __init__(self, problem: Problem, plan: OnlinePlan | None = None) -> None:
        super().__init__(problem)
        put = lambda a: jax.device_put(a, self.device)
        dt = problem.dtype
        self.xs = put(np.arange(problem.width, dtype=dt))
        self.ys = put(np.arange(problem.height, dtype=dt))
        self.plan = plan or choose(self.device.platform, problem.height * problem.width, problem.features)
        lattice = (problem.config.topology, bool(problem.config.toroid))
        if self.fed:
            self._place_fed()
        self._program = jax.jit(chunk_program(self.plan, lattice, problem.missing, self.fed), donate_argnums=0)
        self.kept_key = (repr(self.plan), lattice, bool(problem.missing), bool(self.fed))
        # One trip of the chunk program's loop trains this many steps (the inside of a run divides by it).
        self.iterations_per_trip = self.plan.steps_per_trip

    def _args(self) -> tuple:
        s = self.sched
        return (self.data, self.row_source(s.order), s.sx, s.sy, s.lr, self.xs, self.ys)

    def _local_steps(self, first: int, count: int) -> None:
        self._call(first, count)

    def describe(self) -> dict[str, Any]:
        """``kernel_plan``: the plan this trainer compiled (see ``plans/online_plan.py``), and its memory."""
        return {**super().describe(), "kernel_plan": self.plan.describe()}
