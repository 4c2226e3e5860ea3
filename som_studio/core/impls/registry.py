"""The registry of SOM implementations.

Everything above this module (session, CLI, app, reports) reaches
implementations only through :func:`get` and :func:`all_implementations`, and
never special-cases a name. New implementations are added with :func:`register`.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from som_studio.config import Refusal
from som_studio.core.impls import memory
from som_studio.core.impls.protocol import Implementation
from som_studio.i18n import N_, _
from som_studio.run_settings import Topology

_REGISTRY: dict[str, Implementation] = {}
_BUILTIN: frozenset[str] = frozenset()  # the ladder below, set once it is registered


class UnknownImplementation(KeyError):
    """No implementation is registered as ``name``; :attr:`refusal` says so as a value."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name

    @property
    def refusal(self) -> Refusal:
        if self.name.endswith(".py"):  # a file of the user's, its class not named
            named = [f"{self.name}:{c}" for c in _file_classes(self.name)] or [f"{self.name}:CLASS"]
            if not os.path.isfile(os.path.expanduser(self.name)):
                text = _("{path}: no such file").format(path=self.name)
            elif len(named) > 1:
                text = _("{name}: name the class in it too, one of {choices}").format(
                    name=self.name, choices=", ".join(named)
                )
            else:
                text = _("{name}: name the class in it too, as {example}").format(name=self.name, example=named[0])
            return Refusal("impl", text)
        return Refusal(
            "impl",
            _("unknown implementation {name!r}; choose from {choices}").format(
                name=self.name, choices=", ".join(names())
            ),
        )

    def __str__(self) -> str:
        return str(self.refusal)


def _file_classes(path: str) -> list[str]:
    """The classes a Python file defines at its top level, in order, read without running it (none when it cannot
    be read or parsed); a class it imports is not one of them."""
    try:
        tree = ast.parse(Path(path).expanduser().read_bytes())
    except (OSError, SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


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


def backend(name: str) -> str | None:
    """``name``'s backend (``numpy``, ``jax``), ``None`` for a name not registered here (a user's file)."""
    impl = _REGISTRY.get(name)
    return impl.backend if impl is not None else None


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
        description=N_(
            "The starting point: the playbook's NumPy loop, one example at a time, each step moving the whole map "
            "towards it. Technically: a full distance search for the best unit, then a full-map update weighted by "
            "a separable Gaussian neighbourhood"
        ),
        factory="som_studio.core.impls.numpy_som:NumpyOnline",
        estimate=memory.numpy_online,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="numpy-batch",
        kind="batch",
        backend="numpy",
        description=N_(
            "The batch SOM in NumPy: each epoch matches every example against the same map, then sets each unit "
            "to the weighted mean of its examples, so far fewer passes are needed than online. Technically: the "
            "playbook's per-example loop; each best unit's neighbourhood is the separable outer product, computed "
            "when first needed in an epoch (no M x M cache); sums in float64"
        ),
        factory="som_studio.core.impls.numpy_som:NumpyBatch",
        estimate=memory.numpy_batch,
        work="batch-per-example",
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-naive-online",
        kind="online",
        backend="jax",
        description=N_(
            "The NumPy online loop with jax.numpy swapped in and nothing else changed: every operation becomes "
            "its own call to the device, so it is slower than NumPy on small maps. Technically: eager execution, "
            "one dispatch per operation per step"
        ),
        factory="som_studio.core.impls.jax_ladder:JaxNaiveOnline",
        estimate=memory.jax_online,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-jit-online",
        kind="online",
        backend="jax",
        description=N_(
            "The same online step, compiled once with jax.jit: its operations run as one program instead of one "
            "call each, which removes most of the overhead per operation. Technically: one dispatch per step; "
            "Python still loops over steps"
        ),
        factory="som_studio.core.impls.jax_ladder:JaxJitOnline",
        estimate=memory.jax_online,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-vmap-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "The batch epoch compiled with jax.jit, every example's best unit found at once with jax.vmap instead "
            "of one example at a time: one call per epoch does the NumPy loop's work. Technically: vmap over "
            "examples builds an N x M x D intermediate; Python loops over epochs"
        ),
        factory="som_studio.core.impls.jax_ladder:JaxVmapBatch",
        estimate=memory.jax_vmap_batch,
        work="batch-per-example",
        topologies=tuple(Topology),
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
            "A whole chunk of epochs becomes one compiled program, and the epoch is rewritten so it never builds "
            "the large N x M x D intermediate: far less memory traffic, and one call per chunk instead of one per "
            "epoch. Technically: a jitted fori_loop per chunk; an exact best-unit search whose plan a cost model "
            "picks for the shape and the device (one product ranks every unit, the direct distance settles the "
            "examples near a tie), per-unit sums, separable neighbourhood Hy @ S @ Hx^T; map donated"
        ),
        factory="som_studio.core.impls.jax_fused:FusedBatch",
        estimate=memory.jax_fused_batch,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-scan-online",
        kind="online",
        backend="jax",
        description=N_(
            "The loop over steps moves inside the compiled program too: a whole chunk of steps is one call, so "
            "Python and dispatch costs are paid once per chunk, not once per step. Technically: a jitted "
            "fori_loop per chunk, first and count traced (no recompiles); map donated"
        ),
        factory="som_studio.core.impls.jax_scan_online:ScanOnline",
        estimate=memory.jax_scan_online,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)

# -- the sharded batch implementations --------------------------------------------
register(
    Implementation(
        name="jax-pmap-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "The batch epoch spread over several devices, the examples split between them: each device sums its "
            "share and the sums are added, so each device does a fraction of the work. Technically: jax.pmap + "
            "lax.psum, as the pmap tutorials do; the map replicated on every device (layouts DATAx1 only). pmap "
            "is in maintenance mode in current JAX and is built on shard_map"
        ),
        factory="som_studio.core.impls.jax_pmap:JaxPmapBatch",
        estimate=memory.jax_pmap_batch,
        shards=True,
        map_axis=False,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-jit-sharded-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "The one-device program unchanged, its inputs placed across devices: the compiler splits the work and "
            "chooses the communication itself, with no change to the code. Technically: jit with NamedSharding "
            "over the data x map mesh (automatic parallelism)"
        ),
        factory="som_studio.core.impls.jax_jit_sharded:JaxJitShardedBatch",
        estimate=memory.jax_jit_sharded_batch,
        shards=True,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
register(
    Implementation(
        name="jax-shardmap-batch",
        kind="batch",
        backend="jax",
        description=N_(
            "Each device runs an explicit program on its share of the examples and of the map, and the code says "
            "exactly what is exchanged, so the map can be larger than one device holds. Technically: "
            "jax.shard_map over the data x map mesh: local winner search on the local map rows, global best match "
            "across map, sums reduced across data, separable smoothing (no M x M matrix); for maps larger than "
            "one device, rows pass around a ring"
        ),
        factory="som_studio.core.impls.jax_shardmap:JaxShardmapBatch",
        estimate=memory.jax_shardmap_batch,
        shards=True,
        topologies=tuple(Topology),
        toroid=True,
        missing_values=True,
        streams=True,
    )
)
_BUILTIN = frozenset(_REGISTRY)
