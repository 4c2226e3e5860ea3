"""A map (H, W, D) to a uint8 picture, for every view and every user of pictures.

The views: ``rgb`` (a 3-feature map as colours), ``umatrix`` (each unit's mean
distance to its grid neighbours) and ``component`` (one feature as a plane).
Each is one renderer in :data:`RENDERERS`, called through :func:`render`; a new
view (hex cells, a hit map, a label overlay) is one more entry, and every user
below gets it.

**The one colour-range rule**: every picture of a run is scaled on one
per-feature range, fixed for the whole run: the training data's per-feature
range, which the session announces in its ``Started`` event
(:func:`data_range`), so colours do not drift as the map contracts or grows
(a PCA-initialised map starts on a plane inside the data and spreads out).
Where that is not known (an older sender), the range of the first map at hand
(:func:`colour_range`). A frame carries its range (:attr:`MapFrame.range`), so
whoever keeps or re-draws the map later uses the same one. A kept run re-drawn
in another view, with no frame at hand, uses its final map's range. The
U-matrix is relative: each picture is scaled to its own maximum.

Users: the worker process (its frames, :func:`make_frame`), the live map view
(re-drawing a finished run), the run recorder (a run's final picture,
:func:`map_image`) and the comparison and its report (those pictures).
Qt-free and cheap to pickle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from som_studio.core.metrics import u_matrix

RGB = "rgb"
UMATRIX = "umatrix"
COMPONENT = "component"
MODES = (RGB, UMATRIX, COMPONENT)


class ColourRange(NamedTuple):
    """Per-feature colour limits: a value ``lo[k]`` is drawn as 0, ``hi[k]`` as 255."""

    lo: np.ndarray
    hi: np.ndarray


def colour_range(first_map: np.ndarray) -> ColourRange:
    """The colour range of a run's pictures: the per-feature range of the first map at hand (see the module)."""
    w = np.asarray(first_map, dtype=np.float64)
    flat = w.reshape(-1, w.shape[-1])
    return ColourRange(flat.min(axis=0), flat.max(axis=0))


def data_range(started: object) -> ColourRange | None:
    """The colour range a run's ``Started`` event announces (its data's per-feature range), or ``None``."""
    rng = getattr(started, "data_range", None)
    if rng is None:
        return None
    lo, hi = (np.asarray(v, dtype=np.float64) for v in rng)
    return ColourRange(lo, hi)


feature_range = colour_range
"""The name the worker process calls the rule by (it fixes the range at its first snapshot)."""


def unit_range(features: int) -> ColourRange:
    """[0, 1] for every feature: for pictures of values known to lie there (a map given without a range)."""
    return ColourRange(np.zeros(features), np.ones(features))


@dataclass(frozen=True, eq=False)
class ViewChoice:
    """Which picture of the map to draw: RGB (3 features only), U-matrix or one component plane."""

    mode: str = RGB
    component: int = 0

    def fit(self, features: int) -> ViewChoice:
        """The nearest choice that makes sense for ``features`` features."""
        if self.mode == RGB and features != 3:
            return ViewChoice(UMATRIX, 0)
        if self.mode == COMPONENT and not 0 <= self.component < features:
            return ViewChoice(COMPONENT, 0)
        return self


@dataclass(frozen=True, eq=False)
class MapFrame:
    """One picture of the map after ``iteration`` iterations.

    ``image`` is uint8, (H, W, 3) for RGB or (H, W) for a scalar view (drawn
    through a colour map with levels 0..255). ``range`` is the run's colour
    range the picture was drawn on (``None`` from an older sender).
    """

    iteration: int
    view: ViewChoice
    image: np.ndarray
    range: ColourRange | None = None


def _to_u8(values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray:
    """``lo``..``hi`` to 0..255, rounded, clipped; a feature with no spread is drawn from its ``lo``."""
    lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    span = np.where(hi_a > lo_a, hi_a - lo_a, 1.0)
    return np.clip((values - lo_a) / span * 255.0 + 0.5, 0, 255).astype(np.uint8)


def _rgb(weights: np.ndarray, _view: ViewChoice, rng: ColourRange) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)[..., :3]
    return _to_u8(w, np.asarray(rng.lo)[:3], np.asarray(rng.hi)[:3])


def _component(weights: np.ndarray, view: ViewChoice, rng: ColourRange) -> np.ndarray:
    k = view.component
    return _to_u8(np.asarray(weights[..., k], dtype=np.float64), float(rng.lo[k]), float(rng.hi[k]))


def _umatrix(weights: np.ndarray, _view: ViewChoice, _rng: ColourRange) -> np.ndarray:
    um = u_matrix(weights)
    # U-matrix values are relative: scale each picture to its own maximum.
    top = float(um.max()) if um.size else 0.0
    return _to_u8(um, 0.0, top if top > 0 else 1.0)


Renderer = Callable[[np.ndarray, ViewChoice, ColourRange], np.ndarray]
RENDERERS: dict[str, Renderer] = {RGB: _rgb, UMATRIX: _umatrix, COMPONENT: _component}
"""One renderer per view mode: (map, fitted choice, colour range) -> uint8 image, row-major."""


def render(weights: np.ndarray, view: ViewChoice, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The uint8 image of ``weights`` (H, W, D) for ``view`` (already fitted), on the range ``lo``..``hi``."""
    return np.ascontiguousarray(RENDERERS[view.mode](weights, view, ColourRange(lo, hi)))


def make_frame(iteration: int, weights: np.ndarray, view: ViewChoice, lo: np.ndarray, hi: np.ndarray) -> MapFrame:
    """The frame of ``weights`` in ``view`` (fitted to its features), carrying the range it was drawn on."""
    fitted = view.fit(weights.shape[-1])
    return MapFrame(iteration, fitted, render(weights, fitted, lo, hi), ColourRange(lo, hi))


def as_rgb(image: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 picture: a scalar view's (H, W) image as grey, an RGB one as it is."""
    img = np.asarray(image)
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=-1)
    return np.ascontiguousarray(img, dtype=np.uint8)


def map_image(weights: np.ndarray, lo: np.ndarray | None = None, hi: np.ndarray | None = None) -> np.ndarray:
    """A run's picture as kept and reported: (H, W, 3) uint8, RGB for 3 features, the U-matrix in grey otherwise.

    ``lo``/``hi``: the run's colour range (:func:`colour_range`); without one,
    the values are taken to lie in [0, 1].
    """
    w = np.asarray(weights)
    rng = unit_range(w.shape[-1]) if lo is None or hi is None else ColourRange(lo, hi)
    return as_rgb(render(w, ViewChoice(RGB).fit(w.shape[-1]), rng.lo, rng.hi))


__all__ = [
    "COMPONENT",
    "MODES",
    "RENDERERS",
    "RGB",
    "UMATRIX",
    "ColourRange",
    "MapFrame",
    "ViewChoice",
    "as_rgb",
    "colour_range",
    "feature_range",
    "make_frame",
    "map_image",
    "render",
    "unit_range",
]
