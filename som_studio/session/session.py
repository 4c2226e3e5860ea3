"""The training session: runs one configuration and yields typed events.

A :class:`Session` is a plain generator driver with no Qt in it, so the CLI,
the tests and the app's worker process all run training the same way::

    for event in Session(config).run():
        ...

Cancel and pause are checked between chunks. A chunk is sized to take about
``chunk_target_s`` so snapshots flow and cancel stays prompt. Timing is honest:
each chunk is timed with its results ready (the trainer blocks), compile and
warm-up are timed apart, and the session's own measurements (quality, map
copies) are not counted in any chunk. The run's total time starts when training
does (not at config checks, data loading or JAX's start-up) and leaves out the
session's measurements and the time its caller spends between events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np

from som_studio.config import ConfigError, RunConfig, parse_layout
from som_studio.core import memory, metrics, registry
from som_studio.core.data import DataError
from som_studio.core.problem import check_range, load_problem_data, make_problem
from som_studio.core.protocol import Implementation, ProblemSize
from som_studio.session import env as envmod
from som_studio.session.events import (
    ChunkTimed,
    Compiled,
    Event,
    Failed,
    Finished,
    QualityMeasured,
    Snapshot,
    Started,
)
from som_studio.session.memwatch import PeakMemory
from som_studio.session.record import Chunk, RunRecord


class MemoryRefused(RuntimeError):
    """A configuration that would not fit; the message gives estimate and available."""


def problem_size(config: RunConfig, samples: int, features: int) -> ProblemSize:
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
    )


def check_layout_devices(impl: Implementation, config: RunConfig) -> None:
    """Refuse a layout the devices JAX sees cannot hold (:class:`ConfigError`, field ``layout``)."""
    from som_studio.core import jax_runtime, sharding

    jax = jax_runtime.jax()
    lay = sharding.check_layout(
        config.layout, jax.device_count(), impl=impl.name, map_axis=impl.map_axis, backend=jax.default_backend()
    )
    if jax.process_count() > 1 and lay.devices != jax.device_count():
        # Every process must hold part of the mesh: each runs the same program on its own devices.
        raise ConfigError(
            "layout",
            f"across {jax.process_count()} processes a layout must use all "
            f"{jax.device_count()} global devices (e.g. {jax.device_count()}x1), got {lay}",
        )


def available_memory(impl: Implementation) -> tuple[int, str]:
    """(bytes, where) that a run of ``impl`` can still use."""
    if impl.backend == "jax":
        from som_studio.core import jax_runtime

        jax = jax_runtime.jax()
        dev = jax.devices()[0]
        try:
            stats = dev.memory_stats() or {}
        except Exception:
            stats = {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)), f"{dev.device_kind} memory"
    return memory.host_available(), "host memory"


def check_memory(impl: Implementation, config: RunConfig, samples: int, features: int) -> int:
    """The estimate in bytes; raises :class:`MemoryRefused` when it does not fit."""
    need = impl.estimate(problem_size(config, samples, features))
    have, where = available_memory(impl)
    if need > have:
        raise MemoryRefused(
            f"memory: {impl.name} on a {config.grid} map with {samples:,} x {features} data needs about "
            f"{memory.format_bytes(need)}, but only {memory.format_bytes(have)} of {where} is available"
        )
    return need


class Session:
    """Runs one :class:`RunConfig`; iterate :meth:`run` for its events.

    Thread safety: :meth:`run` runs on one thread (the worker's);
    :meth:`cancel`, :meth:`pause` and :meth:`resume` may be called from any thread.

    Parameters
    ----------
    config : the run.
    data : pre-loaded (N, D) data, to share one load between runs.
    snapshot_interval_s : least time between snapshots; ``None``: only the
        initial and final maps.
    quality_points : measure QE/TE this many times over the run (plus at 0);
        0: only on the final map.
    final_quality : measure the final map's QE/TE (off for huge problems).
    chunk_target_s : aim for chunks of about this much wall time.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        data: np.ndarray | None = None,
        snapshot_interval_s: float | None = 1 / 30,
        quality_points: int = 10,
        final_quality: bool = True,
        chunk_target_s: float = 0.04,
        max_chunk: int | None = None,
    ) -> None:
        self.config = config
        self._data = data
        self.snapshot_interval_s = snapshot_interval_s
        self.quality_points = quality_points
        self.final_quality = final_quality
        self.chunk_target_s = chunk_target_s
        self.max_chunk = max_chunk
        self._cancel = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._outside_s = 0.0  # time the caller spent between events, since training started

    # -- control (any thread) -------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()
        self._running.set()

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    # -- the driver -------------------------------------------------------------------
    def run(self) -> Iterator[Event]:
        """The run's events; the time the caller spends between them is not the run's."""
        self._outside_s = 0.0
        events = self._events()
        try:
            for ev in events:
                ty = time.perf_counter()
                yield ev
                self._outside_s += time.perf_counter() - ty
        finally:
            events.close()  # a caller that stops early still gets the trainer closed now

    def _events(self) -> Generator[Event, None, None]:
        cfg = self.config
        record = RunRecord(impl=cfg.impl, kind="?", config=cfg.to_dict())
        try:
            impl = registry.get(cfg.impl)
            record.kind = impl.kind
            cfg.validate(impl.kind)
            if cfg.precision not in impl.precisions:
                raise ConfigError(
                    "precision", f"{impl.name} supports {', '.join(impl.precisions)}, not {cfg.precision}"
                )
            data = self._data if self._data is not None else load_problem_data(cfg)
            check_range(data, cfg.precision, cfg.data.path or "data")
            record.samples = int(data.shape[0])
            record.layout = cfg.layout if impl.shards else "1x1"
            if impl.shards:
                check_layout_devices(impl, cfg)
            record.estimate_bytes = check_memory(impl, cfg, data.shape[0], data.shape[1])
            record.env = envmod.describe(impl.backend)
        except Exception as exc:
            if isinstance(exc, (ConfigError, DataError, registry.UnknownImplementation, MemoryRefused)):
                record.message = str(exc)
            else:  # an environment that cannot run this (e.g. JAX fails to start)
                record.message = f"{type(exc).__name__}: {exc}"
            record.status = "failed"
            record.env = record.env or envmod.describe(None)  # the JSON's env keys, even here
            yield Failed(record)
            return
        yield from self._train(impl, cfg, data, record)

    def _train(
        self, impl: Implementation, cfg: RunConfig, data: np.ndarray, record: RunRecord
    ) -> Generator[Event, None, None]:
        from som_studio.core import jax_runtime

        devices: list[Any] = []
        if impl.backend == "jax":
            data_n, map_n = parse_layout(record.layout)
            devices = [
                d
                for d in jax_runtime.jax().devices()[: data_n * map_n]
                if d.process_index == jax_runtime.jax().process_index()
            ]
        watch = PeakMemory(devices)
        watch.start()
        # Training time starts here: checking the config, loading data and starting
        # JAX (a third of a second for the first JAX run in a process) are not training.
        t0 = time.perf_counter()
        self._outside_s = 0.0
        excluded = 0.0  # the session's own measurements, not part of training time
        trainer = None
        T = cfg.iterations
        try:
            problem = make_problem(cfg, impl.kind, data)
            yield Started(
                config=cfg,
                kind=impl.kind,
                iterations=T,
                samples=problem.samples,
                features=problem.features,
                env=record.env,
                layout=record.layout,
                estimate_bytes=record.estimate_bytes or 0,
            )
            trainer = impl.create(problem)
            yield Snapshot(0, problem.init_map.copy())
            q_at = self._quality_iterations(T)
            if 0 in q_at:
                tq = time.perf_counter()
                with watch.exclude():
                    qe, te = metrics.quality(problem.init_map, problem.data)
                record.history.append({"iteration": 0, "qe": qe, "te": te})
                excluded += time.perf_counter() - tq
                yield QualityMeasured(0, qe, te)

            c0 = jax_runtime.compile_count()
            tw = time.perf_counter()
            trainer.warmup()
            record.compile_s = time.perf_counter() - tw
            record.warmup_compiles = jax_runtime.compile_count() - c0
            describe = getattr(trainer, "describe", None)  # optional: what the trainer compiled
            if describe is not None:
                record.extra.update(describe())
            yield Compiled(record.compile_s, record.warmup_compiles)

            it, chunk = 0, 1
            last_snapshot = time.perf_counter()
            next_q = [q for q in q_at if q > 0]
            while it < T:
                if not self._running.is_set():
                    tp = time.perf_counter()
                    while not self._running.wait(0.02):
                        pass
                    excluded += time.perf_counter() - tp
                if self._cancel.is_set():
                    break
                count = min(chunk, T - it)
                if next_q:
                    count = min(count, next_q[0] - it)
                ts = time.perf_counter()
                trainer.run(it, count)
                dt = time.perf_counter() - ts
                record.chunks.append(Chunk(it, count, dt))
                it += count
                yield ChunkTimed(it - count, count, dt, time.perf_counter() - t0 - excluded - self._outside_s)
                chunk = self._next_chunk(count, dt)
                if next_q and it == next_q[0]:
                    next_q.pop(0)
                    if it < T or not self.final_quality:
                        tq = time.perf_counter()
                        with watch.exclude():
                            qe, te = metrics.quality(trainer.get_map(), problem.data)
                        record.history.append({"iteration": it, "qe": qe, "te": te})
                        excluded += time.perf_counter() - tq
                        yield QualityMeasured(it, qe, te)
                if (
                    self.snapshot_interval_s is not None
                    and it < T
                    and time.perf_counter() - last_snapshot >= self.snapshot_interval_s
                ):
                    ts = time.perf_counter()
                    snap = trainer.get_map()
                    excluded += time.perf_counter() - ts
                    last_snapshot = time.perf_counter()
                    yield Snapshot(it, snap)

            record.total_s = time.perf_counter() - t0 - excluded - self._outside_s
            record.compiles = jax_runtime.compile_count() - c0
            record.peak_bytes = watch.stop()
            final = trainer.get_map()
            record.status = "cancelled" if it < T else "ok"
            if it < T:
                record.message = f"cancelled after {it} of {T} iterations"
            yield Snapshot(it, final)
            # A cancelled run ends now: its final quality pass (a second or more on
            # a big map) would only delay the answer the user asked for.
            if self.final_quality and it == T:
                qe, te = metrics.quality(final, problem.data)
                record.qe, record.te = qe, te
                if not record.history or record.history[-1]["iteration"] != it:
                    record.history.append({"iteration": it, "qe": qe, "te": te})
                    yield QualityMeasured(it, qe, te)
            elif record.history and record.history[-1]["iteration"] == it:
                # Measured on the final map already; an earlier measurement is not the final map's.
                record.qe, record.te = record.history[-1]["qe"], record.history[-1]["te"]
            yield Finished(record)
        except Exception as exc:
            record.total_s = time.perf_counter() - t0 - excluded - self._outside_s
            record.status = "failed"
            record.message = f"{type(exc).__name__}: {exc}"
            if record.peak_bytes is None:
                record.peak_bytes = watch.stop()
            yield Failed(record)
        finally:
            if trainer is not None:
                trainer.close()

    def _quality_iterations(self, T: int) -> list[int]:
        if self.quality_points <= 0:
            return []
        pts = {round(k * T / self.quality_points) for k in range(self.quality_points + 1)}
        return sorted(p for p in pts if 0 <= p <= T)

    def _next_chunk(self, count: int, seconds: float) -> int:
        per = seconds / count if count else seconds
        want = int(self.chunk_target_s / per) if per > 0 else count * 4
        nxt = max(1, min(want, count * 4))
        return min(nxt, self.max_chunk) if self.max_chunk else nxt


def run_to_completion(session: Session) -> RunRecord:
    """Drain a session and return its record (for scripts and tests)."""
    record: RunRecord | None = None
    for ev in session.run():
        if isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert record is not None
    return record
