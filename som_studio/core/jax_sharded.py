"""The sharded batch implementations: three ways JAX spreads one SOM over devices.

All three train the batch SOM of :mod:`som_studio.core.problem` (the smallest
squared distance picks the best-matching unit, first in row-major order on
ties; ``W = sum_i h_i x_i / sum_i h_i`` where the total weight exceeds
``MIN_WEIGHT``) with the same epoch, written once as small pure pieces:

1. the winner of each example: ``jax-fused-batch``'s exact blocked search
   (blocks ranked by ``|w|^2 - 2 x.w``, the two best re-ranked by the direct
   ``sum (w - x)^2``), its first smallest direct distance;
2. per-unit sums: each example's (weight x, weight) added to its winner's
   slot (a scatter-add, O(N D), instead of an N x M neighbourhood matrix);
3. separable smoothing ``Hy @ S @ Hx^T`` with the 1-D Gaussians
   ``Hy[y, y'] = exp(-(y-y')^2 / sy^2)`` and ``Hx`` likewise: the M x M
   neighbourhood is never formed;
4. the update where the smoothed weight exceeds ``MIN_WEIGHT``.

Epochs ``first .. first+count-1`` run in one compiled ``fori_loop`` whose
bounds are traced, so the program compiles once (ahead of time, in
:meth:`warmup`) and every chunk reuses it. Uneven sizes are padded: examples
with weight zero (never dropped), map rows masked out of the winner search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core import hlo, jax_runtime, sharding
from som_studio.core.jax_fused import bmus, sq_distances
from som_studio.core.problem import MIN_WEIGHT, Problem

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax
P = jax.sharding.PartitionSpec
NamedSharding = jax.sharding.NamedSharding

_HIGHEST = lax.Precision.HIGHEST  # no TF32 shortcuts: float32 runs must agree with NumPy
_NO_UNIT = np.iinfo(np.int32).max


# -- the epoch, in pieces -----------------------------------------------------------


def _winners(w_flat, x, valid, offset, *, blocked: bool = True):
    """(smallest squared distance, index of the first unit reaching it) per example.

    ``valid`` masks padded units (they are moved to 1e30 in every feature, as
    ``jax-fused-batch`` pads, so they never win); ``offset`` is the global index
    of the first local unit. The distance returned is the reference's direct
    form ``sum_d (w_d - x_d)^2`` (the expanded ``|w|^2 - 2 x.w`` loses the
    nearest unit in float32 late in training), so devices compare exactly what
    one device would.

    ``blocked``: ``jax-fused-batch``'s exact blocked search (:func:`jax_fused.bmus`:
    unit blocks ranked by the expanded form, the two best re-ranked by the
    direct one; the working set stays small), then the winner's distance
    recomputed the same way. Otherwise the whole N x M distance matrix at once,
    which the compiler's partitioner can split by rows (the blocked scan's
    dynamic slices it cannot: it would all-gather the map every epoch).
    """
    wt = jnp.where(valid[None, :], w_flat.T, jnp.asarray(1e30, w_flat.dtype))  # (D, M), feature-major
    if blocked:
        idx = bmus(wt, x)
        dmin = sq_distances(jnp.take(wt, idx, axis=1), x.T)
        return dmin, idx + offset
    dist = sq_distances(wt[:, None, :], x.T[:, :, None])  # (N, M)
    dmin = jnp.min(dist, axis=1)
    # Minimum, then the first index equal to it: the row-major tie rule, and
    # cheaper on the CPU than argmin over wide rows.
    iota = lax.broadcasted_iota(jnp.int32, dist.shape, 1)
    idx = jnp.min(jnp.where(dist == dmin[:, None], iota, _NO_UNIT), axis=1)
    return dmin, idx + offset


def _unit_sums(x, weight, local_idx, units):
    """(units, D+1): per unit, the sum of weight * x and of weight; indices outside are dropped."""
    vals = jnp.concatenate([x * weight[:, None], weight[:, None]], axis=1)
    inside = (local_idx >= 0) & (local_idx < units)
    seg = jnp.where(inside, local_idx, units)
    return jax.ops.segment_sum(vals, seg, num_segments=units + 1)[:units]


def _gauss(a, b, sigma):
    """The 1-D neighbourhood matrix ``exp(-(a_i - b_j)^2 / sigma^2)``."""
    return jnp.exp(-((a[:, None] - b[None, :]) ** 2) / sigma**2)


def _smooth_x(s, hx):
    """Contract the columns: ``(rows, W, K) x (W, W) -> (rows, W, K)``."""
    # Feature-major inside, as jax-fused-batch contracts: the same sums in the same order.
    t = jnp.einsum("kab,xb->kax", jnp.moveaxis(s, 2, 0), hx, precision=_HIGHEST)
    return jnp.moveaxis(t, 0, 2)


def _smooth_y(hy, t):
    """Contract the rows: ``(out_rows, rows) x (rows, W, K) -> (out_rows, W, K)``."""
    out = jnp.einsum("ya,kax->kyx", hy, jnp.moveaxis(t, 2, 0), precision=_HIGHEST)
    return jnp.moveaxis(out, 0, 2)


def _update(w, out):
    """``num / den`` where the total weight exceeds MIN_WEIGHT; elsewhere the old weights."""
    num, den = out[..., :-1], out[..., -1]
    ok = den > jnp.asarray(MIN_WEIGHT, den.dtype)
    return jnp.where(ok[..., None], num / jnp.where(ok, den, 1)[..., None], w)


def full_epochs(w, first, count, x, weight, sx, sy, *, height: int, blocked: bool = True):
    """Epochs on whole arrays (``w`` may have padded rows beyond ``height``): one device's program."""
    hp, wd, d = w.shape
    dt = w.dtype
    ys, xs = jnp.arange(hp, dtype=dt), jnp.arange(wd, dtype=dt)
    valid = jnp.repeat(jnp.arange(hp) < height, wd)

    def epoch(t, w):
        _, idx = _winners(w.reshape(-1, d), x, valid, 0, blocked=blocked)
        s = _unit_sums(x, weight, idx, hp * wd).reshape(hp, wd, d + 1)
        out = _smooth_y(_gauss(ys, ys, sy[t]), _smooth_x(s, _gauss(xs, xs, sx[t])))
        return _update(w, out)

    return lax.fori_loop(first, first + count, epoch, w)


