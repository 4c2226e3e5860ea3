"""What the map view shows, computed where the map is: in the worker process.

Qt-free and cheap to pickle. The worker turns each map snapshot into one
:class:`MapFrame` (a uint8 image, row-major, ready to paint), so the GUI thread
never does arithmetic on a map (STYLE habit 4). The same functions re-render
the final map when the user picks another view after a run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from som_studio.core.metrics import to_rgb, u_matrix

RGB = "rgb"
UMATRIX = "umatrix"
COMPONENT = "component"
MODES = (RGB, UMATRIX, COMPONENT)


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
    through a colour map with levels 0..255).
    """

    iteration: int
    view: ViewChoice
    image: np.ndarray


def feature_range(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-feature (lo, hi) of a map; the initial map spans the data's range."""
    flat = np.asarray(weights).reshape(-1, weights.shape[-1])
    return flat.min(axis=0).astype(np.float64), flat.max(axis=0).astype(np.float64)


def _to_u8(values: np.ndarray, lo: float, hi: float) -> np.ndarray:
    span = hi - lo if hi > lo else 1.0
    return np.clip((values - lo) / span * 255.0 + 0.5, 0, 255).astype(np.uint8)


def render(weights: np.ndarray, view: ViewChoice, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The uint8 image of ``weights`` (H, W, D) for ``view`` (already fitted)."""
    if view.mode == RGB:
        return np.ascontiguousarray(to_rgb(weights, lo, hi))
    if view.mode == COMPONENT:
        k = view.component
        return np.ascontiguousarray(_to_u8(np.asarray(weights[..., k], dtype=np.float64), float(lo[k]), float(hi[k])))
    um = u_matrix(weights)
    # U-matrix values are relative: scale each frame to its own maximum.
    return np.ascontiguousarray(_to_u8(um, 0.0, float(um.max()) if um.size else 1.0))


def make_frame(iteration: int, weights: np.ndarray, view: ViewChoice, lo: np.ndarray, hi: np.ndarray) -> MapFrame:
    fitted = view.fit(weights.shape[-1])
    return MapFrame(iteration, fitted, render(weights, fitted, lo, hi))
