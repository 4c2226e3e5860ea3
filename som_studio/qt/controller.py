"""The one owner of a run: starts the worker process, forwards its messages as Qt signals, stops it.

:class:`RunController` lives in the GUI thread. It starts one worker process
per run (:func:`som_studio.worker.process.run_worker`, started by
:mod:`som_studio.worker.start`: never a fork of this process, as JAX is
multithreaded) and one :class:`~som_studio.qt.pipe_reader.PipeReader` thread
that reads the worker's typed messages; this module only turns them into
signals, at most :data:`MAX_DISPATCH_HZ` times a second.

Stopping sends ``cancel`` (the session stops between chunks, typically within
one ~40 ms chunk, and reports its final map and quality) and kills the process
if it has not ended :data:`KILL_AFTER_MS` later; it kills at once when waiting
cannot help (during start-up and compilation, which cannot be interrupted from
Python, or when chunks are longer than the grace period).
"""

from __future__ import annotations

import time
from multiprocessing.connection import Connection
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from som_studio.config import RunConfig
from som_studio.core.impls import registry
from som_studio.qt.pipe_reader import PipeReader
from som_studio.qt.probe import DeviceProbe
from som_studio.session.events import (
    ChunkTimed,
    CombinationTrained,
    Compiled,
    EpochProgress,
    Failed,
    Finished,
    QualityMeasured,
    Started,
)
from som_studio.storage import RecordSoFar
from som_studio.worker import messages as msgs
from som_studio.worker import start
from som_studio.worker.process import describe_exit

__all__ = ["DeviceProbe", "RunController", "describe_exit"]

KILL_AFTER_MS = 150
#: A run that keeps checkpoints writes one when it stops (Orbax's save: tenths of a second here; a slow disk: more).
CHECKPOINT_GRACE_MS = 15_000
MAX_DISPATCH_HZ = 20  # the GUI takes the worker's events at most this often (frames come at most ~15 a second)

IDLE, STARTING, RUNNING, PAUSED, STOPPING = "idle", "starting", "running", "paused", "stopping"


