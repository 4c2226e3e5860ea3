from __future__ import annotations

import time

from som_studio.session.memwatch import PeakMemory


class _FakeDevice:
    """A device whose memory stats behave like JAX's on a GPU: the peak never goes down."""

    def __init__(self) -> None:
        self.in_use = 0
        self.peak = 0

    def use(self, n: int) -> None:
        self.in_use = n
        self.peak = max(self.peak, n)

    def memory_stats(self) -> dict[str, int]:
        return {"bytes_in_use": self.in_use, "peak_bytes_in_use": self.peak, "bytes_limit": 1 << 40}


def _run(dev: _FakeDevice, during: int) -> int:
    watch = PeakMemory([dev])
    watch.start()
    dev.use(during)
    time.sleep(0.05)  # the sampler polls every 5 ms
    dev.use(0)
    return watch.stop() - _host_noise(watch)


def _host_noise(watch: PeakMemory) -> int:
    # The host RSS part of the figure is the test process's own; keep only the device's.
    return max(0, watch._peak - watch._base)


def test_a_run_after_a_bigger_one_reports_its_own_device_peak():
    dev = _FakeDevice()
    assert _run(dev, 1000) == 1000
    # JAX's peak stays at 1000 for the rest of the process: the second run used 300.
    assert _run(dev, 300) == 300
    assert _run(dev, 2000) == 2000


def test_no_device_memory_reported_counts_nothing():
    class _Cpu:
        def memory_stats(self):
            return None

    watch = PeakMemory([_Cpu()])
    watch.start()
    assert watch.stop() - _host_noise(watch) == 0
