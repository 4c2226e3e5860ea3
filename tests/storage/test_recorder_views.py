"""A run on a table, on a hex map: the recorder learns the lattice from Started, the views' inputs from the record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from som_studio import picture
from som_studio.config import DataSpec, RunConfig
from som_studio.session.events import Finished, Snapshot, Started
from som_studio.session.session import Session
from som_studio.storage import FinalMap, RunRecorder, StoredRun
from som_studio.storage.recorder import kept_scale

IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"


@pytest.fixture(scope="module")
def events() -> list:
    cfg = RunConfig(
        impl="numpy-batch",
        width=6,
        height=4,
        data=DataSpec(path=str(IRIS)),
        epochs=8,
        seed=1,
        topology="hex",
        scaling="zscore",
        labels="species",
        clusters=3,
    )
    return list(Session(cfg, snapshot_interval_s=0.0, quality_points=2).run())


def worker_frames(events: list, view: picture.ViewChoice) -> list:
    """The app's path: frames drawn in the worker on the lattice Started announces."""
    out, rng, views, last = [], None, None, None
    for ev in events:
        if isinstance(ev, Started):
            rng, views = picture.data_range(ev), picture.MapViews.from_started(ev)
        if isinstance(ev, Snapshot):
            out.append(picture.make_frame(ev.iteration, ev.map, view, *rng, views))
            last = ev.map
        else:
            if isinstance(ev, Finished):
                out.append(FinalMap(last))
            out.append(ev)
    return out


def test_a_hex_run_is_kept_in_hexagons_with_its_views(events) -> None:
    rec = RunRecorder(frames=6).feed_all(events)
    assert rec.record is not None and rec.record.status == "ok"
    views = rec.views
    assert views.topology == "hex" and views.feature_names[0] == "sepal_length"
    # The record's model brought hits, labels, purity and clusters.
    assert views.hits is not None and int(views.hits.sum()) == 150
    assert views.labels is not None and views.clusters is not None
    assert views.purity == pytest.approx(rec.record.label_purity)
    image = rec.final_image
    assert image is not None and image.shape[0] > 4 and image.shape[1] > 6
    assert tuple(image[0, 0]) == picture.colours.BACKGROUND  # outside the hexagons
    # Kept frames are hexagons at the kept scale, whichever path drew them.
    app = RunRecorder(frames=6).feed_all(worker_frames(events, picture.ViewChoice(picture.UMATRIX)))
    sizes = {img.shape[:2] for _, img in rec.frames} | {img.shape[:2] for _, img in app.frames}
    assert sizes == {picture.raster(4, 6, "hex", kept_scale(4, 6)).shape}
    assert kept_scale(135, 240) == 2 and kept_scale(4, 6) == 12


def test_a_kept_run_brings_its_views_back(events, tmp_path) -> None:
    run = RunRecorder().feed_all(events).stored()
    back = StoredRun.load(run.save(tmp_path / "r.somrun"))
    views = picture.MapViews.from_record(back.record)
    assert views.topology == "hex" and views.labels is not None
    np.testing.assert_array_equal(views.hits, run.record.model.hits)
    assert back.final_map is not None and back.has_views
