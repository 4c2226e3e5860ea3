"""The training session: runs one configuration and yields typed events.

A :class:`Session` is a plain generator driver with no Qt in it, so the CLI,
the tests and the app's worker process all run training the same way::

    for event in Session(config).run():
        ...

Cancel and pause are checked between chunks. A chunk is sized to take about
``chunk_target_s`` so snapshots flow and cancel stays prompt
(:func:`~som_studio.session.timing.next_chunk`). Quality (QE/TE) is measured
on the run's device for JAX runs (:mod:`som_studio.core.plans.quality_jax`), on the
host for NumPy ones (:mod:`som_studio.core.som.metrics`), at planned points, equally
spaced on round iterations (:func:`~som_studio.session.timing.quality_iterations`), that
a :class:`~som_studio.session.timing.QualityPacer` skips when they would take
more than a tenth of the training time so far; the final map is always
measured unless the run was cancelled. Snapshots for a watcher are paced by a
:class:`~som_studio.session.timing.FramePacer` (a share of the training time,
at most so many frames a second); their map is copied to the host asynchronously where
the trainer can (``copy_map_async``) and never changes the chunks' sizes. Timing is honest:
each chunk is timed with its results ready (the trainer blocks), compile and
warm-up are timed apart, and the session's own measurements (quality, map
copies) are not counted in any chunk. The run's total time starts when training
does (not at config checks, data loading or JAX's start-up) and leaves out the
session's measurements and the time its caller spends between events.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Generator, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from som_studio.config import ConfigError, Refusal, RunConfig
from som_studio.core.data import DataError, Table, any_missing
from som_studio.core.data.stream import Source
from som_studio.core.impls import registry, user_impl
from som_studio.core.impls.protocol import Implementation
from som_studio.core.som.problem import check_range, load_problem_table
from som_studio.i18n import _
from som_studio.session import env as envmod
from som_studio.session import sweep as sweepmod
from som_studio.session.checkpoint import CheckpointError, Checkpoints, Saved, data_files, resume_from, same_table
from som_studio.session.events import (
    Event,
    Failed,
    Finished,
    Snapshot,
)
from som_studio.session.preflight import Devices, batch_rows, memory_need, preflight
from som_studio.session.record import RunRecord
from som_studio.session.resolve import load_data
from som_studio.session.timing import (
    FRAME_HZ,
    FRAME_SHARE,
    PROGRESS_INTERVAL_S,
    QUALITY_SHARE,
    FramePacer,
    quality_iterations,
)
from som_studio.session.training import SweepTraining, Training


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
        feature names and labels then reach the record), to share one load between runs; or a
        :class:`~som_studio.core.data.stream.Source`, read in batches during every pass (a streamed
        run). ``None``: the session reads ``config``'s data (:func:`~som_studio.session.resolve.load_data`).
    snapshot_interval_s : least time between snapshots; ``None``: only the
        initial and final maps (a headless run).
    progress_interval_s : least time between ``EpochProgress`` events, where a streamed epoch stands
        between its batches (none in an epoch shorter than this); ``None``: none at all.
    frame_share : the share of training time the snapshots between the initial
        and final maps may cost together, their pictures included (booked by
        the consumer, :meth:`frame_cost`); ``None``: one every ``snapshot_interval_s``.
        The training thread's part is ``timings.phases.frames``.
    quality_points : measure QE/TE at most this many times over the run (plus at 0),
        every round number of iterations; 0: only on the final map. Points are skipped when measuring would
        exceed ``quality_share`` of the training time so far.
    quality_every_s : also measure, between the planned points, once this many seconds of training have passed
        since the last measurement (within ``quality_share``, at a chunk's end), so that a watcher of a long run
        sees its quality move within seconds (the app: 2,000,000 epochs plan their first point 100,000 epochs
        in); ``None`` (the default, and across processes, whose chunks must agree): the planned points only.
    final_quality : measure the final map's QE/TE (off for huge problems).
    chunk_target_s : aim for chunks of about this much wall time.
    quality_share : the share of training time quality measurements may take
        together; ``None``: measure every planned point, however short the
        chunks it cuts (runs across processes do so, so every process cuts
        the same chunks).
    inside : record the inside of the run (:mod:`som_studio.core.inspection.inside`) as
        ``extra.inside``: after the timed iterations, the program is traced,
        lowered and compiled once more and its counts read; the device's
        ceilings are measured once per device (cached). While the run trains,
        JAX explains any recompilation (the explanations are kept).
    keep_programs : with ``inside``, keep the program's texts (jaxpr,
        StableHLO, optimized HLO) in ``extra.inside.programs``.
    sweep : the combinations of a sweep (:mod:`som_studio.session.sweep`), each the varied settings
        as config fields: ``config`` is then the base SOM (``jax-fused-batch``) and every combination
        trains together, each refused by name when it cannot train, all of them counted by the memory
        check; a ``CombinationTrained`` per combination comes before ``Finished``, whose record keeps
        the rows in ``extra["sweep"]``. Quality is measured on the final maps only.
    checkpoint : save the run there as it trains (:class:`~som_studio.session.checkpoint.Checkpoints`:
        every ``every_s`` seconds, when it ends and when it is cancelled); a save that fails stops
        the run, the previous checkpoint kept.
    resume : a checkpoint of this run, or the folder that holds it (read and checked against the
        configuration before anything trains, :func:`~som_studio.session.checkpoint.resume_from`):
        training starts where it stood and ends at the map an uninterrupted run reaches; its QE/TE
        history carries on.
    initial_map : train from this map (height, width, features, in the data's trained units)
        instead of the configuration's initial map: more training of a map on new rows.
    read_s : seconds the caller spent reading ``data`` for this run, before the session: counted in
        its ``phases.data`` and ``wall_s`` as though the session had read it (one run's, where several share
        one read).
    """

    def __init__(
        self,
        config: RunConfig,
        *,
        data: np.ndarray | Table | Source | None = None,
        snapshot_interval_s: float | None = 1 / FRAME_HZ,
        progress_interval_s: float | None = PROGRESS_INTERVAL_S,
        frame_share: float | None = FRAME_SHARE,
        quality_points: int = 10,
        quality_every_s: float | None = None,
        final_quality: bool = True,
        chunk_target_s: float = 0.04,
        max_chunk: int | None = None,
        quality_share: float | None = QUALITY_SHARE,
        inside: bool = False,
        keep_programs: bool = False,
        checkpoint: Checkpoints | None = None,
        resume: Saved | str | os.PathLike[str] | None = None,
        initial_map: np.ndarray | None = None,
        sweep: Sequence[Mapping[str, Any]] = (),
        read_s: float = 0.0,
    ) -> None:
        self.config = config
        self._read_s = read_s
        self.sweep = [dict(c) for c in sweep]
        self.sweep_configs: list[RunConfig] = []
        self._data = data
        self.snapshot_interval_s = snapshot_interval_s
        self.progress_interval_s = progress_interval_s
        self._frames = FramePacer(snapshot_interval_s or 0.0, frame_share)
        self._initial_frame: int | None = None  # the iteration of the initial map's snapshot, made before training
        self.quality_points = quality_points
        self.quality_every_s = quality_every_s
        self.final_quality = final_quality
        self.chunk_target_s = chunk_target_s
        self.max_chunk = max_chunk
        self.quality_share = quality_share
        self.inside = inside
        self.keep_programs = keep_programs
        self.checkpoint = checkpoint
        self.resume_from: Saved | str | os.PathLike[str] | None = resume
        self.initial_map = initial_map
        self._cancel = threading.Event()
        self._running = threading.Event()
        self._running.set()
        self._outside_s = 0.0  # time the caller spent between events, since training started
        self._t_start = time.perf_counter()
        self._device_start_s = 0.0  # starting JAX, counted in the "init" phase
        #: The run's training data (N, D) and labels once loaded, for the views that need them (hits, labels).
        self.data: np.ndarray | None = None
        self.labels: np.ndarray | None = None
        #: A streamed run's source and rows per batch (``None`` when the data is in memory).
        self.source: Source | None = None
        self.batch_rows = 0

    # -- control (any thread) -------------------------------------------------------
    def cancel(self) -> None:
        self._cancel.set()
        self._running.set()

    def pause(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def frame_interval(self, seconds: float) -> None:
        """Give the watcher a frame at most every ``seconds`` (any thread): it draws them no more often.

        Never more often than the session's own ``snapshot_interval_s``; a session that gives no frames gives none.
        """
        if self.snapshot_interval_s is not None:
            self._frames.interval_s = max(self.snapshot_interval_s, seconds)

    def frame_cost(self, seconds: float, iteration: int | None = None) -> None:
        """Book ``seconds`` that a consumer spent making the last snapshot (of ``iteration``) into a picture (any
        thread). The initial map's picture is not the training's: made before it, and the first picture pays what
        later ones do not (the live views' setup), it took the frames' budget of a small run's first seconds (a
        numpy-batch run of iris on 60x40 showed its initial map for 3 s while it trained)."""
        if iteration is not None and iteration == self._initial_frame:
            return
        self._frames.spend(seconds, new_frame=False)

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
        """Check and load, then train: a refusal or a bad file ends the run before anything trains."""
        cfg = self.config
        self._t_start = time.perf_counter()
        self._device_start_s = 0.0
        record = RunRecord(impl=cfg.impl, kind="?", config=cfg.to_dict())
        if self.checkpoint is not None:
            self.checkpoint.start_imports()  # beside the data's reading (Training waits for them)
        try:
            impl, data, table = self._prepare(cfg, record)
        except Exception as exc:
            refused = self._refused(record, exc)
            self._agree(refused.record.message)  # the other processes stop too, told why
            yield refused
            return
        why = self._agree(None)
        if why is not None:  # another process cannot train it: none does
            yield self._refused(record, DataError(why))
            return
        # The agreement check's time is its own (the report names it), not reading data.
        record.phases["data"] = (
            self._wall() - float(record.extra.get("agreement", {}).get("seconds", 0.0)) - self._device_start_s
        )
        yield from self._train(impl, cfg, data, record, table)

    def _prepare(self, cfg: RunConfig, record: RunRecord) -> tuple[Implementation, np.ndarray, Table | None]:
        """The implementation, the data and its table once every check before training has passed."""
        impl = registry.get(cfg.impl)
        record.kind = impl.kind
        # The checks that need neither data nor devices come first: a bad config loads nothing.
        refused = preflight(cfg)
        if self.sweep:
            if cfg.impl != sweepmod.IMPL:
                refused.append(
                    Refusal("impl", _("a sweep trains with {impl}'s kernels, batched").format(impl=sweepmod.IMPL))
                )
            self.sweep_configs = sweepmod.configs(cfg, self.sweep)
            refused += [r for c in self.sweep_configs for r in preflight(c)]
        if refused:
            raise Refused(refused)
        given = self._data if self._data is not None else load_data(cfg)
        if isinstance(given, Source):
            if self.sweep:  # --stream, or data too large for memory
                raise ConfigError(
                    "stream", _("a sweep trains its maps together on data held in memory; it does not stream")
                )
            return self._prepare_stream(cfg, record, impl, given)
        loaded: np.ndarray | Table = given if given is not None else load_problem_table(cfg)
        table = loaded if isinstance(loaded, Table) else None
        data: np.ndarray = loaded.values if isinstance(loaded, Table) else loaded
        self.data, self.labels = data, table.labels if table is not None else None
        if table is not None:
            record.config["feature_names"] = list(table.feature_names)
        missing = any_missing(data)
        check_range(data, cfg.precision, cfg.data.path or _("data"))
        record.samples = int(data.shape[0])
        record.layout = cfg.layout if impl.shards else "1x1"
        td = time.perf_counter()
        devices = Devices.from_jax() if impl.backend == "jax" else None
        # Starting JAX (a second here, the first time in a process) is the device's start, not reading data.
        self._device_start_s = time.perf_counter() - td
        maps = max(1, len(self.sweep))
        refused = preflight(cfg, data_shape=data.shape, devices=devices, missing=missing, maps=maps)
        if refused:
            raise Refused(refused)
        record.estimate_bytes = memory_need(impl, cfg, data.shape[0], data.shape[1], devices, missing, maps)[0]
        if self.sweep:
            impl = self._sweep_impl(impl, data, devices)
        if self.resume_from is not None and not isinstance(self.resume_from, Saved):
            self.resume_from = resume_from(self.resume_from, cfg)  # refused, naming the setting, if not this run's
        if isinstance(self.resume_from, Saved) and cfg.data.path is not None and not data_files(cfg):
            same_table(self.resume_from, self.resume_from.folder, data)  # data given in memory: its values
        if self.checkpoint is not None:
            self.checkpoint.start()  # a folder it cannot write is refused before anything trains
        record.env = envmod.describe(impl.backend)
        if impl.file is not None:
            # A user's implementation is checked against the NumPy reference before it is timed;
            # the record names the file and the hash of the bytes that ran.
            record.extra["user_impl"] = user_impl.source_facts(impl)  # a failed check's record names it too
            record.extra["agreement"] = user_impl.agreement(impl, cfg, data)
            record.extra["user_impl"] = user_impl.source_facts(impl)  # the bytes this process imported
        return impl, data, table

    def _agree(self, failed: str | None) -> str | None:
        """Over several processes, whether every process can train this run (see :func:`distributed.agree`)."""
        from som_studio.session import distributed

        s = self.source
        files = None if s is None else [(str(p), size) for p, (size, _mtime) in zip(s.paths, s.stamps)]
        return distributed.agree(failed, files)

    def _sweep_impl(self, impl: Implementation, data: np.ndarray, devices: Devices | None) -> Implementation:
        """``jax-fused-batch`` whose trainer is the sweep's: every combination's map, spread over the devices."""
        configs = self.sweep_configs
        shards = sweepmod.spread(len(configs), devices.count if devices is not None and devices.count else 1)

        def make(_impl: Implementation, problem: Any) -> Any:
            from som_studio.core.impls.jax_sweep import SweepBatch

            return SweepBatch(problem, configs, shards, data)

        return dataclasses.replace(impl, maker=make)

    def _prepare_stream(
        self, cfg: RunConfig, record: RunRecord, impl: Implementation, source: Source
    ) -> tuple[Implementation, np.ndarray, Table | None]:
        """The checks of a streamed run: its rows are read during every pass (the data is an empty table)."""
        from som_studio.session.preflight import streamable_refusal

        cannot = streamable_refusal(cfg)
        if cannot is not None:
            raise Refused([cannot])
        rows = batch_rows(cfg, source.features, source.rows)
        self.source, self.batch_rows = source, rows
        record.samples = source.rows
        record.config["feature_names"] = list(source.feature_names)
        record.layout = cfg.layout if impl.shards else "1x1"
        record.extra["stream"] = {
            "rows": source.rows,
            "files": source.files,
            "bytes": source.bytes,
            "bytes_read": 0,
            "batch_rows": rows,
            "by_process": [0],
            # Streamed without --stream: the table would not fit in memory.
            "asked": bool(cfg.stream),
        }
        devices = Devices.from_jax() if impl.backend == "jax" else None
        # Memory holds a batch, never the table: the estimate is for a batch's rows.
        refused = preflight(cfg, data_shape=(rows, source.features), devices=devices, missing=True)
        if refused:
            raise Refused(refused)
        record.estimate_bytes = memory_need(impl, cfg, rows, source.features, devices, True)[0]
        # As a run in memory: a folder to resume from is read and checked (the app passes the folder, not
        # what was read from it), and a checkpoint folder that cannot be written is refused, before training.
        if self.resume_from is not None and not isinstance(self.resume_from, Saved):
            self.resume_from = resume_from(self.resume_from, cfg)
        if self.checkpoint is not None:
            self.checkpoint.start()
        record.env = envmod.describe(impl.backend)
        return impl, np.empty((0, source.features)), None

    def _refused(self, record: RunRecord, exc: Exception) -> Failed:
        """The event of a run that ended before training: refused, unreadable data, or no environment for it."""
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
        return Failed(record)

    def _wall(self) -> float:
        """Seconds since the run started, the caller's time between events and its reading of the data included
        (a stopwatch's view)."""
        return time.perf_counter() - self._t_start + self._read_s

    def _train(
        self, impl: Implementation, cfg: RunConfig, data: np.ndarray, record: RunRecord, table: Table | None = None
    ) -> Generator[Event, None, None]:
        """Train in named steps; any failure on the way ends the run with its record so far."""
        training = (SweepTraining if self.sweep else Training)(self, impl, cfg, data, record, table)
        try:
            yield from training.start()
            yield from training.compile()
            yield from training.chunks()
            yield from training.finish()
        except Exception as exc:
            good = getattr(training.trainer, "last_good", None)  # a user's run that broke: its last whole map
            if good is not None:
                yield Snapshot(good[0], good[1])
            yield training.failed(exc)
        finally:
            training.close()

    def _quality_iterations(self, T: int) -> list[int]:
        # A sweep's quality is each combination's, on its final map: not one map's along the way.
        return [] if self.sweep else quality_iterations(T, self.quality_points)


def run_to_completion(session: Session) -> RunRecord:
    """Drain a session and return its record (for scripts and tests)."""
    record: RunRecord | None = None
    for ev in session.run():
        if isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert record is not None
    return record
