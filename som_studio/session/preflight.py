"""Preflight: every reason a configuration would be refused before it trains, as values.

One function, :func:`preflight`, decides what the session refuses (the
implementation, the kind's count, the precision, the lattice and missing
values, the layout against the devices, the memory), so the session, the CLI,
the app's run form and its comparison queue refuse the same configurations
with the same words. A refusal is a :class:`~som_studio.config.Refusal` (the
field, the reason and an optional remedy, as values); each front end names
the fields its own way (:meth:`Refusal.text`): the CLI with its flags
(``--layout``, ``--cpu-devices 4``), the app with its controls' labels
(``Layout``), and nothing reads a rendered message back.

Checks whose inputs are not known are left out rather than guessed: the layout
against the devices when nobody has asked JAX which devices there are, the
memory when the data's size is not known yet, missing values before the data
is read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from som_studio.config import ConfigError, Refusal, RunConfig, parse_layout
from som_studio.core.impls import memory, registry
from som_studio.core.impls.protocol import Implementation, ProblemSize
from som_studio.i18n import _, format_bytes

__all__ = [
    "CPU_DEVICES",
    "Devices",
    "IterationCounts",
    "Refusal",
    "iteration_counts",
    "memory_need",
    "preflight",
    "problem_size",
]

# The field a remedy changes, for the remedies a refusal can suggest.
CPU_DEVICES = "cpu_devices"


@dataclass(frozen=True)
class Devices:
    """What is known of the devices a run would get.

    ``count`` ``None``: not known (the layout is then only checked for what
    needs no devices). ``memory``: free bytes on the first device and what it
    is called, or ``None`` (host memory is checked instead).
    """

    count: int | None = None
    backend: str | None = None
    processes: int = 1
    memory: tuple[int, str] | None = None

    @classmethod
    def from_jax(cls) -> Devices:
        """What this process's JAX sees (starts JAX)."""
        from som_studio.core import jax_runtime

        jax = jax_runtime.jax()
        dev = jax.devices()[0]
        try:
            stats = dev.memory_stats() or {}
        except Exception:  # a backend without memory statistics
            stats = {}
        mem = None
        if "bytes_limit" in stats:
            mem = (
                int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)),
                _("{device} memory").format(device=dev.device_kind),
            )
        return cls(jax.device_count(), jax.default_backend(), jax.process_count(), mem)

    @classmethod
    def from_info(cls, info: Mapping[str, object] | None, simulated: int | None = None) -> Devices:
        """From a worker's description of its JAX (``session.env.describe``), or the simulated count alone."""
        devs = list(info.get("devices") or []) if info and "error" not in info else []  # type: ignore[call-overload]
        mem = None
        if devs and devs[0].get("memory_limit"):
            free = int(devs[0]["memory_limit"]) - int(devs[0].get("memory_in_use") or 0)
            mem = (free, _("{device} memory").format(device=devs[0].get("kind", "device")))
        if simulated:
            return cls(simulated, "cpu", 1, mem)
        if not devs:
            return cls(None, None, 1, mem)
        return cls(len(devs), str(info.get("backend")) if info else None, 1, mem)


class IterationCounts(TypedDict):
    """The ``steps``/``epochs`` keyword arguments of a :class:`RunConfig`."""

    steps: int | None
    epochs: int | None


def iteration_counts(kind: str, n: int) -> IterationCounts:
    """``steps``/``epochs`` for a :class:`RunConfig` of ``kind``: online runs count steps, batch runs epochs."""
    return {"steps": n if kind == "online" else None, "epochs": n if kind == "batch" else None}


def problem_size(config: RunConfig, samples: int, features: int, missing: bool = False) -> ProblemSize:
    data, map_ = parse_layout(config.layout)
    return ProblemSize(
        height=config.height,
        width=config.width,
        features=features,
        samples=samples,
        iterations=config.iterations,
        itemsize=np.dtype(config.precision).itemsize,
        devices=data * map_,
        map_devices=map_,
        missing=missing,
    )


def memory_need(
    impl: Implementation,
    config: RunConfig,
    samples: int,
    features: int,
    devices: Devices | None = None,
    missing: bool = False,
    maps: int = 1,
) -> tuple[int, int, str]:
    """(bytes needed, bytes available, where) for a valid ``config`` on ``samples`` x ``features`` data
    (``missing``: holding missing values; ``maps``: a sweep's combinations, trained together and
    spread over the devices as :func:`~som_studio.session.sweep.spread` says)."""
    size = problem_size(config, samples, features, missing)
    if devices is not None and devices.backend:
        # The devices' backend picks the kernel plan that runs there, and so the chunk the estimate counts
        # (an accelerator's chunks are bounded by 1 GiB, the CPU's by 16 MiB).
        size = dataclasses.replace(size, backend=devices.backend)
    if maps > 1:
        from som_studio.session.sweep import spread

        count = devices.count if devices is not None and devices.count else 1
        size = dataclasses.replace(size, maps=maps, devices=spread(maps, count), map_devices=1)
    need = impl.estimate(size)
    if impl.backend == "jax" and devices is not None and devices.memory is not None:
        have, where = devices.memory
    else:
        have, where = memory.host_available(), _("host memory")
    return need, have, where


#: A streamed batch's rows are chosen to hold about this many bytes of float64 values: large enough
#: that a batch's dispatch and reading overheads are small, small enough that a few batches in
#: flight (the one trained on, those prefetched) stay far below the memory of any machine.
STREAM_BATCH_BYTES = 32 << 20
#: A table whose loading (:func:`table_bytes`) would take more
#: than this share of the host's available memory is streamed without being asked.
STREAM_SHARE = 0.5


