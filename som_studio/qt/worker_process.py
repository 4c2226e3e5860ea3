"""The worker process: runs one :class:`~som_studio.session.session.Session` and streams its events.

Qt-free: this module is the target of a ``spawn``-ed child process, one per
run. A process (not a thread) is what makes the app's requirements hold: a
compile cannot be interrupted from Python but a process can be killed; an XLA
abort or an out-of-memory kill takes down only the child; the simulated CPU
device count is fixed per process, so each run may choose its own; and device
memory goes back to the system when the child exits.

Protocol (every message is a tuple, pickled through a one-way pipe):

child -> parent (``events``):
  ``("event", ev)``      a session event; ``Snapshot`` is replaced by a
                         ``("frame", MapFrame)`` rendered here, coalesced to
                         the latest while the pipe is busy;
  ``("final_map", map)`` the last map, raw, just before ``Finished``/``Failed``
                         (so the app can show it in any view afterwards);
  ``("error", text)``    the worker itself failed outside the session.

parent -> child (``control``): ``"cancel"``, ``"pause"``, ``"resume"``,
``("view", mode, component)``. End of file on ``control`` (the app died)
cancels the run.

Threads in the child: the main thread drives the session; a sender thread
renders frames and writes the pipe (so a slow reader or a large map never
stalls training between chunks); a control thread reads commands.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from collections import deque
from multiprocessing.connection import Connection
from typing import Any

# Test hooks, by name; only the tests set them (they simulate an engine that
# crashes or a compile that does not return, which real code cannot do on demand).
HOOK_ABORT_AFTER = "abort_after"  # os.abort() after yielding an event of this type name
HOOK_BLOCK_WARMUP = "block_warmup_s"  # warm-up blocks this long, deaf to cancel, like a compile


class _Outbox:
    """Events waiting for the sender thread; at most one map snapshot, the latest."""

    def __init__(self) -> None:
        self._items: deque[Any] = deque()
        self._cond = threading.Condition()
        self._closed = False

    def put(self, item: Any, *, snapshot: bool = False) -> None:
        with self._cond:
            if snapshot:
                # Keep only the newest picture of the map: an older one still
                # waiting is out of date before it could be drawn.
                for i, old in enumerate(self._items):
                    if old[0] == "snapshot":
                        del self._items[i]
                        break
            self._items.append(item)
            self._cond.notify()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def get(self) -> Any | None:
        with self._cond:
            while not self._items and not self._closed:
                self._cond.wait()
            item = self._items.popleft() if self._items else None
            self._cond.notify_all()
            return item

    def wait_sent(self, timeout: float) -> None:
        """Wait until the sender has taken everything (the test hook's crash comes after)."""
        with self._cond:
            self._cond.wait_for(lambda: not self._items, timeout)


def run_worker(
    config: Any,
    cpu_devices: int | None,
    events: Connection,
    control: Connection,
    view: tuple[str, int] = ("rgb", 0),
    hooks: dict[str, Any] | None = None,
    session_options: dict[str, Any] | None = None,
) -> None:
    """Entry point of the child process (``multiprocessing`` ``spawn`` target)."""
    # Before anything imports JAX: the device count of this run's process.
    _forget_inherited_cpu_devices()
    from som_studio.core import jax_runtime

    jax_runtime.configure(cpu_devices)
    hooks = dict(hooks or {})
    try:
        _run(config, events, control, view, hooks, session_options or {})
    except BaseException:  # report, never hang the app waiting for an event
        try:
            events.send(("error", traceback.format_exc()))
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


def _run(
    config: Any,
    events: Connection,
    control: Connection,
    view: tuple[str, int],
    hooks: dict[str, Any],
    options: dict[str, Any],
) -> None:
    from som_studio.qt import frames
    from som_studio.session.events import Failed, Finished, Snapshot
    from som_studio.session.session import Session

    if hooks.get(HOOK_BLOCK_WARMUP):
        _install_blocking_warmup(float(hooks[HOOK_BLOCK_WARMUP]))
    session = Session(config, **options)
    state: dict[str, Any] = {"view": frames.ViewChoice(*view), "range": None}
    outbox = _Outbox()

    def read_control() -> None:
        while True:
            try:
                msg = control.recv()
            except (EOFError, OSError):
                session.cancel()  # the app is gone: stop, nobody is watching
                return
            if msg == "cancel":
                session.cancel()  # a cancelled session skips its final quality pass
            elif msg == "pause":
                session.pause()
            elif msg == "resume":
                session.resume()
            elif isinstance(msg, tuple) and msg[0] == "view":
                state["view"] = frames.ViewChoice(str(msg[1]), int(msg[2]))

    def send_loop() -> None:
        while (item := outbox.get()) is not None:
            if item[0] == "snapshot":
                ev = item[1]
                if state["range"] is None:
                    state["range"] = frames.feature_range(ev.map)
                lo, hi = state["range"]
                msg: tuple[str, Any] = ("frame", frames.make_frame(ev.iteration, ev.map, state["view"], lo, hi))
            else:
                msg = item
            try:
                events.send(msg)
            except (OSError, ValueError):  # the app closed its end
                session.cancel()
                return

    threading.Thread(target=read_control, name="som-control", daemon=True).start()
    sender = threading.Thread(target=send_loop, name="som-sender", daemon=True)
    sender.start()
    abort_after = hooks.get(HOOK_ABORT_AFTER)
    last_map = None
    for ev in session.run():
        if isinstance(ev, Snapshot):
            last_map = ev.map
            outbox.put(("snapshot", ev), snapshot=True)
        else:
            if isinstance(ev, (Finished, Failed)) and last_map is not None:
                outbox.put(("final_map", last_map))
            outbox.put(("event", ev))
        if abort_after == type(ev).__name__:
            # Crash as an engine would in its next chunk: what was yielded is out.
            outbox.wait_sent(5.0)
            time.sleep(0.05)
            os.abort()
    outbox.close()
    sender.join()


def _forget_inherited_cpu_devices() -> None:
    """Drop a simulated device count inherited from the app's own environment.

    ``som-studio --cpu-devices N`` configures the app process, and spawned
    children inherit its environment; each run must get the count chosen for
    it (or the machine's real devices), not the app's.
    """
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" in flags:
        kept = [f for f in flags.split() if "xla_force_host_platform_device_count" not in f]
        os.environ["XLA_FLAGS"] = " ".join(kept)
        if os.environ.get("JAX_PLATFORMS") == "cpu":
            del os.environ["JAX_PLATFORMS"]


def _install_blocking_warmup(seconds: float) -> None:
    """Test hook: every trainer's warm-up blocks for ``seconds``, like a long compile."""
    import time

    from som_studio.core.protocol import Implementation

    create = Implementation.create

    def create_blocking(self: Implementation, problem: Any) -> Any:
        trainer = create(self, problem)
        warmup = trainer.warmup

        def slow_warmup() -> None:
            time.sleep(seconds)  # uninterruptible from the session, as a compile is
            warmup()

        trainer.warmup = slow_warmup  # type: ignore[method-assign]  # a test hook wraps this one trainer's warmup
        return trainer

    Implementation.create = create_blocking  # type: ignore[method-assign]


def probe(cpu_devices: int | None, events: Connection) -> None:
    """Child entry point: report the JAX backend, devices and versions, then exit."""
    _forget_inherited_cpu_devices()
    from som_studio.core import jax_runtime

    jax_runtime.configure(cpu_devices)
    try:
        from som_studio.session import env as envmod

        info = envmod.describe("jax")
        events.send(("info", info))
    except Exception as exc:  # JAX cannot start here: say why
        events.send(("info", {"error": f"{type(exc).__name__}: {exc}"}))
    finally:
        events.close()


def doctor_report(cpu_devices: int | None, events: Connection) -> None:
    """Child entry point: the environment doctor's report (``som-studio doctor``) as text.

    Run here rather than in the app because it starts JAX and runs
    ``nvidia-smi``; it describes the machine's own devices, as the command does.
    """
    _forget_inherited_cpu_devices()
    from som_studio.core import jax_runtime

    jax_runtime.configure(cpu_devices)
    try:
        from som_studio import doctor

        events.send(("info", {"text": doctor.report_text()}))
    except Exception:  # the doctor itself failed: show why rather than nothing
        events.send(("info", {"error": traceback.format_exc()}))
    finally:
        events.close()
