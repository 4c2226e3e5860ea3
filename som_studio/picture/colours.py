"""The colour maps every picture of a map uses, in the app and in the report, and their legends as data.

Qt-free: the worker applies them when it draws a frame, the report's drawing
shows the same colours, and the Qt layer draws the legends (:class:`ColourBar`,
:class:`Swatches`) as it likes. The sequential map is viridis (perceptually
even, readable in grey and with colour-blindness), computed from a
polynomial fit so no table has to be shipped; the labels' palette is
Okabe-Ito's, then Tableau's for more than eight categories; clusters have
their own pale palette (ColorBrewer's Set3), so the two views are never confused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Viridis as a 6th-degree polynomial per channel (fit of matplotlib's table; max error ~1/255).
_VIRIDIS = np.array(
    [
        [0.2777273272234177, 0.005407344544966578, 0.3340998053353061],
        [0.1050930431085774, 1.404613529898575, 1.384590162594685],
        [-0.3308618287255563, 0.214847559468213, 0.09509516302823659],
        [-4.634230498983486, -5.799100973351585, -19.33244095627987],
        [6.228269936347081, 14.17993336680509, 56.69055260068105],
        [4.776384997670288, -13.74514537774601, -65.35303263337234],
        [-5.435455855934631, 4.645852612178535, 26.3124352495832],
    ]
)


def _viridis_table() -> np.ndarray:
    t = np.linspace(0.0, 1.0, 256)[:, None]
    powers = t ** np.arange(7)[None, :]
    rgb = np.clip(powers @ _VIRIDIS, 0.0, 1.0)
    table: np.ndarray = np.round(rgb * 255.0).astype(np.uint8)
    return table


VIRIDIS = _viridis_table()
"""(256, 3) uint8: the sequential colour map of every scalar view (U-matrix, planes, hits)."""

CATEGORICAL = (
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (240, 228, 66),
    (0, 0, 0),
    (140, 86, 75),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
)
"""Colours of labels, in order (Okabe-Ito, then Tableau's): told apart with colour-blindness too."""

CLUSTER_COLOURS = (
    (141, 211, 199),
    (255, 237, 111),
    (190, 186, 218),
    (251, 128, 114),
    (128, 177, 211),
    (253, 180, 98),
    (179, 222, 105),
    (252, 205, 229),
    (188, 128, 189),
    (204, 235, 197),
    (217, 217, 217),
    (255, 255, 179),
)
"""Colours of codebook clusters (ColorBrewer's Set3, pale): never the labels' saturated ones, so a
cluster view is not read as a label view; clusters are told apart by their drawn borders too."""

EMPTY = (236, 238, 242)
"""A unit with nothing to show (no hits, no label)."""
BACKGROUND = (255, 255, 255)
"""Pixels outside every unit (around a hex map's cells, between planes)."""
BORDER = (20, 20, 20)
"""Borders between clusters."""


def category_colour(index: int) -> tuple[int, int, int]:
    """The colour of the ``index``-th label (the palette repeats past its end)."""
    return CATEGORICAL[index % len(CATEGORICAL)]


def cluster_colour(index: int) -> tuple[int, int, int]:
    """The colour of cluster ``index`` (:data:`CLUSTER_COLOURS`, repeating past its end)."""
    return CLUSTER_COLOURS[index % len(CLUSTER_COLOURS)]


def apply_lut(values_u8: np.ndarray, table: np.ndarray = VIRIDIS) -> np.ndarray:
    """uint8 levels (any shape) to RGB through ``table`` (256, 3): shape + (3,), uint8."""
    out: np.ndarray = table[np.asarray(values_u8, dtype=np.uint8)]
    return out


@dataclass(frozen=True, eq=False)
class ColourBar:
    """A scalar view's legend: ``lo`` is drawn as ``colours[0]``, ``hi`` as ``colours[-1]``.

    ``label`` says what the values are (a feature's name, "hits", "mean distance to neighbours");
    ``integer`` values are counts (the Qt layer and the report label the ends as whole numbers).
    """

    lo: float
    hi: float
    label: str
    colours: np.ndarray = field(default_factory=lambda: VIRIDIS)
    integer: bool = False

    def ends(self) -> tuple[str, str]:
        """The two ends as text."""
        if self.integer:
            return f"{self.lo:.0f}", f"{self.hi:.0f}"
        return _end(self.lo), _end(self.hi)


def _end(v: float) -> str:
    """Three significant figures, thousands written out: a feature in the thousands (wine's proline) read
    "1.41e+03"."""
    text = f"{v:.3g}"
    rounded = float(text)
    return f"{rounded:,.0f}" if 1e3 <= abs(rounded) < 1e6 else text


@dataclass(frozen=True)
class Swatches:
    """A categorical view's legend: ``(name, (r, g, b))`` per category, and a line about the whole (``note``)."""

    entries: tuple[tuple[str, tuple[int, int, int]], ...]
    title: str = ""
    note: str = ""


Legend = ColourBar | Swatches
"""What a view's legend is: a colour bar or a list of swatches."""
