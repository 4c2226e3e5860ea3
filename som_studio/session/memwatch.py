"""Measuring a run's peak memory: resident set growth plus device memory.

On Linux the kernel's high-water mark (VmHWM) is reset at the start of a run
(``/proc/self/clear_refs``), so the peak covers exactly the run; elsewhere a
sampling thread approximates it. Device memory comes from JAX where the backend
reports it (GPUs do; the CPU backend does not, its buffers are in the RSS).
JAX's ``peak_bytes_in_use`` is the process's peak and cannot be reset: when a
run does not raise it (an earlier run in the process peaked higher), the run's
device peak comes from sampling ``bytes_in_use`` instead.
"""

from __future__ import annotations

import threading
from typing import Any


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def rss() -> int:
    v = _status_kb("VmRSS")
    if v is not None:
        return v
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class PeakMemory:
    """``start()`` before the run, ``stop()`` after; ``peak_bytes`` is the growth."""

    def __init__(self, devices: list[Any] | None = None) -> None:
        self.devices = devices or []
        self._base = 0
        self._hwm = False
        self._peak = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._dev_base = 0
        self._dev_peak_before = 0  # the process's device peak when the run started
        self._dev_sampled = 0  # the most device memory in use seen while sampling

    def start(self) -> None:
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self._hwm = _status_kb("VmHWM") is not None
        except OSError:
            self._hwm = False
        self._base = rss()
        self._peak = self._base
        self._dev_base = self._dev_sampled = self._device_total("bytes_in_use")
        self._dev_peak_before = self._device_total("peak_bytes_in_use")
        if not self._hwm or self._dev_peak_before:
            self._thread = threading.Thread(target=self._sample, name="som-memwatch", daemon=True)
            self._thread.start()

    def exclude(self) -> _Excluded:
        """Context in which allocations do not count (the session's own measurements)."""
        return _Excluded(self)

    def _checkpoint(self) -> None:
        if self._hwm:
            self._peak = max(self._peak, _status_kb("VmHWM") or 0)

    def _reset(self) -> None:
        if self._hwm:
            try:
                with open("/proc/self/clear_refs", "w") as f:
                    f.write("5")
            except OSError:
                pass

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            if not self._hwm:
                self._peak = max(self._peak, rss())
            if self._dev_peak_before:
                self._dev_sampled = max(self._dev_sampled, self._device_total("bytes_in_use"))

    def _device_total(self, key: str) -> int:
        """``memory_stats()[key]`` summed over the run's devices (0 where not reported)."""
        total = 0
        for d in self.devices:
            try:
                stats = d.memory_stats() or {}
            except Exception:  # not every backend reports memory
                stats = {}
            total += int(stats.get(key, 0))
        return total

    def stop(self) -> int:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
        self._checkpoint()
        dev_peak = self._device_total("peak_bytes_in_use")
        if dev_peak > self._dev_peak_before:  # this run set the process's peak: exact
            device = dev_peak - self._dev_base
        else:  # an earlier run peaked higher: the samples are all we know of this one
            device = max(self._dev_sampled, self._device_total("bytes_in_use")) - self._dev_base
        return max(0, self._peak - self._base) + max(0, device)


def _trim_heap() -> None:
    """Give freed heap memory back to the OS (glibc), so it is not counted later."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


class _Excluded:
    def __init__(self, watch: PeakMemory) -> None:
        self.watch = watch

    def __enter__(self) -> None:
        self.watch._checkpoint()
        self._rss = rss()

    def __exit__(self, *exc: object) -> None:
        # Memory the measurement kept (allocator caches) is not the run's either.
        _trim_heap()
        self.watch._base += max(0, rss() - self._rss)
        self.watch._reset()
