"""The training session: runs one configuration and yields typed events.

A :class:`Session` is a plain generator driver with no Qt in it, so the CLI,
the tests and the app's worker process all run training the same way::

    for event in Session(config).run():
        ...

Cancel and pause are checked between chunks. A chunk is sized to take about
``chunk_target_s`` so snapshots flow and cancel stays prompt
(:func:`~som_studio.session.timing.next_chunk`). Quality (QE/TE) is measured
on the run's device for JAX runs (:mod:`som_studio.core.quality_jax`), on the
host for NumPy ones (:mod:`som_studio.core.metrics`), at planned points, equally
spaced on round iterations (:func:`~som_studio.session.timing.quality_iterations`), that
a :class:`~som_studio.session.timing.QualityPacer` skips when they would take
more than a tenth of the training time so far; the final map is always
measured unless the run was cancelled. Timing is honest:
each chunk is timed with its results ready (the trainer blocks), compile and
warm-up are timed apart, and the session's own measurements (quality, map
copies) are not counted in any chunk. The run's total time starts when training
does (not at config checks, data loading or JAX's start-up) and leaves out the
session's measurements and the time its caller spends between events.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Generator, Iterator
from typing import Any

import numpy as np

from som_studio.config import ConfigError, Refusal, RunConfig, parse_layout
from som_studio.core import metrics, registry, user_impl
from som_studio.core.data import DataError, Table
from som_studio.core.problem import check_range, load_problem_table, make_problem
from som_studio.core.protocol import Implementation
from som_studio.i18n import _, ngettext
from som_studio.session import env as envmod
from som_studio.session.checkpoint import CheckpointError, Checkpoints, Saved, data_files, meta_for
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
from som_studio.session.preflight import Devices, memory_need, preflight
from som_studio.session.record import Chunk, RunRecord
from som_studio.session.timing import (
    QUALITY_SHARE,
    QualityPacer,
    next_chunk,
    predict_quality_s,
    quality_iterations,
    worth_cutting,
)

#: First guesses at quality measurement rates, in example-unit pairs x features
#: per second, before a run has measured its own (2-core CPU here: NumPy
#: 1-5e8, the JAX program 3-6e9; an H100's is a guess, not yet measured).
QUALITY_RATES = {"numpy": 2e8, "cpu": 3e9, "accelerator": 1e11}


class Refused(ValueError):
    """A configuration :func:`~som_studio.session.preflight.preflight` refuses; carries the refusals."""

    def __init__(self, refusals: list[Refusal]) -> None:
        super().__init__(str(refusals[0]))
        self.refusals = refusals

    @property
    def refusal(self) -> Refusal:
        """The first refusal: the one a run's record keeps."""
        return self.refusals[0]


