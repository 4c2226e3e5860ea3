"""One process of a multi-process run, for tests: trains and saves the final maps.

``python dist_worker.py OUT_PREFIX CPU_DEVICES [COORDINATOR NUM_PROCESSES PROCESS_ID]``
"""

from __future__ import annotations

import sys

import numpy as np

from som_studio.core import jax_runtime

# (implementation, layout over 4 devices)
IMPLS = (("jax-shardmap-batch", "2x2"), ("jax-jit-sharded-batch", "2x2"), ("jax-pmap-batch", "4x1"))


def main(argv: list[str]) -> int:
    out, devices = argv[0], int(argv[1])
    jax_runtime.configure(devices)
    cluster = None
    if len(argv) > 2:
        from som_studio.session.distributed import Cluster, initialize

        cluster = Cluster(argv[2], int(argv[3]), int(argv[4]), init_timeout=30).check()
        initialize(cluster)
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.distributed import LOCKSTEP_SESSION
    from som_studio.session.events import Failed, Finished, Snapshot
    from som_studio.session.session import Session

    for impl, layout in IMPLS:
        cfg = RunConfig(
            impl=impl,
            width=7,
            height=9,
            data=DataSpec(samples=30),
            seed=4,
            epochs=6,
            precision="float64",
            layout=layout,
        )
        final = None
        for ev in Session(cfg, snapshot_interval_s=None, quality_points=3, **LOCKSTEP_SESSION).run():
            if isinstance(ev, Snapshot):
                final = ev.map
            if isinstance(ev, Failed):
                print(f"{impl}: {ev.record.message}", file=sys.stderr)
                return 1
            if isinstance(ev, Finished):
                assert ev.record.status == "ok"
        if cluster is None or cluster.is_main:
            np.save(f"{out}-{impl}.npy", final)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
