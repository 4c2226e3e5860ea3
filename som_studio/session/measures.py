"""A run's measures of map quality (QE, TE, the final hits and labels), on its device or on the host.

Qt-free; the training driver (:mod:`som_studio.session.training`) holds one per run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from som_studio.core.impls.protocol import Implementation
from som_studio.core.som import metrics
from som_studio.session.timing import predict_quality_s

#: First guesses at quality measurement rates, in example-unit pairs x features
#: per second, before a run has measured its own (2-core CPU here: NumPy
#: 3-5e8; the JAX program, searching by the training's plans, 0.8-2.2e10 from
#: 1,000 x 3 on 240x135 to 20,000 x 10 on 100x100; an H100's is a guess, not yet
#: measured). A guess too high is never corrected: a run whose every point it
#: priced over the budget measured only its final map (the app's default run:
#: 32 ms guessed, 9-12 ms each, one point where ten were cheap).
QUALITY_RATES = {"numpy": 2e8, "cpu": 8e9, "accelerator": 1e11}


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

    def start_warmup(self, first: np.ndarray | None = None) -> None:
        """Start compiling the device program (the host needs none); :meth:`finish_warmup` waits for it.
        ``first``: a map to measure on the compiling thread once the program is ready (:meth:`early`), not for
        a streamed run (its pass reads the source)."""
        if self.on_device:
            q = self._device()
            q.start_compile(first if self.problem.stream is None else None)

    def finish_warmup(self) -> None:
        """Wait for :meth:`start_warmup`'s compile."""
        if self.on_device and self._q is not None:
            self._q.compile()

    def early(self) -> tuple[float, float, float] | None:
        """``(qe, te, seconds)`` of :meth:`start_warmup`'s ``first`` map, measured meanwhile; ``None`` if not."""
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
