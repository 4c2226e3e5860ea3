"""Ctrl-C's handler where Python loses what it raises: inside a garbage-collector callback."""

from __future__ import annotations

import gc
import io
import signal
import sys

import pytest

from som_studio.session.events import Compiled
from som_studio.session.interrupt import CtrlC


def test_a_ctrl_c_lost_in_a_gc_callback_interrupts_at_the_next_event(monkeypatch) -> None:
    printed: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: printed.append(u.exc_type))
    raised = []

    def collecting(phase: str, _info: dict) -> None:  # as JAX's callback runs while XLA compiles
        if phase == "start" and not raised:
            raised.append(True)
            signal.raise_signal(signal.SIGINT)

    with CtrlC() as ctrl_c:
        gc.callbacks.append(collecting)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(collecting)
        assert raised and not printed  # Python went on; no traceback for the user to read
        with pytest.raises(KeyboardInterrupt):
            ctrl_c.follow(Compiled(seconds=1.0, compiles=1))


def test_other_lost_exceptions_are_still_reported(monkeypatch) -> None:
    printed: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: printed.append(u.exc_type))

    class Faulty:
        def __del__(self) -> None:
            raise ValueError("lost")

    with CtrlC():
        Faulty()
    assert printed == [ValueError]
    assert sys.unraisablehook is not None and sys.unraisablehook.__name__ == "<lambda>"  # put back


def _lose_a_ctrl_c() -> None:
    """SIGINT raised inside a garbage-collector callback, where Python loses what the handler raises."""
    raised = []

    def collecting(phase: str, _info: dict) -> None:
        if phase == "start" and not raised:
            raised.append(True)
            signal.raise_signal(signal.SIGINT)

    gc.callbacks.append(collecting)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(collecting)
    assert raised


def test_a_ctrl_c_lost_after_the_last_event_still_interrupts(monkeypatch) -> None:
    printed: list[type[BaseException]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: printed.append(u.exc_type))
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        with CtrlC():
            _lose_a_ctrl_c()  # the session's events are over: no follow() comes to raise it
    assert not printed
    assert signal.getsignal(signal.SIGINT) is before
    assert sys.unraisablehook.__name__ == "<lambda>"  # put back


def test_a_ctrl_c_raised_again_at_an_event_is_not_raised_twice(monkeypatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    with CtrlC() as ctrl_c:
        _lose_a_ctrl_c()
        with pytest.raises(KeyboardInterrupt):
            ctrl_c.follow(Compiled(seconds=1.0, compiles=1))
    # the with block ended without a second KeyboardInterrupt


def test_a_hook_set_inside_is_left_in_place(monkeypatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)

    def theirs(_u: object) -> None:
        pass

    with CtrlC():
        sys.unraisablehook = theirs  # a library sets its own hook while the session runs
    assert sys.unraisablehook is theirs


def test_a_ctrl_c_lost_while_another_exception_leaves_does_not_replace_it(monkeypatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    left: BaseException | None = None
    try:
        with CtrlC():
            _lose_a_ctrl_c()
            raise ValueError("the session's own")  # what the caller must see, not a KeyboardInterrupt in its place
    except BaseException as e:  # caught here: a KeyboardInterrupt let through would stop pytest, not fail the test
        left = e
    assert type(left) is ValueError


def test_the_hook_is_put_back_even_where_the_handler_cannot_be(monkeypatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    before = signal.getsignal(signal.SIGINT)

    def refused(*_args: object) -> None:
        raise ValueError("signal only works in main thread of the main interpreter")

    try:
        with pytest.raises(ValueError, match="main thread"):
            with CtrlC():
                monkeypatch.setattr(signal, "signal", refused)
        assert sys.unraisablehook.__name__ == "<lambda>"  # put back though __exit__ raised before it
    finally:
        monkeypatch.undo()  # the real signal.signal back, to take out the handler CtrlC could not
        signal.signal(signal.SIGINT, before)


def test_the_first_ctrl_c_is_said_even_when_it_lands_inside_a_write_to_stderr(monkeypatch, tmp_path) -> None:
    # The progress bar writes to stderr many times a second; a Ctrl-C inside one such write ran the handler while
    # the stream's buffer was held, and the handler's own write to it raised instead of saying the run stops.
    class Session:
        cancelled = False

        def cancel(self) -> None:
            self.cancelled = True

    path = tmp_path / "stderr"
    with open(path, "wb", buffering=0) as file, CtrlC() as ctrl_c:

        class Terminal(io.RawIOBase):  # the handler runs in the middle of the bar's write, as a signal's would
            def writable(self) -> bool:
                return True

            def fileno(self) -> int:
                return file.fileno()

            def isatty(self) -> bool:
                return True

            def write(self, b) -> int:
                written = file.write(b)
                if not session.cancelled:
                    ctrl_c._on_sigint(signal.SIGINT, None)
                return written

        session = Session()
        ctrl_c.watch(session)
        ctrl_c.follow(Compiled(seconds=1.0, compiles=1))
        with io.TextIOWrapper(io.BufferedWriter(Terminal()), write_through=True) as stderr, monkeypatch.context() as m:
            m.setattr(sys, "stderr", stderr)
            stderr.write("\rnumpy-online [#-----] 1/5000000")
            stderr.flush()
    assert session.cancelled and ctrl_c.requested
    written = path.read_bytes().decode()
    # On a line of its own below the bar's, not run on after its last figures.
    assert (
        written
        == "\rnumpy-online [#-----] 1/5000000\nstopping when the chunk under way ends; Ctrl-C again stops at once\n"
    )
