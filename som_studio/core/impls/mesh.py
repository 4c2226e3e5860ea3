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
from som_studio.core.plans import fused_plan, sharded_epoch, sharding
from som_studio.core.plans.device_schedule import DeviceSchedule
from som_studio.core.som.problem import Problem

jax = jax_runtime.jax()
P = jax.sharding.PartitionSpec
NamedSharding = jax.sharding.NamedSharding
# A streamed epoch's sums: each device keeps its own examples' sums of its own map rows.
SUMS = P("data", "map", None, None)


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
        w = np.zeros((hp, problem.width, problem.features), dt)
        w[:h] = problem.init_map
        self._host = {"w": w}
        self.stream = problem.stream
        if self.stream is None:
            np_ = sharding.padded(n, self.layout.data)
            x = np.zeros((np_, problem.features), dt)
            x[:n] = problem.data
            weight = np.zeros(np_, dt)
            # Padded examples weigh nothing. (Weights, not slicing them off inside the program: with
            # jax 0.12.0.1 on the CPU, jit(lambda x, i: segment_sum(x[:30], i[:30], 10)) with x and i
            # split 4 ways over `data` of a 4x2 mesh returns wrong sums; 4x1, 2x2, 8x1 and 2x4 are right.)
            weight[:n] = 1
            self._host.update(x=x, weight=weight)
            self._examples = np_
        else:
            self._batches = StreamBatches(self.mesh, self.stream, problem.features, dt)
            self._examples = self._batches.rows
        self._compiled: Any = None
        self._stream_programs: tuple[Any, Any] | None = None
        self._sums: Any = None
        # Static facts the chunk programs are written for: the lattice (topology, toroid), and whether
        # examples hold NaN (missing values; kept in the placed examples, split in the program).
        self.lattice = (problem.config.topology, bool(problem.config.toroid))
        self.missing = problem.missing
        units, samples = self._plan_sizes()
        # A sharded epoch makes its own per-unit sums: the plan is chosen for its search alone.
        self.plan = fused_plan.choose(
            self.devices[0].platform, units, problem.features, samples, problem.dtype.itemsize, sums=False
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
        return self._host["w"].shape[0] * self.p.width, self._examples // self.layout.data

    # placement ------------------------------------------------------------------
    def _sharding(self, key: str) -> Any:
        spec = {"w": P("map", None, None), "x": P("data", None), "weight": P("data")}.get(key, P())
        return NamedSharding(self.mesh, spec)

    def _place(self, key: str, host: np.ndarray) -> Any:
        # make_array_from_callback places only this process's pieces: the same code runs multi-host.
        return jax.make_array_from_callback(host.shape, self._sharding(key), lambda idx: host[idx])

    def _place_all(self) -> None:
        self.w = self._place("w", self._host["w"])
        # A streamed run places its examples a batch at a time (add_rows).
        self._data_args = (
            () if self.stream is not None else tuple(self._place(k, self._host[k]) for k in ("x", "weight"))
        )

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

    def chunk_lowered(self) -> Any:
        """The chunk program :meth:`warmup` compiles (a sharded program is traced in every process)."""
        return self.programs()["chunk"]

    def warmup(self) -> None:
        if not self.w.is_fully_addressable and self.w.ndim == 3:  # (pmap's stacked copies are read locally)
            self._gather(self.w)  # compiles the map's gather across processes (get_map) now, not mid-run
        if self.stream is not None:  # a streamed run runs its two batch programs only
            self._streamed()
            return
        # Ahead-of-time: one compilation, whose HLO describe() reads; run() can then never recompile.
        self._compiled = self.chunk_lowered().compile()
        # One epoch on a copy of the map where an epoch is quick, for the loop's kernels XLA compiles when they
        # first run (fused_plan.WARM_EPOCH_MAX_S); else none, which loads the program: the map stays as it was.
        units, samples = self._plan_sizes()
        p = self.p
        predicted = fused_plan.predict(
            self.plan, units, p.features, samples, p.dtype.itemsize, self.devices[0].platform, sums=False
        )
        local, n = next(iter(self.sched.segments(0, 1))) if predicted <= fused_plan.WARM_EPOCH_MAX_S else (0, 0)
        self._compiled(self._copy_w(), self._scalar(local), self._scalar(n), *self._args).block_until_ready()

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

        ``memory_compiled_bytes`` is XLA's figure for the program on one device. A streamed run's are its
        two programs' (a batch's sums, the epoch's update): ``per_epoch`` marks the update's collectives,
        and ``bytes_per_call`` is what one batch moves; the larger program's memory.
        """
        if self.stream is not None:
            add, end = self._streamed()
            colls = [
                *(dict(c, per_epoch=False) for c in hlo.collectives(add.as_text(), devices=self.layout.devices)),
                *(dict(c, per_epoch=True) for c in hlo.collectives(end.as_text(), devices=self.layout.devices)),
            ]
            need = [jax_runtime.compiled_bytes(add), jax_runtime.compiled_bytes(end)]
            memory = max(need) if None not in need else None  # type: ignore[type-var]
        else:
            colls = hlo.collectives(self._compiled.as_text(), devices=self.layout.devices)
            memory = jax_runtime.compiled_bytes(self._compiled)
        out = hlo.summary(colls, self.layout.devices)
        out["kernel_plan"] = str(self.plan)
        out["memory_compiled_bytes"] = memory
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

    # -- an epoch in pieces (protocol.EpochSums): a streamed run's batches ------------------------
    def _stream_plan(self) -> Any:
        """The winner search of a streamed batch: the chunk program's (``None``: the whole distance matrix)."""
        return self.plan

    def _streamed(self) -> tuple[Any, Any]:
        """The two programs of a streamed epoch, compiled once: add a batch's sums on the devices, update."""
        if self._stream_programs is None:
            p, lay = self.p, self.layout
            hp = self._host["w"].shape[0]
            acc = np.float64 if p.dtype.itemsize < 8 else p.dtype
            add = jax.shard_map(
                sharded_epoch.stream_add_program(p.height, hp // lay.map, lay.map, self._stream_plan(), self.missing),
                mesh=self.mesh,
                in_specs=(P("map", None, None), SUMS, P("data", None), P("data")),
                out_specs=SUMS,
            )
            spec = jax.ShapeDtypeStruct
            sums = self._sums_spec(acc)
            rows = self._batches.rows
            block = self.sched.sx.shape
            add_c = (
                jax.jit(add, donate_argnums=1)
                .lower(
                    spec(self._host["w"].shape, p.dtype, sharding=self._sharding("w")),
                    sums,
                    spec((rows, p.features), p.dtype, sharding=self._sharding("x")),
                    spec((rows,), p.dtype, sharding=self._sharding("weight")),
                )
                .compile()
            )
            end_c = (
                jax.jit(
                    sharded_epoch.stream_update_program(p.height, self.lattice),
                    out_shardings=self._sharding("w"),
                    donate_argnums=0,
                )
                .lower(
                    spec(self._host["w"].shape, p.dtype, sharding=self._sharding("w")),
                    sums,
                    spec(block, p.dtype, sharding=self._sharding("scalar")),
                    spec(block, p.dtype, sharding=self._sharding("scalar")),
                    spec((), np.int32, sharding=self._sharding("scalar")),
                )
                .compile()
            )
            self._stream_programs = (add_c, end_c)
        programs: tuple[Any, Any] = self._stream_programs
        return programs

    def _sums_spec(self, dtype: Any) -> Any:
        p, lay = self.p, self.layout
        k = 2 * p.features if self.missing else p.features + 1
        shape = (lay.data, self._host["w"].shape[0], p.width, k)
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(self.mesh, SUMS))

    @property
    def batches_per_pass(self) -> int:
        """Batches every process adds in each pass, whatever its share's rows (they enter each program together)."""
        return int(self._batches.per_pass)

    def begin_epoch(self, iteration: int) -> None:
        """Start an epoch's sums: zeros on every device (float64 for float32 runs)."""
        spec = self._sums_spec(np.float64 if self.p.dtype.itemsize < 8 else self.p.dtype)
        self._sums = jax.make_array_from_callback(
            spec.shape, spec.sharding, lambda idx: np.zeros(spec.shape, spec.dtype)[idx]
        )

    def add_rows(self, rows: np.ndarray) -> None:
        """Add this process's batch (n <= batch rows, D; NaN: missing; n may be 0) to the sums on the devices."""
        add = self._streamed()[0]
        x, weight = self._batches.place(rows)
        # One batch in flight, as jax-fused-batch: the reader decodes the next meanwhile.
        self._sums.block_until_ready()
        self._sums = add(self.w, self._sums, x, weight)

    def epoch_sums(self) -> dict[str, np.ndarray]:
        return {"sums": self._gather(self._sums)}

    def set_epoch_sums(self, sums: dict[str, np.ndarray]) -> None:
        host = np.asarray(sums["sums"], dtype=self._sums.dtype)
        self._sums = jax.make_array_from_callback(host.shape, self._sums.sharding, lambda idx: host[idx])

    def end_epoch(self, iteration: int) -> None:
        """The map after the epoch: every device's sums added up, smoothed by iteration ``iteration``'s radii."""
        end = self._streamed()[1]
        index, t = divmod(iteration, self.p.block_length)
        self.sched.use(index)
        self.w = end(self.w, self._sums, self.sched.sx, self.sched.sy, self._scalar(t))
        self._sums = None

    def close(self) -> None:
        self.sched.close()
        self._stream_programs = None
        for a in (self.w, *getattr(self, "_data_args", ())):
            if a is not None and not a.is_deleted():
                a.delete()
        self.w, self._data_args, self._compiled = None, (), None


class StreamBatches:
    """A streamed run's batches placed over the ``data`` axis of the mesh, whatever the processes.

    Each process reads its own share of the source in batches of ``stream.batch_rows`` rows and hands
    them to :meth:`place`, which gives the global batch ``(x, weight)``: where every block of the
    ``data`` axis lies on one process's devices, each process places only its own rows
    (``make_array_from_process_local_data``: nothing crosses between processes); otherwise (the map
    axis spans processes) the processes' batches are gathered first, so every device sees the whole
    global batch. Padding rows, to fill a short batch or a share with fewer batches than another's,
    weigh 0: the sums stay exact.
    """

    def __init__(self, mesh: Any, stream: Any, features: int, dtype: Any) -> None:
        self.mesh, self.features, self.dtype = mesh, features, np.dtype(dtype)
        self.batch = int(stream.batch_rows)
        count = stream.share[1]
        self.processes = count
        data = mesh.devices.shape[0]
        owners = [{d.process_index for d in mesh.devices[i]} for i in range(data)]
        per = [sum(1 for o in owners if o == {q}) for q in range(count)]
        # Each process's rows go to its own devices when each data block is one process's and all hold as many.
        self.local = all(len(o) == 1 for o in owners) and len(set(per)) == 1 and per[0] * count == data
        if self.local:
            self.local_rows = sharding.padded(self.batch, data // count)
            self.rows = self.local_rows * count
        else:
            self.local_rows = self.batch
            self.rows = sharding.padded(self.batch * count, data)
        source = stream.source
        self.per_pass = max(-(-source.share_rows(q, count) // self.batch) for q in range(count))
        self._x_sharding = NamedSharding(mesh, P("data", None))
        self._w_sharding = NamedSharding(mesh, P("data"))

    def place(self, rows: np.ndarray) -> tuple[Any, Any]:
        """The global batch of which ``rows`` (n <= batch rows, D) are this process's part."""
        n = rows.shape[0]
        x = np.zeros((self.local_rows, self.features), self.dtype)
        x[:n] = rows
        weight = np.zeros(self.local_rows, self.dtype)
        weight[:n] = 1
        if self.local:
            return (
                jax.make_array_from_process_local_data(self._x_sharding, x, (self.rows, self.features)),
                jax.make_array_from_process_local_data(self._w_sharding, weight, (self.rows,)),
            )
        if self.processes > 1:
            from jax.experimental import multihost_utils

            x = np.asarray(multihost_utils.process_allgather(x)).reshape(-1, self.features)
            weight = np.asarray(multihost_utils.process_allgather(weight)).reshape(-1)
        gx = np.zeros((self.rows, self.features), self.dtype)
        gx[: x.shape[0]] = x
        gw = np.zeros(self.rows, self.dtype)
        gw[: weight.shape[0]] = weight
        return (
            jax.make_array_from_callback(gx.shape, self._x_sharding, lambda idx: gx[idx]),
            jax.make_array_from_callback(gw.shape, self._w_sharding, lambda idx: gw[idx]),
        )
