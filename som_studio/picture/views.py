"""A map (H, W, D) to a uint8 picture, for every view and every user of pictures.

The views: ``rgb`` (a 3-feature map as colours), ``umatrix`` (each unit's mean
distance to its grid neighbours, on the run's lattice), ``component`` (one
feature as a plane), ``planes`` / ``planes-shared`` (every plane in one
picture, titled with the feature names, on per-plane or one shared scale),
``hits`` (examples per unit), ``labels`` (each unit's majority label, paler
where its examples disagree) and ``clusters`` (the codebook's clusters with
their borders). Each is one renderer in :data:`RENDERERS`, called through
:func:`draw`; :data:`VIEWS` lists them (name, label, what they need) for
whoever offers a choice, and :func:`choices` gives a run's choices in order.
A view that needs more than the map takes it from a
:class:`~som_studio.picture.mapviews.MapViews` (the run's lattice, feature
names, hits, labels, clusters; how those travel is told there).

**Cells**: a ``rect`` map is drawn as squares, a ``hex`` map as hexagons
(:mod:`som_studio.picture.raster`), at a fixed number of pixels per unit per
picture (a frame's :attr:`MapFrame.scale`; :func:`MapFrame.unit_at` maps a
pixel back to its unit). A rect map's scalar views at one pixel per unit stay
(H, W) levels that the viewer draws through :data:`~som_studio.picture.colours.VIRIDIS`;
every other picture is RGB with the colour map applied here, so the app and the
report show the same colours. Each drawn view carries its legend as data
(:class:`~som_studio.picture.colours.ColourBar` or :class:`~som_studio.picture.colours.Swatches`).

**The one colour-range rule**: every picture of a run is scaled on one
per-feature range, fixed for the whole run: the training data's per-feature
range, which the session announces in its ``Started`` event
(:func:`data_range`), so colours do not drift as the map contracts or grows
(a PCA-initialised map starts on a plane inside the data and spreads out).
Component planes are the exception: each is coloured over the map's own range
of its feature (:func:`map_range`), which its colour bar states, so a plane
uses the whole colour map instead of a washed-out middle of it.
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

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from som_studio.core.som.metrics import u_matrix
from som_studio.i18n import N_, _, ngettext
from som_studio.picture.colours import (
    BORDER,
    CLUSTER_COLOURS,
    EMPTY,
    VIRIDIS,
    ColourBar,
    Legend,
    Swatches,
    apply_lut,
    category_colour,
    cluster_colour,
)
from som_studio.picture.mapviews import MapViews
from som_studio.picture.raster import Raster, frame_scale, raster, unit_at, unit_centre, unit_centres
from som_studio.run_settings import Topology

RGB = "rgb"
UMATRIX = "umatrix"
COMPONENT = "component"
PLANES = "planes"
PLANES_SHARED = "planes-shared"
HITS = "hits"
LABELS = "labels"
CLUSTERS = "clusters"
MODES = (RGB, UMATRIX, COMPONENT, PLANES, PLANES_SHARED, HITS, LABELS, CLUSTERS)


@dataclass(frozen=True)
class ViewKind:
    """One view as a choice box lists it.

    ``needs``: what must be at hand to draw it: ``"three features"``, or an input of
    :class:`~som_studio.picture.mapviews.MapViews` (``"hits"``, ``"labels"``, ``"clusters"``).
    ``per_feature``: one choice per feature (the component planes), named after it.
    ``report``: the view's title in a report's panel of map-wide views (``None``: not there).
    """

    mode: str
    label: str
    needs: tuple[str, ...] = ()
    per_feature: bool = False
    report: str | None = None

    @property
    def measured(self) -> bool:
        """It shows what the data does on the map (hits, labels): measured on each frame's map."""
        return bool({"hits", "labels"} & set(self.needs))


VIEWS: tuple[ViewKind, ...] = (
    ViewKind(RGB, N_("RGB colours"), ("three features",)),
    ViewKind(UMATRIX, N_("U-matrix"), report=N_("U-matrix")),
    ViewKind(PLANES, N_("All feature planes")),
    ViewKind(PLANES_SHARED, N_("All feature planes (one scale)")),
    ViewKind(HITS, N_("Hit map"), ("hits",), report=N_("Hit map")),
    ViewKind(LABELS, N_("Labels"), ("labels",), report=N_("Labels (majority per unit)")),
    ViewKind(CLUSTERS, N_("Clusters"), ("clusters",), report=N_("Clusters")),
    ViewKind(COMPONENT, N_("Feature plane"), per_feature=True),
)
"""Every view, in the order a choice box lists them: the one listing the app's map view reads."""

