"""Device layouts and the sharding description: plain arithmetic, no JAX.

A layout ``DATAxMAP`` arranges ``DATA * MAP`` devices in a mesh with two named
axes, row-major: mesh position ``(i, j)`` holds device ``ids[i * MAP + j]``
(the order ``jax.sharding.Mesh(np.array(devices).reshape(DATA, MAP), ("data",
"map"))`` uses). The sharded implementations place their arrays this way:

* the map, shape ``(H, W, D)``: rows split over ``map``, replicated over ``data``
  (``PartitionSpec("map", None, None)``);
* the data, shape ``(N, D)``: examples split over ``data``, replicated over ``map``
  (``PartitionSpec("data", None)``);
* the per-unit sums ``(H, W, D + 1)`` (weighted example sums and total weight
  per unit), placed like the map.

Sizes that do not divide evenly are padded: the map to ``MAP * ceil(H / MAP)``
rows (padded rows are masked out of the best-matching-unit search), the data to
``DATA * ceil(N / DATA)`` examples (padded examples have weight zero; none is
dropped). Index ranges here are the padded array's shards clipped to the real
shape, so a device may hold an empty range; bytes count the padded shard, which
is what the device allocates.

Everything is computed from the layout and the shapes, so the app can draw a
layout without starting JAX with that many devices; tests check it against
``NamedSharding(...).devices_indices_map(padded_shape)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from som_studio.config import ConfigError, parse_layout
from som_studio.i18n import _, ljust, ngettext, text_width

AXES = ("data", "map")


@dataclass(frozen=True)
class Layout:
    """A ``data x map`` device mesh."""

    data: int
    map: int

    @classmethod
    def parse(cls, text: str) -> Layout:
        d, m = parse_layout(text)
        return cls(d, m)

    @property
    def devices(self) -> int:
        return self.data * self.map

    def __str__(self) -> str:
        return f"{self.data}x{self.map}"

    def position(self, k: int) -> tuple[int, int]:
        """Mesh position ``(i, j)`` of the ``k``-th device of the layout."""
        return divmod(k, self.map)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def padded(n: int, parts: int) -> int:
    """``n`` rounded up to a multiple of ``parts``."""
    return ceil_div(n, parts) * parts


def check_layout(
    layout: str | Layout,
    device_count: int,
    *,
    impl: str | None = None,
    map_axis: bool = True,
    backend: str | None = None,
    processes: int = 1,
) -> Layout:
    """Check a layout against the devices there are (``processes``: of a run over several, whose devices they
    are together); raise :class:`ConfigError` (field ``layout``).

    ``map_axis=False`` is for data-parallel implementations, which replicate the
    map and so cannot split it.
    """
    lay = layout if isinstance(layout, Layout) else Layout.parse(layout)
    if not map_axis and lay.map != 1:
        raise ConfigError(
            "layout",
            _(
                "{impl} is data-parallel only (it replicates the map on every device), so the layout's map size "
                "must be 1; got {layout}: use {instead} instead"
            ).format(impl=impl or _("this implementation"), layout=lay, instead=f"{lay.devices}x1"),
        )
    if lay.devices > device_count:
        sees = ngettext("but JAX sees {n} {backend} device", "but JAX sees {n} {backend} devices", device_count).format(
            n=device_count, backend=backend or ""
        )
        raise ConfigError(
            "layout",
            _("layout {layout} needs {devices} devices ({data} along data x {map} along map), {sees}").format(
                layout=lay, devices=lay.devices, data=lay.data, map=lay.map, sees=" ".join(sees.split())
            ),
            # --cpu-devices is each process's: over several, each simulates its share of the mesh.
            remedy=("cpu_devices", -(-lay.devices // max(processes, 1))) if backend in (None, "cpu") else None,
        )
    return lay


# -- the description ---------------------------------------------------------------


def _ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """Per part, the ``[start, stop)`` of ``n`` padded to ``parts`` equal blocks, clipped to ``n``."""
    block = ceil_div(n, parts)
    return [(min(k * block, n), min((k + 1) * block, n)) for k in range(parts)]


def _array(
    shape: tuple[int, ...],
    split_axis: str,
    layout: Layout,
    ids: list[int],
    itemsize: int,
) -> dict[str, Any]:
    """One array split along its first dimension over ``split_axis``, replicated over the other."""
    parts = layout.map if split_axis == "map" else layout.data
    ranges = _ranges(shape[0], parts)
    rest = [[0, s] for s in shape[1:]]
    block_bytes = ceil_div(shape[0], parts) * itemsize
    for s in shape[1:]:
        block_bytes *= s
    shards = []
    bytes_per_device: dict[int, int] = {}
    for k, dev in enumerate(ids):
        i, j = layout.position(k)
        part, replica = (j, i) if split_axis == "map" else (i, j)
        lo, hi = ranges[part]
        shards.append({"device": dev, "index": [[lo, hi], *rest], "replica": replica})
        bytes_per_device[dev] = block_bytes
    other = "data" if split_axis == "map" else "map"
    return {
        "shape": list(shape),
        "padded_shape": [padded(shape[0], parts), *shape[1:]],
        "split": {"dim": 0, "axis": split_axis, "parts": parts},
        "replicated_over": other,
        "shards": shards,
        "bytes_per_device": bytes_per_device,
    }


def describe(
    layout: str | Layout,
    *,
    height: int,
    width: int,
    features: int,
    samples: int,
    itemsize: int = 4,
    devices: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The sharding description of a run's arrays (the JSON of ``som-studio devices --json``).

    Parameters
    ----------
    layout : ``"DATAxMAP"`` or a :class:`Layout`.
    height, width, features, samples : the map's and the data's sizes.
    itemsize : bytes per number (4 for float32, 8 for float64).
    devices : ``[{"id", "kind", ...}]`` for the devices the layout uses, in mesh
        order (``memory_in_use`` / ``memory_limit`` are kept where given); the
        default is ``layout.devices`` CPU devices with ids 0, 1, ...

    Returns
    -------
    ``{"layout", "mesh", "devices", "arrays": {"map", "data", "sums"}}``: for each
    array its shape, and for each device the index ranges it holds (one
    ``[start, stop]`` per dimension), its replica number and its bytes.
    """
    lay = layout if isinstance(layout, Layout) else Layout.parse(layout)
    if devices is None:
        devices = [{"id": k, "kind": "cpu"} for k in range(lay.devices)]
    if len(devices) < lay.devices:
        raise ConfigError(
            "layout",
            _("layout {layout} needs {devices} devices, {given} given").format(
                layout=lay, devices=lay.devices, given=len(devices)
            ),
        )
    devices = [dict(d) for d in devices[: lay.devices]]
    ids = [int(d["id"]) for d in devices]
    return {
        "layout": str(lay),
        "mesh": {
            "axes": list(AXES),
            "shape": [lay.data, lay.map],
            "devices": [ids[i * lay.map : (i + 1) * lay.map] for i in range(lay.data)],
        },
        "devices": devices,
        "arrays": {
            "map": _array((height, width, features), "map", lay, ids, itemsize),
            "data": _array((samples, features), "data", lay, ids, itemsize),
            "sums": _array((height, width, features + 1), "map", lay, ids, itemsize),
        },
    }


