"""``jax-pmap-batch``: data-parallel with ``jax.pmap`` and ``lax.psum``, as the pmap tutorials do."""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.impls.mesh import NamedSharding, P, ShardedTrainer
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.sharded_epoch import RECT, epochs_program

jax = jax_runtime.jax()
lax = jax.lax


def chunk_program(height: int, plan: KernelPlan, lattice=RECT, missing: bool = False):
    """The pure per-device chunk program: local winners over the whole map, sums added across ``data``."""
    return epochs_program(height, plan, lattice, missing, reduce=lambda s: lax.psum(s, "data"))


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

    # A streamed run's epoch is the pieces every sharded implementation shares (its map replicated, not
    # stacked): pmap's program is the in-memory chunk's.
    def _place_all(self) -> None:
        if self.stream is not None:
            super()._place_all()
            return
        h = self._host
        self.w = self._copy_w()
        self._data_args = (self._stacked(h["x"]), self._stacked(h["weight"]))

    def _copy_w(self) -> Any:
        if self.stream is not None:
            return super()._copy_w()
        # One copy of the map per device: the replicated parameters of the pmap tutorials.
        return self._stacked(np.concatenate([self._host["w"]] * self.layout.data))

    def _scalar(self, v: int) -> Any:
        return np.int32(v)

    def _jitted(self) -> Any:
        epochs = chunk_program(self.p.height, self.plan, self.lattice, self.missing)
        return jax.pmap(
            epochs, axis_name="data", in_axes=(0, None, None, 0, 0, None, None), devices=self.devices, donate_argnums=0
        )

    # pmap'd functions lower without a separate trace: the inside of a run times the two together.
    traces = None  # type: ignore[assignment]

    def programs(self) -> dict[str, Any]:
        """The chunk program, lowered for this trainer's placed arguments (nothing compiled)."""
        return {"chunk": self._jitted().lower(*self._chunk_args())}

    def get_map(self) -> np.ndarray:
        if self.stream is not None:
            return super().get_map()
        # This process's first copy, read as it lies (indexing self.w would compile a slice).
        return np.asarray(self.w.addressable_shards[0].data)[0, : self.p.height].copy()
