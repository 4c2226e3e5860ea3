"""A run's training, in the steps :class:`~som_studio.session.session.Session` names: start, compile, chunks,
finish (or failed), close.

:class:`Training` holds what the steps share: the trainer, the quality measure and its pacer, the clocks, the
checkpoints. It reads the session that runs it through :class:`Driver` (the session's settings, its cancel flag and
its frame pacer), so this module does not import the session's. Qt-free.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable, Generator
from typing import Any, Protocol

import numpy as np

from som_studio.config import RunConfig, parse_layout
from som_studio.core.data import DataError, Scaling, Table
from som_studio.core.data.checks import spans_ratio, widest_feature
from som_studio.core.data.stream import Source
from som_studio.core.impls import streamed, user_impl
from som_studio.core.impls.protocol import Implementation
from som_studio.core.som.problem import make_problem, make_stream_problem
from som_studio.i18n import _, ngettext
from som_studio.session import measures
from som_studio.session import sweep as sweepmod
from som_studio.session.checkpoint import CheckpointError, Checkpoints, Saved, data_files, meta_for, table_stamp
from som_studio.session.events import (
    ChunkTimed,
    CombinationTrained,
    Compiled,
    EpochProgress,
    Event,
    Failed,
    Finished,
    QualityMeasured,
    Snapshot,
    Started,
)
from som_studio.session.measures import RunQuality
from som_studio.session.memwatch import PeakMemory
from som_studio.session.record import Chunk, RunRecord
from som_studio.session.timing import (
    FramePacer,
    QualityPacer,
    next_chunk,
    worth_cutting,
)

#: First guesses at quality measurement rates, in example-unit pairs x features
#: per second, before a run has measured its own (2-core CPU here: NumPy
#: 1-5e8, the JAX program 3-6e9; an H100's is a guess, not yet measured).


class StoppedInside(Exception):
    """A trainer stopped inside a chunk, for a run asked to stop, once it had saved where it stood."""


class Driver(Protocol):
    """What a training reads of the session that runs it (:class:`~som_studio.session.session.Session`)."""

    config: RunConfig
    sweep: list[dict[str, Any]]
    sweep_configs: list[RunConfig]
    snapshot_interval_s: float | None
    progress_interval_s: float | None
    _frames: FramePacer
    final_quality: bool
    quality_points: int
    quality_every_s: float | None
    chunk_target_s: float
    max_chunk: int | None
    quality_share: float | None
    inside: bool
    keep_programs: bool
    checkpoint: Checkpoints | None
    resume_from: Saved | str | os.PathLike[str] | None
    initial_map: np.ndarray | None
    _cancel: threading.Event
    _running: threading.Event
    _outside_s: float
    _device_start_s: float
    _initial_frame: int | None
    source: Source | None
    batch_rows: int

    @property
    def cancelled(self) -> bool: ...

    def _wall(self) -> float: ...

    def _quality_iterations(self, T: int) -> list[int]: ...


class Training:
    """One run's training, from the seeded problem to the final record, as the steps :meth:`Session._train` names.

    It holds what the steps share: the trainer, the quality measure and its pacer, the clocks. Training time
    starts when it is made: checking the config, loading data and starting JAX (a third of a second for the
    first JAX run in a process) are not training. The session's own measurements (``excluded``) and the time its
    caller spends between events are not training either. Runs on the session's thread.
    """

    def __init__(
        self,
        session: Driver,
        impl: Implementation,
        cfg: RunConfig,
        data: np.ndarray,
        record: RunRecord,
        table: Table | None,
    ) -> None:
        from som_studio.core import jax_runtime

        self.session, self.impl, self.cfg, self.data, self.record, self.table = session, impl, cfg, data, record, table
        self.devices: list[Any] = []
        if impl.backend == "jax":
            data_n, map_n = parse_layout(record.layout)
            jax = jax_runtime.jax()
            self.devices = [d for d in jax.devices()[: data_n * map_n] if d.process_index == jax.process_index()]
        if session.checkpoint is not None:
            # Orbax's imports done before anything of the run is compiled: they register JAX options that are part
            # of every program's cache key, so a program compiled before they end is compiled again at its next call,
            # inside the first timed chunk (50-110 ms of the naive rung's first step). Waited for before the run's
            # memory and time are measured: they are the checkpoints' (in the app, where every run keeps
            # checkpoints, 0.44-0.61 s of a small run, and 94 MiB its peak memory counted beside the CLI's 7 MiB).
            tc = time.perf_counter()
            session.checkpoint.ready()
            self.timed("checkpoint", tc)
        self.files: list[list[Any]] = data_files(cfg) if session.checkpoint is not None else []
        # Data given in memory has no file to stamp: its values are (random colours are their seed's),
        # digested before the training's clock starts, a cost of the checkpoints (1.6 s for 10^7 x 30 float32).
        in_memory = session.checkpoint is not None and cfg.data.path is not None and not self.files
        tc = time.perf_counter()
        self.table_stamp = table_stamp(data) if in_memory and data.size else None
        if self.table_stamp is not None:
            self.timed("checkpoint", tc)
        self.watch = PeakMemory(self.devices)
        self.watch.start()
        self.t0 = time.perf_counter()
        session._outside_s = 0.0
        self.excluded = 0.0  # the session's own measurements, not part of training time
        self.trainer: Any = None
        self.measure: RunQuality | None = None
        self.measured = 0  # quality measurements made (the first run of the program sets no rate)
        self.misses = contextlib.ExitStack()  # the recompilations JAX explains, with inside
        self.reasons: list[str] = []
        self.own_compiles = 0  # compiles of the quality program after warm-up: not the trainer's
        self.c0 = 0  # compiles on the session's thread before the trainer's warm-up (not the quality program's)
        self.it = 0  # iterations trained (from the checkpoint's, when resumed)
        self._quality_train_s = 0.0  # training seconds at the last quality measurement
        self.trained_before = 0.0  # training seconds before the checkpoint resumed from
        self.within_s = 0.0  # seconds of checkpoints saved inside the chunk being trained
        self._saved_at = 0.0

    # -- clocks ------------------------------------------------------------------------
    def timed(self, phase: str, tp: float) -> float:
        """Add the seconds since ``tp`` to ``phase``; return them."""
        spent = time.perf_counter() - tp
        self.record.phases[phase] += spent
        return spent

    def train_s(self) -> float:
        return time.perf_counter() - self.t0 - self.excluded - self.session._outside_s

    def quality(self, weights: np.ndarray, bmus: bool = False) -> tuple[float, float, np.ndarray | None]:
        """QE, TE (and each example's best unit with ``bmus``) of ``weights``; its time is not training's."""
        from som_studio.core import jax_runtime

        assert self.measure is not None
        tq = time.perf_counter()
        c = jax_runtime.compile_count(this_thread=True)
        with self.watch.exclude():
            qe, te, compile_s, first = self.measure(weights, bmus)
        self.own_compiles += jax_runtime.compile_count(this_thread=True) - c
        spent = time.perf_counter() - tq
        self.excluded += spent
        self.pacer.spend(spent, compile_s, first=self.measured == 0)
        self.measured += 1
        self._quality_train_s = self.train_s()
        self.record.phases["compile"] += compile_s
        self.record.phases["quality"] += spent - compile_s
        return qe, te, first

    def save_checkpoint(self, weights: np.ndarray) -> None:
        """Save where the run stands, unless saved there already; its time is the session's, not training's."""
        ck = self.session.checkpoint
        if ck is None or ck.iteration == self.it:  # saved there already (inside the next epoch, even)
            return
        # A streamed online run goes on from where its reader stands (row ``it mod N``): saved beside the map.
        where = getattr(self.trainer, "reader_state", None)
        self._save(self.it, {"map": weights}, None, where() if where is not None else None)

    # A trainer whose iteration is long (a streamed epoch) saves inside it through these two
    # (:attr:`som_studio.core.impls.protocol.Implementation`'s optional ``checkpoints``).
    def due(self) -> bool:
        """Whether a checkpoint is due now: its time has come, or the run was asked to stop."""
        ck = self.session.checkpoint
        return ck is not None and (ck.due() or self.session.cancelled)

    def save_within(self, iteration: int, arrays: dict[str, np.ndarray], row: int, reader: Any) -> None:
        """Save a checkpoint inside iteration ``iteration``: the map it started from and the partial
        sums (``arrays``), ``row`` rows into it, and the reader's state (JSON) to go on from there.

        A run asked to stop ends here (:class:`StoppedInside`): an epoch of hours need not end first.
        """
        self._save(iteration, arrays, row, reader)
        self.within_s += time.perf_counter() - self._saved_at
        if self.session.cancelled:
            raise StoppedInside

    def _save(self, iteration: int, arrays: dict[str, np.ndarray], row: int | None, reader: Any) -> None:
        ck = self.session.checkpoint
        assert ck is not None
        tc = time.perf_counter()
        meta = meta_for(
            self.cfg,
            iteration,
            history=self.record.history,
            trained_s=self.trained_before + self.train_s(),
            files=self.files,
            table=self.table_stamp,
            position={"iteration": iteration, "row": row or 0},
            reader=reader,
        )
        with self.watch.exclude():
            ck.save(arrays, meta)
        ck.within = row is not None
        self.record.extra["checkpoint"] = {"folder": str(ck.folder), "iteration": iteration}
        if row is not None:
            self.record.extra["checkpoint"]["row"] = row
        self.excluded += self.timed("checkpoint", tc)
        self._saved_at = tc

    # -- the steps ---------------------------------------------------------------------
    def start(self) -> Generator[Event, None, None]:
        """The seeded problem, ``Started``, the trainer, the initial map and its quality (its program compiled)."""
        from som_studio.core import jax_runtime

        cfg, impl, table, record = self.cfg, self.impl, self.table, self.record
        tp = time.perf_counter()
        source = self.session.source
        if source is not None:
            # Over several processes each reads its own share of the source, in every pass; what the
            # passes count of their shares is gathered, so every process holds the whole source's.
            index, count = jax_runtime.processes() if impl.backend == "jax" else (0, 1)
            gather = jax_runtime.process_gather if count > 1 else None
            # The statistics pass (scaling, initial map) reads the data: its time is reading's.
            self.problem = problem = make_stream_problem(
                cfg, impl.kind, source, self.session.batch_rows, (index, count), gather
            )
            self.excluded += time.perf_counter() - tp
            self.timed("data", tp)
            tp = time.perf_counter()
        else:
            self.problem = problem = make_problem(cfg, impl.kind, self.data)
        saved = self.session.resume_from
        assert saved is None or isinstance(saved, Saved)  # read by _prepare
        start_map = saved.map if saved is not None else self.session.initial_map
        if start_map is not None:
            self.problem = problem = dataclasses.replace(
                problem, init_map=np.ascontiguousarray(start_map, dtype=problem.dtype).reshape(problem.init_map.shape)
            )
        if saved is not None:
            # The seeded problem with the saved map in place of the initial one: every implementation
            # draws iteration t's schedules and samples from the seed, wherever it starts.
            self.it = min(saved.iteration, cfg.iterations)
            self.trained_before = float(saved.meta.get("trained_s", 0.0))
            record.history = [dict(h) for h in saved.meta.get("history") or []]
            record.extra["resumed"] = {
                "checkpoint": str(saved.folder),
                "iteration": self.it,
                "trained_s": self.trained_before,
            }
        self.timed("init", tp)
        data_range = _data_range(problem)
        if cfg.scaling_method == "none" and cfg.data.path is not None:  # a comparison notes features far apart
            record.extra["range_ratio"] = spans_ratio(*data_range)
            record.extra["widest_feature"] = widest_feature(*data_range, _feature_names(source, table))
        yield Started(
            config=cfg,
            kind=impl.kind,
            iterations=cfg.iterations,
            samples=problem.samples,
            features=problem.features,
            env=record.env,
            layout=record.layout,
            estimate_bytes=record.estimate_bytes or 0,
            data_range=data_range,
            feature_names=_feature_names(source, table),
            scaling=_scaling(table) if problem.stream is None else _scaling_of(problem.stream.scaling),
            first=self.it,
        )
        yield from self._measured_before(saved)
        tp = time.perf_counter()
        self.trainer = streamed.create(impl, problem)
        if saved is not None and int((saved.meta.get("position") or {}).get("row", 0)) > 0:
            self._resume_within(saved)
        if self.session.checkpoint is not None and hasattr(self.trainer, "checkpoints"):
            self.trainer.checkpoints = self  # it asks due() and calls save_within() between its batches
        self.timed("init", tp)
        self.session._initial_frame = self.it
        yield Snapshot(self.it, problem.init_map.copy())
        # A sweep's maps are measured on the host, as the NumPy reference does: its combinations' few
        # passes do not pay for compiling a quality program.
        on_device = impl.backend == "jax" and not self.session.sweep
        self.measure = RunQuality(impl, problem, self.devices[0] if self.devices else None, on_device)
        self.share = self.session.quality_share
        if impl.backend == "jax" and jax_runtime.jax().process_count() > 1:
            self.share = None  # every process must cut the same chunks: no decisions on local clocks
        self.pacer = QualityPacer(share=self.share, first_guess_s=self.measure.guess_s)
        self.q_at = self.session._quality_iterations(cfg.iterations)
        if self.q_at or self.session.final_quality:
            # The quality program is compiled before training, not at the first point
            # measured: a compile mid-run would raise the worker's memory for good minutes
            # into a run (docs/benchmarks.md, "Hours-long runs").
            tq = time.perf_counter()
            # The initial map, where its measurement is free, is measured on the compiling thread too: with its
            # program's first run, while the trainer's program compiles (see compile()).
            with self.watch.exclude():
                self.measure.start_warmup(problem.init_map, keep=self._initial_point())
            self.excluded += self.timed("compile", tq)

    def _initial_point(self) -> bool:
        """Whether the initial map is measured: a planned point, not resumed past, and free (nothing is trained
        yet to price it against)."""
        return 0 in self.q_at and self.it == 0 and self.pacer.allow(0.0)

    def compile(self) -> Generator[Event, None, None]:
        """The trainer's warm-up (its compile), what it says it compiled, then ``Compiled``; then the initial
        map's quality, measured on the quality program's compiling thread while the trainer's compiled (measured
        before the trainer's compile, it waited for the quality program's, and the two compiles did not overlap)."""
        from som_studio.core import jax_runtime

        record = self.record
        self.own_compiles = 0
        self.c0 = jax_runtime.compile_count(this_thread=True)
        tw = time.perf_counter()
        self.trainer.warmup()
        record.compile_s = self.timed("compile", tw)
        record.warmup_compiles = jax_runtime.compile_count(this_thread=True) - self.c0
        if self.measure is not None:  # the quality program, compiled meanwhile on a thread of its own
            tq = time.perf_counter()
            with self.watch.exclude():
                self.measure.finish_warmup()
            self.excluded += self.timed("compile", tq)
        describe = getattr(self.trainer, "describe", None)  # optional: what the trainer compiled
        if describe is not None:
            record.extra.update(describe())
        if self.session.inside and self.impl.backend == "jax":
            from som_studio.core.inspection import inside

            self.reasons = self.misses.enter_context(inside.cache_misses())
        yield Compiled(record.compile_s, record.warmup_compiles)
        if self._initial_point():
            early = self.measure.early() if self.measure is not None else None
            if early is not None:  # measured while the trainer's program compiled
                qe, te, seconds = early
                self.pacer.spend(seconds, first=True)
                self.measured += 1
            else:
                qe, te = self.quality(self.problem.init_map)[:2]
            record.history.append({"iteration": 0, "qe": qe, "te": te})
            yield QualityMeasured(0, qe, te)

    def _resume_within(self, saved: Saved) -> None:
        """Saved inside an epoch: the trainer goes on from its partial sums and the reader's position."""
        within = getattr(self.trainer, "resume_within", None)
        if within is None:
            raise CheckpointError(
                _("{folder}: saved inside a streamed epoch; {impl} cannot go on from there").format(
                    folder=saved.folder, impl=self.impl.name
                )
            )
        within(self.it, {k: v for k, v in saved.arrays.items() if k != "map"}, saved.meta.get("reader"))
        # Its first chunk is the rest of that epoch: kept out of the figures per iteration.
        self.record.extra["resumed"]["row"] = int(saved.meta["position"]["row"])

    def chunks(self) -> Generator[Event, None, None]:
        """Timed chunks until the iterations are done or the run is cancelled, with quality points and snapshots."""
        session, T = self.session, self.cfg.iterations
        chunk = 1
        rate: float | None = None  # seconds per iteration of the last chunk
        frames = session._frames
        frames.taken(time.perf_counter())  # the initial map was the first frame
        next_q = [q for q in self.q_at if q > self.it]
        while self.it < T:
            if not session._running.is_set():
                tp = time.perf_counter()
                while not session._running.wait(0.02):
                    pass
                self.excluded += time.perf_counter() - tp
            if session._cancel.is_set():
                break
            it = self.it
            count = self._chunk_size(min(chunk, T - it), rate, next_q)
            ts = time.perf_counter()
            self.within_s = 0.0
            outside = session._outside_s
            try:
                yield from self._train_chunk(it, count)
            except StoppedInside:
                break  # stopped inside the chunk, where it stood saved: it ends cancelled at ``it``
            # Checkpoints saved inside it and the caller's time with its progress events are not training.
            dt = time.perf_counter() - ts - self.within_s - (session._outside_s - outside)
            rate = dt / count if count else rate
            verify = getattr(self.trainer, "verify", None)  # a user's trainer: its map whole after the chunk?
            if verify is not None:
                tv = time.perf_counter()
                verify(it + count)
                self.excluded += time.perf_counter() - tv
            self.record.chunks.append(Chunk(it, count, dt))
            self.it = it = it + count
            copied: Callable[[], np.ndarray] | None = None
            frame_s = 0.0
            if session.snapshot_interval_s is not None and it < T and frames.due(self.train_s(), time.perf_counter()):
                # Started now, finished after this chunk's events: the copy overlaps the session's own work.
                tf = time.perf_counter()
                frames.taken(tf)
                copied = _copy_map(self.trainer)
                frame_s = time.perf_counter() - tf
                self.excluded += frame_s
            yield ChunkTimed(it - count, count, dt, self.train_s())
            if count < chunk and it < T:
                # Cut short by a quality point: its rate still holds, and the next
                # chunk grows from the size planned, not from the cut one.
                chunk = next_chunk(chunk, dt / count * chunk, session.chunk_target_s, session.max_chunk)
            else:
                chunk = next_chunk(count, dt, session.chunk_target_s, session.max_chunk)
            if session.checkpoint is not None and it < T and session.checkpoint.due():
                self.save_checkpoint(self.trainer.get_map())
            planned = bool(next_q) and it == next_q[0]
            if planned:
                next_q.pop(0)
            if (planned or self._quality_due(it)) and (it < T or not session.final_quality):
                if self.pacer.allow(self.train_s()):
                    qe, te = self.quality(self.trainer.get_map())[:2]
                    self.record.history.append({"iteration": it, "qe": qe, "te": te})
                    yield QualityMeasured(it, qe, te)
            if copied is not None:
                tf = time.perf_counter()
                snap = copied()
                frame_s += time.perf_counter() - tf
                self.excluded += time.perf_counter() - tf
                self.record.phases["frames"] += frame_s
                frames.spend(frame_s)
                yield Snapshot(it, snap)

    def _quality_due(self, it: int) -> bool:
        """Whether a measurement between the planned points is due at iteration ``it``: the session asks for them
        (:attr:`Session.quality_every_s`), it plans points at all, and that many training seconds have passed since
        the last one. Not across processes (``quality_share`` None), whose chunks must agree."""
        every, session = self.session.quality_every_s, self.session
        if every is None or session.quality_share is None or not session.quality_points or session.sweep:
            return False
        history = self.record.history
        if history and history[-1]["iteration"] == it:
            return False
        return bool(self.train_s() - self._quality_train_s >= every)

    def _train_chunk(self, first: int, count: int) -> Generator[Event, None, None]:
        """Train iterations ``first .. first+count-1``.

        A trainer that trains in steps (a streamed epoch, batch by batch) holds between its batches while the
        run is paused, and says where it stands at most every :attr:`Session.progress_interval_s` (its seconds
        without the pauses), so an epoch of hours can be paused and is seen moving.
        """
        every = self.session.progress_interval_s
        steps = getattr(self.trainer, "steps", None)
        if steps is None:
            self.trainer.run(first, count)
            return
        running = self.session._running
        due = time.perf_counter() + (every or 0.0)
        epoch, paused = -1, 0.0
        for where in steps(first, count):
            if where.iteration != epoch:
                epoch, paused = where.iteration, 0.0
            now = time.perf_counter()
            if every is not None and now >= due:
                due = now + every
                yield EpochProgress(*where._replace(seconds=max(0.0, where.seconds - paused)))
            if not running.is_set():  # before the next batch is read and trained on
                tp = time.perf_counter()
                while not running.wait(0.02):
                    pass
                held = time.perf_counter() - tp
                self.excluded += held
                self.within_s += held  # not the chunk's training time either
                paused += held

    def _chunk_size(self, count: int, rate: float | None, next_q: list[int]) -> int:
        """``count``, or fewer so that the chunk ends at the next quality point the run can afford.

        Points inside the chunk that the budget cannot afford now, or that would cut it too short
        to time well, are dropped from ``next_q``.
        """
        it, T = self.it, self.cfg.iterations
        while (
            next_q
            and next_q[0] < it + count
            and next_q[0] < T
            and not (self.pacer.allow(self.train_s()) and (self.share is None or worth_cutting(next_q[0] - it, rate)))
        ):
            next_q.pop(0)
        return min(count, next_q[0] - it) if next_q else count

    def _note_rate(self, seconds: float | None) -> None:
        """An epoch's search rate against the device's cached matmul ceiling: a rate above it proves the figure
        too low, and the cache measures it again when next asked (:func:`inside.note_achieved`)."""
        p = self.problem
        if not seconds or seconds <= 0 or p is None or self.cfg.precision != "float32":
            return
        from som_studio.core import jax_runtime
        from som_studio.core.inspection import inside

        device = self.devices[0] if self.devices else jax_runtime.jax().devices()[0]
        rate = 2.0 * p.samples * p.height * p.width * p.features / seconds
        what = f"{self.impl.name} at {p.samples}x{p.features} on {p.width}x{p.height}"
        inside.note_achieved(device, rate, what)

    def totals(self) -> None:
        """The record's totals once training stopped: times, compiles, peak memory, ``ok`` or ``cancelled``."""
        from som_studio.core import jax_runtime

        record, it, T = self.record, self.it, self.cfg.iterations
        model = record.extra.get("plan_model")
        if isinstance(model, dict):  # the cost model's prediction beside what the epochs took
            model["measured_s_per_epoch"] = record.median_s
            self._note_rate(record.median_s)
        record.total_s = self.train_s()
        record.phases["train"] = max(0.0, record.total_s - record.phases["init"] - record.compile_s)
        # Starting JAX came before training time started: not part of total_s, added to init after.
        record.phases["init"] += self.session._device_start_s
        record.compiles = jax_runtime.compile_count(this_thread=True) - self.c0 - self.own_compiles
        record.peak_bytes = self.watch.stop()
        self.misses.close()
        self._stream_facts()
        ck = self.session.checkpoint
        if ck is not None and (it < T or ck.at_end):
            self.save_checkpoint(self.trainer.get_map())  # a run that stops (or ends) keeps where it stood
        elif ck is not None:
            ck.discard()  # it ended: nothing is left to go on from
            self.record.extra.pop("checkpoint", None)
        record.status = "cancelled" if it < T else "ok"
        if it < T:
            record.message = ngettext(
                "cancelled after {done:,} of {n:,} iteration", "cancelled after {done:,} of {n:,} iterations", T
            ).format(done=it, n=T)

    def _measured_before(self, saved: Saved | None) -> Generator[Event, None, None]:
        """A resumed run's measurements before its checkpoint, said again: a watcher's quality plot goes on from
        them (it waited for a first measurement the resumed run does not make again)."""
        if saved is not None:
            for h in self.record.history:
                yield QualityMeasured(int(h["iteration"]), float(h["qe"]), float(h["te"]))

    def finish(self) -> Generator[Event, None, None]:
        """Totals, the final map and its quality, the model (hits, labels), the inside, then ``Finished``."""
        cfg, record, it, T = self.cfg, self.record, self.it, self.cfg.iterations
        self.totals()
        final = self.trainer.get_map()
        yield Snapshot(it, final)
        first = yield from self._final_quality(final)
        # A stopped run keeps its model too: its map is in the scaled units, and projecting onto it or
        # reading its planes needs the scaling. Hits and labels take a pass over the data: skipped with the
        # final quality pass, which a stopped run skips.
        measure = it == T and self.session.final_quality
        if self.table is not None:
            from som_studio.core.data import model_file

            tp = time.perf_counter()
            model_file.attach(record, cfg, self.table, final, measure=measure, bmus=first)
            self.timed("model", tp)
        stream = self.problem.stream
        if stream is not None:
            from som_studio.core.data import model_file

            # Hits and labels counted batch by batch in the final quality pass (or one more pass here).
            tp = time.perf_counter()
            if first is None and measure:
                first = self.quality(final, bmus=True)[2]
            rows = Table(
                np.empty((0, stream.source.features)),
                stream.source.feature_names,
                label_column=stream.source.label_column,
                id_column=stream.source.id_column,
                scaling=stream.scaling,
                source=stream.source.spec,
            )
            hits, labels = (first.hits, first.labels) if first is not None else (None, None)
            model_file.attach_counts(record, cfg, rows, final, hits, labels)
            self.timed("model", tp)
        if self.session.inside and it > 0:
            # Last, after the timed iterations, the final map and its measurements: nothing here is part
            # of any timing, and clearing JAX's caches to compile once more cannot touch the run.
            tp = time.perf_counter()
            inside = measures.record_inside(
                self.impl, self.trainer, self.problem, record, self.devices, it, self.session.keep_programs
            )
            inside["counts"]["recompile_reasons"] = self.reasons
            inside["record_s"] = time.perf_counter() - tp
            record.extra["inside"] = inside
        record.wall_s = self.session._wall()
        yield Finished(record)

    def _final_quality(self, final: np.ndarray) -> Generator[Event, None, Any]:
        """The final map's QE and TE into the record; each example's best unit when this pass found them
        (a streamed run's: the hits per unit and label, :class:`~som_studio.core.plans.quality_jax.UnitCounts`).

        A cancelled run ends without it: its final quality pass (a second or more on a big map)
        would only delay the answer the user asked for.
        """
        record, it = self.record, self.it
        first: Any = None
        if self.session.final_quality and it == self.cfg.iterations:
            if record.history and record.history[-1]["iteration"] == it:
                qe, te = record.history[-1]["qe"], record.history[-1]["te"]
            else:
                # One search gives QE, TE and the model's hits and labels.
                qe, te, first = self.quality(final, bmus=self.table is not None or self.problem.stream is not None)
                record.history.append({"iteration": it, "qe": qe, "te": te})
                yield QualityMeasured(it, qe, te)
            record.qe, record.te = qe, te
        elif record.history and record.history[-1]["iteration"] == it:
            # Measured on the final map already; an earlier measurement is not the final map's.
            record.qe, record.te = record.history[-1]["qe"], record.history[-1]["te"]
        return first

    def _stream_facts(self, every: bool = True) -> None:
        """A streamed run's reading into its record: ``phases.read``, ``extra.stream``'s rows and bytes read.

        Over several processes, ``by_process`` lists the rows of each process's share and ``bytes_read``
        adds every process's, gathered when ``every`` (all processes are here together); ``read`` is this
        process's wait.
        """
        trainer, facts = self.trainer, self.record.extra.get("stream")
        if facts is None or trainer is None or not hasattr(trainer, "read_s"):
            return
        self.record.phases["read"] = trainer.read_s
        stream = trainer.stream
        mine = np.array([stream.rows, trainer.bytes_read], np.int64)
        got = stream.gather(mine) if stream.gather is not None and every else mine[None, :]
        facts["bytes_read"] = int(got[:, 1].sum())
        facts["by_process"] = [int(n) for n in got[:, 0]]  # the rows of each process's share

    def failed(self, exc: Exception) -> Failed:
        """The event of a run that failed while training, with what it measured so far."""
        record, impl = self.record, self.impl
        self._stream_facts(every=False)  # the other processes need not be here: this one's own
        record.total_s = self.train_s()
        record.status = "failed"
        # Data that broke mid-run (a file changed, a row group unreadable) names the file itself.
        plain = isinstance(exc, (CheckpointError, DataError))
        record.message = str(exc) if plain else f"{type(exc).__name__}: {exc}"
        if impl.file is not None:  # the user's own traceback lines, not the session's
            record.message = str(user_impl.training_error(impl, exc))
        if record.peak_bytes is None:
            record.peak_bytes = self.watch.stop()
        record.wall_s = self.session._wall()
        return Failed(record)

    def close(self) -> None:
        """Let go of the trainer and the quality program, whatever happened."""
        self.misses.close()
        if self.session.checkpoint is not None:
            self.session.checkpoint.close()
        if self.trainer is not None:
            self.trainer.close()
        if self.measure is not None:
            self.measure.close()


