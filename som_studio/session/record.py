"""The record of one run: what ``--json`` writes, what reports and the app read.

``RunRecord.to_dict`` is the JSON schema documented in docs/json-schema.md
(``schema_version`` :data:`SCHEMA_VERSION`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from som_studio.config import Refusal
from som_studio.session.chunklog import Chunk, ChunkLog
from som_studio.session.timing import mean_per_iteration, weighted_percentile

__all__ = ["PHASES", "SCHEMA_VERSION", "Chunk", "ChunkLog", "RunRecord", "percentile"]

SCHEMA_VERSION = 1

#: Where a run's wall time goes, in order (``timings.phases``): reading and checking the data, starting
#: the device (JAX's start-up), the initial map and placing the problem on its device, compiling,
#: training (``total_s``), the quality measurements, the map frames copied for a watcher (the app;
#: 0 for a headless run), the model's pass over the data (hits, unit labels, clusters), and writing
#: checkpoints. ``read`` is not another share of the wall time but a part of ``train``: the seconds
#: a streamed run's training waited for its data (0 for a run in memory).
PHASES = ("data", "init", "compile", "train", "quality", "frames", "model", "checkpoint", "read")


def no_phases() -> dict[str, float]:
    """Every phase at 0.0 (a phase that did not run)."""
    return dict.fromkeys(PHASES, 0.0)


def percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


@dataclass
class RunRecord:
    """Everything measured about one run. Mutable while the run goes on.

    ``chunks`` is a :class:`ChunkLog` (24 bytes a chunk: a run of hours keeps
    every chunk in a few MB); a list given or assigned becomes one.
    """

    impl: str
    kind: str
    config: dict[str, Any]
    status: str = "running"
    message: str = ""
    layout: str = "1x1"
    env: dict[str, Any] = field(default_factory=dict)
    compile_s: float = 0.0
    compiles: int = 0
    warmup_compiles: int = 0
    chunks: ChunkLog = field(default_factory=ChunkLog)
    total_s: float = 0.0
    #: Seconds from the start of the run to its final event: what a stopwatch around the run sees.
    wall_s: float = 0.0
    #: Seconds by phase (:data:`PHASES`, every key present).
    phases: dict[str, float] = field(default_factory=no_phases)
    qe: float | None = None
    te: float | None = None
    history: list[dict[str, float]] = field(default_factory=list)
    estimate_bytes: int | None = None
    peak_bytes: int | None = None
    samples: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    label_purity: float | None = None
    # What a .somrun stores beyond the JSON (scaling, unit labels, clusters): see core/data/model_file.py.
    model: Any = None
    # Why the run was refused, as a value, while the record is in memory: ``message`` words it as
    # the CLI does, and a front end with other names for the fields (the app) renders this instead.
    refusal: Refusal | None = field(default=None, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "chunks" and not isinstance(value, ChunkLog):
            value = ChunkLog(value)
        object.__setattr__(self, name, value)

    # -- derived timings ----------------------------------------------------------
    def _whole(self) -> tuple[np.ndarray, np.ndarray]:
        """``(count, seconds)`` of the chunks of whole iterations: a run resumed inside a streamed epoch
        (``extra.resumed.row``) trained only the rest of that epoch in its first chunk."""
        _, count, seconds = self.chunks.arrays()
        if int((self.extra.get("resumed") or {}).get("row", 0)) > 0:
            count, seconds = count[1:], seconds[1:]
        return count, seconds

    @property
    def iteration_s(self) -> list[float]:
        """Seconds per iteration of each chunk of whole iterations."""
        count, seconds = self._whole()
        keep = count > 0
        return [float(v) for v in seconds[keep] / count[keep]]

    def _weighted(self, q: float) -> float | None:
        # Over iterations, not chunks: a warm-up chunk of one iteration counts once.
        count, seconds = self._whole()
        keep = count > 0
        return weighted_percentile(list(seconds[keep] / count[keep]), list(count[keep]), q)

    @property
    def median_s(self) -> float | None:
        """Median seconds per iteration, over iterations (each chunk weighted by its iterations)."""
        return self._weighted(50)

    @property
    def p95_s(self) -> float | None:
        """95th percentile of seconds per iteration, over iterations."""
        return self._weighted(95)

    @property
    def mean_s(self) -> float | None:
        """Training seconds per iteration over all chunks of whole iterations: what a stopwatch sees per iteration."""
        count, seconds = self._whole()
        return mean_per_iteration(list(count), list(seconds))

    @property
    def recompiles(self) -> int:
        """Compilations after warm-up: a well-behaved run has none."""
        return max(0, self.compiles - self.warmup_compiles)

    @property
    def iterations_done(self) -> int:
        """Iterations this record's chunks trained (a resumed run's since it resumed)."""
        return self.chunks.iterations_done()

    @property
    def reached(self) -> int:
        """The iteration the run stands at: a resumed run's checkpoint's iteration plus what it trained since."""
        return int((self.extra.get("resumed") or {}).get("iteration", 0)) + self.iterations_done

    @property
    def throughput(self) -> float | None:
        """Samples per second at the median iteration time; a sweep's combination counts every map's, as its
        timings are of all its sweep's maps trained together."""
        med = self.median_s
        if not med:
            return None
        per_iteration = self.samples * self.maps if self.kind == "batch" else 1
        return per_iteration / med

    @property
    def maps(self) -> int:
        """Maps its timings trained: a sweep's combinations (``extra.sweep.combinations``), else 1."""
        return max(1, int((self.extra.get("sweep") or {}).get("combinations", 1)))

    def to_dict(self) -> dict[str, Any]:
        return {
            "impl": self.impl,
            "kind": self.kind,
            "status": self.status,
            "message": self.message,
            "config": self.config,
            "layout": self.layout,
            "samples": self.samples,
            "env": self.env,
            "timings": {
                "compile_s": self.compile_s,
                "chunks": self.chunks.to_dicts(),
                "iteration_s": self.iteration_s,
                "median_s": self.median_s,
                "p95_s": self.p95_s,
                "mean_s": self.mean_s,
                "total_s": self.total_s,
                "wall_s": self.wall_s,
                "phases": {k: float(self.phases.get(k, 0.0)) for k in PHASES},
                "compiles": self.compiles,
                "warmup_compiles": self.warmup_compiles,
                "throughput_samples_per_s": self.throughput,
            },
            "quality": {
                "qe": self.qe,
                "te": self.te,
                "history": self.history,
                **({"label_purity": self.label_purity} if self.label_purity is not None else {}),
            },
            "memory": {"estimate_bytes": self.estimate_bytes, "peak_bytes": self.peak_bytes},
            **({"extra": self.extra} if self.extra else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunRecord:
        t, q, m = d.get("timings", {}), d.get("quality", {}), d.get("memory", {})
        cfg = d.get("config", {})
        data = cfg.get("data", {})
        return cls(
            impl=d["impl"],
            kind=d["kind"],
            config=cfg,
            status=d.get("status", "ok"),
            message=d.get("message", ""),
            layout=d.get("layout", "1x1"),
            env=d.get("env", {}),
            compile_s=float(t.get("compile_s") or 0.0),
            compiles=int(t.get("compiles") or 0),
            # Older records lack it: count them all as warm-up rather than flag a recompile we cannot know.
            warmup_compiles=int(t.get("warmup_compiles", t.get("compiles")) or 0),
            chunks=ChunkLog(Chunk(int(c["first"]), int(c["count"]), float(c["seconds"])) for c in t.get("chunks", [])),
            total_s=float(t.get("total_s") or 0.0),
            wall_s=float(t.get("wall_s") or 0.0),
            phases={k: float((t.get("phases") or {}).get(k) or 0.0) for k in PHASES},
            qe=q.get("qe"),
            te=q.get("te"),
            label_purity=q.get("label_purity"),
            history=list(q.get("history", [])),
            estimate_bytes=m.get("estimate_bytes"),
            peak_bytes=m.get("peak_bytes"),
            samples=int(d.get("samples") or data.get("samples") or 0),
            extra=d.get("extra", {}),
        )


def runs_document(records: list[RunRecord]) -> dict[str, Any]:
    """The top-level JSON document: ``{"schema_version", "runs": [...]}``."""
    return {"schema_version": SCHEMA_VERSION, "runs": [r.to_dict() for r in records]}
