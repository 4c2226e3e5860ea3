"""How long a configuration will take, from the kept runs of the same problem.

A restored configuration can be a four-minute run one Ctrl+R away:
the run panel says how long it will take before it starts. The estimate is
the most recent kept run of the same problem on the same implementation,
layout and precision (what sets the time of one iteration): its compile time
plus its seconds per iteration (:attr:`RunRecord.mean_s`, what a stopwatch
sees) times this configuration's iterations. No such run: no estimate.

A streamed run with no such kept run gets the estimate of one epoch
(:func:`stream_text`): its arithmetic by the kernel plan's cost model
(:func:`som_studio.core.plans.fused_plan.predict`, the device's assumed
ceilings) and its reading at the rows per second the form's own pass over the
data measured. On an accelerator the reading overlaps the arithmetic, so the
slower of the two sets the pace; on the CPU both take the same cores, so the
estimate adds them, an upper bound: measured in the app here (10^6 x 20 on
24x16, the machine at load ~8 on 2 cores), 1.1 s + 2.2 s predicted against
3.9 s taken, and with the reader's later speed-up 1.1 s + 1.4 s against 1.8 s.
"""

from __future__ import annotations

from collections.abc import Iterable

from som_studio.config import SETTINGS, RunConfig, parse_layout
from som_studio.core.impls.protocol import Implementation
from som_studio.i18n import _
from som_studio.session.record import RunRecord

# The record keys of the settings that set the time of one iteration (the count is the config's own).
SAME = tuple(dict.fromkeys(s.record_key for s in SETTINGS if s.per_iteration))


def seconds(config: RunConfig, records: Iterable[RunRecord]) -> float | None:
    """Compile plus training seconds ``config`` will take, from the last matching record; ``None`` if none."""
    want = config.to_dict()
    key = {k: want.get(k) for k in SAME}
    found = None
    for r in records:
        if r.mean_s and all(r.config.get(k) == v for k, v in key.items()):
            found = r
    if found is None or found.mean_s is None:
        return None
    return found.compile_s + config.iterations * found.mean_s


def duration_words(s: float) -> str:
    """``s`` seconds as a person says it: ``"under 1 s"``, ``"40 s"``, ``"4 min 10 s"``, ``"2 h 5 min"``."""
    if s < 0.5:
        return _("under 1 s")
    s = max(0, round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def _about(s: float) -> str:
    """A figure said after "about": the seconds under one (``"0.42 s"``, not "about under 1 s"), else in words."""
    return f"{s:.2g} s" if s < 1 else duration_words(s)


def time_text(config: RunConfig, records: Iterable[RunRecord]) -> str:
    """The run panel's line on how long ``config`` will take, or ``""`` when no kept run tells."""
    s = seconds(config, records)
    if s is None:
        return ""
    if s < 0.5:  # "about under 1 s" does not read
        return _("Time: under a second, as the last kept run of this problem went")
    return _("Time: about {duration}, as the last kept run of this problem went").format(duration=duration_words(s))


def epoch_seconds(
    impl: Implementation, config: RunConfig, rows: int, features: int, backend: str | None
) -> float | None:
    """One batch epoch's arithmetic over ``rows`` x ``features`` by the kernel plan's cost model, on
    ``backend``'s assumed ceilings (``None``: the CPU's); ``None`` for an implementation the model does
    not describe (the NumPy reference)."""
    import numpy as np

    from som_studio.core.plans import fused_plan

    if impl.backend != "jax" or impl.kind != "batch":
        return None
    data, map_ = parse_layout(config.layout) if impl.shards else (1, 1)
    units = -(-config.height * config.width // map_)
    per_device = -(-rows // data)
    itemsize = np.dtype(config.precision).itemsize
    return fused_plan.rank(backend or "cpu", units, features, per_device, itemsize)[0][1]


def stream_text(
    impl: Implementation, config: RunConfig, shape: tuple[int, int], backend: str | None, read_rate: float
) -> str:
    """The run panel's line on how long a streamed run's epoch takes, or ``""`` when nothing tells.

    ``read_rate``: rows per second the form's pass over the data went at (0: not measured).
    """
    rows, features = shape
    train = epoch_seconds(impl, config, rows, features, backend)
    read = rows / read_rate if read_rate > 0 else None
    if impl.kind == "online":  # a row a step: the run reads steps / rows passes
        if read is None:
            return ""
        return _(
            "Time: reading takes about {read} for {steps:,} steps ({passes:,.2f} passes over the data, at {rate:,.0f} "
            "rows/s as the pass over the data went)"
        ).format(
            read=_about(read * config.iterations / max(rows, 1)),
            steps=config.iterations,
            passes=config.iterations / max(rows, 1),
            rate=read_rate,
        )
    device = (backend or "cpu").upper()
    if train is not None and read is not None:
        epoch = train + read if (backend or "cpu") == "cpu" else max(train, read)
        return _(
            "Time: about {epoch} an epoch, {total} for {n:,}: the arithmetic {train} (the cost model, {device}), "
            "the reading {read} (at {rate:,.0f} rows/s, as the pass over the data went)"
        ).format(
            epoch=_about(epoch),
            total=_about(epoch * config.iterations),
            n=config.iterations,
            train=_about(train),
            device=device,
            read=_about(read),
            rate=read_rate,
        )
    if read is not None:
        return _(
            "Time: more than {read} an epoch: reading alone takes about that (at {rate:,.0f} rows/s, as the pass over "
            "the data went), and {impl}'s arithmetic, which has no cost model, comes on top"
        ).format(read=_about(read), rate=read_rate, impl=impl.name)
    if train is not None:
        return _("Time: the arithmetic takes about {train} an epoch (the cost model, {device})").format(
            train=_about(train), device=device
        )
    return ""
