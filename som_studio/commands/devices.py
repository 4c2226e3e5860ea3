"""``som-studio devices``: the devices JAX sees, and how a layout places a run on them."""

from __future__ import annotations

import argparse
import sys

from som_studio.commands.common import CommandError, flag_names, wrote
from som_studio.i18n import _

DESCRIPTION = """\
List the devices JAX sees, with their kind and memory where known.

With --layout, show how a run with that device layout places its arrays: the
map's grid split by rows over the `map` axis, the data split by examples over
the `data` axis, which device holds which rows, and bytes per device. With
--json FILE, write the same as data.

examples:
  som-studio devices
  som-studio --cpu-devices 4 devices --layout 2x2 --grid 240x135
  som-studio --cpu-devices 8 devices --layout 4x2 --json layout.json
"""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from som_studio import config as cfgmod
    from som_studio.commands.common import _count, _grid

    p = sub.add_parser(
        "devices",
        help="list the devices JAX sees; show how a layout shards a run",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--layout",
        metavar="DATAxMAP",
        help="show how this layout (devices along data x along map) places a run's arrays",
    )
    p.add_argument(
        "--grid",
        type=_grid,
        default=(cfgmod.DEFAULT_WIDTH, cfgmod.DEFAULT_HEIGHT),
        metavar="WxH",
        help="map size, width x height; default 240x135",
    )
    p.add_argument(
        "--samples",
        type=_count,
        default=cfgmod.DEFAULT_SAMPLES,
        metavar="N",
        help="number of examples; default %(default)s",
    )
    p.add_argument(
        "--features",
        type=_count,
        default=3,
        metavar="D",
        help="features per example (3 for colours); default %(default)s",
    )
    p.add_argument("--precision", choices=cfgmod.PRECISIONS, default="float32", help="default %(default)s")
    p.add_argument(
        "--json",
        metavar="FILE",
        help="write the layout's sharding description as JSON (needs --layout); "
        "- prints it (the text then goes to stderr)",
    )
    p.add_argument("--force", action="store_true", help="overwrite --json FILE if it exists")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio.config import ConfigError
    from som_studio.core import jax_runtime
    from som_studio.core.plans import sharding
    from som_studio.i18n import format_bytes
    from som_studio.session.env import device_info

    if args.json and not args.layout:
        raise CommandError("--json: " + _("needs {flag} (the description is of a layout)").format(flag="--layout"))
    layout = None
    if args.layout is not None:
        try:
            layout = sharding.Layout.parse(args.layout)
        except ConfigError as exc:
            raise CommandError(exc.refusal.text(flag_names())) from None
    from som_studio.commands.common import STDOUT, check_output

    json_path = None
    if args.json:
        json_path = None if args.json == STDOUT else check_output(args.json, args.force, flag="--json")

    jax = jax_runtime.jax()
    devs = jax.devices()
    infos = [device_info(d) for d in devs]
    if layout is None:
        print(
            _("backend: {backend}   devices: {devices}   processes: {processes}").format(
                backend=jax.default_backend(), devices=len(devs), processes=jax.process_count()
            )
        )
        for d, info in zip(devs, infos):
            mem = ""
            if info.get("memory_limit"):
                mem = "  " + _("memory {used} / {limit}").format(
                    used=format_bytes(info.get("memory_in_use") or 0), limit=format_bytes(info["memory_limit"])
                )
            print(f"  {info['id']:>3}  {d.platform:<5} {info['kind']}{mem}")
        return 0

    try:
        sharding.check_layout(layout, len(devs), backend=jax.default_backend())
    except ConfigError as exc:
        raise CommandError(exc.refusal.text(flag_names())) from None
    width, height = args.grid
    itemsize = 4 if args.precision == "float32" else 8
    desc = sharding.describe(
        layout,
        height=height,
        width=width,
        features=args.features,
        samples=args.samples,
        itemsize=itemsize,
        devices=infos,
    )
    if args.json == STDOUT:  # stdout holds the JSON alone
        from som_studio.storage.writers import json_text

        print(sharding.render_text(desc, precision=args.precision), file=sys.stderr)
        sys.stdout.write(json_text(desc))
    else:
        print(sharding.render_text(desc, precision=args.precision))
    if json_path is not None:
        from som_studio.storage.writers import OutputError, write_json

        try:
            write_json(json_path, desc, force=args.force)
        except OutputError as exc:
            raise CommandError(str(exc)) from None
        print(wrote(json_path), file=sys.stderr)
    return 0
