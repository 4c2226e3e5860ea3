"""The registry of SOM implementations.

Everything above this module (session, CLI, app, reports) reaches
implementations only through :func:`get` and :func:`all_implementations`, and
never special-cases a name. New implementations are added with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from som_studio.config import Refusal
from som_studio.core import memory
from som_studio.core.protocol import Implementation
from som_studio.i18n import N_, _

_REGISTRY: dict[str, Implementation] = {}
_BUILTIN: frozenset[str] = frozenset()  # the ladder below, set once it is registered


class UnknownImplementation(KeyError):
    """No implementation is registered as ``name``; :attr:`refusal` says so as a value."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    @property
    def refusal(self) -> Refusal:
        return Refusal(
            "impl",
            _("unknown implementation {name!r}; choose from {choices}").format(
                name=self.name, choices=", ".join(names())
            ),
        )

    def __str__(self) -> str:
        return str(self.refusal)


def register(impl: Implementation) -> Implementation:
    if impl.name in _REGISTRY:
        raise ValueError(f"implementation {impl.name!r} is already registered")
    _REGISTRY[impl.name] = impl
    return impl


def unregister(name: str) -> Implementation:
    """Remove a registered implementation (one registered for a while, e.g. by a test)."""
    if name in _BUILTIN:
        raise ValueError(f"implementation {name!r} is built in")
    return _REGISTRY.pop(name)


@contextmanager
def registered(*impls: Implementation) -> Iterator[tuple[Implementation, ...]]:
    """Register ``impls`` for the ``with`` block only (tests inject fakes this way, in any process)."""
    done: list[str] = []
    try:
        for impl in impls:
            register(impl)
            done.append(impl.name)
        yield impls
    finally:
        for name in done:
            _REGISTRY.pop(name, None)


def is_builtin(name: str) -> bool:
    """Whether every process has ``name`` registered on import (else it was registered at run time)."""
    return name in _BUILTIN


def get(name: str) -> Implementation:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownImplementation(name) from None


def all_implementations() -> list[Implementation]:
    return list(_REGISTRY.values())


def names() -> list[str]:
    return list(_REGISTRY)


# -- the playbook's ladder --------------------------------------------------------
register(
    Implementation(
        name="numpy-online",
        kind="online",
        backend="numpy",
        description=N_("NumPy reference, online: one example per step, full-map update (the playbook's loop)"),
        factory="som_studio.core.numpy_som:NumpyOnline",
        estimate=memory.numpy_online,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="numpy-batch",
        kind="batch",
        backend="numpy",
        description=N_(
            "NumPy reference, batch: the playbook's per-example loop; each BMU's neighbourhood is the "
            "separable outer product, computed when first needed in an epoch (no M x M cache)"
        ),
        factory="som_studio.core.numpy_som:NumpyBatch",
        estimate=memory.numpy_batch,
        work="batch-per-example",
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-naive-online",
        kind="online",
        backend="jax",
        description=N_("The NumPy online loop with jnp swapped in, run eagerly: one dispatch per operation"),
        factory="som_studio.core.jax_ladder:JaxNaiveOnline",
        estimate=memory.jax_online,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-jit-online",
        kind="online",
        backend="jax",
        description=N_("Online step compiled with jax.jit: one dispatch per step, Python loop over steps"),
        factory="som_studio.core.jax_ladder:JaxJitOnline",
        estimate=memory.jax_online,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-vmap-batch",
        kind="batch",
        backend="jax",
        description=N_("Batch epoch under jit with per-example vmap (N x M x D intermediate), Python loop over epochs"),
        factory="som_studio.core.jax_ladder:JaxVmapBatch",
        estimate=memory.jax_vmap_batch,
        work="batch-per-example",
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)

# -- the fast implementations --------------------------------------------------------
register(
    Implementation(
        name="jax-fused-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "Batch epochs fused into one jitted fori_loop per chunk: blocked exact argmin in sample "
            "chunks, segment-sum per unit, separable neighbourhood Hy @ S @ Hx^T; map donated"
        ),
        factory="som_studio.core.jax_fused:FusedBatch",
        estimate=memory.jax_fused_batch,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-scan-online",
        kind="online",
        backend="jax",
        description=N_("Online steps fused into one jitted fori_loop per chunk (one dispatch per chunk); map donated"),
        factory="som_studio.core.jax_scan_online:ScanOnline",
        estimate=memory.jax_scan_online,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)

# -- the sharded batch implementations --------------------------------------------
register(
    Implementation(
        name="jax-pmap-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "Data-parallel with jax.pmap + lax.psum, as the pmap tutorials do: the map replicated on every "
            "device, per-device sums added (layouts DATAx1 only). pmap is in maintenance mode in current JAX "
            "and is built on shard_map"
        ),
        factory="som_studio.core.jax_pmap:JaxPmapBatch",
        estimate=memory.jax_pmap_batch,
        shards=True,
        map_axis=False,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-jit-sharded-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "The one-device batch program under jit, inputs placed with NamedSharding over the data x map "
            "mesh: the compiler partitions it and chooses the communication (automatic parallelism)"
        ),
        factory="som_studio.core.jax_jit_sharded:JaxJitShardedBatch",
        estimate=memory.jax_jit_sharded_batch,
        shards=True,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
register(
    Implementation(
        name="jax-shardmap-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "Explicit per-device program with jax.shard_map over the data x map mesh: local winner search on "
            "the local map rows, global best match across map, sums reduced across data, separable smoothing "
            "(no M x M matrix); for maps larger than one device, rows pass around a ring"
        ),
        factory="som_studio.core.jax_shardmap:JaxShardmapBatch",
        estimate=memory.jax_shardmap_batch,
        shards=True,
        topologies=("rect", "hex"),
        toroid=True,
        missing_values=True,
    )
)
_BUILTIN = frozenset(_REGISTRY)
