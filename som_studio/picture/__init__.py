"""Maps to pictures, once: the views of a map, the one colour-range rule, and the frames that carry them.

Qt-free and cheap to pickle: the worker process renders its frames here, the
live map view re-renders a finished run's map here, the run recorder draws a
run's final picture here, and the comparison and its report show those pictures.
"""

from som_studio.picture.views import (
    COMPONENT,
    MODES,
    RGB,
    UMATRIX,
    ColourRange,
    MapFrame,
    ViewChoice,
    as_rgb,
    colour_range,
    data_range,
    feature_range,
    make_frame,
    map_image,
    render,
)

__all__ = [
    "COMPONENT",
    "MODES",
    "RGB",
    "UMATRIX",
    "ColourRange",
    "MapFrame",
    "ViewChoice",
    "as_rgb",
    "colour_range",
    "data_range",
    "feature_range",
    "make_frame",
    "map_image",
    "render",
]