class SweepTraining(Training):
    """A sweep's training: the steps of any run, then each combination's map measured and recorded."""

    def finish(self) -> Generator[Event, None, None]:
        """Totals, a ``CombinationTrained`` per combination (unless cancelled), then ``Finished`` with the rows."""
        from som_studio.core.data import model_file

        record, it, T = self.record, self.it, self.cfg.iterations
        self.totals()
        maps = self.trainer.get_maps()
        yield Snapshot(it, maps[0])
        sweep = self.session.sweep
        record.extra["sweep"] = {**record.extra.get("sweep", {}), "combinations": len(sweep), "rows": []}
        record.wall_s = self.session._wall()
        if it == T:
            for i, (combo, cfg, m) in enumerate(zip(sweep, self.session.sweep_configs, maps)):
                quality: tuple[float, float] | None = None
                first = None
                if self.session.final_quality:
                    qe, te, first = self.quality(m, bmus=self.table is not None)
                    quality = (qe, te)
                rec = sweepmod.combination_record(record, cfg, combo, quality)
                if self.table is not None:
                    model_file.attach(rec, cfg, self.table, m, measure=self.session.final_quality, bmus=first)
                record.extra["sweep"]["rows"].append(sweepmod.row(rec))
                yield CombinationTrained(i, rec, m)
        record.wall_s = self.session._wall()
        yield Finished(record)


