"""A run's measures: of map quality (QE, TE, the final hits and labels), on its device or on the host, and of
what it compiled and how near its device's ceilings it came (``extra.inside``).

Qt-free; the training driver (:mod:`som_studio.session.training`) holds one per run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core.impls.protocol import Implementation
from som_studio.core.som import metrics
from som_studio.session.record import RunRecord
from som_studio.session.timing import predict_quality_s

#: First guesses at quality measurement rates, in example-unit pairs x features
#: per second, before a run has measured its own (2-core CPU here: NumPy
#: 3-5e8; the JAX program, searching by the training's plans, 0.8-2.2e10 from
#: 1,000 x 3 on 240x135 to 20,000 x 10 on 100x100; an H100's is a guess, not yet
#: measured). A guess too high is never corrected: a run whose every point it
#: priced over the budget measured only its final map (the app's default run:
#: 32 ms guessed, 9-12 ms each, one point where ten were cheap).
QUALITY_RATES = {"numpy": 2e8, "cpu": 8e9, "accelerator": 1e11}

#: A pass guessed (:attr:`RunQuality.guess_s`) at most this long runs once on the compiling thread before the
#: first measurement (:meth:`RunQuality.start_warmup`). The guess is high on the CPU (75 ms guessed for
#: 21 ms measured at 10,000 x 50 on 40x30); past it the loops' one-off compile is a small part of a pass.
WARM_MEASURE_MAX_S = 0.1


class RunQuality:
    """QE/TE of one run's maps: on the run's first device for JAX runs, on the host otherwise.

    Calling it gives ``(qe, te, compile_s)``; the device program is compiled at
    :meth:`start_warmup` (compiled on a thread of its own until :meth:`finish_warmup`) or else at the
    first call (``compile_s`` then says how long that took).
    """

    def __init__(self, impl: Implementation, problem: Any, device: Any, on_device: bool = True) -> None:
        self.problem = problem
        self.device = device
        cfg = problem.config
        self.topology, self.toroid = cfg.topology, cfg.toroid
        # The device program follows every lattice and missing values, as the reference does.
        # A streamed run's measures read the stream batch by batch: the device program's way.
        self.on_device = (on_device and impl.backend == "jax") or problem.stream is not None
        self._q: Any = None
        pairs_rate = QUALITY_RATES["numpy"]
        if self.on_device:
            platform = getattr(device, "platform", "cpu")
            pairs_rate = QUALITY_RATES["cpu" if platform == "cpu" else "accelerator"]
        #: First guess at one measurement's time (the device program's compile not included).
        self.guess_s = predict_quality_s(problem.samples, problem.height * problem.width, problem.features, pairs_rate)

    def _device(self) -> Any:
        if self._q is None:
            from som_studio.core.plans.quality_jax import DeviceQuality, StreamQuality

            p = self.problem
            if p.stream is not None:
                self._q = StreamQuality(
                    p.stream, p.height, p.width, p.dtype, self.device, topology=self.topology, toroid=self.toroid
                )
                return self._q
            self._q = DeviceQuality(
                p.data,
                p.height,
                p.width,
                p.dtype,
                self.device,
                topology=self.topology,
                toroid=self.toroid,
                missing=p.missing,
            )
        return self._q

    def start_warmup(self, start: np.ndarray, keep: bool) -> None:
        """Start compiling the device program (the host needs none); :meth:`finish_warmup` waits for it.

        ``start``, the run's initial map, is measured on the compiling thread once the program is ready: with
        ``keep``, as the run's first point (:meth:`early` gives it); else only where a pass is guessed quick on
        a CPU (:data:`WARM_MEASURE_MAX_S`), its figures dropped, so that the program's first run, which compiles
        the kernels of its loops, counts as compiling, as the trainer's warm epoch does, and not as the first
        measurement. Not for a streamed run (its pass reads the source)."""
        if not self.on_device:
            return
        q = self._device()
        quick = q.device.platform == "cpu" and self.guess_s <= WARM_MEASURE_MAX_S
        measured = self.problem.stream is None and (keep or quick)
        q.start_compile(start if measured else None, warm=not keep)

    def finish_warmup(self) -> None:
        """Wait for :meth:`start_warmup`'s compile."""
        if self.on_device and self._q is not None:
            self._q.compile()

    def early(self) -> tuple[float, float, float] | None:
        """``(qe, te, seconds)`` of :meth:`start_warmup`'s map kept, measured meanwhile; ``None`` if not."""
        got = self._q.early() if self.on_device and self._q is not None else None
        if got is None:
            return None
        (qe, te, _), seconds = got
        return qe, te, seconds

    def __call__(self, weights: np.ndarray, bmus: bool = False) -> tuple[float, float, float, np.ndarray | None]:
        """``(qe, te, compile_s, first)``: ``first``, each example's best unit, only when ``bmus``."""
        if not self.on_device:
            qe, te, first = metrics.measure(weights, self.problem.data, self.topology, self.toroid)
            return qe, te, 0.0, first if bmus else None
        self._device()
        compiled_before = self._q.compile_s
        qe, te, found = self._q.measure(weights, bmus)
        return qe, te, self._q.compile_s - compiled_before, found

    def close(self) -> None:
        if self._q is not None:
            self._q.close()
            self._q = None