_NEEDS = {k.mode: k.needs for k in VIEWS}
KINDS = {k.mode: k for k in VIEWS}
REPORT_VIEWS = tuple(k for k in VIEWS if k.report)
"""The map-wide views a report shows for each run, in order."""


def available(mode: str, features: int, views: MapViews | None = None) -> bool:
    """Whether view ``mode`` can be drawn for a map of ``features`` features with ``views`` at hand."""
    for need in _NEEDS.get(mode, ()):
        if need == "three features":
            if features != 3:
                return False
        elif views is None or not views.has(need):
            return False
    return mode in _NEEDS


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

    def fit(self, features: int, views: MapViews | None = None) -> ViewChoice:
        """The nearest choice that makes sense for ``features`` features and the inputs in ``views``.

        A view whose inputs are missing (hits during a run too large to measure them live) is the U-matrix.
        """
        if self.mode == COMPONENT and not 0 <= self.component < features:
            return ViewChoice(COMPONENT, 0)
        if not available(self.mode, features, views):
            return ViewChoice(UMATRIX, 0)
        return self

    @property
    def key(self) -> str:
        """``mode:component``, a string for a choice box's item data."""
        return f"{self.mode}:{self.component}"


def choices(features: int, views: MapViews | None = None) -> list[tuple[ViewChoice, str]]:
    """A run's view choices in :data:`VIEWS` order, each with its text (planes named after their features).

    Views whose inputs are not at hand are left out; ``views`` ``None``: a plain rect map, no extras.
    """
    out: list[tuple[ViewChoice, str]] = []
    for kind in VIEWS:
        if not available(kind.mode, features, views):
            continue
        if kind.per_feature:
            name = views.feature_name if views is not None else (lambda k: _("Feature {k}").format(k=k))
            out += [(ViewChoice(kind.mode, k), name(k)) for k in range(min(features, 256))]
        else:
            out.append((ViewChoice(kind.mode, 0), _(kind.label)))
    return out


