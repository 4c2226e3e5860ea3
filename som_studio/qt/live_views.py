"""The live views of a run: map, timings, quality, sharding, progress and status, fed by the controller.

:class:`LiveViews` connects the :class:`~som_studio.qt.controller.RunController`'s
signals to the views, and lets :class:`~som_studio.app_model.live.LiveProgress` say
what the status bar shows. It also shows a kept run again in the same views.

Threads: GUI thread only.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QProgressBar

from som_studio import picture
from som_studio.app_model.form import app_message
from som_studio.app_model.live import LiveProgress
from som_studio.comparison.words import status_text
from som_studio.core.impls import registry
from som_studio.qt import controller as ctl
from som_studio.qt.widgets.elided_label import ElidedLabel
from som_studio.qt.widgets.map_view import MapView
from som_studio.qt.widgets.quality_plot import QualityPlot
from som_studio.qt.widgets.ticker import TickerLabel
from som_studio.qt.widgets.timing_plot import TimingPlot
from som_studio.session.events import ChunkTimed, Compiled, EpochProgress, QualityMeasured, Started
from som_studio.session.record import RunRecord
from som_studio.storage import FinalMap, StoredRun, replay

PROGRESS_STEPS = 200  # each step repaints the bar (1.5 ms under Xvfb)
#: The status bar's clock and progress bar follow the run this often, not with each batch of chunks: each
#: change repaints part of the status bar, and a clock of seconds says nothing new more often.
STATUS_MS = 1000


class LiveViews(QObject):
    """Renders one run at a time into the window's views.

    Parameters
    ----------
    controller : the run's owner, whose signals feed the views.
    map_view, timing_plot, quality_plot, sharding_view : the views.
    on_env : called with a worker's description of its devices (``Started.env``).
    on_failed : called with the message of a failed run, in the app's words (the window shows a dialog),
        once its worker is gone: the failure arrives as an event before the process has exited, and a
        dialog shown then would invite a new run that the still-busy controller refuses.
    """

    def __init__(
        self,
        controller: ctl.RunController,
        map_view: MapView,
        timing_plot: TimingPlot,
        quality_plot: QualityPlot,
        sharding_view: Any,
        on_env: Any = None,
        on_failed: Any = None,
    ) -> None:
        super().__init__(controller)
        self.controller = controller
        self.map_view, self.timing_plot, self.quality_plot = map_view, timing_plot, quality_plot
        self.sharding_view = sharding_view
        # The status bar's parts.
        self.status = ElidedLabel(self.tr("Ready"))  # a long message never widens the window
        self.time_label = TickerLabel()  # once a second: no relayout of the status bar
        self.progress = QProgressBar()
        self.progress.setRange(0, PROGRESS_STEPS)
        self.progress.setFixedWidth(220)
        self.progress.setAutoFillBackground(True)  # opaque: its moves do not paint the status bar and window again
        self.run = LiveProgress()
        self._on_env = on_env
        self._on_failed = on_failed
        self._failure: str | None = None  # the failed run's message, told when the run has ended
        self._said = ""  # what the run is doing, said again when a pause ends
        self._features: int | None = None  # the last run's, to tell when its view stops making sense
        self._clock = QTimer(self)
        self._clock.setInterval(STATUS_MS)
        self._clock.timeout.connect(self._update_time)

    def connect(self) -> None:  # type: ignore[override]
        """Follow the controller's signals (after whatever must see a run's events first)."""
        c, map_view, quality_plot = self.controller, self.map_view, self.quality_plot
        c.run_started.connect(self._on_run_started)
        c.compiled.connect(self._on_compiled)
        c.chunks_timed.connect(self._on_chunks_timed)
        c.epoch_progress.connect(self._on_epoch_progress)
        c.frame_ready.connect(map_view.show_frame)
        map_view.frame_interval_changed.connect(c.set_frame_interval)
        c.final_map.connect(map_view.keep_final)
        c.quality_measured.connect(quality_plot.add)
        c.run_finished.connect(self._on_run_finished)
        c.run_failed.connect(self._on_run_failed)
        c.state_changed.connect(self._on_state_changed)
        c.run_ended.connect(self._on_run_ended)

    def begin(self, config: Any) -> None:
        """A run of ``config`` was just started."""
        self._failure = None
        text = self.run.begin(config, time.perf_counter())
        self._say(text)
        # Until the new run's first map arrives (its process starts, reads its data), the map shown is the last
        # run's: its caption says what is coming, not "iteration 30" of a run that ended.
        self.map_view.caption.setText(text)
        self.map_view.iteration.setText("")
        self.progress.setValue(0)
        self.timing_plot.begin("batch", 1)
        self.quality_plot.begin()
        self._clock.start()

    def stop_clock(self) -> None:
        self._clock.stop()

    def forget_run(self) -> None:
        """Another kind of work took the status bar (a sweep, whose page says how it goes): the last run's
        elapsed time and progress bar are not its."""
        self._clock.stop()
        self.progress.setValue(0)
        self.time_label.setText("")
        # Nor are the Timings and Quality docks beside it: the sweep's figures are on its page.
        parts = [self.tr("a sweep"), self.tr("its figures are on the Sweep page")]  # while it trains and after
        self.timing_plot.begin("batch", 1)
        self.timing_plot.caption.set_parts(parts)  # each part kept whole, stacked in a narrow dock
        self.quality_plot.begin()
        self.quality_plot.caption.setText(": ".join(parts))

    def close(self) -> None:
        """Closing the window: stop the clock and wait for the map view's drawing thread."""
        self.stop_clock()
        self.map_view.inspector.jobs.wait()

    # -- from the controller ---------------------------------------------------------------
    def _say(self, text: str) -> None:
        """What the run is doing, in the status bar now or, while it is paused or stopping, once that ends
        ("Paused" and "Stopping…" stay said: a run paused while compiling read "Training (…)" once compiled)."""
        self._said = text
        if self.controller.state not in (ctl.PAUSED, ctl.STOPPING):
            self.status.setText(text)

    def _on_run_started(self, ev: Started) -> None:
        self._say(self.run.started(ev))
        before, self._features = self._features, ev.features
        self.map_view.begin(ev.features, ev.config.impl, picture.MapViews.from_started(ev), ev.config)
        if before is not None and before != ev.features:
            # Another kind of data: the last run's view ("Feature 2") means nothing here; its default does.
            default = picture.ViewChoice().fit(ev.features)
            self.map_view.set_choice(default.mode, default.component)
        self.timing_plot.begin(ev.kind, ev.samples, ev.iterations, registry.backend(ev.config.impl) != "numpy")
        self.quality_plot.begin()
        if self._on_env is not None:
            self._on_env(ev.env)
        self.sharding_view.set_run(ev.config, ev.layout, ev.env, ev.features, ev.samples)

    def _on_compiled(self, ev: Compiled) -> None:
        self.timing_plot.set_compile(ev.seconds, ev.compiles)
        self._say(self.run.compiled(ev))

    def _on_chunks_timed(self, chunks: list[Any]) -> None:
        streamed = self.run.epoch is not None
        self.timing_plot.add_chunks(chunks)
        self.run.chunks(chunks)  # the status bar shows it with the clock's next tick
        if streamed and self.run.epoch is None and self.run.done < self.run.total:
            self._say(self.run.epochs_text())

    def _on_epoch_progress(self, ev: EpochProgress) -> None:
        self._say(self.run.progressed(ev))
        self._update_time()

    def _update_time(self) -> None:
        if self.controller.busy:
            self._set_progress(int(PROGRESS_STEPS * self.run.progress))
            # While paused nothing is left "to go" at any rate: the estimate would only count up.
            paused = self.controller.state == ctl.PAUSED
            self.time_label.setText(self.run.time_text(time.perf_counter(), running=not paused))

    def show_progress(self, fraction: float) -> None:
        """The bar at ``fraction`` (0 to 1) of other work that took the status bar (a sweep)."""
        self._set_progress(int(PROGRESS_STEPS * fraction))

    def _set_progress(self, value: int) -> None:
        """Move the bar without its synchronous repaint (``QProgressBar.setValue`` paints and shows the window's
        changes at once): it is painted with the clock's text and the map's frame, in one pass."""
        if value == self.progress.value():
            return
        self.progress.setUpdatesEnabled(False)
        self.progress.setValue(value)
        self.progress.setUpdatesEnabled(True)  # schedules its paint

    def _on_run_finished(self, record: RunRecord) -> None:
        # The run itself lands in the run list through the comparison's recorder. The header ends
        # on the figures the record holds, not the rolling ones.
        self.timing_plot.finish(record.median_s, record.mean_s)
        self.quality_plot.ended()
        # The record brings the run's model (hits, labels, clusters): their views are offered from now on.
        self.map_view.set_views(picture.MapViews.from_record(record))
        self.progress.setValue(PROGRESS_STEPS if record.status == "ok" else int(PROGRESS_STEPS * self.run.progress))
        self.status.setText(self.run.finished(record))

    def _on_run_failed(self, message: str, record: RunRecord) -> None:
        self._set_progress(int(PROGRESS_STEPS * self.run.progress))  # where it broke
        self.timing_plot.flush()
        self.quality_plot.ended()
        self.status.setText(self.run.failed(record))
        self._failure = app_message(record)

    def _on_run_ended(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None and self._on_failed is not None:
            self._on_failed(failure)

    def _on_state_changed(self, state: str) -> None:
        if state == ctl.PAUSED:
            self.run.pause(time.perf_counter())
        else:
            self.run.resume(time.perf_counter())
        if state == ctl.PAUSED:
            self.status.setText(self.tr("Paused"))
        elif state == ctl.STOPPING:
            self.status.setText(self.tr("Stopping…"))
        elif state == ctl.RUNNING and self._said:  # a pause ended: what the run is doing again
            self.status.setText(self._said)
        if state == ctl.IDLE:
            self._clock.stop()
            self.time_label.setText(self.run.time_text(time.perf_counter(), running=False))

    # -- a kept run ------------------------------------------------------------------------
    def show_run(self, run: StoredRun) -> None:
        """Show a kept run again: its events replayed (:func:`~som_studio.storage.replay`) into the views."""
        if self.controller.busy:
            self.status.setText(self.tr("A run is in progress: its views are live; show kept runs after it"))
            return
        r = run.record
        self.timing_plot.begin(r.kind, (r.samples or 1) * r.maps)  # a sweep's map: its timings train every map
        self.quality_plot.begin()
        chunks = []
        for ev in replay(run):
            if isinstance(ev, Compiled) and ev.seconds:
                self.timing_plot.set_compile(ev.seconds)
            elif isinstance(ev, ChunkTimed):
                chunks.append(ev)
            elif isinstance(ev, QualityMeasured):
                self.quality_plot.add(ev)
            elif isinstance(ev, FinalMap):  # re-drawn in the view chosen now, by the picture pipeline's rule
                fm = np.asarray(ev.map)
                views = picture.MapViews.from_record(r)  # the lattice, feature names and the model's hits/labels
                self.map_view.begin(fm.shape[-1], run.name, views, r.config)
                self.map_view.keep_final(fm)  # on the final map's own colour range
                self.map_view.redraw(r.reached)  # off the GUI thread: a large map takes a while
                caption = self.tr("{name} (kept run): iteration {n:,}").format(name=run.name, n=r.reached)
                self.map_view.caption.setText(caption)
        if chunks:
            self.timing_plot.add_chunks(chunks)
        # The figures its record holds, as when it ended and as the run list and the comparison give them (the
        # rolling median of its last chunks, labelled "median", disagreed with both).
        self.timing_plot.finish(r.median_s, r.mean_s)
        self.quality_plot.ended()
        # The status bar's clock and bar are the shown run's: the last run's "100 %" and elapsed time are not.
        self._clock.stop()
        total = run.planned
        done = r.reached
        self.progress.setValue(PROGRESS_STEPS if r.status == "ok" or not total else int(PROGRESS_STEPS * done / total))
        wall = r.wall_s or r.total_s
        self.time_label.setText(self.tr("took {seconds} s").format(seconds=f"{wall:5.1f}") if wall else "")
        status = self.tr("Showing {name} ({impl}, {status}) from the run list")
        self.status.setText(status.format(name=run.name, impl=r.impl, status=status_text(r.status)))
