"""The animation: frames aligned by progress, their count and size, GIF/WebP/MP4 encoding."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image, ImageSequence

from som_studio.report import animation
from som_studio.report.animation import AnimationError, animation_format, compose_frames, encode
from som_studio.session.record import RunRecord
from som_studio.storage.runfile import StoredRun


def _run(name: str, h: int, w: int, iterations: list[int], planned: int) -> StoredRun:
    frames = tuple((it, np.full((h, w, 3), (it * 7) % 256, dtype=np.uint8)) for it in iterations)
    rec = RunRecord(impl=name, kind="online", config={"impl": name, "steps": planned}, status="ok")
    return StoredRun(rec, name=name, final_image=frames[-1][1], frames=list(frames), iterations=planned)


def test_frames_count_size_and_alignment() -> None:
    runs = [_run("a", 9, 12, [0, 10, 20, 30, 40], 40), _run("b", 9, 12, [0, 400], 400)]
    frames = compose_frames(runs, max_frames=60)
    # as many frames as the run that kept most
    assert len(frames) == 5
    # panels: the longer side scaled to PANEL (12 -> 256, 9 -> 192), side by side with margins
    pw, ph = animation.PANEL, round(9 * animation.PANEL / 12)
    width = 2 * pw + 3 * animation.MARGIN
    height = animation.MARGIN + animation.TITLE_H + ph + animation.BAR_H + animation.MARGIN
    assert all(f.shape == (height, width, 3) and f.dtype == np.uint8 for f in frames)
    # frame k shows run a at iteration 10k: its map's grey level, sampled in the panel's middle
    y, xa = animation.MARGIN + animation.TITLE_H + ph // 2, animation.MARGIN + pw // 2
    xb = xa + pw + animation.MARGIN
    assert [int(f[y, xa, 0]) for f in frames] == [(10 * k * 7) % 256 for k in range(5)]
    # run b kept only its start and end: it shows the start until the last frame
    assert [int(f[y, xb, 0]) for f in frames] == [0, 0, 0, 0, (400 * 7) % 256]
    assert len(compose_frames(runs, max_frames=3)) == 3


@pytest.mark.parametrize("fmt", ["GIF", "WebP"])
def test_encoded_animation_has_every_frame(fmt: str) -> None:
    runs = [_run("a", 6, 8, list(range(0, 70, 10)), 60), _run("b", 6, 8, [0, 60], 60)]
    frames = compose_frames(runs, max_frames=60)
    data = encode(frames, fmt)
    im = Image.open(io.BytesIO(data))
    assert im.format == fmt.upper()
    assert im.n_frames == len(frames) == 7
    assert im.size == (frames[0].shape[1], frames[0].shape[0])
    durations = []
    for f in ImageSequence.Iterator(im):
        f.load()  # WebP fills in a frame's duration when it is decoded
        durations.append(f.info.get("duration"))
    assert durations[0] == 1000 // animation.FPS
    assert durations[-1] == round(animation.HOLD_S * 1000)  # the final maps stay on screen


def test_format_follows_extension_and_refuses_others(tmp_path, monkeypatch) -> None:
    assert animation_format(tmp_path / "x.GIF") == "GIF"
    assert animation_format(tmp_path / "x.webp") == "WebP"
    with pytest.raises(AnimationError, match=r"unknown animation format '\.avi'; use \.gif, \.webp or \.mp4"):
        animation_format(tmp_path / "x.avi")
    with pytest.raises(AnimationError, match="no extension"):
        animation_format(tmp_path / "x")
    monkeypatch.setattr(animation, "find_ffmpeg", lambda: None)
    with pytest.raises(AnimationError, match="needs ffmpeg, which was not found"):
        animation_format(tmp_path / "x.mp4")


@pytest.mark.skipif(animation.find_ffmpeg() is None, reason="no ffmpeg here (pip install imageio-ffmpeg)")
def test_mp4_when_an_encoder_exists() -> None:
    import subprocess

    runs = [_run("a", 6, 8, list(range(0, 50, 10)), 40)]
    data = encode(compose_frames(runs), "MP4")
    assert data[4:8] == b"ftyp"
    exe = animation.find_ffmpeg()
    probe = subprocess.run([exe, "-i", "-", "-f", "null", "-"], input=data, capture_output=True, check=False)
    out = probe.stderr.decode()
    w = 1 * animation.PANEL + 2 * animation.MARGIN
    assert f"{w}x" in out  # even-padded width of one panel with margins (276 is even)
    # 5 frames at 10 fps plus the 2 s hold on the last
    frames = int(out.rsplit("frame=", 1)[1].split()[0])
    assert frames == 5 + round(animation.HOLD_S * animation.FPS)
