"""How long a configuration will take, from the kept runs of the same problem."""

from __future__ import annotations

import pytest

from som_studio.app_model.estimate import duration_words, seconds, time_text
from som_studio.config import DataSpec, RunConfig
from som_studio.session.record import Chunk, RunRecord


def _record(cfg: RunConfig, per_iteration: float, compile_s: float = 2.0, status: str = "ok") -> RunRecord:
    chunks = [Chunk(0, 100, 100 * per_iteration), Chunk(100, 300, 300 * per_iteration)]
    return RunRecord(cfg.impl, "online", cfg.to_dict(), status=status, compile_s=compile_s, chunks=chunks)


CFG = RunConfig(impl="jax-jit-online", width=24, height=13, data=DataSpec(samples=200), steps=1_000_000)


def test_the_last_kept_run_of_the_same_problem_tells():
    old, new = _record(CFG.replace(steps=400), 1e-3), _record(CFG.replace(steps=400, seed=9), 2e-4, compile_s=1.5)
    assert seconds(CFG, [old, new]) == pytest.approx(1.5 + 1_000_000 * 2e-4)  # the most recent (last)
    assert time_text(CFG, [old, new]) == "Time: about 3 min 22 s, as the last kept run of this problem went"
    quick = _record(CFG.replace(steps=10), 1e-7, compile_s=0.01)
    assert (
        time_text(CFG.replace(steps=10), [quick]) == "Time: under a second, as the last kept run of this problem went"
    )
    # A cancelled run's chunks tell as well; another problem, implementation or layout does not.
    assert seconds(CFG, [_record(CFG, 1e-3, status="cancelled")]) == pytest.approx(2 + 1000)
    for other in (CFG.replace(width=25), CFG.replace(impl="numpy-online"), CFG.replace(precision="float64")):
        assert seconds(CFG, [_record(other, 1e-3)]) is None and time_text(CFG, [_record(other, 1e-3)]) == ""
    assert seconds(CFG, []) is None
    assert seconds(CFG, [RunRecord(CFG.impl, "online", CFG.to_dict(), status="failed")]) is None  # no timings


def test_durations_read_as_people_say_them():
    assert [duration_words(s) for s in (0.4, 40, 60, 250, 3600, 7530)] == [
        "under 1 s",  # not "about 0 s"
        "40 s",
        "1 min",
        "4 min 10 s",
        "1 h 0 min",
        "2 h 5 min",
    ]
