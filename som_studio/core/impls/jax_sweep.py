"""A sweep's trainer: every combination's map trained by one ``vmap``-ed ``jax-fused-batch`` epoch, in chunks.

Each combination (:mod:`som_studio.session.sweep`) is one slice of a batch: the fused batch epoch
(:func:`~som_studio.core.impls.jax_fused.batch_epoch`, its kernel plan and kernels) is ``vmap``-ed
over the combinations' maps and radius schedules, and a chunk of epochs is one ``fori_loop`` with
dynamic bounds, compiled once, like ``jax-fused-batch``'s own chunk program: the session runs it in
chunks, so a sweep reports its progress and stops between chunks like any run. With several
devices the maps are sharded over them, each device taking as many (the last combination fills the
gap; its copies are dropped). A ``jax-fused-batch`` run of any combination trains the same map, to
float32 rounding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.config import RunConfig
from som_studio.core import jax_runtime
from som_studio.core.impls.jax_fused import batch_epoch
from som_studio.core.plans import fused_plan
from som_studio.core.som.problem import Problem, decay, make_problem

if TYPE_CHECKING:
    import jax
else:
    jax = jax_runtime.jax()


class SweepBatch:
    """The :class:`~som_studio.core.impls.protocol.Trainer` of a sweep: ``configs``' maps trained together.

    Parameters
    ----------
    problem : the base configuration's problem (the session's: its data and precision).
    configs : one configuration per combination, in order.
    shards : over how many devices the maps are sharded (:func:`~som_studio.session.sweep.spread`).
    data : the run's data as the session holds them, from which each combination's initial map is made
        as a run of it would make it.
    """

    def __init__(self, problem: Problem, configs: Sequence[RunConfig], shards: int, data: np.ndarray) -> None:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        dtype = problem.dtype
        T = problem.config.iterations
        self.count = len(configs)
        self.shards = shards
        init = np.stack([np.moveaxis(make_problem(cfg, "batch", data).init_map, 2, 0) for cfg in configs])
        sx = np.stack([decay(c.sigmas[0][0], c.sigmas[1][0], T).astype(dtype) for c in configs])
        sy = np.stack([decay(c.sigmas[0][1], c.sigmas[1][1], T).astype(dtype) for c in configs])
        padded = -(-self.count // shards) * shards
        if padded > self.count:
            fill = padded - self.count
            init, sx, sy = (np.concatenate([a, np.repeat(a[-1:], fill, 0)]) for a in (init, sx, sy))
        d, h, w = init.shape[1:]
        devices = jax.devices()[:shards]
        self.plan = plan = fused_plan.choose(devices[0].platform, h * w, d, problem.samples, dtype.itemsize)
        cfg = problem.config
        lattice = (str(cfg.topology), bool(cfg.toroid))
        known_np = ~np.isnan(problem.data)
        missing = not bool(known_np.all())
        x_np = np.where(known_np, problem.data, 0).astype(dtype)

        def chunk(w0: Any, first: Any, count: Any, sxs: Any, sys_: Any, x: Any, known: Any) -> Any:
            body = lambda t, wt: batch_epoch(wt, x, sxs[t], sys_[t], plan, lattice, known if missing else None)
            return jax.lax.fori_loop(first, first + count, body, w0)

        mesh = Mesh(np.asarray(devices), ("maps",))
        split = NamedSharding(mesh, PartitionSpec("maps"))
        whole = NamedSharding(mesh, PartitionSpec())
        self.w = jax.device_put(init.astype(dtype), split)
        self._fixed: tuple[Any, ...] = (
            jax.device_put(sx, split),
            jax.device_put(sy, split),
            jax.device_put(x_np, whole),
            jax.device_put(known_np.astype(dtype), whole),
        )
        batched = jax.vmap(chunk, in_axes=(0, None, None, 0, 0, None, None))
        self._program = jax.jit(batched, out_shardings=split, donate_argnums=0)
        self._compiled: Any = None

    def traces(self) -> dict[str, Any]:
        """The chunk program, traced for this sweep's arguments (nothing lowered or compiled)."""
        return {"chunk": self._program.trace(self.w, np.int32(0), np.int32(0), *self._fixed)}

    def programs(self) -> dict[str, Any]:
        """The chunk program, lowered for this sweep's arguments (nothing compiled)."""
        return {k: t.lower() for k, t in self.traces().items()}

    def warmup(self) -> None:
        # Ahead of time, as jax-fused-batch; then one epoch of every map on a copy where that is quick, for the
        # loop's kernels XLA compiles when they first run (fused_plan.WARM_EPOCH_MAX_S), else a zero-epoch chunk,
        # which loads it: the maps stay as they were.
        self._compiled = self.programs()["chunk"].compile()
        d, h, w = self.w.shape[1:]
        each = fused_plan.predict(self.plan, h * w, d, self._fixed[2].shape[0], self.w.dtype.itemsize)
        if each * -(-self.count // self.shards) <= fused_plan.WARM_EPOCH_MAX_S:
            placed, kept = self.w.sharding, np.asarray(self.w)  # run() donates the maps it is given
            self.run(0, 1)
            self.w = jax.device_put(kept, placed)
        else:
            self.run(0, 0)

    def run(self, first: int, count: int) -> None:
        self.w = self._compiled(self.w, np.int32(first), np.int32(count), *self._fixed)
        self.w.block_until_ready()

    def describe(self) -> dict[str, Any]:
        """The kernel plan, XLA's account of the compiled program's memory, the devices the maps spread over."""
        return {
            "kernel_plan": str(self.plan),
            "memory_compiled_bytes": jax_runtime.compiled_bytes(self._compiled),
            "sweep": {"devices": self.shards},
        }

    def get_maps(self) -> np.ndarray:
        """Every combination's map, host copies, (C, H, W, D)."""
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w)[: self.count], 1, 3))

    def get_map(self) -> np.ndarray:
        """The first combination's map (H, W, D): the one a sweep's live picture shows."""
        return np.ascontiguousarray(np.moveaxis(np.asarray(self.w[0]), 0, 2))

    def close(self) -> None:
        for a in (self.w, *self._fixed):
            if a is not None:
                a.delete()
        self.w, self._fixed, self._compiled = None, (), None
