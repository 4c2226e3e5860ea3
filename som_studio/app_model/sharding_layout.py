"""Which device holds which part of a run's arrays, by arithmetic on the layout (Qt-free).

Produces the sharding description format of ``som-studio devices --layout
DATAxMAP --grid WxH --json``: ``{"layout", "devices": [{"id",
"kind"}], "arrays": {"map": {"shape", "shards": [{"device", "index",
"replica"}], "bytes_per_device"}, "data": {...}}}``.

:func:`describe` uses ``som_studio.core.plans.sharding.describe`` when that module
exists (the engine's own description, checked against ``devices_indices_map``;
it also describes the per-unit sums and pads uneven shards) and otherwise the
same arithmetic done here: the mesh is ``data x map`` over
devices ``0 .. D*M-1`` in row-major order; the map (H, W, F) is split by rows
over the ``map`` axis and replicated over ``data``; the examples (N, F) are
split over ``data`` and replicated over ``map``. Uneven sizes get ceil-sized
shards with a shorter last one (the engine pads and masks).
"""

from __future__ import annotations

import importlib
from typing import Any

from som_studio.config import RunConfig, parse_layout


def _split(n: int, parts: int) -> list[tuple[int, int]]:
    size = -(-n // parts)
    return [(min(n, i * size), min(n, (i + 1) * size)) for i in range(parts)]


def layout_description(
    layout: str, height: int, width: int, features: int, samples: int, itemsize: int = 4, device_kind: str = "device"
) -> dict[str, Any]:
    """The sharding description of a run's map and data for ``layout`` (pure arithmetic)."""
    d, m = parse_layout(layout)
    ids = [[i * m + j for j in range(m)] for i in range(d)]
    devices = [{"id": k, "kind": device_kind} for k in range(d * m)]
    map_shards, data_shards = [], []
    map_bytes: dict[int, int] = {}
    data_bytes: dict[int, int] = {}
    rows = _split(height, m)
    examples = _split(samples, d)
    for i in range(d):
        for j in range(m):
            dev = ids[i][j]
            r0, r1 = rows[j]
            map_shards.append({"device": dev, "index": [[r0, r1], [0, width], [0, features]], "replica": i})
            map_bytes[dev] = (r1 - r0) * width * features * itemsize
            e0, e1 = examples[i]
            data_shards.append({"device": dev, "index": [[e0, e1], [0, features]], "replica": j})
            data_bytes[dev] = (e1 - e0) * features * itemsize
    return {
        "layout": f"{d}x{m}",
        "devices": devices,
        "arrays": {
            "map": {"shape": [height, width, features], "shards": map_shards, "bytes_per_device": map_bytes},
            "data": {"shape": [samples, features], "shards": data_shards, "bytes_per_device": data_bytes},
        },
    }


def describe(
    config: RunConfig, features: int, samples: int, shards: bool, devices: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The description for a run of ``config``; implementations that do not shard use ``1x1``.

    ``devices`` (``[{"id", "kind", "memory_in_use", "memory_limit"}]``, from a
    run's environment) names the devices when known.
    """
    layout = config.layout if shards else "1x1"
    itemsize = 8 if config.precision == "float64" else 4
    try:
        engine = importlib.import_module("som_studio.core.plans.sharding")
    except ModuleNotFoundError:
        engine = None
    fn = getattr(engine, "describe", None)
    if fn is not None:
        d, m = parse_layout(layout)
        return dict(
            fn(
                layout,
                height=config.height,
                width=config.width,
                features=features,
                samples=samples,
                itemsize=itemsize,
                devices=devices if devices and len(devices) >= d * m else None,
            )
        )
    desc = layout_description(layout, config.height, config.width, features, samples, itemsize)
    if devices:
        known = {int(dev["id"]): dev for dev in devices}
        desc["devices"] = [dict(known.get(dev["id"], dev)) for dev in desc["devices"]]
    return desc
