"""One epoch of ``jax-fused-batch`` on a 1024 x 1024 map with 100,000 examples of 3 features.

The peers' batch SOMs would need an N x M neighbourhood matrix (MiniSom builds
one M-sized neighbourhood per example and XPySom an ``n_parallel x M`` block),
the playbook's cache an M x M one: 1024 x 1024 units are 1,048,576, so N x M
float32 is ~390 GiB and M x M ~4 TiB. ``jax-fused-batch`` works in sample
chunks against unit blocks and applies the neighbourhood separably, so its
memory is bounded by the map, the data and one chunk's working set.

    python bench/scale.py                 # 1024 x 1024, 100,000 x 3, one epoch (tens of seconds)
    python bench/scale.py --grid 256x256  # smaller, for a quick look

Prints the memory estimate (the registry's, which the session checks before
running) beside the measured peak (resident-set growth over the run, from the
session's record), and the epoch's time. The session is run with
``final_quality=False`` and ``quality_points=0``: measuring QE/TE on a million
units would itself need more time than the epoch.
"""

from __future__ import annotations

import argparse

from _common import fmt_s, table

from som_studio.config import DataSpec, RunConfig, parse_grid
from som_studio.i18n import format_bytes
from som_studio.session.events import Compiled, Failed, Finished, Started
from som_studio.session.session import Session


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--grid", default="1024x1024", help="map size WxH; default %(default)s")
    ap.add_argument("--samples", type=int, default=100_000, help="random colours; default %(default)s")
    ap.add_argument("--epochs", type=int, default=1, help="default %(default)s")
    args = ap.parse_args()
    width, height = parse_grid(args.grid)
    cfg = RunConfig(
        impl="jax-fused-batch",
        width=width,
        height=height,
        data=DataSpec(samples=args.samples),
        epochs=args.epochs,
        seed=0,
        precision="float32",
    )
    session = Session(cfg, snapshot_interval_s=None, quality_points=0, final_quality=False)
    record = None
    compile_s = None
    for ev in session.run():
        if isinstance(ev, Started):
            print(
                f"{cfg.grid} map ({cfg.units:,} units), {ev.samples:,} x {ev.features} examples, "
                f"{args.epochs} epoch(s); estimate {format_bytes(ev.estimate_bytes)}",
                flush=True,
            )
        elif isinstance(ev, Compiled):
            compile_s = ev.seconds
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert record is not None
    if record.status != "ok":
        raise SystemExit(f"scale: {record.status}: {record.message}")
    n, m = record.samples, cfg.units
    rows = [
        [
            cfg.grid,
            f"{n:,}",
            fmt_s(compile_s),
            fmt_s(record.median_s),
            fmt_s(record.total_s),
            format_bytes(record.estimate_bytes or 0),
            format_bytes(record.peak_bytes or 0),
            f"{(record.peak_bytes or 0) / (record.estimate_bytes or 1):.2f}",
            format_bytes(n * m * 4),
            format_bytes(m * m * 4),
        ]
    ]
    print(
        table(
            [
                "map",
                "examples",
                "compile",
                "epoch",
                "total",
                "estimate",
                "measured peak",
                "peak/est",
                "N x M f32",
                "M x M f32",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