def _copy_map(trainer: Any) -> Callable[[], np.ndarray]:
    """Start copying the trainer's map to the host; the function returned finishes the copy.

    Asynchronous where the trainer can (``copy_map_async``, :class:`~som_studio.core.impls.protocol.Implementation`),
    otherwise a host copy taken now.
    """
    start = getattr(trainer, "copy_map_async", None)
    if start is not None:
        finish: Callable[[], np.ndarray] = start()
        return finish
    snap: np.ndarray = trainer.get_map()
    return lambda: snap


def _scaling(table: Table | None) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """A table's scaling as ``Started`` carries it: ``(offset, scale)``, or ``None`` when it was not scaled."""
    s = table.scaling if table is not None else None
    if s is None or s.method == "none":
        return None
    return tuple(float(v) for v in s.offset), tuple(float(v) for v in s.scale)


def _feature_names(source: Source | None, table: Table | None) -> tuple[str, ...]:
    if source is not None:
        return source.feature_names
    return tuple(table.feature_names) if table is not None else ()


def _data_range(problem: Any) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Each feature's smallest and largest value in the run's (scaled) space."""
    if problem.stream is not None:
        s = problem.stream
        lo = s.scaling.apply(s.moments.low[None, :])[0]
        hi = s.scaling.apply(s.moments.high[None, :])[0]
        return tuple(float(v) for v in lo), tuple(float(v) for v in hi)
    return (
        tuple(float(v) for v in np.nanmin(problem.data, axis=0)),
        tuple(float(v) for v in np.nanmax(problem.data, axis=0)),
    )


def _scaling_of(s: Scaling) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    if s.method == "none":
        return None
    return tuple(float(v) for v in s.offset), tuple(float(v) for v in s.scale)