def batch_rows(config: RunConfig, features: int, rows: int) -> int:
    """A streamed run's rows per batch: ``--batch-rows``, else a power of two near
    :data:`STREAM_BATCH_BYTES` of float64 values, at most the data's rows."""
    if config.batch_rows is not None:
        return max(1, min(int(config.batch_rows), rows))
    fit = max(1024, STREAM_BATCH_BYTES // max(8 * features, 1))
    return max(1, min(1 << (fit.bit_length() - 1), rows))


def table_bytes(rows: int, features: int) -> int:
    """The memory a table of ``rows`` x ``features`` may take while it loads and becomes a run's examples: 24 bytes
    a value, above the most measured (a float64 file scaled for a float64 run: 16 for ``.npy``, 17 for Parquet;
    a CSV's chunks and their concatenation 18.5; a float32 ``.npy`` 4.5 unscaled, 8 scaled, for a float32 run)."""
    return 3 * 8 * rows * features


def table_fits(rows: int, features: int) -> bool:
    """Whether a table of ``rows`` x ``features`` loads within :data:`STREAM_SHARE` of the available memory."""
    return table_bytes(rows, features) <= STREAM_SHARE * memory.host_available()


def streamable_refusal(config: RunConfig) -> Refusal | None:
    """Why ``config``'s implementation cannot train from a stream, or ``None`` when it can."""
    try:
        impl = registry.get(config.impl)
    except registry.UnknownImplementation as exc:
        return exc.refusal
    if impl.streams:
        return None
    able = ", ".join(i.name for i in registry.all_implementations() if i.streams)
    return Refusal(
        "stream",
        _("{impl} does not train from a stream; the implementations that do: {able}").format(impl=impl.name, able=able),
    )


def colours_refusal(config: RunConfig) -> Refusal | None:
    """Why ``config``'s random colours cannot be made in host memory, or ``None`` (data from a file, or they fit).

    Checked before they are made, ahead of any implementation's estimate: 2e9 of them ended in a MemoryError's
    traceback."""
    if config.data.path is not None:
        return None
    need, have = 16 * 3 * config.data.samples, memory.host_available()  # made in float64, kept in the run's precision
    if need <= have:
        return None
    return Refusal(
        "samples",
        _("{samples:,} random colours need about {need} to make, but only {have} of host memory is available").format(
            samples=config.data.samples, need=format_bytes(need), have=format_bytes(have)
        ),
    )


def preflight(
    config: RunConfig,
    *,
    data_shape: tuple[int, ...] | None = None,
    devices: Devices | None = None,
    missing: bool = False,
    maps: int = 1,
) -> list[Refusal]:
    """Every refusal the session would raise for ``config``; empty when it would train.

    A configuration that fails validation gets that one refusal (the later
    checks need valid sizes); otherwise precision, lattice (and missing
    values), layout and memory are each checked and every failure listed, in
    that order.

    Parameters
    ----------
    config : the run.
    data_shape : (samples, features) of the training data, when known: checks memory.
    devices : the devices the run would get, when known: checks the layout against them.
    missing : whether the data hold missing values: refused by an implementation that cannot
        train on them; their mask counts in the memory check.
    maps : how many maps train together (a sweep's combinations): the memory check counts them all.
    """
    from som_studio.core.plans import sharding

    try:
        impl = registry.get(config.impl)
    except registry.UnknownImplementation as exc:
        return [exc.refusal]
    try:
        config.validate(impl.kind)
    except ConfigError as exc:
        return [exc.refusal]
    out: list[Refusal] = []
    if config.precision not in impl.precisions:
        out.append(
            Refusal(
                "precision",
                _("{impl} supports {precisions}, not {precision}").format(
                    impl=impl.name, precisions=", ".join(impl.precisions), precision=config.precision
                ),
            )
        )
    lattice = impl.refusal(config.topology, config.toroid, missing)
    if lattice:
        out.append(Refusal("impl", lattice))
    if config.stream:
        cannot = streamable_refusal(config)
        if cannot is not None:
            out.append(cannot)
    if impl.shards:
        try:
            lay = sharding.Layout.parse(config.layout)
            known = devices.count if devices is not None else None
            backend = devices.backend if devices is not None else None
            # Devices not known: only what needs none (a data-parallel map axis) is checked.
            count = known if known is not None else lay.devices
            processes = devices.processes if devices is not None else 1
            sharding.check_layout(
                lay, count, impl=impl.name, map_axis=impl.map_axis, backend=backend, processes=processes
            )
            if known is not None and processes > 1 and lay.devices != known:
                # Every process must hold part of the mesh: each runs the same program on its own devices.
                raise ConfigError(
                    "layout",
                    _(
                        "across {processes} processes a layout must use all {known} global devices "
                        "(e.g. {example}), got {layout}"
                    ).format(processes=processes, known=known, example=f"{known}x1", layout=lay),
                )
        except ConfigError as exc:
            out.append(exc.refusal)
    made = colours_refusal(config)
    if made is not None:
        out.append(made)
    if data_shape is not None:
        samples, features = int(data_shape[0]), int(data_shape[1])
        need, have, where = memory_need(impl, config, samples, features, devices, missing, maps)
        if need > have:
            what = impl.name if maps <= 1 else _("a sweep of {maps} maps with {impl}").format(maps=maps, impl=impl.name)
            out.append(
                Refusal(
                    "memory",
                    _(
                        "{impl} on a {grid} map with {samples:,} x {features} data needs about {need}, "
                        "but only {have} of {where} is available"
                    ).format(
                        impl=what,
                        grid=config.grid,
                        samples=samples,
                        features=features,
                        need=format_bytes(need),
                        have=format_bytes(have),
                        where=where,
                    ),
                )
            )
    return out
