"""What the window's views say while they are empty: what will appear there, and how to make it appear.

On the map: what Run will train (the implementation, the map and the data the
Run panel holds) and how to start it; on the plots: what they will draw; on the
run list: how runs get there. Each text goes once its view has something to show.

Threads: GUI thread only.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QObject, SignalInstance
from PySide6.QtWidgets import QWidget

from som_studio.app_model.form import FormState
from som_studio.qt.widgets.empty_state import EmptyState
from som_studio.qt.widgets.map_view import MapView
from som_studio.qt.widgets.quality_plot import QualityPlot
from som_studio.qt.widgets.timing_plot import TimingPlot
from som_studio.run_settings import Topology


class EmptyStates(QObject):
    """The empty states of the map, the plots and the run list, shown and hidden as runs come.

    Parameters
    ----------
    map_view, timing_plot, quality_plot : the views whose pictures get a text while empty.
    runs_table, runs : the run list's table and its model (the text goes while it has rows).
    run_started : the controller's signal: a live run's views are no longer empty.
    parent : the owner (the window).
    """

    def __init__(
        self,
        map_view: MapView,
        timing_plot: TimingPlot,
        quality_plot: QualityPlot,
        runs_table: QWidget,
        runs: QAbstractItemModel,
        run_started: SignalInstance,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.map = EmptyState(map_view.plot, name="mapEmptyState")
        self.timing = EmptyState(
            timing_plot.plot,
            self.tr(
                "The time per iteration appears here once a run starts: each timed chunk and their rolling "
                "median, with the compile and warm-up time kept apart."
            ),
            "timingEmptyState",
        )
        self.quality = EmptyState(
            quality_plot.plot,
            self.tr(
                "The map's quality appears here as the run is measured: its quantization error (QE) and "
                "topographic error (TE) at regular iterations."
            ),
            "qualityEmptyState",
        )
        self.runs = EmptyState(
            runs_table,
            self.tr(
                "No runs yet. Every run you start (Run, {run}), compare (the Compare page) or open "
                "(File > Open run…, {open}) is kept here, and is still here at the next start."
            ).format(run="Ctrl+R", open="Ctrl+O"),
            "runsEmptyState",
        )
        self._model = runs
        for signal in (self._model.rowsInserted, self._model.rowsRemoved, self._model.modelReset):
            signal.connect(self._on_runs_changed)
        self._on_runs_changed()
        run_started.connect(self.run_shown)
        # A plot fed directly (a kept run replayed, a preview) shows once it has a point to draw.
        for state, curve in ((self.timing, timing_plot.points), (self.quality, quality_plot.qe_curve)):
            curve.sigPlotChanged.connect(lambda item, s=state: _hide_once_drawn(s, item))

    def run_shown(self, *_: Any) -> None:
        """A run (live, kept or projected) is on the map and the plots: their texts go."""
        for state in (self.map, self.timing, self.quality):
            state.hide()

    def sweep_started(self) -> None:
        """A sweep took the plots' docks (their captions say its figures are on its page): their texts go."""
        for state in (self.timing, self.quality):
            state.hide()

    def run_starting(self, text: str) -> None:
        """Run was pressed: until the run's first map, the map says so (not what Run *will* train)."""
        self.map.set_text(text)

    def form_changed(self, st: FormState) -> None:
        """Say what Run will train now (while the map is empty)."""
        cfg = st.config
        if cfg is not None:
            lattice = self.tr("hexagonal") if cfg.topology == Topology.HEX else self.tr("rectangular")
            what = self.tr("Run will train {impl} on a {grid} {lattice} map of {data}.").format(
                impl=cfg.impl, grid=f"{cfg.width}x{cfg.height}", lattice=lattice, data=cfg.data.describe()
            )
            how = self.tr(
                "Press {shortcut} or click Run in the Run panel. Change the implementation, the map or "
                "the data there first, or open a table (File > Open data…, {open_data}) or the iris example."
            ).format(shortcut="Ctrl+R", open_data="Ctrl+Shift+O")
        else:
            what = self.tr("Nothing to show yet: the Run panel cannot run its configuration.")
            how = self.tr("It says what to change: {reason}").format(reason=st.reason)
        self.map.set_text(f"{what}\n\n{how}")

    def _on_runs_changed(self, *_: Any) -> None:
        self.runs.setVisible(self._model.rowCount() == 0)


def _hide_once_drawn(state: EmptyState, curve: Any) -> None:
    if curve.xData is not None and len(curve.xData):
        state.hide()
