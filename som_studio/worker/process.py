"""The worker process: runs one :class:`~som_studio.session.session.Session` and streams its events.

Qt-free: this module is the target of a child process, one per run, started
by :mod:`som_studio.worker.start`. A process (not a thread) is what makes the app's requirements hold: a
compile cannot be interrupted from Python but a process can be killed; an XLA
abort or an out-of-memory kill takes down only the child; the simulated CPU
device count is fixed per process, so each run may choose its own; and device
memory goes back to the system when the child exits.

The messages both ways are :mod:`som_studio.worker.messages` (typed,
versioned). A run is asked for with a :class:`RunRequest`; implementations
registered at run time in the app (a test's fake, a plug-in) travel with it
and are registered in the child for the run.

Threads in the child: the main thread drives the session; a sender thread
renders frames and writes the pipe (so a slow reader or a large map never
stalls training between chunks); a control thread reads commands. Frames are
latest-only all the way: a snapshot the sender has not taken yet is replaced
by a newer one, never queued behind it, and the sender books each picture's
cost with the session, whose pacer keeps frames within their share of the
training time (:class:`~som_studio.session.timing.FramePacer`) and no more
often than the app says it draws them (``FrameInterval``). Timed chunks go
together a few times a second (:data:`CHUNKS_INTERVAL_S`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from som_studio.session.events import ChunkTimed, Failed, Finished, Snapshot, Started
from som_studio.worker import malloc
from som_studio.worker.messages import (
    Cancel,
    ChunksMessage,
    EventMessage,
    FinalMap,
    FrameInterval,
    FrameMessage,
    Info,
    Message,
    Pause,
    ProtocolError,
    Resume,
    SetView,
    WorkerError,
    decode,
    encode,
)

# A test hook, by name; only the tests set it: it simulates an engine that
# crashes after a given event, which real code cannot do on demand.
HOOK_ABORT_AFTER = "abort_after"  # os.abort() after yielding an event of this type name


@dataclass(frozen=True)
class RunRequest:
    """What one run's worker is asked to do (pickled to the child).

    ``implementations``: registered in the child for the run when it does not
    know them (those the app registered at run time: a test's fake, a plug-in).
    """

    config: Any
    cpu_devices: int | None = None
    view: tuple[str, int] = ("rgb", 0)
    hooks: dict[str, Any] = field(default_factory=dict)
    session_options: dict[str, Any] = field(default_factory=dict)
    implementations: tuple[Any, ...] = ()


#: Least seconds between two messages of timed chunks: a fast run times 25 chunks a second, and each message
#: wakes the app's reader and GUI threads on the cores the training runs on; its plots move a few times a second.
CHUNKS_INTERVAL_S = 0.25


class _Outbox:
    """Events waiting for the sender thread; at most one map snapshot, the latest; timed chunks held together.

    ``ChunkTimed`` events wait, together, until :data:`CHUNKS_INTERVAL_S` has passed since the last
    ones went (or another event comes, which they go before, or the outbox closes): then they go as
    one :class:`~som_studio.worker.messages.ChunksMessage`, each as the session timed it.
    """

    def __init__(self, chunks_interval_s: float = CHUNKS_INTERVAL_S) -> None:
        self._items: deque[Any] = deque()
        self._chunks: list[ChunkTimed] = []  # timed chunks not sent yet, in order
        self._chunks_interval_s = chunks_interval_s
        self._chunks_sent: float | None = None  # when the last chunks went (monotonic)
        self._cond = threading.Condition()
        self._closed = False

    def put(self, item: Any, *, snapshot: bool = False) -> None:
        with self._cond:
            if isinstance(item, EventMessage) and isinstance(item.event, ChunkTimed):
                self._chunks.append(item.event)
                self._cond.notify()
                return
            if snapshot:
                # Keep only the newest picture of the map: an older one still
                # waiting is out of date before it could be drawn.
                for i, old in enumerate(self._items):
                    if isinstance(old, Snapshot):
                        del self._items[i]
                        break
            else:
                self._flush_chunks()  # the chunks before this event go before it
            self._items.append(item)
            self._cond.notify()

    def _flush_chunks(self) -> None:
        if self._chunks:
            self._items.append(ChunksMessage(tuple(self._chunks)))
            self._chunks = []
            self._chunks_sent = time.monotonic()

    def _chunks_wait_s(self) -> float:
        """Seconds until the held chunks may go (0: now)."""
        if self._chunks_sent is None:
            return 0.0
        return max(0.0, self._chunks_sent + self._chunks_interval_s - time.monotonic())

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._flush_chunks()
            self._cond.notify()

    def get(self) -> Any | None:
        with self._cond:
            while True:
                if not self._items and self._chunks:
                    wait_s = self._chunks_wait_s()
                    if wait_s <= 0:
                        self._flush_chunks()
                    else:
                        self._cond.wait(wait_s)
                        continue
                if self._items or self._closed:
                    break
                self._cond.wait()
            item = self._items.popleft() if self._items else None
            self._cond.notify_all()
            return item

    def wait_sent(self, timeout: float) -> None:
        """Send the held chunks and wait until the sender has taken everything (the test hook's crash comes after)."""
        with self._cond:
            self._flush_chunks()
            self._cond.notify_all()
            self._cond.wait_for(lambda: not self._items, timeout)


def send(conn: Connection, msg: Message) -> None:
    """Write one message (:func:`~som_studio.worker.messages.encode`)."""
    conn.send(encode(msg))


def receive(conn: Connection) -> Message:
    """Read one message; :class:`~som_studio.worker.messages.ProtocolError` when it is not one."""
    return decode(conn.recv())


def speak() -> None:
    """Speak the app's language: it hands it down in ``SOM_STUDIO_LANG`` (:func:`som_studio.qt.i18n.apply_language`)."""
    from som_studio import i18n

    i18n.install(i18n.default_language())


def run_worker(request: RunRequest, events: Connection, control: Connection) -> None:
    """Entry point of the child process (a :mod:`multiprocessing` target: :mod:`som_studio.worker.start`)."""
    speak()
    # Before anything imports JAX: the device count of this run's process, and glibc's malloc set up
    # for hours in flat memory (a fixed mmap threshold: JAX starts its threads with it).
    _forget_inherited_cpu_devices()
    malloc.fix_mmap_threshold()
    from som_studio.core import jax_runtime
    from som_studio.core.impls import registry

    jax_runtime.configure(request.cpu_devices)
    try:
        unknown = tuple(i for i in request.implementations if i.name not in registry.names())
        with registry.registered(*unknown):
            _run(request, events, control)
    except BaseException:  # report, never hang the app waiting for an event
        try:
            send(events, WorkerError(traceback.format_exc()))
        except (OSError, ValueError):
            pass
        raise
    finally:
        events.close()
    # Everything is sent: leave without the interpreter's and XLA's slow
    # teardown (the OS returns all memory, device memory included, at once).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _run(request: RunRequest, events: Connection, control: Connection) -> None:
    from som_studio import picture as frames
    from som_studio.session.session import Session

    session = Session(request.config, **request.session_options)
    state: dict[str, Any] = {"view": frames.ViewChoice(*request.view), "range": None, "views": None}
    outbox = _Outbox()
    trim = malloc.trimmer()  # freed memory back to the system every 30 s, from the sender thread

    def read_control() -> None:
        while True:
            try:
                msg = receive(control)
            except (EOFError, OSError):
                session.cancel()  # the app is gone: stop, nobody is watching
                return
            except ProtocolError:
                continue  # not ours to act on; the app's own messages are typed
            if isinstance(msg, Cancel):
                session.cancel()  # a cancelled session skips its final quality pass
            elif isinstance(msg, Pause):
                session.pause()
            elif isinstance(msg, Resume):
                session.resume()
            elif isinstance(msg, SetView):
                state["view"] = frames.ViewChoice(str(msg.mode), int(msg.component))
            elif isinstance(msg, FrameInterval):
                session.frame_interval(float(msg.seconds))

    def send_loop() -> None:
        while (item := outbox.get()) is not None:
            started = item.event if isinstance(item, EventMessage) else item
            if isinstance(started, Started):
                state["range"] = frames.data_range(started)
                state["views"] = frames.MapViews.from_started(started)  # the lattice: hexagons on a hex map
            if isinstance(item, Snapshot):
                tc = time.thread_time()
                if state["range"] is None:
                    state["range"] = frames.feature_range(item.map)
                lo, hi = state["range"]
                views = _live_views(session, state["views"], state["view"], item)
                msg: Message = FrameMessage(frames.make_frame(item.iteration, item.map, state["view"], lo, hi, views))
                # The picture takes the cores the training runs on: it counts against the frames' budget.
                session.frame_cost(time.thread_time() - tc, item.iteration)
            else:
                msg = item
            try:
                send(events, msg)
            except (OSError, ValueError):  # the app closed its end
                session.cancel()
                return
            trim()

    threading.Thread(target=read_control, name="som-control", daemon=True).start()
    sender = threading.Thread(target=send_loop, name="som-sender", daemon=True)
    sender.start()
    abort_after = request.hooks.get(HOOK_ABORT_AFTER)
    last_map = None
    for ev in session.run():
        if isinstance(ev, Snapshot):
            last_map = ev.map
            outbox.put(ev, snapshot=True)
        else:
            if isinstance(ev, (Finished, Failed)) and last_map is not None:
                outbox.put(FinalMap(last_map))
            outbox.put(EventMessage(ev))
        if abort_after == type(ev).__name__:
            # Crash as an engine would in its next chunk: what was yielded is out.
            outbox.wait_sent(5.0)
            time.sleep(0.05)
            os.abort()
    outbox.close()
    sender.join()


def _live_views(session: Any, views: Any, view: Any, snapshot: Snapshot) -> Any:
    """The views' inputs for this frame: hits and labels measured on its map when the view needs them and it is cheap.

    Runs on the sender thread (never the training one); see :mod:`som_studio.picture.mapviews`.
    """
    from som_studio import picture

    data = getattr(session, "data", None)
    kind = picture.KINDS.get(view.mode)
    if views is None or data is None or kind is None or not kind.measured:
        return views
    h, w, d = snapshot.map.shape
    if not picture.cheap_to_measure(len(data), h * w, d):
        return views
    return views.measured(snapshot.map, data, getattr(session, "labels", None), snapshot.iteration)


def _forget_inherited_cpu_devices() -> None:
    """Drop a simulated device count inherited from the app's own environment.

    ``som-studio --cpu-devices N`` configures the app process, and its
    children start in its environment; each run must get the count chosen for
    it (or the machine's real devices), not the app's.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" in flags:
        kept = [f for f in flags.split() if "xla_force_host_platform_device_count" not in f]
        os.environ["XLA_FLAGS"] = " ".join(kept)
        if os.environ.get("JAX_PLATFORMS") == "cpu":
            del os.environ["JAX_PLATFORMS"]


def probe(cpu_devices: int | None, events: Connection) -> None:
    """Child entry point: report the JAX backend, devices and versions, then exit."""
    speak()
    _forget_inherited_cpu_devices()
    from som_studio.core import jax_runtime

    jax_runtime.configure(cpu_devices)
    try:
        from som_studio.session import env as envmod

        send(events, Info(envmod.describe("jax")))
    except Exception as exc:  # JAX cannot start here: say why
        send(events, Info({"error": f"{type(exc).__name__}: {exc}"}))
    finally:
        events.close()


def doctor_report(cpu_devices: int | None, events: Connection) -> None:
    """Child entry point: the environment doctor's report (``som-studio doctor``) as text.

    Run here rather than in the app because it starts JAX and runs
    ``nvidia-smi``; it describes the machine's own devices, as the command does.
    """
    speak()
    _forget_inherited_cpu_devices()
    from som_studio.core import jax_runtime

    jax_runtime.configure(cpu_devices)
    try:
        from som_studio import doctor

        send(events, Info({"text": doctor.report_text()}))
    except Exception:  # the doctor itself failed: show why rather than nothing
        send(events, Info({"error": traceback.format_exc()}))
    finally:
        events.close()


def describe_exit(code: int) -> str:
    """What a worker's exit code says about how it ended (``-999``: its end was not seen)."""
    import signal

    from som_studio.i18n import _

    if code < 0 and code != -999:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = _("signal {number}").format(number=-code)
        hint = {
            "SIGKILL": _(" (killed: out of memory, or by another program)"),
            "SIGABRT": _(" (aborted: typically an XLA or CUDA error)"),
            "SIGSEGV": _(" (crashed)"),
        }.get(name, "")
        return _("the training process was ended by {signal}{hint}").format(signal=name, hint=hint)
    return _("the training process exited with status {code}").format(code=code)
