"""Maps to pictures, once: the views of a map, the one colour-range rule, and the frames that carry them.

Qt-free and cheap to pickle: the worker process renders its frames here, the
live map view re-renders a finished run's map here, the run recorder draws a
run's final picture here, and the comparison and its report show those pictures.
Hex maps are drawn as hexagons (:mod:`.raster`); the views' inputs beyond the
map travel as a :class:`MapViews` (:mod:`.mapviews`); colour maps and legends
are :mod:`.colours`.
"""

from som_studio.picture.colours import VIRIDIS, ColourBar, Legend, Swatches
from som_studio.picture.mapviews import MapViews, cheap_to_measure
from som_studio.picture.raster import (
    Raster,
    cell_edges,
    cell_polygons,
    frame_scale,
    outline,
    raster,
    report_scale,
    window,
)
from som_studio.picture.views import (
    CLUSTERS,
    COMPONENT,
    HITS,
    LABELS,
    MODES,
    PLANES,
    PLANES_SHARED,
    RGB,
    UMATRIX,
    VIEWS,
    ColourRange,
    Drawn,
    MapFrame,
    Tile,
    ViewChoice,
    ViewKind,
    as_rgb,
    available,
    choices,
    colour_range,
    coloured,
    data_range,
    draw,
    feature_range,
    label_purity_of_fade,
    make_frame,
    map_image,
    map_range,
    render,
)

__all__ = [
    "CLUSTERS",
    "COMPONENT",
    "HITS",
    "LABELS",
    "MODES",
    "PLANES",
    "PLANES_SHARED",
    "RGB",
    "UMATRIX",
    "VIEWS",
    "VIRIDIS",
    "ColourBar",
    "ColourRange",
    "Drawn",
    "Legend",
    "MapFrame",
    "MapViews",
    "Raster",
    "Swatches",
    "Tile",
    "ViewChoice",
    "ViewKind",
    "as_rgb",
    "available",
    "cell_edges",
    "cell_polygons",
    "cheap_to_measure",
    "choices",
    "colour_range",
    "coloured",
    "data_range",
    "draw",
    "feature_range",
    "frame_scale",
    "label_purity_of_fade",
    "make_frame",
    "map_image",
    "map_range",
    "outline",
    "raster",
    "render",
    "report_scale",
    "window",
]
