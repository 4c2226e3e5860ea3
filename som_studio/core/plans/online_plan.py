"""How ``jax-scan-online`` lays out its chunk program: pure arithmetic, no JAX.

Two choices, both exact (the same SOM, step for step):

* ``argmin``: how the first minimum of the distance map is found. ``"rows"``
  takes row minima, the first row holding the least, then the first column of
  that row: on the CPU several times faster than one variadic argmin over the
  flattened map (measured on the playbook map: ~35 us against ~440 us per
  step). ``"all"`` is that one argmin over every unit: on a GPU one fused
  reduction, against three dependent kernels for ``"rows"``.
* ``steps_per_trip`` (``K``): online steps written out straight-line in one
  trip of the ``fori_loop``. On an H100 one loop trip costs ~22 us whatever
  its body (``../shared/GPU.md``), the floor of a one-step-per-trip loop,
  while one step of a small map is a few microseconds of kernels; ``K`` steps
  per trip pay that floor once per ``K`` steps. The tail of a chunk (``count``
  not a multiple of ``K``) runs masked: its steps have learning rate 0, which
  leaves the map bit for bit as it was. On the CPU a trip costs well under a
  microsecond, so ``K`` only adds compile time and masked work there.

:func:`choose` is the one place the plan is decided; the trainer records its
result as ``extra.kernel_plan`` (:func:`describe`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Argmin = Literal["rows", "all"]

#: Accelerator backends as JAX names them (``jax.default_backend()``).
ACCELERATORS = ("gpu", "cuda", "rocm", "tpu")
#: Units x features up to which one step is launch-bound on an accelerator:
#: its few kernels touch at most ~4 MB (float32), well under a microsecond of
#: an H100's memory bandwidth, so the loop trip (~22 us) dominates.
SMALL_STEP = 1 << 20
#: ... and up to which a step is still short next to a trip (~40 MB).
MEDIUM_STEP = 1 << 23
#: Steps per trip on an accelerator, small and medium steps. 16 small steps are
#: ~16 x 3 kernels per trip: the trip's floor drops to ~1.4 us per step while the
#: unrolled body stays a few hundred HLO ops (compile well under a second).
K_SMALL, K_MEDIUM = 16, 4


@dataclass(frozen=True)
class OnlinePlan:
    """One way to run chunks of online steps; every plan trains the same SOM."""

    argmin: Argmin = "rows"
    steps_per_trip: int = 1

    def __post_init__(self) -> None:
        if self.argmin not in ("rows", "all"):
            raise ValueError(f"argmin must be 'rows' or 'all', not {self.argmin!r}")
        if self.steps_per_trip < 1:
            raise ValueError(f"steps_per_trip must be at least 1, not {self.steps_per_trip}")

    def describe(self) -> str:
        """The plan as ``extra.kernel_plan`` records it, e.g. ``"direct/argmin-rows/steps-per-trip=1"``."""
        return f"direct/argmin-{self.argmin}/steps-per-trip={self.steps_per_trip}"

    def trips(self, count: int) -> int:
        """Loop trips for a chunk of ``count`` steps (the last one masked when ``K`` does not divide it)."""
        return -(-count // self.steps_per_trip)


def choose(backend: str, units: int, features: int) -> OnlinePlan:
    """The plan for a map of ``units`` units with ``features`` features on ``backend``.

    On the CPU, one step per trip with the row-wise argmin (measured there:
    more steps per trip are no faster).
    On an accelerator, one fused argmin over all units, and ``K`` steps per trip
    while a step is short next to the loop's own cost.
    """
    if backend.lower() not in ACCELERATORS:
        return OnlinePlan("rows", 1)
    size = units * max(features, 1)
    if size <= SMALL_STEP:
        k = K_SMALL
    elif size <= MEDIUM_STEP:
        k = K_MEDIUM
    else:
        k = 1
    return OnlinePlan("all", k)


def all_plans() -> list[OnlinePlan]:
    """Every distinct kind of plan :func:`choose` can return, for tests that force each in turn."""
    return [OnlinePlan("rows", 1), OnlinePlan("all", 1), OnlinePlan("rows", 4), OnlinePlan("all", K_SMALL)]
