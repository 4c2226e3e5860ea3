"""The active run's live state: progress, elapsed time, the estimate of what is left, what to say.

:class:`LiveProgress` follows one run through the session's events (as the app's
controller forwards them) and answers what the status bar shows, so the
window only renders it. Times are passed in (``now``), which keeps it
testable without a clock.

Threads: one thread (the GUI's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from som_studio.app_model.estimate import duration_words
from som_studio.app_model.form import app_message
from som_studio.comparison.words import format_seconds
from som_studio.config import RunConfig
from som_studio.i18n import _, ngettext
from som_studio.session import timing
from som_studio.session.events import ChunkTimed, Compiled, EpochProgress, Started
from som_studio.session.record import RunRecord


@dataclass
class LiveProgress:
    """Progress of the run in progress (or of the last one)."""

    impl: str = ""
    total: int = 0
    done: int = 0
    first: int = 0  # where the rate is measured from: 0, or a resumed run's first whole chunk's start
    base_s: float = 0.0  # training seconds before ``first`` (a resumed run's first chunk)
    rebase: bool = False  # a resumed run whose first chunk is still to come
    train_elapsed: float = 0.0  # training seconds up to the last chunk, for the estimate
    t0: float | None = None
    paused_s: float = 0.0  # time spent paused, not counted as elapsed
    paused_at: float | None = None
    #: Where the streamed epoch being trained stands (``None``: none, or it ended).
    epoch: EpochProgress | None = None

    def begin(self, config: RunConfig, now: float) -> str:
        """A run of ``config`` starts now; the status line."""
        self.impl, self.total, self.done, self.first = config.impl, config.iterations, 0, 0
        self.train_elapsed, self.base_s, self.t0 = 0.0, 0.0, now
        self.paused_s, self.paused_at, self.epoch = 0.0, None, None
        return _("Starting {impl} on a {grid} map…").format(impl=config.impl, grid=config.grid)

    def started(self, ev: Started) -> str:
        self.total, self.done, self.first, self.rebase = ev.iterations, ev.first, ev.first, ev.first > 0
        from som_studio.core.impls import registry

        if registry.backend(ev.config.impl) == "numpy":  # nothing to compile
            return _("{impl}: warming up…").format(impl=ev.config.impl)
        return _("{impl}: compiling and warming up…").format(impl=ev.config.impl)

    @staticmethod
    def compiled(ev: Compiled) -> str:
        if ev.compiles:
            text = ngettext(
                "Training ({n} compilation, {time} compile + warm-up)",
                "Training ({n} compilations, {time} compile + warm-up)",
                ev.compiles,
            )
            return text.format(n=ev.compiles, time=format_seconds(ev.seconds))
        if timing.nothing_compiled(ev.seconds, ev.compiles):  # NumPy: nothing to compile, no warm-up to speak of
            return _("Training")
        return _("Training ({time} warm-up)").format(time=format_seconds(ev.seconds))  # programs from the cache

    def chunks(self, chunks: Sequence[ChunkTimed]) -> None:
        if self.rebase:
            # A resumed run's first chunk may be the rest of an epoch (a stream's, its rows read before it was
            # stopped): the rate is taken from the chunks after it.
            self.first, self.base_s, self.rebase = chunks[0].end, chunks[0].elapsed_s, False
        self.done = chunks[-1].end
        self.train_elapsed = chunks[-1].elapsed_s
        if self.epoch is not None and self.epoch.iteration < self.done:
            self.epoch = None  # that epoch ended

    def epochs_text(self) -> str:
        """A streamed run between epochs (the last one's progress would stand stale while the next one's first
        batch is read)."""
        return _("{done:,} of {total:,} epochs done; reading the next").format(done=self.done, total=self.total)

    def progressed(self, ev: EpochProgress) -> str:
        """A streamed epoch moved on; the status line (:meth:`epoch_text`)."""
        self.epoch = ev
        return self.epoch_text()

    def epoch_text(self) -> str:
        """Where the streamed epoch stands: its rows done, the rows per second, its time left and the disk's share."""
        e = self.epoch
        if e is None:
            return ""
        text = _("Epoch {n:,} of {total:,}: {row:,} of {rows:,} rows, {rate:,.0f} rows/s").format(
            n=e.iteration + 1, total=self.total or e.iteration + 1, row=e.row, rows=e.rows, rate=e.rows_per_s
        )
        left = e.epoch_left_s
        if left is not None:
            text += _(", {time} left in it").format(time=duration_words(left))
        return text + _("; waiting for the disk {share:.0%} of the time").format(share=e.wait_share)

    @property
    def progress(self) -> float:
        """Done, 0 to 1 (a streamed epoch's rows counted as they are trained on)."""
        if not self.total:
            return 0.0
        e = self.epoch
        done = self.done + (e.row / e.rows if e is not None and e.rows else 0.0)
        return min(1.0, done / self.total)

    def left_s(self) -> float | None:
        """Training seconds the run has left at its rate so far; ``None`` while no rate is known.

        Inside a streamed epoch: what is left of it at the rows per second of this pass, and each
        later epoch at the time this one takes at that rate.
        """
        e = self.epoch
        if e is not None:
            left = e.epoch_left_s
            if left is None:
                return None
            return left + e.rows / e.rows_per_s * max(0, self.total - e.iteration - 1)
        if self.done > self.first and self.total:  # the rate of what this run trained (not a checkpoint's)
            return (self.train_elapsed - self.base_s) / (self.done - self.first) * (self.total - self.done)
        return None

    def time_text(self, now: float, running: bool = True) -> str:
        """``elapsed`` (and, while running, the estimate of what is left and the count)."""
        if self.t0 is None:
            return ""
        text = _("elapsed {seconds} s").format(seconds=f"{self.elapsed(now):5.1f}")
        left_s = self.left_s() if running else None
        if left_s is not None:
            # Past a minute in minutes and hours, as the run panel's estimate says it ("ETA 3673.3 s" was shown).
            left = _("ETA {duration}").format(duration=f"{left_s:5.1f} s" if left_s < 60 else duration_words(left_s))
            text += f"   {left}   {self.done:,}/{self.total:,}"
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
            # total_s holds the compile and the initial map: said so, or 30 iterations of 1.81 ms read as 0.27 s
            text = ngettext(
                "Finished {impl}: {n:,} iteration in {seconds} s, compile and initial map included",
                "Finished {impl}: {n:,} iterations in {seconds} s, compile and initial map included",
                n,
            ).format(impl=record.impl, n=n, seconds=f"{record.total_s:.2f}")
            if med:
                text += _(", median {time}/iteration").format(time=format_seconds(med))
            if record.label_purity is not None:
                text += _(", label purity {purity}").format(purity=f"{record.label_purity:.3f}")
            check = record.extra.get("agreement")
            if isinstance(check, dict):  # a user's implementation, checked against the reference
                from som_studio.core.impls.user_impl import agreement_text

                text += "; " + agreement_text(check)
            return text
        return _("Stopped {impl}: {message}").format(impl=record.impl, message=app_message(record))

    @staticmethod
    def failed(record: RunRecord) -> str:
        return _("Failed: {message}").format(message=app_message(record))
