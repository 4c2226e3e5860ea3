"""``python -m som_studio.qt.comparison``: the comparison view alone, on two real runs."""

from __future__ import annotations

import tempfile

from som_studio.config import DataSpec, RunConfig
from som_studio.qt.comparison.view import ComparisonView
from som_studio.qt.report_render import ensure_app
from som_studio.qt.runs import RunsModel
from som_studio.session.session import Session
from som_studio.storage import RunHistory, RunRecorder


def main() -> None:
    app = ensure_app()
    history = RunHistory(tempfile.mkdtemp(prefix="som-history-"))
    base = RunConfig(width=24, height=16, data=DataSpec(samples=300), epochs=6)
    for impl in ("numpy-batch", "jax-vmap-batch"):
        recorder = RunRecorder().feed_all(Session(base.replace(impl=impl), snapshot_interval_s=0.0).run())
        history.add(recorder.stored())
    view = ComparisonView(RunsModel(history))
    view.set_checked([r.id for r in history.runs])
    view.resize(1300, 800)
    view.show()
    app.exec()


if __name__ == "__main__":
    main()
