"""The frame keeper and run capture: bounded memory, evenly spread frames, the final map kept."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.picture import map_image
from som_studio.session.session import Session
from som_studio.storage import FrameKeeper
from som_studio.storage import RunRecorder as RunCapture


@pytest.mark.parametrize("offered", [1, 2, 7, 8, 9, 63, 64, 65, 1000, 4097])
def test_keeper_is_bounded_even_and_keeps_first_and_latest(offered: int) -> None:
    keeper: FrameKeeper[int] = FrameKeeper(8)
    for i in range(offered):
        keeper.offer(i * 10, i)
        assert len(keeper) <= 8  # bounded at every moment, not just at the end
    frames = keeper.frames
    items = [item for _, item in frames]
    assert items[0] == 0
    assert items[-1] == offered - 1
    assert items == sorted(items)
    assert [it for it, _ in frames] == [10 * i for i in items]
    regular = items[:-1] if (offered - 1) not in items[:-1] else items
    # Apart from the latest, kept items are evenly spaced in arrival order.
    gaps = {b - a for a, b in zip(regular, regular[1:])}
    assert len(gaps) <= 1
    if offered >= 8:
        assert len(keeper) >= 8 // 2  # thinning never leaves too few


def test_keeper_refuses_tiny_capacity() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        FrameKeeper(1)


def test_map_image_rgb_and_umatrix() -> None:
    rgb = np.zeros((3, 4, 3))
    rgb[0, 0] = [1.0, 0.5, 0.0]
    img = map_image(rgb)
    assert img.dtype == np.uint8 and img.shape == (3, 4, 3)
    assert img[0, 0].tolist() == [255, 128, 0]
    five = np.zeros((3, 4, 5))
    five[1, 1] = 1.0  # one unit far from its neighbours: the U-matrix peaks there
    grey = map_image(five)
    assert grey.shape == (3, 4, 3)
    assert (grey[..., 0] == grey[..., 1]).all()
    assert grey[1, 1, 0] == 255 and grey[2, 3, 0] == 0


def test_capture_of_a_real_run(small_config) -> None:
    cfg = small_config.replace(impl="numpy-online", steps=400)
    cap = RunCapture.new(frames=6)
    session = Session(cfg, snapshot_interval_s=0.0, chunk_target_s=0.0005, quality_points=4)
    cap.feed_all(session.run())
    assert cap.record is not None and cap.record.status == "ok"
    assert cap.name == "numpy-online"
    assert cap.iterations == 400
    assert cap.keeper is not None and cap.keeper.offered > 6  # more snapshots than it keeps
    its = [it for it, _ in cap.frames]
    assert len(its) <= 6
    assert its[0] == 0 and its[-1] == 400
    assert its == sorted(its)
    for _, img in cap.frames:
        assert img.dtype == np.uint8 and img.shape == (cfg.height, cfg.width, 3)
    assert cap.final_map is not None and cap.final_map.shape == (cfg.height, cfg.width, 3)
    np.testing.assert_array_equal(cap.final_image, cap.frames[-1][1])
