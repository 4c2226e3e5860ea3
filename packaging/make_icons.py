"""Draw SOM Studio's icon: a trained colour map on a dark tile, as SVG, then PNGs.

The SVG is written by hand here (a 6 x 6 grid of rounded cells whose colours
vary smoothly across the map, as a SOM trained on colours does, with one
best-matching unit ringed and its neighbourhood shown). The PNG sizes are
rendered from it with Qt's SVG renderer, so they match exactly::

    python packaging/make_icons.py     # rewrites resources/icons/som-studio{.svg,-N.png}

Run it after changing the drawing and commit the results.
"""

from __future__ import annotations

import colorsys
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parents[1] / "resources" / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
N = 6  # cells per side
CELL, GAP = 28, 6  # in a 256 x 256 canvas
BMU = (4, 1)  # column, row of the ringed best-matching unit


def cell_colour(col: int, row: int) -> str:
    """A smooth colour field: hue runs along the diagonal, lightness across it."""
    u, v = col / (N - 1), row / (N - 1)
    hue = (0.96 + 0.74 * (0.55 * u + 0.45 * v)) % 1.0
    light = 0.60 + 0.08 * (u - v)
    r, g, b = colorsys.hls_to_rgb(hue, light, 0.82)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def svg() -> str:
    origin = (256 - (N * CELL + (N - 1) * GAP)) / 2
    cells = []
    for row in range(N):
        for col in range(N):
            x, y = origin + col * (CELL + GAP), origin + row * (CELL + GAP)
            cells.append(
                f'    <rect x="{x:g}" y="{y:g}" width="{CELL}" height="{CELL}" rx="7" fill="{cell_colour(col, row)}"/>'
            )
    bx = origin + BMU[0] * (CELL + GAP) + CELL / 2
    by = origin + BMU[1] * (CELL + GAP) + CELL / 2
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- SOM Studio icon: a self-organizing map trained on colours. Drawn by packaging/make_icons.py. -->
<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <defs>
    <linearGradient id="tile" x1="0" y1="0" x2="0" y2="1">
      <stop offset="0" stop-color="#2c3246"/>
      <stop offset="1" stop-color="#151823"/>
    </linearGradient>
    <radialGradient id="glow" cx="{bx:g}" cy="{by:g}" r="{1.9 * (CELL + GAP):g}" gradientUnits="userSpaceOnUse">
      <stop offset="0" stop-color="#ffffff" stop-opacity="0.35"/>
      <stop offset="1" stop-color="#ffffff" stop-opacity="0"/>
    </radialGradient>
  </defs>
  <rect x="8" y="8" width="240" height="240" rx="52" fill="url(#tile)"/>
  <rect x="9" y="9" width="238" height="238" rx="51" fill="none" stroke="#ffffff" stroke-opacity="0.10" stroke-width="2"/>
  <g>
{chr(10).join(cells)}
  </g>
  <circle cx="{bx:g}" cy="{by:g}" r="{1.9 * (CELL + GAP):g}" fill="url(#glow)"/>
  <rect x="{bx - CELL / 2 - 4:g}" y="{by - CELL / 2 - 4:g}" width="{CELL + 8}" height="{CELL + 8}" rx="10"
        fill="none" stroke="#ffffff" stroke-width="5"/>
</svg>
"""


def render_pngs(svg_path: Path) -> None:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (keeps Qt alive)
    renderer = QSvgRenderer(str(svg_path))
    if not renderer.isValid():
        raise SystemExit(f"{svg_path}: Qt cannot read this SVG")
    for size in SIZES:
        img = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
        img.fill(Qt.GlobalColor.transparent)
        p = QPainter(img)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(p)
        p.end()
        out = ICONS / f"som-studio-{size}.png"
        if not img.save(str(out), "PNG"):
            raise SystemExit(f"{out}: cannot write")


def main() -> None:
    ICONS.mkdir(parents=True, exist_ok=True)
    path = ICONS / "som-studio.svg"
    path.write_text(svg(), encoding="utf-8")
    render_pngs(path)
    print(f"wrote {path} and {len(SIZES)} PNGs")


if __name__ == "__main__":
    main()
