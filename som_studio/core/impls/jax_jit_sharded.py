"""``jax-jit-sharded-batch``: the one-device program under ``jit``, the compiler partitions it."""

from __future__ import annotations

from typing import Any

from som_studio.core import jax_runtime
from som_studio.core.impls.mesh import ShardedTrainer
from som_studio.core.plans.fused_plan import KernelPlan
from som_studio.core.plans.sharded_epoch import epochs_program
from som_studio.core.som.problem import Problem
from som_studio.run_settings import Topology

jax = jax_runtime.jax()


# The two ways jax-jit-sharded-batch writes its one-device epoch (see its docstring).
PROGRAMS = ("planned", "whole-matrix")


def chunk_program(height: int, plan: KernelPlan | None, lattice=(Topology.RECT, False), missing: bool = False):
    """The pure chunk program: :func:`~som_studio.core.plans.sharded_epoch.full_epochs`, nothing about devices."""
    return epochs_program(height, plan, lattice, missing)


class JaxJitShardedBatch(ShardedTrainer):
    """``jax-jit-sharded-batch``: the one-device program under ``jit``, inputs placed by ``NamedSharding``.

    Nothing in the program mentions devices: the compiler's partitioner
    (GSPMD / Shardy) splits it following the inputs' and output's shardings
    and inserts the communication itself.

    The program is :func:`full_epochs`, written two ways (``program``):

    * ``"planned"``: ``jax-fused-batch``'s winner search, by the kernel plan
      (blocked on the CPU); on one device, or with the data split only, it is
      exactly ``jax-fused-batch`` (bitwise, on one device). With the map split
      the partitioner cannot split the blocked scan's dynamic slices by rows:
      it all-gathers the codebook and all-reduces the candidate blocks every
      epoch (240x135 on 1x2: ~12 MiB per device).
    * ``"whole-matrix"``: the N x M distance matrix at once, which it splits
      by rows: two all-reduces of N numbers for the winners (~7 KiB), at the
      cost of the whole distance block in memory and, on the CPU, more time.

    The default takes ``"planned"`` when the map axis is 1, else
    ``"whole-matrix"``; ``bench/scaling.py`` shows both. How a program is written
    decides what automatic parallelism can do with it.
    """

    name = "jax-jit-sharded-batch"

    def __init__(self, problem: Problem, program: str = "auto") -> None:
        if program not in ("auto", *PROGRAMS):
            raise ValueError(f"program must be auto or one of {', '.join(PROGRAMS)}, got {program!r}")
        super().__init__(problem)
        if program == "auto":
            program = "planned" if self.layout.map == 1 else "whole-matrix"
        self.program = program

    def _plan_sizes(self) -> tuple[int, int]:
        # The program is written for the whole problem (the partitioner splits it): its chunks are of all examples.
        return self._host["w"].shape[0] * self.p.width, self._examples

    def _stream_plan(self) -> Any:
        # A streamed batch searches as the chunk program does: by the plan, or the whole distance matrix.
        return self.plan if self.program == "planned" else None

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        out["program"] = self.program
        if self.program == "whole-matrix":
            out["kernel_plan"] = "direct/whole-matrix"
        return out

    def _jitted(self) -> Any:
        epochs = chunk_program(
            self.p.height, self.plan if self.program == "planned" else None, self.lattice, self.missing
        )
        keys = ("w", "scalar", "scalar", "x", "weight", "sx", "sy")
        return jax.jit(
            epochs,
            in_shardings=tuple(self._sharding(k) for k in keys),
            out_shardings=self._sharding("w"),
            donate_argnums=0,
        )
