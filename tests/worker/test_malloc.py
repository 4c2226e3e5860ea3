"""The worker's malloc: its mmap threshold fixed before its threads start, trimmed at most every so often."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from som_studio.worker import malloc

ROOT = Path(__file__).resolve().parents[2]


def test_the_trimmer_trims_at_most_every_so_often(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(malloc.time, "monotonic", lambda: now[0])
    trim = malloc.trimmer(every_s=30)
    assert trim() is False  # just made
    now[0] += 31
    assert trim() is (malloc._libc() is not None)
    now[0] += 5
    assert trim() is False


# A block of 5 MB, freed, then another, then one of 40 MB: glibc serves the second from the arena once
# the first freed raised its threshold; with the threshold fixed at 32 MiB, neither 5 MB block is
# mapped and the 40 MB one is (mallinfo2's hblks counts the mapped blocks).
THRESHOLD_SCRIPT = r"""
import ctypes, sys
from som_studio.worker import malloc
class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd",
                                               "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
if sys.argv[1] == "fixed":
    assert malloc.fix_mmap_threshold()
mapped = []
for size in (5 << 20, 5 << 20, 40 << 20):
    block = bytearray(size)
    mapped.append(libc.mallinfo2().hblks)
    del block
print(*mapped)
"""


def _mapped(mode: str) -> list[int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    for var in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES"):
        env.pop(var, None)
    out = subprocess.run(
        [sys.executable, "-c", THRESHOLD_SCRIPT, mode], capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [int(v) for v in out.stdout.split()]


@pytest.mark.skipif(malloc._libc() is None, reason="not glibc: no threshold to fix")
def test_the_worker_keeps_its_mmap_threshold_where_it_set_it():
    # glibc by itself: the first 5 MB block is mapped; freeing it raised the threshold, so the next is not.
    first, second, _ = _mapped("dynamic")
    assert second == first - 1
    # Fixed at 32 MiB: the 5 MB blocks come from the arena from the first one on, the 40 MB block is mapped.
    first, second, large = _mapped("fixed")
    assert first == second and large == first + 1