# -- shared driver --------------------------------------------------------------------


class _ShardedTrainer:
    """Places a problem on a layout's devices and runs a compiled epoch loop.

    Subclasses give :meth:`_jitted` (a jitted or pmapped function of
    ``(w, first, count, x, weight, sx, sy)``) and may change how arrays are placed.
    Works across processes: every process holds the same problem and places
    only its own devices' pieces.
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
        self._host = {"w": w, "x": x, "weight": weight, "sx": problem.sigma_x, "sy": problem.sigma_y}
        self._compiled: Any = None
        self._place_all()

    # placement ------------------------------------------------------------------
    def _sharding(self, key: str) -> Any:
        spec = {"w": P("map", None, None), "x": P("data", None), "weight": P("data")}.get(key, P())
        return NamedSharding(self.mesh, spec)

    def _place(self, key: str, host: np.ndarray) -> Any:
        # make_array_from_callback places only this process's pieces: the same code runs multi-host.
        return jax.make_array_from_callback(host.shape, self._sharding(key), lambda idx: host[idx])

    def _place_all(self) -> None:
        self.w = self._place("w", self._host["w"])
        self._args = tuple(self._place(k, self._host[k]) for k in ("x", "weight", "sx", "sy"))

    def _scalar(self, v: int) -> Any:
        return self._place("scalar", np.asarray(v, np.int32))

    # the Trainer contract -----------------------------------------------------------
    def _jitted(self) -> Any:
        raise NotImplementedError

    def warmup(self) -> None:
        # Ahead-of-time: one compilation, whose HLO describe() reads; run() can then never recompile.
        first, count = self._scalar(0), self._scalar(0)
        self._compiled = self._jitted().lower(self.w, first, count, *self._args).compile()
        w = self._copy_w()
        self._compiled(w, first, count, *self._args).block_until_ready()  # zero epochs: state unchanged

    def _copy_w(self) -> Any:
        """A fresh placement of the initial map (from the host: copying on the device would compile)."""
        return self._place("w", self._host["w"])

    def run(self, first: int, count: int) -> None:
        self.w = self._compiled(self.w, self._scalar(first), self._scalar(count), *self._args)
        self.w.block_until_ready()

    def get_map(self) -> np.ndarray:
        return self._gather(self.w)[: self.p.height].copy()

    def _gather(self, a: Any) -> np.ndarray:
        if a.is_fully_addressable:
            return np.asarray(a)
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(a, tiled=True))

    def describe(self) -> dict[str, Any]:
        """The collectives of the compiled program, bytes per epoch, and the placement."""
        colls = hlo.collectives(self._compiled.as_text(), devices=self.layout.devices)
        out = hlo.summary(colls, self.layout.devices)
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
        for a in (self.w, *getattr(self, "_args", ())):
            if a is not None and not a.is_deleted():
                a.delete()
        self.w, self._args, self._compiled = None, (), None


# The two ways jax-jit-sharded-batch writes its one-device epoch (see its docstring).
PROGRAMS = ("blocked", "whole-matrix")


class JaxJitShardedBatch(_ShardedTrainer):
    """``jax-jit-sharded-batch``: the one-device program under ``jit``, inputs placed by ``NamedSharding``.

    Nothing in the program mentions devices: the compiler's partitioner
    (GSPMD / Shardy) splits it following the inputs' and output's shardings
    and inserts the communication itself.

    The program is :func:`full_epochs`, written two ways (``program``):

    * ``"blocked"``: ``jax-fused-batch``'s blocked winner search; on one device,
      or with the data split only, it is exactly ``jax-fused-batch`` (bitwise,
      on one device). With the map split the partitioner cannot split the
      scan's dynamic slices by rows: it all-gathers the codebook and all-reduces
      the candidate blocks every epoch (240x135 on 1x2: ~12 MiB per device).
    * ``"whole-matrix"``: the N x M distance matrix at once, which it splits
      by rows: two all-reduces of N numbers for the winners (~7 KiB), at the
      cost of the whole distance block in memory and, on the CPU, more time.

    The default takes ``"blocked"`` when the map axis is 1, else
    ``"whole-matrix"``; ``bench/scaling.py`` shows both. How a program is written
    decides what automatic parallelism can do with it.
    """

    name = "jax-jit-sharded-batch"

    def __init__(self, problem: Problem, program: str = "auto") -> None:
        if program not in ("auto", *PROGRAMS):
            raise ValueError(f"program must be auto or one of {', '.join(PROGRAMS)}, got {program!r}")
        super().__init__(problem)
        if program == "auto":
            program = "blocked" if self.layout.map == 1 else "whole-matrix"
        self.program = program

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["program"] = self.program
        return out

    def _jitted(self) -> Any:
        h = self.p.height
        program = self.program

        def epochs(w, first, count, x, weight, sx, sy):
            return full_epochs(w, first, count, x, weight, sx, sy, height=h, blocked=program == "blocked")

        keys = ("w", "scalar", "scalar", "x", "weight", "sx", "sy")
        return jax.jit(
            epochs,
            in_shardings=tuple(self._sharding(k) for k in keys),
            out_shardings=self._sharding("w"),
            donate_argnums=0,
        )


# How jax-shardmap-batch contracts the rows (Hy) when the map is split by rows.
SMOOTHING = ("all-gather", "psum-scatter", "ring", "replicated-sums")


class JaxShardmapBatch(_ShardedTrainer):
    """``jax-shardmap-batch``: an explicit per-device program with ``jax.shard_map`` on the data x map mesh.

    Device ``(i, j)`` holds examples block ``i`` and map rows block ``j``. Each
    epoch: distances to the local rows only; the global winner by a reduction
    across ``map`` (smallest distance, then smallest index: the row-major tie
    rule); each device adds its examples into the sums of its own rows; the sums
    are reduced across ``data``; then separable smoothing. ``Hx`` is local
    (columns are not split). ``Hy`` needs every row's sums: ``smoothing``
    chooses how they travel (see :data:`SMOOTHING`; ``"auto"``, the default, is
    the ring when whole-map buffers would not fit a device comfortably, else
    replicated sums when the data axis is 1 and all-gather otherwise, from the
    bytes below and ``bench/scaling.py``, which measures all four side by side):

    * ``"all-gather"`` (default): gather the column-smoothed sums of all rows,
      contract with the local rows of ``Hy``. Each output row is summed in the
      same order as on one device, so results match the single-device program
      most closely. Holds one full (H, W, D+1) buffer per device.
    * ``"psum-scatter"``: each device contracts its rows into every output row,
      then a reduce-scatter sums and splits them. Same bytes; the partial sums
      are added across devices, in a different order.
    * ``"ring"``: blocks pass around the ``map`` axis with ``ppermute``; each
      step adds one block's contribution. Same bytes, but only two blocks are
      held at a time: the variant whose memory per device shrinks with the map
      axis, for maps larger than one device.
    * ``"replicated-sums"``: every device adds its examples into the sums of
      *all* rows (the winners are global after the ``map`` reduction) and the
      full sums are reduced across ``data``; no exchange across ``map`` at all.
      This is what the compiler chooses for ``jax-jit-sharded-batch``. It moves
      ``2 (d-1)/d`` of the full sums per device against ``2 (d-1)/(d m) + (m-1)/m``
      for all-gather (``d``, ``m``: data and map sizes): nothing but the winner
      reduction when ``d = 1`` (240x135 on 1x8: 14 KiB per device and epoch
      against 460 KiB), the same when ``d = 2``, more beyond; and every device
      smooths the columns of all rows, not just its own (on 8 simulated CPU
      devices, 2x2 and 4x2 took 2-3x longer per epoch than all-gather).
    """

    name = "jax-shardmap-batch"

    def __init__(self, problem: Problem, smoothing: str = "auto") -> None:
        if smoothing not in (*SMOOTHING, "auto"):
            raise ValueError(f"smoothing must be auto or one of {', '.join(SMOOTHING)}, got {smoothing!r}")
        super().__init__(problem)
        if smoothing == "auto":
            smoothing = self._auto_smoothing()
        self.smoothing = smoothing

    def _auto_smoothing(self) -> str:
        """Ring when whole-map buffers would crowd a device's memory, else by bytes moved.

        All but the ring hold a few (H, W, D+1) buffers per device; where the
        backend reports its memory and three of them would take over half of
        it, the ring's two row blocks are the way to fit. Otherwise, see the
        class docstring: replicated sums move far fewer bytes when data == 1;
        from data == 2 all-gather moves as few or fewer and smooths only its own rows.
        """
        p = self.p
        full = self._host["w"].shape[0] * p.width * (p.features + 1) * p.dtype.itemsize
        limits = []
        for d in self.devices:
            try:
                limits.append(int((d.memory_stats() or {}).get("bytes_limit", 0)))
            except Exception:  # not every backend reports memory (the CPU does not)
                limits.append(0)
        if self.layout.map > 1 and min(limits) > 0 and 3 * full > min(limits) // 2:
            return "ring"
        return "replicated-sums" if self.layout.data == 1 else "all-gather"

    def _jitted(self) -> Any:
        h, nmap = self.p.height, self.layout.map
        hl = self._host["w"].shape[0] // nmap
        smoothing = self.smoothing

        def local_epochs(w, first, count, x, weight, sx, sy):
            _, wd, d = w.shape
            dt = w.dtype
            j = lax.axis_index("map")
            row0 = j * hl
            ys_l = (row0 + jnp.arange(hl, dtype=jnp.int32)).astype(dt)
            ys = jnp.arange(hl * nmap, dtype=dt)
            xs = jnp.arange(wd, dtype=dt)
            valid = jnp.repeat(row0 + jnp.arange(hl, dtype=jnp.int32) < h, wd)

            def epoch(t, w):
                dmin_l, idx_l = _winners(w.reshape(-1, d), x, valid, row0 * wd)
                dmin = lax.pmin(dmin_l, "map")
                idx = lax.pmin(jnp.where(dmin_l == dmin, idx_l, _NO_UNIT), "map")
                if smoothing == "replicated-sums":
                    s = _unit_sums(x, weight, idx, hl * nmap * wd).reshape(hl * nmap, wd, d + 1)
                    t_all = _smooth_x(lax.psum(s, "data"), _gauss(xs, xs, sx[t]))
                    return _update(w, _smooth_y(_gauss(ys_l, ys, sy[t]), t_all))
                s = _unit_sums(x, weight, idx - row0 * wd, hl * wd).reshape(hl, wd, d + 1)
                s = lax.psum(s, "data")
                t_l = _smooth_x(s, _gauss(xs, xs, sx[t]))
                if smoothing == "all-gather":
                    t_all = lax.all_gather(t_l, "map", axis=0, tiled=True)
                    out = _smooth_y(_gauss(ys_l, ys, sy[t]), t_all)
                elif smoothing == "psum-scatter":
                    part = _smooth_y(_gauss(ys, ys_l, sy[t]), t_l)
                    out = lax.psum_scatter(part, "map", scatter_dimension=0, tiled=True)
                else:  # ring: after k shifts a device holds block (j - k) mod nmap
                    out = _smooth_y(_gauss(ys_l, ys_l, sy[t]), t_l)
                    blk = t_l
                    for k in range(1, nmap):
                        blk = lax.ppermute(blk, "map", [(a, (a + 1) % nmap) for a in range(nmap)])
                        src0 = ((j - k) % nmap) * hl
                        ys_b = (src0 + jnp.arange(hl, dtype=jnp.int32)).astype(dt)
                        out = out + _smooth_y(_gauss(ys_l, ys_b, sy[t]), blk)
                return _update(w, out)

            return lax.fori_loop(first, first + count, epoch, w)

        fn = jax.shard_map(
            local_epochs,
            mesh=self.mesh,
            in_specs=(P("map", None, None), P(), P(), P("data", None), P("data"), P(), P()),
            out_specs=P("map", None, None),
        )
        return jax.jit(fn, donate_argnums=0)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["smoothing"] = self.smoothing
        return out


class JaxPmapBatch(_ShardedTrainer):
    """``jax-pmap-batch``: data-parallel with ``jax.pmap`` and ``lax.psum``, as the pmap tutorials do.

    The map is replicated (one copy per device, a leading device axis); each
    device finds the winners of its block of examples over the whole map and
    sums them; ``psum`` adds the per-device sums; every device then smooths and
    updates its copy identically. ``pmap`` is in maintenance mode in current
    JAX and is implemented on top of ``shard_map``.
    """

    name = "jax-pmap-batch"
    map_axis = False

    def _stacked(self, host: np.ndarray) -> Any:
        """``host`` (n * rows, ...) as (n, rows, ...): one block per device, as pmap takes it."""
        n = self.layout.data
        mesh1 = jax.sharding.Mesh(np.array(self.devices), ("data",))
        blocks = host.reshape(n, -1, *host.shape[1:])
        return jax.make_array_from_callback(blocks.shape, NamedSharding(mesh1, P("data")), lambda idx: blocks[idx])

    def _place_all(self) -> None:
        h = self._host
        self.w = self._copy_w()
        self._args = (
            self._stacked(h["x"]),
            self._stacked(h["weight"]),
            self._place("sx", h["sx"]),
            self._place("sy", h["sy"]),
        )

    def _copy_w(self) -> Any:
        # One copy of the map per device: the replicated parameters of the pmap tutorials.
        return self._stacked(np.concatenate([self._host["w"]] * self.layout.data))

    def _scalar(self, v: int) -> Any:
        return np.int32(v)

    def _jitted(self) -> Any:
        h = self.p.height

        def epochs(w, first, count, x, weight, sx, sy):
            hp, wd, d = w.shape
            dt = w.dtype
            ys, xs = jnp.arange(hp, dtype=dt), jnp.arange(wd, dtype=dt)
            valid = jnp.repeat(jnp.arange(hp) < h, wd)

            def epoch(t, w):
                _, idx = _winners(w.reshape(-1, d), x, valid, 0)
                s = _unit_sums(x, weight, idx, hp * wd).reshape(hp, wd, d + 1)
                s = lax.psum(s, "data")
                out = _smooth_y(_gauss(ys, ys, sy[t]), _smooth_x(s, _gauss(xs, xs, sx[t])))
                return _update(w, out)

            return lax.fori_loop(first, first + count, epoch, w)

        return jax.pmap(
            epochs, axis_name="data", in_axes=(0, None, None, 0, 0, None, None), devices=self.devices, donate_argnums=0
        )

    def get_map(self) -> np.ndarray:
        # This process's first copy, read as it lies (indexing self.w would compile a slice).
        return np.asarray(self.w.addressable_shards[0].data)[0, : self.p.height].copy()
