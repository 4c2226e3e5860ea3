"""What checkpoints cost a run, and what a resumed run saves: measured side by side, interleaved.

    PYTHONPATH=. .venv/bin/python bench/checkpoint.py [--impl jax-fused-batch] [--every 1] [--repeat 3]

Each round trains the same SOM three ways in this process, in turn: without checkpoints, with a
checkpoint every ``--every`` seconds, and stopped halfway (after a checkpoint) then resumed from
it. It prints each way's training seconds (``timings.phases.train``: the timed iterations, compiles
apart; median over rounds), the seconds spent writing
checkpoints, their count, and the ratios to the plain run; and checks that every way ends at the
plain run's map, bit for bit. Orbax is imported once before the rounds (its first import, about
3 s here, is a one-off of each process and not a checkpoint's cost).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench._common import fmt_s, table  # noqa: E402
from som_studio.config import DataSpec, RunConfig  # noqa: E402
from som_studio.session.checkpoint import Checkpoints, _orbax, resume_from  # noqa: E402
from som_studio.session.events import ChunkTimed, Failed, Finished, Snapshot  # noqa: E402
from som_studio.session.session import Session  # noqa: E402


def _run(session: Session, stop_at: int | None = None) -> tuple[np.ndarray, object]:
    final, record = None, None
    for ev in session.run():
        if isinstance(ev, Snapshot):
            final = ev.map
        elif isinstance(ev, ChunkTimed) and stop_at is not None and ev.end >= stop_at:
            session.cancel()
        elif isinstance(ev, (Finished, Failed)):
            record = ev.record
    assert final is not None and record is not None
    if record.status == "failed":
        raise SystemExit(f"{record.impl}: {record.message}")
    return final, record


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", default="jax-fused-batch")
    ap.add_argument("--grid", default="32x32")
    ap.add_argument("--rows", type=int, default=20000)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--every", type=float, default=1.0, help="seconds between checkpoints")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    w, h = (int(v) for v in a.grid.split("x"))
    cfg = RunConfig(impl=a.impl, width=w, height=h, data=DataSpec(samples=a.rows), epochs=a.epochs)
    kw = {"snapshot_interval_s": None, "quality_points": 0, "final_quality": False}
    _orbax()
    seconds: dict[str, list[float]] = {"plain": [], "checkpoints": [], "stopped+resumed": []}
    spent: dict[str, list[float]] = {k: [] for k in seconds}
    saves: dict[str, list[int]] = {k: [] for k in seconds}
    for _ in range(a.repeat):
        plain, rec = _run(Session(cfg, **kw))
        seconds["plain"].append(rec.phases["train"])
        spent["plain"].append(0.0)
        saves["plain"].append(0)
        with tempfile.TemporaryDirectory() as tmp:
            ck = Checkpoints(tmp, a.every)
            final, rec = _run(Session(cfg, checkpoint=ck, **kw))
            assert np.array_equal(final, plain), "checkpoints changed the map"
            seconds["checkpoints"].append(rec.phases["train"])
            spent["checkpoints"].append(rec.phases["checkpoint"])
            saves["checkpoints"].append(int(ck._step or 0) + 1)
        with tempfile.TemporaryDirectory() as tmp:
            first = Checkpoints(tmp, a.every)
            _half, rec1 = _run(Session(cfg, checkpoint=first, **kw), stop_at=a.epochs // 2)
            saved = resume_from(tmp, cfg)
            second = Checkpoints(tmp, a.every)
            final, rec2 = _run(Session(cfg, checkpoint=second, resume=saved, **kw))
            assert np.array_equal(final, plain), "the resumed run's map differs"
            seconds["stopped+resumed"].append(rec1.phases["train"] + rec2.phases["train"])
            spent["stopped+resumed"].append(rec1.phases["checkpoint"] + rec2.phases["checkpoint"])
            saves["stopped+resumed"].append(int(second._step or 0) + 1)  # the second goes on numbering the first's
    base = statistics.median(seconds["plain"])
    rows = []
    for k, v in seconds.items():
        med = statistics.median(v)
        rows.append(
            [k, fmt_s(med), f"{med / base:.3f}x", fmt_s(statistics.median(spent[k])), str(statistics.median(saves[k]))]
        )
    print(
        f"{a.impl}, {a.grid}, {a.rows:,} rows x 3, {a.epochs} epochs, a checkpoint every {a.every:g} s, "
        f"median of {a.repeat} interleaved rounds; every map equal to the plain run's, bit for bit"
    )
    print(table(["run", "training", "vs plain", "writing checkpoints", "checkpoints"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
