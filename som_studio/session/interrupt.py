"""Ctrl-C while a session trains: stop it where it can stop cleanly, so its checkpoint keeps where it stood.

The command line and :func:`som_studio.train` (a script, or a notebook, whose interrupt is the same
SIGINT) install one :class:`CtrlC` around their sessions. No Qt.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from typing import Any

from som_studio.i18n import _
from som_studio.session.events import ChunkTimed, Compiled, Started


class CtrlC:
    """SIGINT while a session trains: cancel the session where it can stop cleanly, else interrupt now.

    Between chunks a session stops on its cancel flag, saves its checkpoint and ends its record as
    ``cancelled`` itself, so the first Ctrl-C in the chunk loop only sets that flag (:attr:`requested`
    then tells the caller that it was asked). Loading data, compiling and the final quality pass
    cannot be cancelled (a compile is one call into XLA), so there, and at a second Ctrl-C, the
    handler raises :class:`KeyboardInterrupt`. Installed only in the main thread (where Python runs
    handlers), as a context manager that puts the previous handler back.

    Thread: the handler runs on the main thread, between the session's bytecodes; :meth:`follow` is
    called there with each of the session's events.
    """

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled and threading.current_thread() is threading.main_thread()
        self.session: Any = None
        self.cancellable = False
        self.requested = False
        self._raised = False
        self._lost = False  # a KeyboardInterrupt of ours that Python lost, not raised again yet
        self._total = 0
        self._old: Any = None
        self._old_hook: Any = None

    def __enter__(self) -> CtrlC:
        if self.enabled:
            self._old = signal.signal(signal.SIGINT, self._on_sigint)
            self._old_hook, sys.unraisablehook = sys.unraisablehook, self._on_unraisable
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *_exc: object) -> None:
        if not self.enabled:
            return
        try:
            signal.signal(signal.SIGINT, self._old)
        finally:
            if sys.unraisablehook == self._on_unraisable:  # another hook set since is not ours to undo
                sys.unraisablehook = self._old_hook
        if self._lost and exc_type is None:
            # Lost after the session's last event (its generator's clean-up, say): the Ctrl-C still stops the
            # caller, here rather than never.
            self._lost = False
            raise KeyboardInterrupt

    def watch(self, session: Any) -> None:
        """Cancel ``session`` at the next Ctrl-C once it trains its chunks."""
        self.session = session
        self.cancellable = False

    def check(self) -> None:
        """Stop here if Ctrl-C came and was swallowed: pyarrow catches the :class:`KeyboardInterrupt` the
        handler raises inside its lazy ``import pandas`` (reading a CSV), so only the flag is left."""
        if self.requested:
            raise KeyboardInterrupt

    def follow(self, ev: Any) -> None:
        """Note the session's phase from its event: cancellable from its compile to its last chunk.

        Raises the :class:`KeyboardInterrupt` the handler raised if it was lost: Python only prints an
        exception raised inside a garbage-collector callback (JAX has one, which runs while it compiles), so a
        Ctrl-C handled there would otherwise leave the run training to its end."""
        if self._raised:
            self._lost = False
            raise KeyboardInterrupt
        if isinstance(ev, Started):
            self._total = ev.iterations
        elif isinstance(ev, Compiled):
            self.cancellable = True
        elif isinstance(ev, ChunkTimed) and ev.end >= self._total:  # the final quality pass cannot be cancelled
            self.cancellable = False

    def _on_unraisable(self, unraisable: Any) -> None:
        """Python's report of an exception it could not raise: ours, lost, is raised at the next event instead
        of printed as a traceback."""
        if self._raised and unraisable.exc_type is KeyboardInterrupt:
            self._lost = True
        else:
            self._old_hook(unraisable)

    def _on_sigint(self, _signum: int, _frame: object) -> None:
        first = not self.requested
        self.requested = True
        if first and self.cancellable and self.session is not None:
            self.session.cancel()
            # A chunk may be long (your own class's run(), a big epoch): said at once, not only when it ends.
            _tell(_("stopping when the chunk under way ends; Ctrl-C again stops at once"))
            return
        self._raised = True
        raise KeyboardInterrupt


def _tell(text: str) -> None:
    """Write ``text`` on a line of its own to stderr from the signal handler.

    The handler runs between the main thread's bytecodes, which may be inside a write to stderr (the progress
    bar's), and Python's buffered streams refuse a write from inside their own. So where stderr is the process's
    own file, the bytes go to its descriptor, past the buffer (which the bar flushes after each write, so the
    text cannot overtake it); a stream of another kind (a notebook's, a test's capture) is printed to. On a
    terminal the bar holds the line its cursor is on: the text goes below it, and the bar goes on below the text.
    """
    stream = sys.stderr
    if stream is None:
        return
    if isinstance(stream, io.TextIOWrapper):
        try:
            fd, line = stream.fileno(), ("\n" if stream.isatty() else "") + text + "\n"
        except (OSError, ValueError):  # detached or closed
            return
        os.write(fd, line.encode(stream.encoding or "utf-8", errors="replace"))
        return
    print(text, file=stream, flush=True)