def record_inside(
    impl: Implementation, trainer: Any, problem: Any, record: RunRecord, devices: list[Any], done: int, keep: bool
) -> dict[str, Any]:
    """``extra.inside`` of a run that trained ``done`` iterations (:mod:`som_studio.core.inspection.inside`).

    A JAX run's program is compiled once more and inspected, one more iteration runs under JAX's transfer
    guard to count host-device transfers (the final map is already taken), and the device's ceilings are read
    from the cache or measured. A NumPy run carries the analytic counts only.
    """
    from som_studio.core.inspection import inside

    counted = inside.analytic(
        impl.work_algorithm,
        str(record.extra.get("kernel_plan", "")),
        height=problem.height,
        width=problem.width,
        features=problem.features,
        samples=problem.samples,
        itemsize=problem.dtype.itemsize,
    )
    # NumPy has no compiled program; a streamed run runs its trainer's batch pieces, not one chunk program
    # over the table: both keep the hand count against the measured time, and the ceilings already known.
    if impl.backend != "jax" or not hasattr(trainer, "programs"):
        device = devices[0] if devices and impl.backend == "jax" else None
        out = inside.assemble(
            None,
            counted,
            ceiling=inside.kept_ceilings(f"{device.platform}/{device.device_kind}" if device else "cpu"),
            seconds_per_iteration=record.median_s,
            devices=max(1, len(devices)) if impl.shards else 1,
            shares_host=device is None or device.platform == "cpu",
        )
        out["counts"] = {"compiles": record.compiles}
        return out
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    try:
        static = inside.inspect(trainer, keep_programs=keep)
        transfers = None
        if jax.process_count() == 1:
            calls = inside.count_transfers(lambda: trainer.run(done - 1, 1))
            transfers = float(calls) if calls is not None else None
        device = devices[0] if devices else jax.devices()[0]
        ceiling = inside.ceilings(device)
    except Exception as exc:  # the run itself went well: it keeps its timings and the hand count
        out = inside.assemble(None, counted, ceiling=None, seconds_per_iteration=record.median_s)
        out["counts"] = {"compiles": record.compiles}
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    out = inside.assemble(
        static,
        counted,
        ceiling=ceiling,
        seconds_per_iteration=record.median_s,
        devices=max(1, len(devices)) if impl.shards else 1,
        shares_host=device.platform == "cpu",
    )
    out["counts"].update(
        {
            "transfers_per_iteration": transfers,
            "compiles": record.compiles,
            "warmup_compiles": record.warmup_compiles,
        }
    )
    return out
