"""``jax-pmap-batch``: data-parallel with ``jax.pmap`` and ``lax.psum``, as the pmap tutorials do."""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.fused_plan import KernelPlan
from som_studio.core.mesh import NamedSharding, P, ShardedTrainer
from som_studio.core.sharded_epoch import (
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

jax = jax_runtime.jax()
jnp = jax.numpy
lax = jax.lax


def chunk_program(height: int, plan: KernelPlan, lattice=RECT, missing: bool = False):
    """The pure per-device chunk program: local winners over the whole map, sums added across ``data``."""

    def epochs(w, first, count, x, weight, sx, sy):
        hp, wd, d = w.shape
        dt = w.dtype
        ys, xs = jnp.arange(hp, dtype=dt), jnp.arange(wd, dtype=dt)
        valid = jnp.repeat(jnp.arange(hp) < height, wd)
        rows = jnp.arange(hp, dtype=jnp.int32)
        x, known = split_missing(x, missing)

        def epoch(t, w):
            _, idx = winners(w.reshape(-1, d), x, valid, 0, plan, known)
            s = unit_sums(x, weight, idx, hp * wd, known).reshape(hp, wd, -1)
            s = lax.psum(s, "data")
            if lattice == RECT:
                out = smooth_y(gauss(ys, ys, sy[t], hp), smooth_x(s, gauss(xs, xs, sx[t], wd)))
            else:
                hy = lattice_hy(rows, rows, sy[t], height, lattice, dt)
                out = pick(smooth_y(hy, lattice_x(s, rows, sx[t], lattice)), rows, lattice)
            return update(w, out)

        return lax.fori_loop(first, first + count, epoch, w)

    return epochs


class JaxPmapBatch(ShardedTrainer):
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
        self._data_args = (self._stacked(h["x"]), self._stacked(h["weight"]))

    def _copy_w(self) -> Any:
        # One copy of the map per device: the replicated parameters of the pmap tutorials.
        return self._stacked(np.concatenate([self._host["w"]] * self.layout.data))

    def _scalar(self, v: int) -> Any:
        return np.int32(v)

    def _jitted(self) -> Any:
        epochs = chunk_program(self.p.height, self.plan, self.lattice, self.missing)
        return jax.pmap(
            epochs, axis_name="data", in_axes=(0, None, None, 0, 0, None, None), devices=self.devices, donate_argnums=0
        )

    def get_map(self) -> np.ndarray:
        # This process's first copy, read as it lies (indexing self.w would compile a slice).
        return np.asarray(self.w.addressable_shards[0].data)[0, : self.p.height].copy()
