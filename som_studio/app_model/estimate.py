"""How long a configuration will take, from the kept runs of the same problem.

A restored configuration can be a four-minute run one Ctrl+R away:
the run panel says how long it will take before it starts. The estimate is
the most recent kept run of the same problem on the same implementation,
layout and precision (what sets the time of one iteration): its compile time
plus its seconds per iteration (:attr:`RunRecord.mean_s`, what a stopwatch
sees) times this configuration's iterations. No such run: no estimate.
"""

from __future__ import annotations

from collections.abc import Iterable

from som_studio.config import SETTINGS, RunConfig
from som_studio.i18n import _
from som_studio.session.record import RunRecord

# The record keys of the settings that set the time of one iteration (the count is the config's own).
SAME = tuple(dict.fromkeys(s.record_key for s in SETTINGS if s.per_iteration))


def seconds(config: RunConfig, records: Iterable[RunRecord]) -> float | None:
    """Compile plus training seconds ``config`` will take, from the last matching record; ``None`` if none."""
    want = config.to_dict()
    key = {k: want.get(k) for k in SAME}
    found = None
    for r in records:
        if r.mean_s and all(r.config.get(k) == v for k, v in key.items()):
            found = r
    if found is None or found.mean_s is None:
        return None
    return found.compile_s + config.iterations * found.mean_s


def duration_words(s: float) -> str:
    """``s`` seconds as a person says it: ``"40 s"``, ``"4 min 10 s"``, ``"2 h 5 min"``."""
    s = max(0, round(s))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s" if s % 60 else f"{s // 60} min"
    return f"{s // 3600} h {s % 3600 // 60} min"


def time_text(config: RunConfig, records: Iterable[RunRecord]) -> str:
    """The run panel's line on how long ``config`` will take, or ``""`` when no kept run tells."""
    s = seconds(config, records)
    if s is None:
        return ""
    return _("Time: about {duration}, as the last kept run of this problem went").format(duration=duration_words(s))