# -- the text diagram ----------------------------------------------------------------

_BOX_WIDTH = 44


def _holders(desc: dict[str, Any], array: str) -> list[tuple[tuple[int, int], list[int]]]:
    """For each block of ``array`` in order: its row range and the devices holding it."""
    lay = Layout.parse(desc["layout"])
    blocks: dict[int, tuple[tuple[int, int], list[int]]] = {}
    for k, s in enumerate(desc["arrays"][array]["shards"]):
        i, j = lay.position(k)  # shards are listed in mesh order
        lo, hi = s["index"][0]
        blocks.setdefault(j if array != "data" else i, ((lo, hi), []))[1].append(s["device"])
    return [blocks[k] for k in sorted(blocks)]


def _center(text: str, width: int) -> str:
    """``text`` centred in ``width`` terminal columns (Hangul takes two)."""
    pad = max(0, width - text_width(text))
    return " " * (pad // 2) + text + " " * (pad - pad // 2)


def _box(title: str, blocks: list[tuple[tuple[int, int], list[int]]], unit: str, lines: int) -> list[str]:
    """A box per holder of ``unit`` (``"rows"``/``"examples"``), stacked."""
    inner = _BOX_WIDTH - 2
    total = max(sum(hi - lo for (lo, hi), _ in blocks), 1)
    out = [title, "┌" + "─" * inner + "┐"]
    for k, ((lo, hi), devs) in enumerate(blocks):
        if k:
            out.append("├" + "─" * inner + "┤")
        height = max(1, round(lines * (hi - lo) / total))
        if unit == "rows":
            rng = _("rows {first}-{last}").format(first=lo, last=hi - 1) if hi > lo else _("rows: none (padding only)")
        else:
            rng = (
                _("examples {first}-{last}").format(first=lo, last=hi - 1)
                if hi > lo
                else _("examples: none (padding only)")
            )
        ids = ", ".join(str(d) for d in devs)
        label = [rng, ngettext("device {ids}", "devices {ids}", len(devs)).format(ids=ids)]
        body = [""] * max(height, len(label))
        top = (len(body) - len(label)) // 2
        body[top : top + len(label)] = label
        out += ["│" + _center(b, inner) + "│" for b in body]
    out.append("└" + "─" * inner + "┘")
    return out


def render_text(desc: dict[str, Any], *, precision: str | None = None) -> str:
    """A text diagram of the map's grid and the data, with device ids.

    In the spirit of ``jax.debug.visualize_array_sharding``, but for the map's
    own 2-D grid (rows down, columns across) rather than a flattened array.
    """
    lay = Layout.parse(desc["layout"])
    arr = desc["arrays"]
    h, w, d = arr["map"]["shape"]
    n = arr["data"]["shape"][0]
    dt = f", {precision}" if precision else ""
    lines = [
        ngettext(
            "layout {layout}: {data} along data x {map} along map = {n} device",
            "layout {layout}: {data} along data x {map} along map = {n} devices",
            lay.devices,
        ).format(layout=lay, data=lay.data, map=lay.map, n=lay.devices)
    ]
    mesh = desc["mesh"]["devices"]
    lines.append(
        _("mesh (rows: data, columns: map): {mesh}").format(
            mesh="  ".join("[" + " ".join(str(x) for x in row) + "]" for row in mesh)
        )
    )
    lines.append("")
    pad_m = arr["map"]["padded_shape"][0] - h
    pad_d = arr["data"]["padded_shape"][0] - n
    note_m = (
        ngettext("; padded by {n} masked row", "; padded by {n} masked rows", pad_m).format(n=pad_m) if pad_m else ""
    )
    note_d = (
        ngettext("; padded by {n} zero-weight example", "; padded by {n} zero-weight examples", pad_d).format(n=pad_d)
        if pad_d
        else ""
    )
    # Shape the box like the grid: a character cell is about twice as tall as wide.
    map_lines = min(max(round((_BOX_WIDTH - 2) / 2 * h / w), lay.map), 20)
    lines += _box(
        _(
            "map grid {w} x {h} ({w} columns, {h} rows, {d} features{precision}): rows split over map, "
            "replicated over data{note}"
        ).format(w=w, h=h, d=d, precision=dt, note=note_m),
        _holders(desc, "map"),
        "rows",
        map_lines,
    )
    lines.append("")
    lines += _box(
        _("data {n} x {d}: examples split over data, replicated over map{note}").format(n=n, d=d, note=note_d),
        _holders(desc, "data"),
        "examples",
        min(max(lay.data * 2, 4), 10),
    )
    lines.append("")
    lines.append(_("per device (per-unit sums are placed like the map):"))
    head = [_("device"), _("kind"), _("map rows"), _("data rows"), _("bytes"), _("memory")]
    rows = []
    by_dev = {a: {s["device"]: s for s in arr[a]["shards"]} for a in ("map", "data")}
    for dev in desc["devices"]:
        i = dev["id"]
        (m0, m1), (d0, d1) = by_dev["map"][i]["index"][0], by_dev["data"][i]["index"][0]
        total = sum(arr[a]["bytes_per_device"][i] for a in ("map", "data", "sums"))
        mem = "-"
        if dev.get("memory_limit"):
            mem = f"{_fmt_bytes(dev.get('memory_in_use') or 0)} / {_fmt_bytes(dev['memory_limit'])}"
        rows.append(
            [
                str(i),
                str(dev.get("kind", "?")),
                f"{m0}-{m1 - 1}" if m1 > m0 else "-",
                f"{d0}-{d1 - 1}" if d1 > d0 else "-",
                _fmt_bytes(total),
                mem,
            ]
        )
    widths = [max(text_width(hd), *(text_width(r[k]) for r in rows)) for k, hd in enumerate(head)]
    lines.append("  ".join(ljust(hd, wd) for hd, wd in zip(head, widths)))
    lines += ["  ".join(ljust(c, wd) for c, wd in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def _fmt_bytes(n: float) -> str:
    from som_studio.i18n import format_bytes

    return format_bytes(n)
