"""The playbook's JAX ladder, ported: eager, per-step ``jit``, per-example ``vmap``.

These are deliberately the *teaching* versions: each shows one idea and its
cost. The fused implementations are elsewhere. None of them has a matrix
product (distances and neighbourhoods are elementwise, ``jnp.outer`` a
broadcast multiply), so nothing here can fall to TF32 on a GPU; the precision
test lowers their programs (:meth:`programs`) to keep it so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.impls.fed_rows import FedRows
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.plans.neighbourhood import grid_weights
from som_studio.core.som.problem import MIN_WEIGHT, Problem
from som_studio.run_settings import Topology

jax = jax_runtime.jax()
jnp = jax.numpy


RECT = (Topology.RECT, False)


def _bmu(weights, x, known=None):
    """(y, x) of the best-matching unit, as device scalars, and ``weights - x``.

    ``known`` (D,) bool: only those features count (``x`` is 0 at the others, and so is the difference).
    """
    diff = weights - x
    if known is not None:
        diff = jnp.where(known, diff, jnp.zeros((), diff.dtype))
    dist = jnp.sum(diff * diff, axis=-1)
    b = jnp.argmin(dist)
    return b // weights.shape[1], b % weights.shape[1], diff


def _known(x, missing: bool):
    """``(x with NaN set to 0, known mask)`` when the data have missing values, else ``(x, None)``."""
    if not missing:
        return x, None
    known = ~jnp.isnan(x)
    return jnp.where(known, x, 0), known


def _grid(by, bx, sx, sy, xs, ys, lattice):
    """The (H, W) neighbourhood of unit (by, bx): the playbook's outer product on a planar rect map."""
    if lattice == RECT:
        hy = jnp.exp(-((ys - by.astype(ys.dtype)) ** 2) / sy**2)
        hx = jnp.exp(-((xs - bx.astype(xs.dtype)) ** 2) / sx**2)
        return jnp.outer(hy, hx)
    return grid_weights(by, bx, sx, sy, (ys.shape[0], xs.shape[0]), lattice, ys.dtype)


def _online_step(weights, x, sx, sy, lr, xs, ys, lattice=RECT, missing=False):
    x, known = _known(x, missing)
    by, bx, diff = _bmu(weights, x, known)
    if lattice == RECT:
        hy = jnp.exp(-((ys - by.astype(ys.dtype)) ** 2) / sy**2)
        hx = jnp.exp(-((xs - bx.astype(xs.dtype)) ** 2) / sx**2)
        h = jnp.outer(hy * lr, hx)
    else:
        h = _grid(by, bx, sx, sy, xs, ys, lattice) * lr
    return weights - h[:, :, None] * diff


class _JaxTrainer:
    """Shared device state: problem arrays placed once on the first device.

    The schedules and the sample order are one block's (``self.sched``, a
    :class:`~som_studio.core.plans.device_schedule.DeviceSchedule`): :meth:`run`
    trains each block's piece of a chunk with the block's own iteration numbers.

    ``plan`` names the BMU search for the record (``extra.kernel_plan``); the
    subclasses with one compiled program compile it ahead of time in
    :meth:`warmup` so that :meth:`describe` can give XLA's memory figure.
    """

    plan = "direct/argmin-all"

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        self.device = jax.devices()[0]
        put = lambda a: jax.device_put(a, self.device)
        self.weights = put(problem.init_map)
        self.data = put(problem.data)
        self.sched = DeviceSchedule(problem, lambda _name, a: put(a))
        dt = problem.dtype
        self.xs = put(np.arange(problem.width, dtype=dt))
        self.ys = put(np.arange(problem.height, dtype=dt))
        self._compiled: Any = None
        # Static facts of the run: which neighbourhood, and whether rows may hold NaN.
        self.lattice = (problem.config.topology, bool(problem.config.toroid))
        self.missing = problem.missing

    def describe(self) -> dict:
        """The kernel plan and, where one program runs, XLA's account of its memory (after :meth:`warmup`)."""
        return {"kernel_plan": self.plan, "memory_compiled_bytes": jax_runtime.compiled_bytes(self._compiled)}

    def _scratch(self):
        """A throw-away map for warm-up (a transfer, which compiles nothing)."""
        return jax.device_put(self.p.init_map, self.device)

    def run(self, first: int, count: int) -> None:
        for local, n in self.sched.segments(first, count):
            self._run(local, n)

    def _run(self, first: int, count: int) -> None:
        """Train iterations ``first .. first + count - 1`` of the placed block."""
        raise NotImplementedError

    def get_map(self) -> np.ndarray:
        return np.asarray(self.weights).copy()

    def copy_map_async(self) -> Callable[[], np.ndarray]:
        """Start the map's copy to the host; the function returned finishes it (before the next :meth:`run`)."""
        w = self.weights  # the next run() donates its buffer: the copy is finished before then
        w.copy_to_host_async()
        return lambda: np.asarray(w).copy()

    def close(self) -> None:
        self.sched.close()
        for name in ("weights", "data", "xs", "ys"):
            a = getattr(self, name, None)
            if a is not None:
                a.delete()
                setattr(self, name, None)
        self._compiled = None