@dataclass(frozen=True, eq=False)
class MapFrame:
    """One picture of the map after ``iteration`` iterations.

    ``image`` is uint8, (rows, columns, 3) RGB, or (H, W) levels for a rect
    map's scalar view at one pixel per unit (drawn through
    :data:`~som_studio.picture.colours.VIRIDIS` with levels 0..255). ``range`` is
    the run's colour range the picture was drawn on (``None`` from an older
    sender). ``legend`` is the view's colour bar or swatches; ``tiles`` the
    panels of a picture made of several (the planes grid). ``grid`` is the
    map's (height, width), ``topology`` and ``scale`` how its cells were laid
    out (:meth:`unit_at`).
    """

    iteration: int
    view: ViewChoice
    image: np.ndarray
    range: ColourRange | None = None
    legend: Legend | None = None
    tiles: tuple[Tile, ...] = ()
    grid: tuple[int, int] | None = None
    topology: str = Topology.RECT
    scale: int = 1

    def unit_at(self, px: float, py: float) -> tuple[int, int] | None:
        """The unit ``(row, column)`` under pixel ``(px, py)`` of :attr:`image`, or ``None`` (a hover read-out)."""
        h, w = self.grid if self.grid is not None else self.image.shape[:2]
        for t in self.tiles:  # a grid of planes: the tile under the pixel, then the unit in it
            if t.x <= px < t.x + t.width and t.y <= py < t.y + t.height:
                px, py = px - t.x, py - t.y
                break
        else:
            if self.tiles:
                return None
        return unit_at(px, py, h, w, self.topology, self.scale)

    def unit_colours(self, tile: int | None = None) -> np.ndarray | None:
        """(H * W, 3) uint8: the colour each unit is drawn with (of plane ``tile`` in a planes grid), row-major.

        Read back from :attr:`image` at the units' centres, so a viewer can draw the cells as shapes
        in the pipeline's own colours; ``None`` for a picture of levels (a rect map at one pixel per
        unit, which needs no shapes) or a frame without its grid.
        """
        if self.image.ndim != 3 or self.grid is None:
            return None
        h, w = self.grid
        rows, cols = np.divmod(np.arange(h * w), w)
        x, y = unit_centres(rows, cols, self.topology, self.scale)
        if self.tiles:
            if tile is None or not 0 <= tile < len(self.tiles):
                return None
            x, y = x + self.tiles[tile].x, y + self.tiles[tile].y
        ix = np.clip(np.floor(x).astype(np.int64), 0, self.image.shape[1] - 1)
        iy = np.clip(np.floor(y).astype(np.int64), 0, self.image.shape[0] - 1)
        return np.ascontiguousarray(self.image[iy, ix, :3])

    def tile_at(self, px: float, py: float) -> int | None:
        """The panel (plane ``k`` of a planes grid) under pixel ``(px, py)``, or ``None``."""
        for k, t in enumerate(self.tiles):
            if t.x <= px < t.x + t.width and t.y <= py < t.y + t.height:
                return k
        return None

    def level_at(self, row: int, col: int, tile: int | None = None) -> int | None:
        """The colour level (0-255) unit (``row``, ``col``) is drawn with, read back from :attr:`image`.

        For a scalar view (U-matrix, a plane, hits): the level on its colour bar,
        from the pixel at the unit's centre (RGB pictures through
        :data:`~som_studio.picture.colours.VIRIDIS`); ``None`` for other views, a
        unit drawn in the empty colour, or a pixel off the picture.
        """
        if self.view.mode in (RGB, LABELS, CLUSTERS):
            return None
        if self.image.ndim == 2:
            return (
                int(self.image[row, col]) if 0 <= row < self.image.shape[0] and 0 <= col < self.image.shape[1] else None
            )
        colour = self._colour_at(row, col, tile)
        if colour is None or tuple(int(v) for v in colour) == EMPTY:
            return None
        d = ((VIRIDIS.astype(np.int64) - colour) ** 2).sum(axis=1)
        return int(np.argmin(d))

    def category_at(self, row: int, col: int) -> tuple[str, float] | None:
        """A categorical view's swatch under unit (``row``, ``col``), read back from :attr:`image`.

        Returns the swatch's name and the share of its colour the unit is drawn
        with (1.0: full; a label's colour fades towards white as its purity falls,
        :func:`label_purity_of_fade`); ``("", 0.0)`` for a unit with no examples
        (drawn in the empty colour); ``None`` for other views, a pixel off the
        picture, or a colour no swatch explains.
        """
        if self.view.mode not in (LABELS, CLUSTERS) or not isinstance(self.legend, Swatches):
            return None
        colour = self._colour_at(row, col)
        if colour is None:
            return None
        if tuple(int(v) for v in colour) == EMPTY:
            return "", 0.0
        best: tuple[float, str, float] | None = None
        drawn = 255.0 - colour.astype(np.float64)  # what the fade keeps of (255 - swatch)
        for name, rgb in self.legend.entries:
            full = 255.0 - np.asarray(rgb, dtype=np.float64)
            share = float(full @ drawn / (full @ full)) if full.any() else 1.0
            misfit = float(np.abs(drawn - full * share).max())
            if FADE_FLOOR - 0.01 <= share <= 1.01 and misfit <= 1.5 and (best is None or misfit < best[0]):
                best = (misfit, name, min(share, 1.0))
        return None if best is None else (best[1], best[2])

    def _colour_at(self, row: int, col: int, tile: int | None = None) -> np.ndarray | None:
        """The RGB colour (int64) of the pixel at unit (``row``, ``col``)'s centre, or ``None`` off the picture."""
        if self.image.ndim != 3:
            return None
        x, y = unit_centre(row, col, self.topology, self.scale)
        if self.tiles:
            if tile is None or not 0 <= tile < len(self.tiles):
                return None
            x, y = x + self.tiles[tile].x, y + self.tiles[tile].y
        ix, iy = math.floor(x), math.floor(y)
        if not (0 <= iy < self.image.shape[0] and 0 <= ix < self.image.shape[1]):
            return None
        return np.asarray(self.image[iy, ix, :3], dtype=np.int64)


FADE_FLOOR = 0.35
"""The share of its colour a label of purity 0 keeps (purity 1 keeps all of it)."""


def label_purity_of_fade(share: float) -> float:
    """The unit purity a label colour drawn at ``share`` of its strength stands for (the labels view's fade, undone)."""
    return float(np.clip((share - FADE_FLOOR) / (1.0 - FADE_FLOOR), 0.0, 1.0))


