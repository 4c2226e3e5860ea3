"""The maps' evolution as an animation: every run side by side, frame by frame.

Made from the frames each run kept (:class:`~som_studio.storage.FrameKeeper`),
aligned by training progress: frame ``k`` of ``F`` shows each run as it was
``k / (F - 1)`` of the way through its iterations, so a fast and a slow
implementation of the same SOM unfold together. GIF and WebP are encoded by
Pillow; MP4 by an ``ffmpeg`` executable (on ``PATH``, or the one the optional
``imageio-ffmpeg`` package ships), and is refused up front where there is none.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from som_studio.i18n import _
from som_studio.storage.runfile import StoredRun

FORMATS = {".gif": "GIF", ".webp": "WebP", ".mp4": "MP4"}

PANEL = 256
"""A map's longer side in the animation, in pixels."""
MARGIN = 10
TITLE_H = 24
BAR_H = 22
FPS = 10
HOLD_S = 2.0
"""How long the last frame stays on screen."""


class AnimationError(ValueError):
    """The animation cannot be written as asked; the message says why and what to do."""


def find_ffmpeg() -> str | None:
    """An ``ffmpeg`` executable: on ``PATH``, else the one ``imageio-ffmpeg`` ships, else ``None``."""
    exe = shutil.which("ffmpeg")
    if exe:
        return exe
    try:
        import imageio_ffmpeg  # type: ignore[import-not-found, import-untyped, unused-ignore]

        exe = imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # not installed, or installed without a binary for this platform
        return None
    return exe if exe and os.access(exe, os.X_OK) else None


def animation_format(path: str | os.PathLike[str]) -> str:
    """The format for ``path`` (``"GIF"``, ``"WebP"`` or ``"MP4"``), checked before any training.

    Raises :class:`AnimationError` for another extension, or MP4 without an encoder.
    """
    ext = Path(path).suffix.lower()
    fmt = FORMATS.get(ext)
    if fmt is None:
        raise AnimationError(
            _("{path}: unknown animation format {ext!r}; use .gif, .webp or .mp4").format(
                path=path, ext=ext or _("(no extension)")
            )
        )
    if fmt == "MP4" and find_ffmpeg() is None:
        raise AnimationError(
            _(
                "{path}: writing .mp4 needs ffmpeg, which was not found; install it ({how}) or write .gif or .webp"
            ).format(path=path, how="apt install ffmpeg, pip install imageio-ffmpeg")
        )
    return fmt


def _fit(h: int, w: int) -> tuple[int, int]:
    f = PANEL / max(h, w)
    return max(1, round(h * f)), max(1, round(w * f))


def frame_layout(runs: Sequence[StoredRun]) -> tuple[int, int, int, int]:
    """(frame width, frame height, panel width, panel height) in pixels."""
    shapes = [_fit(*r.frames[0][1].shape[:2]) for r in runs if r.frames] or [(PANEL, PANEL)]
    ph = max(s[0] for s in shapes)
    pw = max(s[1] for s in shapes)
    n = max(1, len(runs))
    return n * pw + (n + 1) * MARGIN, MARGIN + TITLE_H + ph + BAR_H + MARGIN, pw, ph


def frame_count(runs: Sequence[StoredRun], max_frames: int) -> int:
    """Frames the animation will have: as many as the run that kept most, at most ``max_frames``."""
    kept = max((len(r.frames) for r in runs), default=0)
    return max(1, min(max_frames, kept))


