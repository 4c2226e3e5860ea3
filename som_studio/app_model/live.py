"""The active run's live state: progress, elapsed time, the estimate of what is left, what to say.

:class:`LiveRun` follows one run through the session's events (as the app's
controller forwards them) and answers what the status bar shows, so the
window only renders it. Times are passed in (``now``), which keeps it
testable without a clock.

Threads: one thread (the GUI's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from som_studio.app_model.form import app_message
from som_studio.config import RunConfig
from som_studio.report.content import format_seconds
from som_studio.session.events import ChunkTimed, Compiled, Started
from som_studio.session.record import RunRecord


@dataclass
class LiveRun:
    """Progress of the run in progress (or of the last one)."""

    impl: str = ""
    total: int = 0
    done: int = 0
    train_elapsed: float = 0.0  # training seconds up to the last chunk, for the estimate
    t0: float | None = None
    paused_s: float = 0.0  # time spent paused, not counted as elapsed
    paused_at: float | None = None

    def begin(self, config: RunConfig, now: float) -> str:
        """A run of ``config`` starts now; the status line."""
        self.impl, self.total, self.done, self.train_elapsed, self.t0 = config.impl, config.iterations, 0, 0.0, now
        self.paused_s, self.paused_at = 0.0, None
        return f"Starting {config.impl} on a {config.grid} map…"

    def started(self, ev: Started) -> str:
        self.total = ev.iterations
        return f"{ev.config.impl}: compiling and warming up…"

    @staticmethod
    def compiled(ev: Compiled) -> str:
        if ev.compiles:
            return (
                f"Training ({ev.compiles} compilation{'s' if ev.compiles != 1 else ''}, "
                f"{format_seconds(ev.seconds)} compile + warm-up)"
            )
        return f"Training ({format_seconds(ev.seconds)} warm-up)"  # NumPy: nothing to compile

    def chunks(self, chunks: Sequence[ChunkTimed]) -> None:
        self.done = chunks[-1].end
        self.train_elapsed = chunks[-1].elapsed_s

    @property
    def progress(self) -> float:
        """Done, 0 to 1."""
        return self.done / self.total if self.total else 0.0

    def time_text(self, now: float, running: bool = True) -> str:
        """``elapsed`` (and, while running, the estimate of what is left and the count)."""
        if self.t0 is None:
            return ""
        text = f"elapsed {self.elapsed(now):5.1f} s"
        if running and self.done and self.total:
            rate = self.train_elapsed / self.done
            text += f"   ETA {rate * (self.total - self.done):5.1f} s   {self.done:,}/{self.total:,}"
        return text

    def pause(self, now: float) -> None:
        """The run paused now: the elapsed time stops here until :meth:`resume`."""
        if self.paused_at is None:
            self.paused_at = now

    def resume(self, now: float) -> None:
        if self.paused_at is not None:
            self.paused_s += now - self.paused_at
            self.paused_at = None

    def elapsed(self, now: float) -> float:
        """Seconds since the run began, pauses left out."""
        if self.t0 is None:
            return 0.0
        end = self.paused_at if self.paused_at is not None else now
        return end - self.t0 - self.paused_s

    @staticmethod
    def finished(record: RunRecord) -> str:
        if record.status == "ok":
            med = record.median_s
            n = record.iterations_done
            return f"Finished {record.impl}: {n:,} iteration{'' if n == 1 else 's'} in {record.total_s:.2f} s" + (
                f", median {format_seconds(med)}/iteration" if med else ""
            )
        return f"Stopped {record.impl}: {app_message(record.message)}"

    @staticmethod
    def failed(message: str) -> str:
        return f"Failed: {app_message(message)}"