class JaxNaiveOnline(FedRows, _JaxTrainer):
    """``jax-naive-online``: the NumPy loop with ``jnp`` swapped in, run eagerly.

    Every operation is a separate dispatch to the device, so per-step overhead
    dominates: the lesson is that swapping the import is not enough. Streamed
    (:class:`~som_studio.core.impls.fed_rows.FedRows`), step ``t`` takes held row ``t - shift``.
    """

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        if self.fed:
            self._place_fed()

    def _x(self, t: int) -> Any:
        """Step ``t``'s example (``t`` of the placed block)."""
        if self.fed:
            return self.data[t - self.shift]
        return self.data[int(self.sched.block.order[t])]  # type: ignore[index,union-attr]

    plan = "direct/argmin-all/eager"

    # Every operation is its own dispatch: the inside of a run counts the traced step's operations.
    eager = True

    def traces(self) -> dict:
        """The step's operations traced as one program (eagerly, each is its own small program)."""
        s = self.sched
        x = self._x(0)
        step = jax.jit(_online_step, static_argnums=(7, 8))
        return {
            "step": step.trace(self.weights, x, s.sx[0], s.sy[0], s.lr[0], self.xs, self.ys, self.lattice, self.missing)
        }

    def programs(self) -> dict:
        """The step's operations lowered as one program (eagerly, each is its own small program)."""
        return {k: t.lower() for k, t in self.traces().items()}

    def _step(self, w, t):
        s = self.sched
        return _online_step(w, self._x(t), s.sx[t], s.sy[t], s.lr[t], self.xs, self.ys, self.lattice, self.missing)

    def warmup(self) -> None:
        # Eager ops still compile once per primitive and shape: do it on a copy.
        self._step(self._scratch(), 0).block_until_ready()

    def _run(self, first: int, count: int) -> None:
        w = self.weights
        for t in range(first, first + count):
            w = self._step(w, t)
        self.weights = w.block_until_ready()

    def _local_steps(self, first: int, count: int) -> None:
        self._run(first, count)


class JaxJitOnline(FedRows, _JaxTrainer):
    """``jax-jit-online``: the step compiled with ``jit``, one dispatch per step.

    Streamed (:class:`~som_studio.core.impls.fed_rows.FedRows`), the step takes held row ``t - shift``
    where in memory it takes row ``order[t]``.
    """

    plan = "direct/argmin-all/step"

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        lattice, missing, fed = self.lattice, self.missing, self.fed
        if fed:
            self._place_fed()

        def step(w, t, data, order, sx, sy, lr, xs, ys):
            x = data[t - order] if fed else data[order[t]]
            return _online_step(w, x, sx[t], sy[t], lr[t], xs, ys, lattice, missing)

        self._step = jax.jit(step, donate_argnums=0)

    def _args(self):
        s = self.sched
        return (self.data, self.row_source(s.order), s.sx, s.sy, s.lr, self.xs, self.ys)

    def _local_steps(self, first: int, count: int) -> None:
        self._run(first, count)

    def traces(self) -> dict:
        """The step program, traced for this trainer's arguments (nothing lowered or compiled)."""
        return {"step": self._step.trace(self.weights, np.int32(0), *self._args())}

    def programs(self) -> dict:
        """The step program, lowered for this trainer's arguments (nothing compiled)."""
        return {k: t.lower() for k, t in self.traces().items()}

    def warmup(self) -> None:
        self._compiled = self.programs()["step"].compile()
        self._compiled(self._scratch(), np.int32(0), *self._args()).block_until_ready()

    def _run(self, first: int, count: int) -> None:
        w, args = self.weights, self._args()
        step = self._compiled or self._step
        for t in range(first, first + count):
            w = step(w, np.int32(t), *args)
        self.weights = w.block_until_ready()


class JaxVmapBatch(_JaxTrainer):
    """``jax-vmap-batch``: one jitted epoch, ``vmap`` over examples, Python loop over epochs.

    Each example's neighbourhood-weighted contribution is computed in parallel
    (an N x M x D intermediate) and summed, as the playbook's ``vmap`` notebook does.
    Naive on purpose, but exact: no product, so no TF32 on a GPU.
    """

    plan = "direct/argmin-all/vmap"

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem)
        min_w = np.asarray(MIN_WEIGHT, dtype=problem.dtype)
        lattice, missing = self.lattice, self.missing

        def contribution(x, w, sx, sy, xs, ys):
            x, known = _known(x, missing)
            by, bx, _ = _bmu(w, x, known)
            h = _grid(by, bx, sx, sy, xs, ys, lattice)
            if known is None:
                return h[:, :, None] * x, h
            # Each feature's weight: the examples that know it (an N x M x D intermediate, as num's).
            kn = known.astype(x.dtype)
            return h[:, :, None] * x, h[:, :, None] * kn

        def epoch(w, t, data, sx, sy, xs, ys):
            num, h = jax.vmap(contribution, in_axes=(0, None, None, None, None, None))(data, w, sx[t], sy[t], xs, ys)
            num, den = num.sum(axis=0), h.sum(axis=0)
            if den.ndim == 2:
                den = den[:, :, None]
            ok = den > min_w
            return jnp.where(ok, num / jnp.where(ok, den, 1), w)

        self._epoch = jax.jit(epoch, donate_argnums=0)

    def _args(self):
        return (self.data, self.sched.sx, self.sched.sy, self.xs, self.ys)

    def traces(self) -> dict:
        """The epoch program, traced for this trainer's arguments (nothing lowered or compiled)."""
        return {"epoch": self._epoch.trace(self.weights, np.int32(0), *self._args())}

    def programs(self) -> dict:
        """The epoch program, lowered for this trainer's arguments (nothing compiled)."""
        return {k: t.lower() for k, t in self.traces().items()}

    def warmup(self) -> None:
        self._compiled = self.programs()["epoch"].compile()
        self._compiled(self._scratch(), np.int32(0), *self._args()).block_until_ready()

    def _run(self, first: int, count: int) -> None:
        w, args = self.weights, self._args()
        epoch = self._compiled or self._epoch
        for t in range(first, first + count):
            w = epoch(w, np.int32(t), *args)
        self.weights = w.block_until_ready()