def _to_u8(values: np.ndarray, lo: np.ndarray | float, hi: np.ndarray | float) -> np.ndarray:
    """``lo``..``hi`` to 0..255, rounded, clipped; a feature with no spread is drawn from its ``lo``."""
    lo_a, hi_a = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
    span = np.where(hi_a > lo_a, hi_a - lo_a, 1.0)
    return np.clip((values - lo_a) / span * 255.0 + 0.5, 0, 255).astype(np.uint8)


@dataclass(frozen=True, eq=False)
class Canvas:
    """Where and on what a view is drawn: the run's colour range, its views' inputs and the pixels per unit.

    ``scale`` ``None``: :func:`~som_studio.picture.raster.frame_scale` (a live frame's).
    """

    range: ColourRange
    views: MapViews = field(default_factory=MapViews)
    scale: int | None = None

    def raster(self, height: int, width: int, minimum: int = 1) -> Raster:
        topology = self.views.topology
        s = self.scale if self.scale is not None else frame_scale(height, width, topology, minimum)
        return raster(height, width, topology, max(s, minimum))

    @property
    def plain(self) -> bool:
        """One pixel per square unit: scalar views stay (H, W) levels, drawn through the colour map by the viewer."""
        return self.views.topology != Topology.HEX and self.scale in (None, 1)


