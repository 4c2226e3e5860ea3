"""One process of a multi-process run, for tests: trains and saves the final maps.

``python dist_worker.py FOLDER OUT_PREFIX CPU_DEVICES [COORDINATOR NUM_PROCESSES PROCESS_ID]``: the
in-memory runs, then the runs streamed from FOLDER (each process reading its own share), in one process
(one start of JAX and of its distributed runtime serves both); saves the in-memory maps, and the streamed
runs' maps, hits and what their records say of the stream.
"""

from __future__ import annotations

import sys

import numpy as np

from som_studio.core import jax_runtime

# (implementation, layout over 4 devices)
IMPLS = (("jax-shardmap-batch", "2x2"), ("jax-jit-sharded-batch", "2x2"), ("jax-pmap-batch", "4x1"))


# (implementation, layout over 4 devices, lattice): data split across the processes (each places its own
# rows), and the map split across them (each process's batch gathered to every device).
STREAM_IMPLS = (("jax-shardmap-batch", "2x2", "rect"), ("jax-jit-sharded-batch", "1x4", "hex"))


def main(argv: list[str]) -> int:
    folder, out, devices = argv[0], argv[1], int(argv[2])
    jax_runtime.configure(devices)
    cluster = None
    if len(argv) > 3:
        from som_studio.session.distributed import Cluster, initialize

        cluster = Cluster(argv[3], int(argv[4]), int(argv[5]), init_timeout=30).check()
        initialize(cluster)
    writes = cluster is None or cluster.is_main
    return in_memory(out, writes) or streamed(folder, out, writes)


def in_memory(out: str, writes: bool) -> int:
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
        if writes:
            np.save(f"{out}-{impl}.npy", final)
    return 0


def streamed(folder: str, out: str, writes: bool) -> int:
    from som_studio.config import DataSpec, RunConfig
    from som_studio.session.distributed import LOCKSTEP_SESSION
    from som_studio.session.events import Failed, Finished, Snapshot
    from som_studio.session.session import Session

    for impl, layout, topology in STREAM_IMPLS:
        cfg = RunConfig(
            impl=impl,
            width=5,
            height=6,
            data=DataSpec(path=folder),
            epochs=3,
            init="sample",
            scaling="zscore",
            topology=topology,
            layout=layout,
        ).replace(labels="kind", stream=True, batch_rows=64)
        final, record = None, None
        for ev in Session(cfg, snapshot_interval_s=None, quality_points=2, **LOCKSTEP_SESSION).run():
            if isinstance(ev, Snapshot):
                final = ev.map
            if isinstance(ev, (Finished, Failed)):
                record = ev.record
        assert record is not None
        if record.status != "ok":
            print(f"{impl}: {record.message}", file=sys.stderr)
            return 1
        if writes:
            facts = record.extra["stream"]
            np.savez(
                f"{out}-{impl}.npz",
                map=final,
                hits=record.model.hits,
                quality=[record.qe, record.te],
                by_process=facts["by_process"],
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
