"""Which runs solve the same problem, and which ran on simulated devices: what makes a speed-up meaningful.

A speed-up compares two implementations on the same work. Runs of different
problems (another data source or size, grid, lattice, features) do other work,
so their ratio means nothing: the comparison groups runs by problem and gives
speed-ups only within a group. Runs spread over simulated CPU devices share the
machine's cores, so their speed-up says little about real devices.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from som_studio.i18n import N_, _
from som_studio.run_settings import Topology
from som_studio.session.record import RunRecord

#: The configuration fields that define the problem (the work), as :meth:`RunConfig.to_dict` names them.
PROBLEM_FIELDS = ("data", "grid", "topology", "toroid", "labels", "ignore", "id_column", "feature_names")

DIFFERENT_PROBLEM = N_("n/a: different problem")
"""What the speed-up of a run reads when no run of its kind solved the same problem (shown as ``_(...)``)."""


def problem_key(record: RunRecord) -> str:
    """A text equal for two runs exactly when they solve the same problem."""
    cfg = record.config
    key: dict[str, Any] = {k: cfg.get(k) for k in PROBLEM_FIELDS}
    data = dict(cfg.get("data") or {})
    if data.get("source") == "file":
        data.pop("samples", None)  # the file decides the rows
    key["data"] = data
    return json.dumps(key, sort_keys=True, default=str)


def describe_problem(record: RunRecord) -> str:
    """The problem in a few words: data, its size, the map."""
    cfg = record.config
    data = cfg.get("data") or {}
    rows = record.samples or data.get("samples")
    names = cfg.get("feature_names")
    features = len(names) if names else (3 if data.get("source", "random") == "random" else None)
    size = f"{rows:,} x {features}" if rows and features else _("{n:,} rows").format(n=rows) if rows else ""
    if data.get("source") == "file":
        source = f"{data.get('path')}" + (f" ({size})" if size else "")
    else:
        source = _("random colours") + (f" ({size})" if size else "")
    grid = cfg.get("grid") or ["?", "?"]
    lattice = cfg.get("topology", Topology.RECT) + (", toroid" if cfg.get("toroid") else "")
    return _("{source}, grid {grid} ({lattice})").format(source=source, grid=f"{grid[0]} x {grid[1]}", lattice=lattice)


def problem_groups(records: Sequence[RunRecord]) -> list[list[int]]:
    """Indices of ``records`` grouped by problem, groups in order of first appearance."""
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        groups.setdefault(problem_key(r), []).append(i)
    return list(groups.values())


def simulated_devices(record: RunRecord) -> int:
    """How many simulated CPU devices the run spread over (0: a real device, or one device)."""
    env = record.env or {}
    if env.get("backend") != "cpu":
        return 0
    try:
        data_n, map_n = (int(v) for v in str(record.layout).lower().split("x"))
    except ValueError:
        return 0
    n = data_n * map_n
    return n if n > 1 else 0


def shared_cores_note(record: RunRecord) -> str:
    """``""``, or what a speed-up of a run on simulated devices must say beside it."""
    n = simulated_devices(record)
    if not n:
        return ""
    cores = (record.env or {}).get("cpu_count")
    if not cores:
        return _("{n} simulated devices share the machine").format(n=n)
    return _("{n} simulated devices share {cores} cores").format(n=n, cores=cores)