class RunController(QObject):
    """Starts, pauses, stops one run at a time; errors arrive as signals.

    Threads: every method and every signal runs in the GUI thread.

    Signals carry the session's events (see :mod:`som_studio.session.events`),
    in the order the session yielded them: ``run_started`` → ``compiled`` →
    (``chunks_timed`` | ``epoch_progress`` | ``frame_ready`` | ``quality_measured``)* → ``run_finished``
    or ``run_failed``. ``run_ended`` follows once the worker process is gone. A sweep (started with
    ``session_options={"sweep": combinations}``) sends ``combination_trained`` per combination before
    ``run_finished``.
    """

    run_started = Signal(object)  # Started
    compiled = Signal(object)  # Compiled
    chunks_timed = Signal(list)  # [ChunkTimed, ...]
    epoch_progress = Signal(object)  # EpochProgress, the latest only: where a streamed epoch stands
    frame_ready = Signal(object)  # frames.MapFrame, the latest only
    quality_measured = Signal(object)  # QualityMeasured
    combination_trained = Signal(object)  # CombinationTrained, a sweep's
    final_map = Signal(object)  # np.ndarray (H, W, D), the last map, raw
    run_finished = Signal(object)  # RunRecord, status "ok" or "cancelled"
    run_failed = Signal(str, object)  # message, RunRecord
    run_ended = Signal()
    state_changed = Signal(str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._process: Any = None
        self._control: Connection | None = None
        self._reader: PipeReader | None = None
        self._state = IDLE
        self._stop_requested_at: float | None = None
        self._killed = False
        self._kill_timer = QTimer(self)
        self._kill_timer.setSingleShot(True)
        self._kill_timer.timeout.connect(self._kill_if_alive)
        self._dispatch_timer = QTimer(self)
        self._dispatch_timer.setSingleShot(True)
        self._dispatch_timer.timeout.connect(self._dispatch_now)
        self._last_dispatch = 0.0
        self._reset_run()
        self.last_exitcode: int | None = None  # of the last worker, once it ended
        self.stop_latencies: list[float] = []  # seconds from stop() to the process gone (for bench/gui.py)
        # The fork server imports JAX while the user fills in the form, not when they press Run.
        QTimer.singleShot(0, start.warm)

    def _reset_run(self) -> None:
        self._config: RunConfig | None = None
        self._so_far: RecordSoFar | None = None  # the run's record as its events tell it
        self._terminal = False
        self._error_text = ""

    # -- state ------------------------------------------------------------------------
    @property
    def state(self) -> str:
        return self._state

    @property
    def busy(self) -> bool:
        return self._state != IDLE

    @property
    def process(self) -> Any:
        """The current worker process, or ``None`` (for tests and the benchmark)."""
        return self._process

    def _set_state(self, state: str) -> None:
        if state != self._state:
            self._state = state
            self.state_changed.emit(state)

    # -- control ----------------------------------------------------------------------
    def start(
        self,
        config: RunConfig,
        cpu_devices: int | None = None,
        view: tuple[str, int] = ("rgb", 0),
        hooks: dict[str, Any] | None = None,
        session_options: dict[str, Any] | None = None,
    ) -> None:
        """Start a worker process for ``config``; refused while a run is in progress.

        An implementation registered at run time (a test's fake) travels with
        the request and is registered in the worker for the run.
        """
        from som_studio.worker.process import RunRequest, run_worker

        if self.busy:
            raise RuntimeError("a run is already in progress")
        impl = registry.get(config.impl) if config.impl in registry.names() else None
        extra = (impl,) if impl is not None and not registry.is_builtin(impl.name) else ()
        self._reset_run()
        self._config = config
        self._so_far = RecordSoFar(config)
        self._killed = False
        self._stop_requested_at = None
        self._checkpoints = bool((session_options or {}).get("checkpoint"))
        ctx = start.context()
        events_r, events_w = ctx.Pipe(duplex=False)
        control_r, control_w = ctx.Pipe(duplex=False)
        proc = start.process(
            ctx,
            run_worker,
            (
                RunRequest(config, cpu_devices, view, dict(hooks or {}), dict(session_options or {}), extra),
                events_w,
                control_r,
            ),
            name="som-studio-worker",
            daemon=True,
        )
        self._set_state(STARTING)
        try:
            proc.start()
        except BaseException:
            for conn in (events_r, events_w, control_r, control_w):
                conn.close()
            self._set_state(IDLE)
            raise
        # Close our copies of the child's ends, so its exit reads as end-of-file here.
        events_w.close()
        control_r.close()
        self._process, self._control = proc, control_w
        reader = PipeReader(events_r, proc)
        reader.events_ready.connect(self._on_events_ready)
        reader.ended.connect(self._on_ended)
        self._reader = reader
        reader.start()

    def _send(self, msg: msgs.Message) -> None:
        if self._control is not None:
            try:
                self._control.send(msgs.encode(msg))
            except (OSError, ValueError):  # the worker is gone already
                pass

    def pause(self) -> None:
        if self._state == RUNNING:
            self._send(msgs.Pause())
            self._set_state(PAUSED)

    def resume(self) -> None:
        if self._state == PAUSED:
            self._send(msgs.Resume())
            self._set_state(RUNNING)

    def toggle_pause(self) -> None:
        """Pause a running run, resume a paused one."""
        if self._state == PAUSED:
            self.resume()
        else:
            self.pause()

    def set_view(self, mode: str, component: int) -> None:
        """Ask the worker for another picture of the map (takes effect with the next frame)."""
        self._send(msgs.SetView(mode, component))

    def set_frame_interval(self, seconds: float) -> None:
        """Ask the worker for a frame at most every ``seconds`` (the map draws them no more often)."""
        self._send(msgs.FrameInterval(seconds))

    def stop(self) -> None:
        """Cancel the run; kill the worker if it has not ended ``KILL_AFTER_MS`` later."""
        if self._state in (IDLE, STOPPING):
            return
        self._stop_requested_at = time.perf_counter()
        self._set_state(STOPPING)
        self._send(msgs.Cancel())
        # The session checks for cancel only between chunks: before the first
        # one (start-up, compile) and when one chunk takes longer than the
        # grace period, waiting cannot help, so the process goes at once.
        so_far = self._so_far
        chunks = so_far.record.chunks if so_far is not None else ()
        last_chunk_s = chunks[-1].seconds if chunks else 0.0
        training = so_far is not None and so_far.started and so_far.compiled
        if training and self._checkpoints:
            # It stops at the end of its chunk (a streamed epoch: at its next batch) and writes where
            # it stood: worth the wait; a longer chunk is killed, its last checkpoint kept.
            self._kill_timer.start(CHECKPOINT_GRACE_MS)
        elif not training or last_chunk_s > KILL_AFTER_MS / 1000 / 2:
            self._kill_if_alive()  # its last checkpoint, if any, is kept
        else:
            self._kill_timer.start(KILL_AFTER_MS)

    def _kill_if_alive(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._killed = True
            self._process.kill()

    def shutdown(self, timeout_s: float = 1.5) -> None:
        """End any run now and wait for its process and thread (closing the window)."""
        proc, reader = self._process, self._reader
        if proc is not None:
            self._send(msgs.Cancel())
            proc.join(KILL_AFTER_MS / 1000)
            if proc.is_alive():
                self._killed = True
                proc.kill()
                proc.join(timeout_s)
        if reader is not None:
            reader.wait(int(timeout_s * 1000))
        self._kill_timer.stop()
        self._dispatch_timer.stop()
        self._cleanup()

    def _cleanup(self) -> None:
        if self._control is not None:
            self._control.close()
        self._control = None
        if self._reader is not None:
            self._reader.events_ready.disconnect(self._on_events_ready)
            self._reader.ended.disconnect(self._on_ended)
            self._reader.wait()
            self._reader.deleteLater()
        self._reader = None
        if self._process is not None and self._process.exitcode is not None:
            self._process.close()
        self._process = None
        self._set_state(IDLE)

    # -- from the reader ----------------------------------------------------------------
    def _on_events_ready(self) -> None:
        """Take what the reader holds, at most :data:`MAX_DISPATCH_HZ` times a second.

        Until it is taken the reader keeps collecting and does not signal again,
        so waiting here costs nothing and bounds the GUI's work per second,
        however fast chunks and frames arrive.
        """
        if self._reader is None:
            return
        wait_s = self._last_dispatch + 1 / MAX_DISPATCH_HZ - time.perf_counter()
        if wait_s > 0:
            if not self._dispatch_timer.isActive():
                self._dispatch_timer.start(max(1, int(wait_s * 1000)))
            return
        self._dispatch_now()

    def _dispatch_now(self) -> None:
        if self._reader is None:
            return
        self._last_dispatch = time.perf_counter()
        items, frame = self._reader.take()
        chunks: list[ChunkTimed] = []
        progress: EpochProgress | None = None  # only the latest is worth showing
        for msg in items:
            if isinstance(msg, msgs.EventMessage) and isinstance(msg.event, EpochProgress):
                progress = msg.event
                continue
            timed = msg.chunks if isinstance(msg, msgs.ChunksMessage) else ()
            if isinstance(msg, msgs.EventMessage) and isinstance(msg.event, ChunkTimed):
                timed = (msg.event,)
            if timed:
                for ev in timed:
                    chunks.append(ev)
                    self._feed(ev)
                if progress is not None and progress.iteration < chunks[-1].end:
                    progress = None  # its epoch ended
                continue
            if chunks:
                self.chunks_timed.emit(chunks)
                chunks = []
            final = isinstance(msg, msgs.FinalMap) or (
                isinstance(msg, msgs.EventMessage) and isinstance(msg.event, (Finished, Failed))
            )
            if frame is not None and final:
                self.frame_ready.emit(frame.frame)  # draw the final map before saying it is final
                frame = None
            self._dispatch(msg)
        if chunks:
            self.chunks_timed.emit(chunks)
        if progress is not None and not self._terminal:
            self.epoch_progress.emit(progress)
        if frame is not None:
            self.frame_ready.emit(frame.frame)

    def _dispatch(self, msg: msgs.Message) -> None:
        if isinstance(msg, msgs.WorkerError):
            self._error_text = msg.text
            return
        if isinstance(msg, msgs.FinalMap):
            self.final_map.emit(msg.map)
            return
        if not isinstance(msg, msgs.EventMessage):
            return
        ev = msg.event
        self._feed(ev)
        if isinstance(ev, Started):
            if self._state == STARTING:
                self._set_state(RUNNING)
            self.run_started.emit(ev)
        elif isinstance(ev, Compiled):
            self.compiled.emit(ev)
        elif isinstance(ev, QualityMeasured):
            self.quality_measured.emit(ev)
        elif isinstance(ev, CombinationTrained):
            self.combination_trained.emit(ev)
        elif isinstance(ev, Finished):
            self._terminal = True
            self.run_finished.emit(ev.record)
        elif isinstance(ev, Failed):
            self._terminal = True
            self.run_failed.emit(ev.record.message, ev.record)

    def _on_ended(self, code: int) -> None:
        if self._process is None:
            # Already shut down (the window closed): a queued signal from the
            # reader's last moments; nothing is waiting for it.
            return
        self.last_exitcode = code
        self._dispatch_timer.stop()
        self._dispatch_now()  # anything that arrived with the end
        if self._stop_requested_at is not None:
            self.stop_latencies.append(time.perf_counter() - self._stop_requested_at)
        self._kill_timer.stop()
        if not self._terminal:
            so_far = self._so_far or RecordSoFar(self._config or RunConfig())
            record = so_far.record
            if self._stop_requested_at is not None:
                record.status = "cancelled"
                record.message = (
                    self.tr("stopped while starting")
                    if not so_far.started
                    else self.tr("stopped during compilation")
                    if not so_far.compiled
                    else self.tr("stopped after {n} iterations").format(n=so_far.iterations_done)
                )
                self.run_finished.emit(record)
            else:
                reason = describe_exit(code)
                if self._error_text:
                    last = self._error_text.strip().splitlines()[-1]
                    reason = f"{reason}: {last}"
                record.status, record.message = "failed", reason
                self.run_failed.emit(reason, record)
        self._cleanup()
        self._set_state(IDLE)
        self.run_ended.emit()

    def _feed(self, event: object) -> None:
        if self._so_far is not None:
            self._so_far.feed(event)