@dataclass(frozen=True, eq=False)
class Tile:
    """One panel of a picture made of several (the planes grid): its title, its pixel box and its colour bar.

    ``x``, ``y``, ``width``, ``height``: the plane's own pixels. ``caption``: the height of the
    room left for text, one row above the plane (its title) and one under its bar (the bar's
    ends); 0 when none was left. ``bar_y``, ``bar_height``: the rows of the colour bar drawn
    under the plane, as wide as it (``bar_height`` 0: no bar in the picture).
    """

    title: str
    x: int
    y: int
    width: int
    height: int
    bar: ColourBar | None = None
    caption: int = 0
    bar_y: int = 0
    bar_height: int = 0

    def title_box(self) -> tuple[int, int, int, int]:
        """``(x, y, width, height)`` in pixels: the row above the plane left for its title."""
        return self.x, self.y - self.caption - max(1, self.caption // 4), self.width, self.caption

    def ends_box(self) -> tuple[int, int, int, int]:
        """``(x, y, width, height)`` in pixels: the row under the colour bar left for its two ends."""
        return self.x, self.bar_y + self.bar_height, self.width, self.caption if self.bar_height else 0


@dataclass(frozen=True, eq=False)
class Drawn:
    """A view drawn: the uint8 picture, its legend and, for a grid of panels, where each panel is."""

    image: np.ndarray
    legend: Legend | None = None
    tiles: tuple[Tile, ...] = ()
    raster: Raster | None = None


def _scalar(levels: np.ndarray, canvas: Canvas, legend: Legend | None) -> Drawn:
    """A scalar view: (H, W) levels as they are on a plain canvas, else coloured and painted cell by cell."""
    h, w = levels.shape
    if canvas.plain:
        return Drawn(levels, legend, raster=raster(h, w, Topology.RECT, 1))
    r = canvas.raster(h, w)
    return Drawn(r.paint(apply_lut(levels.reshape(-1))), legend, raster=r)


def _cells(colours: np.ndarray, h: int, w: int, canvas: Canvas, legend: Legend | None, minimum: int = 1) -> Drawn:
    r = canvas.raster(h, w, minimum)
    return Drawn(r.paint(colours.reshape(h * w, -1)), legend, raster=r)


def _rgb(weights: np.ndarray, _view: ViewChoice, canvas: Canvas) -> Drawn:
    w = np.asarray(weights, dtype=np.float64)[..., :3]
    rng = canvas.range
    img = _to_u8(w, np.asarray(rng.lo)[:3], np.asarray(rng.hi)[:3])
    h, wd = img.shape[:2]
    legend = _channels(canvas.views)
    if canvas.plain:
        return Drawn(img, legend, raster=raster(h, wd, Topology.RECT, 1))
    return _cells(img, h, wd, canvas, legend)


def _channels(views: MapViews) -> Swatches | None:
    """Which feature each colour channel shows, for a named table's map (colours need no legend)."""
    if not views.feature_names:
        return None
    channels = (N_("red: {name}"), N_("green: {name}"), N_("blue: {name}"))
    pure = ((255, 0, 0), (0, 170, 0), (0, 0, 255))
    entries = tuple((_(c).format(name=views.feature_name(k)), pure[k]) for k, c in enumerate(channels))
    return Swatches(entries, _("colour channels"))


def _component(weights: np.ndarray, view: ViewChoice, canvas: Canvas) -> Drawn:
    k, v = view.component, canvas.views
    plane = np.asarray(weights[..., k], dtype=np.float64)
    lo, hi = (float(plane.min()), float(plane.max())) if plane.size else (0.0, 1.0)  # the map's range
    bar = ColourBar(v.original(k, lo), v.original(k, hi), v.feature_name(k))
    return _scalar(_to_u8(plane, lo, hi), canvas, bar)


def _umatrix(weights: np.ndarray, _view: ViewChoice, canvas: Canvas) -> Drawn:
    um = u_matrix(weights, canvas.views.topology, canvas.views.toroid)
    # U-matrix values are relative: scale each picture to its own maximum.
    top = float(um.max()) if um.size else 0.0
    bar = ColourBar(0.0, top, _("mean distance to neighbouring units"))
    return _scalar(_to_u8(um, 0.0, top if top > 0 else 1.0), canvas, bar)


def _hits(weights: np.ndarray, _view: ViewChoice, canvas: Canvas) -> Drawn:
    h, w = weights.shape[:2]
    hits = np.asarray(canvas.views.hits).reshape(h * w)
    top = int(hits.max()) if hits.size else 0
    colours = apply_lut(_to_u8(hits.astype(np.float64), 0.0, float(max(top, 1))))
    colours[hits == 0] = EMPTY  # no examples: told apart from few
    return _cells(colours, h, w, canvas, ColourBar(0.0, float(top), _("examples per unit"), integer=True))


def _labels(weights: np.ndarray, _view: ViewChoice, canvas: Canvas) -> Drawn:
    v = canvas.views
    h, w = weights.shape[:2]
    labels = np.asarray(v.labels, dtype=str).reshape(h * w)
    found, codes = np.unique(labels, return_inverse=True)  # sorted: "" (no hits) first when present
    names = [str(n) for n in found if n]
    colour_of = {n: category_colour(i) for i, n in enumerate(names)}
    table = np.array([colour_of.get(str(n), EMPTY) for n in found], dtype=np.float64)
    colours = table[codes.reshape(-1)]
    if v.unit_purity is not None:
        # A unit whose examples disagree is paler: its colour fades towards white as its purity falls.
        p = np.nan_to_num(np.asarray(v.unit_purity, dtype=np.float64).reshape(h * w), nan=1.0)
        fade = (FADE_FLOOR + (1.0 - FADE_FLOOR) * np.clip(p, 0.0, 1.0))[:, None]
        colours = 255.0 - (255.0 - colours) * fade
    notes = [_("label purity {purity}").format(purity=f"{v.purity:.3f}")] if v.purity is not None else []
    if len(names) < len(found):  # units no example landed on: drawn pale grey, which no swatch explains
        notes.append(_("pale grey: no examples"))
    legend = Swatches(tuple((n, colour_of[n]) for n in names), _("majority label"), "; ".join(notes))
    return _cells(np.round(colours).astype(np.uint8), h, w, canvas, legend)


def _clusters(weights: np.ndarray, _view: ViewChoice, canvas: Canvas) -> Drawn:
    h, w = weights.shape[:2]
    clusters = np.asarray(canvas.views.clusters, dtype=np.int64).reshape(h * w)
    ks = [int(k) for k in np.unique(clusters)]
    colours = np.asarray(CLUSTER_COLOURS, dtype=np.uint8)[clusters % len(CLUSTER_COLOURS)]
    # Borders need room between units: at least 3 pixels per unit.
    r = canvas.raster(h, w, minimum=3)
    img = r.paint(colours, marks=r.borders(clusters), mark_colour=BORDER)
    legend = Swatches(
        tuple((_("cluster {k}").format(k=k), cluster_colour(k)) for k in ks),
        _("codebook clusters"),
        ngettext("{n} cluster", "{n} clusters", len(ks)).format(n=len(ks)),
    )
    return Drawn(img, legend, raster=r)


PLANE_GAP = 6
"""Pixels between two rows of cells of the planes grid (a cell: a plane's title, its picture, its colour bar);
between two columns, at least a caption's height: the end of one bar and the start of the next are written
there, and 6 pixels ran them together ("14.1 1.28")."""


PLANE_MIN_PX = 96
"""The fewest pixels across a plane of the planes grid (its longer side): a hex map of 12x7 is drawn 150 wide."""


PLANES_SHOWN = 64
"""Component planes the planes grid draws, at most: the first ones, by column. At a thousand features its planes
were a few pixels each with titles none could read, and drawing them cost a live frame seconds; any one plane
is drawn whole under *Feature plane*, and the map's caption says how many of how many are shown."""


def map_range(weights: np.ndarray) -> ColourRange:
    """Each feature's range over the map's own units: what the planes are coloured over.

    A map covers only part of its data's range (training pulls units inward), so planes drawn
    over the data's range crowd into the middle of the colour map; over the map's they use all of it
    (the SOM Toolbox's ``som_cplane`` does the same). Each plane's colour bar says which values it spans.
    """
    w = np.asarray(weights, dtype=np.float64)
    flat = w.reshape(-1, w.shape[-1])
    return ColourRange(flat.min(axis=0), flat.max(axis=0))


def _planes(weights: np.ndarray, view: ViewChoice, canvas: Canvas) -> Drawn:
    """Every component plane in one picture: a grid of cells, each a title row, the plane and its colour bar.

    The titles and the bars' end values are left as room in the picture (:attr:`Tile.caption`) for
    the viewer to write in; the bars' colours are drawn here. On one shared scale there are no bars
    in the cells: the view's legend is the one bar.
    """
    weights = weights[..., :PLANES_SHOWN]
    h, w, d = weights.shape
    v = canvas.views
    own = map_range(weights)
    shared = view.mode == PLANES_SHARED
    lo_all, hi_all = float(np.min(own.lo)), float(np.max(own.hi))
    side = int(np.ceil(np.sqrt(d)))
    # A live grid of planes stays as large as one live frame: smaller cells per plane. But a plane is at least
    # PLANE_MIN_PX across: its title and its bar's two end values are written in proportion to it, and a small
    # rect map at one pixel a unit (12x7) had its titles drawn huge and its bar's values over each other.
    s = canvas.scale if canvas.scale is not None else frame_scale(h * side, w * side, v.topology)
    s = max(s, -(-PLANE_MIN_PX // max(w, h, 1)))
    r = raster(h, w, v.topology, s)
    th, tw = r.shape
    cap = max(6, round(0.08 * max(tw, th)))  # a title row (and the bar's numbers) in proportion to the plane
    gap = max(1, cap // 4)
    bar_h = 0 if shared else max(3, cap // 2)
    cell_h = cap + gap + th + (gap + bar_h + cap if not shared else 0)
    cols = int(np.ceil(np.sqrt(d * cell_h / max(tw, 1)))) if d > 1 else 1
    cols = max(1, min(d, cols))
    rows = -(-d // cols)
    col_gap = max(PLANE_GAP, cap)
    out = np.full((rows * cell_h + (rows - 1) * PLANE_GAP, cols * tw + (cols - 1) * col_gap, 3), 255, np.uint8)
    ramp = VIRIDIS[np.linspace(0, 255, tw).round().astype(np.int64)]
    tiles = []
    for k in range(d):
        lo, hi = (lo_all, hi_all) if shared else (float(own.lo[k]), float(own.hi[k]))
        levels = _to_u8(np.asarray(weights[..., k], dtype=np.float64), lo, hi)
        cy, x0 = (k // cols) * (cell_h + PLANE_GAP), (k % cols) * (tw + col_gap)
        y0 = cy + cap + gap
        out[y0 : y0 + th, x0 : x0 + tw] = r.paint(apply_lut(levels.reshape(-1)))
        bar = None
        if not shared:
            bar = ColourBar(v.original(k, lo), v.original(k, hi), v.feature_name(k))
            out[y0 + th + gap : y0 + th + gap + bar_h, x0 : x0 + tw] = ramp[None]
        tiles.append(Tile(v.feature_name(k), x0, y0, tw, th, bar, cap, y0 + th + gap, bar_h))
    legend = ColourBar(lo_all, hi_all, _("all features (scaled values)")) if shared else None
    return Drawn(out, legend, tuple(tiles), r)


Renderer = Callable[[np.ndarray, ViewChoice, Canvas], Drawn]
RENDERERS: dict[str, Renderer] = {
    RGB: _rgb,
    UMATRIX: _umatrix,
    COMPONENT: _component,
    PLANES: _planes,
    PLANES_SHARED: _planes,
    HITS: _hits,
    LABELS: _labels,
    CLUSTERS: _clusters,
}
"""One renderer per view mode: (map, fitted choice, canvas) -> :class:`Drawn`, row-major uint8."""


def draw(
    weights: np.ndarray,
    view: ViewChoice,
    lo: np.ndarray,
    hi: np.ndarray,
    views: MapViews | None = None,
    scale: int | None = None,
) -> Drawn:
    """``weights`` (H, W, D) in ``view`` (already fitted) on the range ``lo``..``hi``, with its legend.

    ``views``: the run's lattice and the views' inputs (default: a plain rect map);
    ``scale``: pixels per unit (default: a live frame's, :func:`~som_studio.picture.raster.frame_scale`).
    """
    canvas = Canvas(ColourRange(lo, hi), views or MapViews(), scale)
    d = RENDERERS[view.mode](np.asarray(weights), view, canvas)
    return Drawn(np.ascontiguousarray(d.image), d.legend, d.tiles, d.raster)


def render(weights: np.ndarray, view: ViewChoice, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The uint8 image of ``weights`` (H, W, D) for ``view`` (already fitted), on the range ``lo``..``hi``."""
    return draw(weights, view, lo, hi).image


def make_frame(
    iteration: int,
    weights: np.ndarray,
    view: ViewChoice,
    lo: np.ndarray,
    hi: np.ndarray,
    views: MapViews | None = None,
    scale: int | None = None,
) -> MapFrame:
    """The frame of ``weights`` in ``view`` (fitted to its features and to ``views``), carrying its range."""
    fitted = view.fit(weights.shape[-1], views)
    d = draw(weights, fitted, lo, hi, views, scale)
    h, w = weights.shape[:2]
    r = d.raster
    return MapFrame(
        iteration,
        fitted,
        d.image,
        ColourRange(lo, hi),
        legend=d.legend,
        tiles=d.tiles,
        grid=(h, w),
        topology=r.topology if r is not None else Topology.RECT,
        scale=r.scale if r is not None else 1,
    )


def as_rgb(image: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 picture: a scalar view's (H, W) image as grey, an RGB one as it is."""
    img = np.asarray(image)
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=-1)
    return np.ascontiguousarray(img, dtype=np.uint8)


def coloured(image: np.ndarray) -> np.ndarray:
    """An (H, W, 3) uint8 picture: a scalar view's (H, W) levels through the colour map (viridis), RGB as it is."""
    img = np.asarray(image)
    return np.ascontiguousarray(apply_lut(img) if img.ndim == 2 else img, dtype=np.uint8)


def map_image(
    weights: np.ndarray,
    lo: np.ndarray | None = None,
    hi: np.ndarray | None = None,
    views: MapViews | None = None,
    scale: int | None = None,
) -> np.ndarray:
    """A run's picture as kept and reported: (H, W, 3) uint8, RGB for 3 features, the U-matrix in grey otherwise.

    ``lo``/``hi``: the run's colour range (:func:`colour_range`); without one,
    the values are taken to lie in [0, 1]. ``views``: the run's lattice (a hex
    map is drawn as hexagons, at ``scale`` pixels per unit, coloured through the colour map).
    """
    w = np.asarray(weights)
    rng = unit_range(w.shape[-1]) if lo is None or hi is None else ColourRange(lo, hi)
    return as_rgb(draw(w, ViewChoice(RGB).fit(w.shape[-1]), rng.lo, rng.hi, views, scale).image)


__all__ = [
    "CLUSTERS",
    "COMPONENT",
    "HITS",
    "LABELS",
    "MODES",
    "PLANES",
    "PLANES_SHARED",
    "PLANES_SHOWN",
    "RENDERERS",
    "RGB",
    "UMATRIX",
    "VIEWS",
    "Canvas",
    "ColourRange",
    "Drawn",
    "MapFrame",
    "Tile",
    "ViewChoice",
    "ViewKind",
    "as_rgb",
    "available",
    "choices",
    "colour_range",
    "coloured",
    "draw",
    "feature_range",
    "make_frame",
    "map_image",
    "map_range",
    "render",
    "unit_range",
]