class Session:
    """Runs one :class:`RunConfig`; iterate :meth:`run` for its events.

    Thread safety: :meth:`run` runs on one thread (the worker's);
    :meth:`cancel`, :meth:`pause` and :meth:`resume` may be called from any thread.

    Parameters
    ----------
    config : the run.
    data : pre-loaded (N, D) data, or a :class:`~som_studio.core.data.Table` (its
        feature names and labels then reach the record), to share one load between runs.
    snapshot_interval_s : least time between snapshots; ``None``: only the
        initial and final maps.
    quality_points : measure QE/TE at most this many times over the run (plus at 0),
        every round number of iterations; 0: only on the final map. Points are skipped when measuring would
        exceed ``quality_share`` of the training time so far.
    final_quality : measure the final map's QE/TE (off for huge problems).
    chunk_target_s : aim for chunks of about this much wall time.
    quality_share : the share of training time quality measurements may take
        together; ``None``: measure every planned point, however short the
        chunks it cuts (runs across processes do so, so every process cuts
        the same chunks).
    inside : record the inside of the run (:mod:`som_studio.core.inside`) as
        ``extra.inside``: after the timed iterations, the program is traced,
        lowered and compiled once more and its counts read; the device's
        ceilings are measured once per device (cached). While the run trains,
        JAX explains any recompilation (the explanations are kept).
    keep_programs : with ``inside``, keep the program's texts (jaxpr,
        StableHLO, optimized HLO) in ``extra.inside.programs``.
    checkpoint : save the run there as it trains (:class:`~som_studio.session.checkpoint.Checkpoints`:
        every ``every_s`` seconds, when it ends and when it is cancelled); a save that fails stops
        the run, the previous checkpoint kept.
    resume : a checkpoint of this run (:func:`~som_studio.session.checkpoint.resume_from` checked
        that it is this configuration's): training starts where it stood and ends at the map an
        uninterrupted run reaches; its QE/TE history carries on.
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        data: np.ndarray | Table | None = None,
        snapshot_interval_s: float | None = 1 / 30,
        quality_points: int = 10,
        final_quality: bool = True,
        chunk_target_s: float = 0.04,
        max_chunk: int | None = None,
        quality_share: float | None = QUALITY_SHARE,
        inside: bool = False,
        keep_programs: bool = False,
        checkpoint: Checkpoints | None = None,
        resume: Saved | None = None,
    ) -> None:
        self.config = config
        self._data = data
        self.snapshot_interval_s = snapshot_interval_s
        self.quality_points = quality_points
        self.final_quality = final_quality
        self.chunk_target_s = chunk_target_s
        self.max_chunk = max_chunk
        self.quality_share = quality_share
        self.inside = inside
        self.keep_programs = keep_programs
        self.checkpoint = checkpoint
        self.resume_from = resume
        self._cancel = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._outside_s = 0.0  # time the caller spent between events, since training started
        self._t_start = time.perf_counter()
        #: The run's training data (N, D) and labels once loaded, for the views that need them (hits, labels).
        self.data: np.ndarray | None = None
        self.labels: np.ndarray | None = None

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
        self._t_start = time.perf_counter()
        record = RunRecord(impl=cfg.impl, kind="?", config=cfg.to_dict())
        try:
            impl = registry.get(cfg.impl)
            record.kind = impl.kind
            # The checks that need neither data nor devices come first: a bad config loads nothing.
            refused = preflight(cfg)
            if refused:
                raise Refused(refused)
            loaded: np.ndarray | Table = self._data if self._data is not None else load_problem_table(cfg)
            table = loaded if isinstance(loaded, Table) else None
            data: np.ndarray = loaded.values if isinstance(loaded, Table) else loaded
            self.data, self.labels = data, table.labels if table is not None else None
            if table is not None:
                record.config["feature_names"] = list(table.feature_names)
            missing = bool(np.isnan(data).any())
            check_range(data, cfg.precision, cfg.data.path or _("data"))
            record.samples = int(data.shape[0])
            record.layout = cfg.layout if impl.shards else "1x1"
            devices = Devices.from_jax() if impl.backend == "jax" else None
            refused = preflight(cfg, data_shape=data.shape, devices=devices, missing=missing)
            if refused:
                raise Refused(refused)
            record.estimate_bytes = memory_need(impl, cfg, data.shape[0], data.shape[1], devices, missing)[0]
            if self.checkpoint is not None:
                self.checkpoint.start()
            record.env = envmod.describe(impl.backend)
            if impl.file is not None:
                # A user's implementation is checked against the NumPy reference before it is timed;
                # the record names the file and the hash of the bytes that ran.
                record.extra["user_impl"] = user_impl.source_facts(impl)  # a failed check's record names it too
                record.extra["agreement"] = user_impl.agreement(impl, cfg, data)
                record.extra["user_impl"] = user_impl.source_facts(impl)  # the bytes this process imported
        except Exception as exc:
            if isinstance(exc, (user_impl.UserImplError, CheckpointError)):
                record.message = str(exc)
            elif isinstance(exc, (ConfigError, DataError, registry.UnknownImplementation, Refused)):
                record.message = str(exc)
                if not isinstance(exc, DataError):
                    record.refusal = exc.refusal
            else:  # an environment that cannot run this (e.g. JAX fails to start)
                record.message = f"{type(exc).__name__}: {exc}"
            record.status = "failed"
            record.env = record.env or envmod.describe(None)  # the JSON's env keys, even here
            record.phases["data"] = self._wall()
            record.wall_s = self._wall()
            yield Failed(record)
            return
        # The agreement check's time is its own (the report names it), not reading data.
        record.phases["data"] = self._wall() - float(record.extra.get("agreement", {}).get("seconds", 0.0))
        yield from self._train(impl, cfg, data, record, table)

    def _wall(self) -> float:
        """Seconds since the run started, the caller's time between events included (a stopwatch's view)."""
        return time.perf_counter() - self._t_start

    def _train(
        self, impl: Implementation, cfg: RunConfig, data: np.ndarray, record: RunRecord, table: Table | None = None
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
        measure = None
        T = cfg.iterations
        misses = contextlib.ExitStack()  # the recompilations JAX explains, with inside
        phases = record.phases

        def timed(phase: str, tp: float) -> float:
            """Add the seconds since ``tp`` to ``phase``; return them."""
            spent = time.perf_counter() - tp
            phases[phase] += spent
            return spent

        try:
            tp = time.perf_counter()
            problem = make_problem(cfg, impl.kind, data)
            saved = self.resume_from
            start = 0
            if saved is not None:
                # The seeded problem with the saved map in place of the initial one: every implementation
                # draws iteration t's schedules and samples from the seed, wherever it starts.
                problem = dataclasses.replace(
                    problem,
                    init_map=np.ascontiguousarray(saved.map, dtype=problem.dtype).reshape(problem.init_map.shape),
                )
                start = min(saved.iteration, T)
                record.history = [dict(h) for h in saved.meta.get("history") or []]
                record.extra["resumed"] = {
                    "checkpoint": str(saved.folder),
                    "iteration": start,
                    "trained_s": float(saved.meta.get("trained_s", 0.0)),
                }
            timed("init", tp)
            yield Started(
                config=cfg,
                kind=impl.kind,
                iterations=T,
                samples=problem.samples,
                features=problem.features,
                env=record.env,
                layout=record.layout,
                estimate_bytes=record.estimate_bytes or 0,
                data_range=(
                    tuple(float(v) for v in np.nanmin(problem.data, axis=0)),
                    tuple(float(v) for v in np.nanmax(problem.data, axis=0)),
                ),
                feature_names=tuple(table.feature_names) if table is not None else (),
                scaling=_scaling(table),
            )
            tp = time.perf_counter()
            trainer = impl.create(problem)
            timed("init", tp)
            yield Snapshot(start, problem.init_map.copy())
            measure = _Quality(impl, problem, devices[0] if devices else None)
            share = self.quality_share
            if impl.backend == "jax" and jax_runtime.jax().process_count() > 1:
                share = None  # every process must cut the same chunks: no decisions on local clocks
            pacer = QualityPacer(share=share, first_guess_s=measure.guess_s)
            own_compiles = 0  # compiles of the quality program after warm-up: not the trainer's

            def train_s() -> float:
                return time.perf_counter() - t0 - excluded - self._outside_s

            def quality(weights: np.ndarray, bmus: bool = False) -> tuple[float, float, np.ndarray | None]:
                nonlocal excluded, own_compiles
                tq = time.perf_counter()
                c = jax_runtime.compile_count()
                with watch.exclude():
                    qe, te, compile_s, first = measure(weights, bmus)
                own_compiles += jax_runtime.compile_count() - c
                spent = time.perf_counter() - tq
                excluded += spent
                pacer.spend(spent, compile_s)
                phases["compile"] += compile_s
                phases["quality"] += spent - compile_s
                return qe, te, first

            q_at = self._quality_iterations(T)
            if q_at or self.final_quality:
                # The quality program is compiled before training, not at the first point
                # measured: a compile mid-run would raise the worker's memory for good minutes
                # into a run (docs/benchmarks.md, "Hours-long runs").
                tq = time.perf_counter()
                with watch.exclude():
                    measure.warmup()
                excluded += timed("compile", tq)
            if 0 in q_at and start == 0 and pacer.allow(train_s()):
                qe, te = quality(problem.init_map)[:2]
                record.history.append({"iteration": 0, "qe": qe, "te": te})
                yield QualityMeasured(0, qe, te)

            own_compiles = 0
            c0 = jax_runtime.compile_count()
            tw = time.perf_counter()
            trainer.warmup()
            record.compile_s = timed("compile", tw)
            record.warmup_compiles = jax_runtime.compile_count() - c0
            describe = getattr(trainer, "describe", None)  # optional: what the trainer compiled
            if describe is not None:
                record.extra.update(describe())
            reasons: list[str] = []
            if self.inside and impl.backend == "jax":
                from som_studio.core import inside

                reasons = misses.enter_context(inside.cache_misses())
            yield Compiled(record.compile_s, record.warmup_compiles)

            it, chunk = start, 1
            rate: float | None = None  # seconds per iteration of the last chunk
            last_snapshot = time.perf_counter()
            next_q = [q for q in q_at if q > start]
            files = data_files(cfg) if self.checkpoint is not None else []

            def save_checkpoint(weights: np.ndarray) -> None:
                """Save where the run stands (its time is the session's, not training's)."""
                nonlocal excluded
                ck = self.checkpoint
                if ck is None or ck.iteration == it:
                    return
                tc = time.perf_counter()
                before = float(saved.meta.get("trained_s", 0.0)) if saved is not None else 0.0
                meta = meta_for(cfg, it, history=record.history, trained_s=before + train_s(), files=files)
                with watch.exclude():
                    ck.save({"map": weights}, meta)
                excluded += timed("checkpoint", tc)

            while it < T:
                if not self._running.is_set():
                    tp = time.perf_counter()
                    while not self._running.wait(0.02):
                        pass
                    excluded += time.perf_counter() - tp
                if self._cancel.is_set():
                    break
                count = min(chunk, T - it)
                # Points inside this chunk that the budget cannot afford now, or that
                # would cut it too short to time well, are dropped; the next one
                # left ends the chunk.
                while (
                    next_q
                    and next_q[0] < it + count
                    and next_q[0] < T
                    and not (pacer.allow(train_s()) and (share is None or worth_cutting(next_q[0] - it, rate)))
                ):
                    next_q.pop(0)
                if next_q:
                    count = min(count, next_q[0] - it)
                ts = time.perf_counter()
                trainer.run(it, count)
                dt = time.perf_counter() - ts
                rate = dt / count if count else rate
                record.chunks.append(Chunk(it, count, dt))
                it += count
                yield ChunkTimed(it - count, count, dt, train_s())
                if count < chunk and it < T:
                    # Cut short by a quality point: its rate still holds, and the next
                    # chunk grows from the size planned, not from the cut one.
                    chunk = next_chunk(chunk, dt / count * chunk, self.chunk_target_s, self.max_chunk)
                else:
                    chunk = next_chunk(count, dt, self.chunk_target_s, self.max_chunk)
                if self.checkpoint is not None and it < T and self.checkpoint.due():
                    save_checkpoint(trainer.get_map())
                if next_q and it == next_q[0]:
                    next_q.pop(0)
                    if (it < T or not self.final_quality) and pacer.allow(train_s()):
                        qe, te = quality(trainer.get_map())[:2]
                        record.history.append({"iteration": it, "qe": qe, "te": te})
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

            record.total_s = train_s()
            phases["train"] = max(0.0, record.total_s - phases["init"] - record.compile_s)
            record.compiles = jax_runtime.compile_count() - c0 - own_compiles
            record.peak_bytes = watch.stop()
            misses.close()
            final = trainer.get_map()
            save_checkpoint(final)  # a run that ends or stops keeps where it stood
            record.status = "cancelled" if it < T else "ok"
            if it < T:
                record.message = ngettext(
                    "cancelled after {done:,} of {n:,} iteration", "cancelled after {done:,} of {n:,} iterations", T
                ).format(done=it, n=T)
            yield Snapshot(it, final)
            # A cancelled run ends now: its final quality pass (a second or more on
            # a big map) would only delay the answer the user asked for.
            first: np.ndarray | None = None  # each example's best unit, when the final pass found them
            if self.final_quality and it == T:
                if record.history and record.history[-1]["iteration"] == it:
                    qe, te = record.history[-1]["qe"], record.history[-1]["te"]
                else:
                    # One search gives QE, TE and the model's hits and labels.
                    qe, te, first = quality(final, bmus=table is not None)
                    record.history.append({"iteration": it, "qe": qe, "te": te})
                    yield QualityMeasured(it, qe, te)
                record.qe, record.te = qe, te
            elif record.history and record.history[-1]["iteration"] == it:
                # Measured on the final map already; an earlier measurement is not the final map's.
                record.qe, record.te = record.history[-1]["qe"], record.history[-1]["te"]
            if it == T and table is not None:
                from som_studio.core import model_file

                # Hits and labels take a pass over the data: skipped with the final quality pass.
                tp = time.perf_counter()
                model_file.attach(record, cfg, table, final, measure=self.final_quality, bmus=first)
                timed("model", tp)
            if self.inside and it > 0:
                # Last, after the timed iterations, the final map and its measurements: nothing here is part
                # of any timing, and clearing JAX's caches to compile once more cannot touch the run.
                tp = time.perf_counter()
                record.extra["inside"] = _inside(impl, trainer, problem, record, devices, it, self.keep_programs)
                record.extra["inside"]["counts"]["recompile_reasons"] = reasons
                record.extra["inside"]["record_s"] = time.perf_counter() - tp
            record.wall_s = self._wall()
            yield Finished(record)
        except Exception as exc:
            record.total_s = time.perf_counter() - t0 - excluded - self._outside_s
            record.status = "failed"
            record.message = str(exc) if isinstance(exc, CheckpointError) else f"{type(exc).__name__}: {exc}"
            if impl.file is not None:  # the user's own traceback lines, not the session's
                record.message = str(user_impl.user_error(impl, _("{name} failed").format(name=impl.name), exc))
            if record.peak_bytes is None:
                record.peak_bytes = watch.stop()
            record.wall_s = self._wall()
            yield Failed(record)
        finally:
            misses.close()
            if self.checkpoint is not None:
                self.checkpoint.close()
            if trainer is not None:
                trainer.close()
            if measure is not None:
                measure.close()

    def _quality_iterations(self, T: int) -> list[int]:
        return quality_iterations(T, self.quality_points)


def _inside(
    impl: Implementation, trainer: Any, problem: Any, record: RunRecord, devices: list[Any], done: int, keep: bool
) -> dict[str, Any]:
    """``extra.inside`` of a run that trained ``done`` iterations (:mod:`som_studio.core.inside`).

    A JAX run's program is compiled once more and inspected, one more iteration runs under JAX's transfer
    guard to count host-device transfers (the final map is already taken), and the device's ceilings are read
    from the cache or measured. A NumPy run carries the analytic counts only.
    """
    from som_studio.core import inside

    counted = inside.analytic(
        impl.work_model,
        str(record.extra.get("kernel_plan", "")),
        height=problem.height,
        width=problem.width,
        features=problem.features,
        samples=problem.samples,
        itemsize=problem.dtype.itemsize,
    )
    if impl.backend != "jax":
        out = inside.assemble(None, counted, ceiling=None, seconds_per_iteration=record.median_s)
        out["counts"] = {"compiles": record.compiles}
        return out
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    try:
        static = inside.inspect(trainer, keep_programs=keep)
        transfers = None
        if jax.process_count() == 1:
            calls = inside.count_transfers(lambda: trainer.run(done - 1, 1))
            transfers = float(calls) if calls is not None else None
        device = devices[0] if devices else jax.devices()[0]
        ceiling = inside.ceilings(device)
    except Exception as exc:  # the run itself went well: it keeps its timings and the hand count
        out = inside.assemble(None, counted, ceiling=None, seconds_per_iteration=record.median_s)
        out["counts"] = {"compiles": record.compiles}
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    out = inside.assemble(
        static,
        counted,
        ceiling=ceiling,
        seconds_per_iteration=record.median_s,
        devices=max(1, len(devices)) if impl.shards else 1,
        shares_host=device.platform == "cpu",
    )
    out["counts"].update(
        {
            "transfers_per_iteration": transfers,
            "compiles": record.compiles,
            "warmup_compiles": record.warmup_compiles,
        }
    )
    return out


def _scaling(table: Table | None) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """A table's scaling as ``Started`` carries it: ``(offset, scale)``, or ``None`` when it was not scaled."""
    s = table.scaling if table is not None else None
    if s is None or s.method == "none":
        return None
    return tuple(float(v) for v in s.offset), tuple(float(v) for v in s.scale)


