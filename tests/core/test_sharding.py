"""The sharding description against JAX's own placement, and layout validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from som_studio import cli
from som_studio.config import ConfigError
from som_studio.core import jax_runtime
from som_studio.core.plans import sharding

LAYOUTS = ["1x1", "2x1", "1x2", "2x2", "4x2", "8x1", "1x8"]
# (height, width, features, samples): even, and uneven on both axes.
SHAPES = [(8, 5, 3, 16), (9, 4, 3, 10), (3, 7, 2, 5)]


def _mesh(layout: sharding.Layout):
    jax = jax_runtime.jax()
    devs = np.array(jax.devices()[: layout.devices]).reshape(layout.data, layout.map)
    return jax.sharding.Mesh(devs, sharding.AXES)


def _expected(mesh, spec, shape, padded_shape):
    """JAX's shards of the padded array, clipped to the real shape, in mesh order.

    For uneven sizes the description is of the padded array (what is placed):
    each ``[start, stop)`` is JAX's slice of the padded array clipped to the
    real length, so a device holding only padding gets an empty range.
    """
    jax = jax_runtime.jax()
    named = jax.sharding.NamedSharding(mesh, spec)
    index_map = named.devices_indices_map(tuple(padded_shape))
    arr = jax.device_put(np.zeros(padded_shape, np.float32), named)
    replicas = {s.device.id: s.replica_id for s in arr.addressable_shards}
    out = []
    for dev in mesh.devices.flat:
        idx = index_map[dev]
        ranges = [
            [min(sl.start or 0, n), min(sl.stop if sl.stop is not None else p, n)]
            for sl, n, p in zip(idx, shape, padded_shape)
        ]
        out.append({"device": dev.id, "index": ranges, "replica": replicas[dev.id]})
    return out, named.shard_shape(tuple(padded_shape))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_description_matches_devices_indices_map(layout, shape):
    P = jax_runtime.jax().sharding.PartitionSpec
    h, w, d, n = shape
    lay = sharding.Layout.parse(layout)
    desc = sharding.describe(lay, height=h, width=w, features=d, samples=n, itemsize=8)
    mesh = _mesh(lay)
    assert desc["mesh"]["devices"] == [[dev.id for dev in row] for row in mesh.devices]
    cases = {
        "map": (P("map", None, None), (h, w, d)),
        "data": (P("data", None), (n, d)),
        "sums": (P("map", None, None), (h, w, d + 1)),
    }
    for name, (spec, real) in cases.items():
        arr = desc["arrays"][name]
        assert arr["shape"] == list(real)
        expected, shard_shape = _expected(mesh, spec, real, arr["padded_shape"])
        assert arr["shards"] == expected, name
        assert set(arr["bytes_per_device"]) == {s["device"] for s in expected}
        assert all(b == int(np.prod(shard_shape)) * 8 for b in arr["bytes_per_device"].values())


def test_description_keeps_device_facts():
    devices = [{"id": 5, "kind": "gpu", "memory_limit": 100, "memory_in_use": 7}, {"id": 9, "kind": "gpu"}]
    desc = sharding.describe("1x2", height=4, width=3, features=3, samples=6, devices=devices)
    assert desc["devices"] == devices
    assert [s["device"] for s in desc["arrays"]["map"]["shards"]] == [5, 9]
    text = sharding.render_text(desc)
    assert "7 B / 100 B" in text and "devices 5, 9" in text


def test_render_text_names_every_device_and_the_padding():
    desc = sharding.describe("2x4", height=9, width=12, features=3, samples=7)
    text = sharding.render_text(desc)
    for j, rows in enumerate(["rows 0-2", "rows 3-5", "rows 6-8", "rows: none (padding only)"]):
        assert rows in text
        assert f"devices {j}, {j + 4}" in text
    assert "examples 0-3" in text and "examples 4-6" in text and "devices 4, 5, 6, 7" in text
    assert "padded by 3 masked rows" in text and "padded by 1 zero-weight example" in text


@pytest.mark.parametrize(
    ("layout", "count", "kw", "words"),
    [
        ("4x4", 8, {}, ["4x4 needs 16 devices", "sees 8"]),
        ("3x1", 2, {"backend": "cpu"}, ["3x1 needs 3 devices", "--cpu-devices 3"]),
        ("2x2", 8, {"map_axis": False, "impl": "jax-pmap-batch"}, ["jax-pmap-batch", "data-parallel", "4x1"]),
        ("0x2", 8, {}, ["DATAxMAP"]),
        ("two", 8, {}, ["DATAxMAP"]),
    ],
)
def test_invalid_layouts_are_refused(layout, count, kw, words):
    with pytest.raises(ConfigError) as err:
        sharding.check_layout(layout, count, **kw)
    assert err.value.field == "layout"
    for w in words:
        assert w in str(err.value)


def test_the_remedy_for_too_few_devices_is_each_processs_share():
    # Over two processes, --cpu-devices 4 in each would make 8: each needs 2.
    for processes, each in ((1, 4), (2, 2), (3, 2)):
        with pytest.raises(ConfigError) as err:
            sharding.check_layout("4x1", 1, backend="cpu", processes=processes)
        assert err.value.refusal.remedy == ("cpu_devices", each)


def test_devices_command_json(tmp_path, capsys):
    out = tmp_path / "layout.json"
    assert cli.main(["devices", "--layout", "2x2", "--grid", "24x13", "--samples", "9", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "rows 0-6" in text and "rows 7-12" in text
    doc = json.loads(out.read_text())
    assert doc["layout"] == "2x2"
    assert [set(d) >= {"id", "kind"} for d in doc["devices"]] == [True] * 4
    m = doc["arrays"]["map"]
    assert m["shape"] == [13, 24, 3]
    assert m["shards"][1] == {"device": 1, "index": [[7, 13], [0, 24], [0, 3]], "replica": 0}
    assert m["bytes_per_device"] == {str(k): 7 * 24 * 3 * 4 for k in range(4)}
    assert doc["arrays"]["data"]["shards"][2] == {"device": 2, "index": [[5, 9], [0, 3]], "replica": 0}
    # an existing file is refused without --force, and kept
    assert cli.main(["devices", "--layout", "2x2", "--json", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert json.loads(out.read_text()) == doc


def test_devices_command_refuses_a_layout_too_big(capsys):
    assert cli.main(["devices", "--layout", "4x4"]) == 2
    err = capsys.readouterr().err
    assert "som-studio devices: error: --layout: layout 4x4 needs 16 devices" in err and "sees 8" in err