def _font(size: int):  # type: ignore[no-untyped-def]
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except (TypeError, OSError):  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def compose_frames(runs: Sequence[StoredRun], max_frames: int = 60) -> list[np.ndarray]:
    """The animation's frames as (H, W, 3) uint8 arrays; see the module docstring."""
    from PIL import Image, ImageDraw

    width, height, pw, ph = frame_layout(runs)
    count = frame_count(runs, max_frames)
    font = _font(14)
    small = _font(12)
    out = []
    for k in range(count):
        p = k / (count - 1) if count > 1 else 1.0
        canvas = Image.new("RGB", (width, height), (250, 250, 252))
        draw = ImageDraw.Draw(canvas)
        for i, run in enumerate(runs):
            x0 = MARGIN + i * (pw + MARGIN)
            y0 = MARGIN + TITLE_H
            frames = sorted(run.frames, key=lambda f: f[0])
            if not frames:
                draw.rectangle([x0, y0, x0 + pw - 1, y0 + ph - 1], fill=(225, 225, 230))
                draw.text((x0 + 8, y0 + 8), f"{run.record.status}: no map", fill=(140, 30, 30), font=small)
                draw.text((x0, MARGIN), run.name, fill=(20, 25, 35), font=font)
                continue
            target = p * run.planned
            it, img = frames[0]
            for fi, fimg in frames:
                if fi <= target + 1e-9:
                    it, img = fi, fimg
            fh, fw = _fit(*img.shape[:2])
            tile = Image.fromarray(np.ascontiguousarray(img), "RGB").resize((fw, fh), Image.Resampling.NEAREST)
            canvas.paste(tile, (x0 + (pw - fw) // 2, y0 + (ph - fh) // 2))
            draw.text((x0, MARGIN), run.name, fill=(20, 25, 35), font=font)
            label = f"{it:,}/{run.planned:,}"
            tw = draw.textlength(label, font=small)
            draw.text((x0 + pw - tw, MARGIN + 2), label, fill=(90, 96, 110), font=small)
        # A progress bar makes every frame distinct (encoders merge identical frames).
        by = MARGIN + TITLE_H + ph + 8
        draw.rectangle([MARGIN, by, width - MARGIN - 1, by + 5], fill=(222, 225, 232))
        draw.rectangle([MARGIN, by, MARGIN + round(p * (width - 2 * MARGIN - 1)), by + 5], fill=(60, 110, 200))
        out.append(np.asarray(canvas))
    return out


def encode(frames: Sequence[np.ndarray], fmt: str, fps: int = FPS) -> bytes:
    """``frames`` encoded as ``fmt`` (from :func:`animation_format`)."""
    if not frames:
        raise AnimationError(_("no frames to animate"))
    if fmt == "MP4":
        return _encode_mp4(frames, fps)
    from PIL import Image

    images = [Image.fromarray(np.ascontiguousarray(f), "RGB") for f in frames]
    step = round(1000 / fps)
    durations = [step] * (len(images) - 1) + [round(HOLD_S * 1000)]
    buf = io.BytesIO()
    if fmt == "GIF":
        # GIF has 256 colours a frame. Pillow's default palette (median cut) took
        # 0.15-0.4 s a frame here, the fast octree ~1-7 ms; dithering hides the
        # octree's banding on the maps' smooth gradients.
        paletted = [
            im.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.FLOYDSTEINBERG)
            for im in images
        ]
        paletted[0].save(
            buf,
            format="GIF",
            save_all=True,
            append_images=paletted[1:],
            duration=durations,
            loop=0,
            optimize=False,
            disposal=1,
        )
    else:
        images[0].save(
            buf,
            format="WEBP",
            save_all=True,
            append_images=images[1:],
            duration=durations,
            loop=0,
            lossless=False,
            quality=90,
            method=4,
        )
    return buf.getvalue()


def _encode_mp4(frames: Sequence[np.ndarray], fps: int) -> bytes:
    exe = find_ffmpeg()
    if exe is None:
        raise AnimationError(_("writing .mp4 needs ffmpeg, which was not found"))
    h, w = frames[0].shape[:2]
    with tempfile.TemporaryDirectory(prefix="som-studio-mp4-") as tmp:
        out = Path(tmp) / "out.mp4"
        cmd = [
            exe,
            "-loglevel",
            "error",
            "-y",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-s",
            f"{w}x{h}",
            "-r",
            str(fps),
            "-i",
            "-",
            # H.264 wants even sizes; hold the last frame like the GIF does.
            "-vf",
            f"pad=ceil(iw/2)*2:ceil(ih/2)*2:color=white,tpad=stop_mode=clone:stop_duration={HOLD_S}",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-movflags",
            "+faststart",
            str(out),
        ]
        data = b"".join(np.ascontiguousarray(f, dtype=np.uint8).tobytes() for f in frames)
        try:
            proc = subprocess.run(cmd, input=data, capture_output=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AnimationError(_("ffmpeg failed to run: {why}").format(why=exc)) from None
        if proc.returncode != 0 or not out.exists():
            msg = proc.stderr.decode(errors="replace").strip().splitlines()
            raise AnimationError(
                _("ffmpeg could not encode the animation: {why}").format(
                    why=msg[-1] if msg else f"exit {proc.returncode}"
                )
            )
        return out.read_bytes()