class _Quality:
    """QE/TE of one run's maps: on the run's first device for JAX runs, on the host otherwise.

    Calling it gives ``(qe, te, compile_s)``; the device program is compiled at
    :meth:`warmup` or else at the first call (``compile_s`` then says how long that took).
    """

    def __init__(self, impl: Implementation, problem: Any, device: Any) -> None:
        self.problem = problem
        self.device = device
        cfg = problem.config
        self.topology, self.toroid = cfg.topology, cfg.toroid
        # The device program follows every lattice and missing values, as the reference does.
        self.on_device = impl.backend == "jax"
        self._q: Any = None
        pairs_rate = QUALITY_RATES["numpy"]
        if self.on_device:
            platform = getattr(device, "platform", "cpu")
            pairs_rate = QUALITY_RATES["cpu" if platform == "cpu" else "accelerator"]
        #: First guess at one measurement's time (the device program's compile not included).
        self.guess_s = predict_quality_s(problem.samples, problem.height * problem.width, problem.features, pairs_rate)

    def _device(self) -> Any:
        if self._q is None:
            from som_studio.core.quality_jax import DeviceQuality

            p = self.problem
            self._q = DeviceQuality(
                p.data, p.height, p.width, p.dtype, self.device, topology=self.topology, toroid=self.toroid
            )
        return self._q

    def warmup(self) -> None:
        """Compile the device program now (the host needs none)."""
        if self.on_device:
            self._device().compile()

    def __call__(self, weights: np.ndarray, bmus: bool = False) -> tuple[float, float, float, np.ndarray | None]:
        """``(qe, te, compile_s, first)``: ``first``, each example's best unit, only when ``bmus``."""
        if not self.on_device:
            qe, te, first = metrics.measure(weights, self.problem.data, self.topology, self.toroid)
            return qe, te, 0.0, first if bmus else None
        self._device()
        compiled_before = self._q.compile_s
        qe, te, found = self._q.measure(weights, bmus)
        return qe, te, self._q.compile_s - compiled_before, found

    def close(self) -> None:
        if self._q is not None:
            self._q.close()
            self._q = None


def run_to_completion(session: Session) -> RunRecord:
    """Drain a session and return its record (for scripts and tests)."""
    record: RunRecord | None = None
    for ev in session.run():
        if isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert record is not None
    return record
