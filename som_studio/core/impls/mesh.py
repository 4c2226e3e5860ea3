"""Mesh and device set-up for the sharded batch implementations, in one place.

:class:`ShardedTrainer` checks a layout against the devices JAX sees, builds
the ``data x map`` mesh, pads and places the problem (only this process's
pieces, so the same code runs multi-host), chooses the per-device kernel plan,
compiles the chunk program ahead of time and meets the
:class:`~som_studio.core.impls.protocol.Trainer` contract. Each implementation
(:mod:`~som_studio.core.impls.jax_pmap`, :mod:`~som_studio.core.impls.jax_jit_sharded`,
:mod:`~som_studio.core.impls.jax_shardmap`) only writes its pure chunk program from
the pieces in :mod:`som_studio.core.plans.sharded_epoch`.

A JAX partitioner workaround lives here: padded examples are given weight zero
rather than sliced off inside the program (see :meth:`ShardedTrainer.__init__`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.inspection import hlo
from som_studio.core.plans import fused_plan, sharding
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.som.problem import Problem

jax = jax_runtime.jax()
P = jax.sharding.PartitionSpec
NamedSharding = jax.sharding.NamedSharding


class ShardedTrainer:
    """Places a problem on a layout's devices and runs a compiled epoch loop.

    Subclasses give :meth:`_jitted` (a jitted or pmapped function of
    ``(w, first, count, x, weight, sx, sy)``: the pure chunk program), may say
    how many units and examples one device searches (:meth:`_plan_sizes`, for
    the kernel plan) and may change how arrays are placed. Works across
    processes: every process holds the same problem and places only its own
    devices' pieces.
    """

    name = "?"
    map_axis = True

    def __init__(self, problem: Problem) -> None:
        self.p = problem
        devs = jax.devices()
        self.layout = sharding.check_layout(
            problem.config.layout, len(devs), impl=self.name, map_axis=self.map_axis, backend=jax.default_backend()
        )
        self.devices = devs[: self.layout.devices]
        self.mesh = jax.sharding.Mesh(np.array(self.devices).reshape(self.layout.data, self.layout.map), sharding.AXES)
        dt = problem.dtype
        h, n = problem.height, problem.samples
        hp = sharding.padded(h, self.layout.map)
        np_ = sharding.padded(n, self.layout.data)
        w = np.zeros((hp, problem.width, problem.features), dt)
        w[:h] = problem.init_map
        x = np.zeros((np_, problem.features), dt)
        x[:n] = problem.data
        weight = np.zeros(np_, dt)
        # Padded examples weigh nothing. (Weights, not slicing them off inside the program: with
        # jax 0.12.0.1 on the CPU, jit(lambda x, i: segment_sum(x[:30], i[:30], 10)) with x and i
        # split 4 ways over `data` of a 4x2 mesh returns wrong sums; 4x1, 2x2, 8x1 and 2x4 are right.)
        weight[:n] = 1
        self._host = {"w": w, "x": x, "weight": weight}
        self._compiled: Any = None
        # Static facts the chunk programs are written for: the lattice (topology, toroid), and whether
        # examples hold NaN (missing values; kept in the placed examples, split in the program).
        self.lattice = (problem.config.topology, bool(problem.config.toroid))
        self.missing = bool(np.isnan(problem.data).any())
        units, samples = self._plan_sizes()
        self.plan = fused_plan.choose(
            self.devices[0].platform, units, problem.features, samples, problem.dtype.itemsize
        )
        # The radii, one block of iterations at a time (replicated: see device_schedule).
        self.sched = DeviceSchedule(problem, self._place, ("sx", "sy"))
        self._place_all()

    @property
    def _args(self) -> tuple[Any, ...]:
        """The chunk program's arguments after ``(w, first, count)``: examples, weights, the block's radii."""
        return (*self._data_args, self.sched.sx, self.sched.sy)

    def _plan_sizes(self) -> tuple[int, int]:
        """(units, examples) one device searches: the whole map, its block of examples."""
        return self._host["w"].shape[0] * self.p.width, self._host["x"].shape[0] // self.layout.data

    # placement ------------------------------------------------------------------
    def _sharding(self, key: str) -> Any:
        spec = {"w": P("map", None, None), "x": P("data", None), "weight": P("data")}.get(key, P())
        return NamedSharding(self.mesh, spec)

    def _place(self, key: str, host: np.ndarray) -> Any:
        # make_array_from_callback places only this process's pieces: the same code runs multi-host.
        return jax.make_array_from_callback(host.shape, self._sharding(key), lambda idx: host[idx])

    def _place_all(self) -> None:
        self.w = self._place("w", self._host["w"])
        self._data_args = tuple(self._place(k, self._host[k]) for k in ("x", "weight"))

    def _scalar(self, v: int) -> Any:
        return self._place("scalar", np.asarray(v, np.int32))

    # the Trainer contract -----------------------------------------------------------
    def _jitted(self) -> Any:
        raise NotImplementedError

    def _chunk_args(self) -> tuple[Any, ...]:
        return (self.w, self._scalar(0), self._scalar(0), *self._args)

    def traces(self) -> dict[str, Any]:
        """The chunk program, traced for this trainer's placed arguments (nothing lowered or compiled)."""
        return {"chunk": self._jitted().trace(*self._chunk_args())}

    def programs(self) -> dict[str, Any]:
        """The chunk program, lowered for this trainer's placed arguments (nothing compiled)."""
        return {k: t.lower() for k, t in self.traces().items()}

    def warmup(self) -> None:
        # Ahead-of-time: one compilation, whose HLO describe() reads; run() can then never recompile.
        first, count = self._scalar(0), self._scalar(0)
        self._compiled = self.programs()["chunk"].compile()
        w = self._copy_w()
        self._compiled(w, first, count, *self._args).block_until_ready()  # zero epochs: state unchanged

    def _copy_w(self) -> Any:
        """A fresh placement of the initial map (from the host: copying on the device would compile)."""
        return self._place("w", self._host["w"])

    def run(self, first: int, count: int) -> None:
        for local, n in self.sched.segments(first, count):
            self.w = self._compiled(self.w, self._scalar(local), self._scalar(n), *self._args)
            self.w.block_until_ready()

    def get_map(self) -> np.ndarray:
        return self._gather(self.w)[: self.p.height].copy()

    def _gather(self, a: Any) -> np.ndarray:
        if a.is_fully_addressable:
            return np.asarray(a)
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(a, tiled=True))

    def describe(self) -> dict[str, Any]:
        """The collectives of the compiled program, bytes per epoch, the placement, the kernel plan, the memory.

        ``memory_compiled_bytes`` is XLA's figure for the program on one device.
        """
        colls = hlo.collectives(self._compiled.as_text(), devices=self.layout.devices)
        out = hlo.summary(colls, self.layout.devices)
        out["kernel_plan"] = str(self.plan)
        out["memory_compiled_bytes"] = jax_runtime.compiled_bytes(self._compiled)
        p = self.p
        out["sharding"] = sharding.describe(
            self.layout,
            height=p.height,
            width=p.width,
            features=p.features,
            samples=p.samples,
            itemsize=p.dtype.itemsize,
            devices=[{"id": int(d.id), "kind": str(d.device_kind)} for d in self.devices],
        )
        return out

    def close(self) -> None:
        self.sched.close()
        for a in (self.w, *getattr(self, "_data_args", ())):
            if a is not None and not a.is_deleted():
                a.delete()
        self.w, self._data_args, self._compiled = None, (), None
