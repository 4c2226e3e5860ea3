"""``jax-shardmap-batch``: an explicit per-device program with ``jax.shard_map`` on the data x map mesh."""

from __future__ import annotations

from typing import Any

from som_studio.core import jax_runtime
from som_studio.core.impls.mesh import P, ShardedTrainer
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.sharded_epoch import (
    NO_UNIT,
    RECT,
    gauss,
    lattice_hy,
    lattice_x,
    pick,
    smooth_x,
    smooth_y,
    split_missing,
    unit_sums,
    update,
    winners,
)
from som_studio.core.som.problem import Problem

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


# How jax-shardmap-batch contracts the rows (Hy) when the map is split by rows.
SMOOTHING = ("all-gather", "psum-scatter", "ring", "replicated-sums")


def chunk_program(
    height: int, hl: int, nmap: int, smoothing: str, plan: KernelPlan, lattice=RECT, missing: bool = False
):
    """The pure per-device chunk program (for ``shard_map``): ``hl`` local rows of ``nmap`` blocks.

    See :class:`JaxShardmapBatch` for what travels where under each ``smoothing``. ``lattice``
    (topology, toroid) other than a planar rect map smooths with the pieces of
    :mod:`~som_studio.core.plans.sharded_epoch` (a hex map carries two column-smoothed halves through
    the same exchanges); ``missing``: examples may hold NaN.
    """

    def local_epochs(w, first, count, x, weight, sx, sy):
        _, wd, d = w.shape
        dt = w.dtype
        j = lax.axis_index("map")
        row0 = j * hl
        xs = jnp.arange(wd, dtype=dt)
        valid = jnp.repeat(row0 + jnp.arange(hl, dtype=jnp.int32) < height, wd)
        rows_l = row0 + jnp.arange(hl, dtype=jnp.int32)
        rows = jnp.arange(hl * nmap, dtype=jnp.int32)
        x, known = split_missing(x, missing)
        plain = lattice == RECT

        def hy(targets, sources, t):
            # The rows' neighbourhood between global rows (int32 indices, as float coordinates for gauss).
            if plain:
                return gauss(targets.astype(dt), sources.astype(dt), sy[t], hl * nmap)
            return lattice_hy(targets, sources, sy[t], height, lattice, dt)

        def sx_stage(s, rows_of_s, t):
            return smooth_x(s, gauss(xs, xs, sx[t], wd)) if plain else lattice_x(s, rows_of_s, sx[t], lattice)

        def epoch(t, w):
            dmin_l, idx_l = winners(w.reshape(-1, d), x, valid, row0 * wd, plan, known)
            dmin = lax.pmin(dmin_l, "map")
            idx = lax.pmin(jnp.where(dmin_l == dmin, idx_l, NO_UNIT), "map")
            if smoothing == "replicated-sums":
                s = unit_sums(x, weight, idx, hl * nmap * wd, known).reshape(hl * nmap, wd, -1)
                t_all = sx_stage(lax.psum(s, "data"), rows, t)
                return update(w, pick(smooth_y(hy(rows_l, rows, t), t_all), rows_l, lattice))
            s = unit_sums(x, weight, idx - row0 * wd, hl * wd, known).reshape(hl, wd, -1)
            s = lax.psum(s, "data")
            t_l = sx_stage(s, rows_l, t)
            if smoothing == "all-gather":
                t_all = lax.all_gather(t_l, "map", axis=0, tiled=True)
                out = smooth_y(hy(rows_l, rows, t), t_all)
            elif smoothing == "psum-scatter":
                part = smooth_y(hy(rows, rows_l, t), t_l)
                out = lax.psum_scatter(part, "map", scatter_dimension=0, tiled=True)
            else:  # ring: after k shifts a device holds block (j - k) mod nmap
                out = smooth_y(hy(rows_l, rows_l, t), t_l)
                blk = t_l
                for k in range(1, nmap):
                    blk = lax.ppermute(blk, "map", [(a, (a + 1) % nmap) for a in range(nmap)])
                    src0 = ((j - k) % nmap) * hl
                    out = out + smooth_y(hy(rows_l, src0 + jnp.arange(hl, dtype=jnp.int32), t), blk)
            return update(w, pick(out, rows_l, lattice))

        return lax.fori_loop(first, first + count, epoch, w)

    return local_epochs


class JaxShardmapBatch(ShardedTrainer):
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

    def _plan_sizes(self) -> tuple[int, int]:
        # One device searches its own rows only.
        rows = self._host["w"].shape[0] // self.layout.map
        return rows * self.p.width, self._examples // self.layout.data

    def _jitted(self) -> Any:
        fn = jax.shard_map(
            chunk_program(
                self.p.height,
                self._host["w"].shape[0] // self.layout.map,
                self.layout.map,
                self.smoothing,
                self.plan,
                self.lattice,
                self.missing,
            ),
            mesh=self.mesh,
            in_specs=(P("map", None, None), P(), P(), P("data", None), P("data"), P(), P()),
            out_specs=P("map", None, None),
        )
        return jax.jit(fn, donate_argnums=0)

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["smoothing"] = self.smoothing
        return out
