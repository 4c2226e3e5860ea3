"""The one contract every SOM implementation meets.

An implementation is registered as an :class:`Implementation` (what it is,
what it supports, how much memory a problem needs) whose :meth:`~Implementation.create`
returns a :class:`Trainer` (the running state). The session, the comparison,
the CLI and the tests are written once against these two.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

import numpy as np

from som_studio.i18n import _
from som_studio.run_settings import Topology

_ALTERNATIVES = "numpy-online, numpy-batch"

if TYPE_CHECKING:
    from som_studio.core.som.problem import Problem

Kind = Literal["online", "batch"]


@runtime_checkable
class Trainer(Protocol):
    """The state of one training run.

    Iterations are steps (online) or epochs (batch), numbered from 0. The
    session calls :meth:`warmup` once, then :meth:`run` on consecutive chunks.
    """

    def warmup(self) -> None:
        """Compile whatever :meth:`run` will use, leaving the state unchanged."""

    def run(self, first: int, count: int) -> None:
        """Train iterations ``first .. first+count-1``; return with results ready."""

    def get_map(self) -> np.ndarray:
        """A host copy of the map, shape (height, width, features)."""

    def close(self) -> None:
        """Release device memory; the trainer is not used afterwards."""


@runtime_checkable
class EpochSums(Protocol):
    """A batch trainer's epoch in pieces, so that its rows can come in batches (a streamed run).

    A batch epoch is a sum over examples of per-unit sums and counts, then one update; a
    trainer that has these methods trains from a stream
    (:class:`som_studio.core.impls.streamed.StreamedTrainer` calls them) and ends at the map its
    :meth:`Trainer.run` gives for the same rows in memory. Its :meth:`Trainer.warmup` compiles
    what they use.
    """

    def begin_epoch(self, iteration: int) -> None:
        """Start epoch ``iteration``'s sums against the current map."""

    def add_rows(self, rows: np.ndarray) -> None:
        """Add a batch of rows (n, D), in the run's precision with NaN for missing values, to the sums."""

    def end_epoch(self, iteration: int) -> None:
        """Update the map from the epoch's sums."""

    def epoch_sums(self) -> dict[str, np.ndarray]:
        """The epoch's sums so far, as host arrays, exactly (a checkpoint inside a streamed epoch)."""

    def set_epoch_sums(self, sums: dict[str, np.ndarray]) -> None:
        """After :meth:`begin_epoch`, take back sums :meth:`epoch_sums` gave: the epoch goes on from there."""


@runtime_checkable
class StepRows(Protocol):
    """An online trainer's steps fed their rows in order, so that its rows can come in batches (a streamed run).

    A streamed online run (:attr:`~som_studio.core.som.problem.Problem.in_order`) trains step ``t`` on
    the stream's row ``t mod N``: :class:`som_studio.core.impls.streamed.StreamedTrainer` hands the
    trainer each batch as it is read and has it train the steps whose rows the batch holds. The
    trainer ends at the map its :meth:`Trainer.run` gives in memory for the same problem in order
    (the same rows, step for step). Its :meth:`Trainer.warmup` compiles what they use.
    """

    def take_rows(self, rows: np.ndarray) -> None:
        """Hold a batch of rows (n <= the stream's batch rows, D), in the run's precision with NaN for
        missing values, for :meth:`run_rows` (the last batch held is let go)."""

    def run_rows(self, first: int, count: int, offset: int) -> None:
        """Train steps ``first .. first+count-1``, step ``first + i`` on held row ``offset + i``; return with
        results ready."""


@dataclass(frozen=True)
class ProblemSize:
    """The sizes memory estimates depend on."""

    height: int
    width: int
    features: int
    samples: int
    iterations: int
    itemsize: int
    devices: int = 1
    # Of ``devices``, how many split the map's rows (the layout's map axis); the rest split the examples.
    map_devices: int = 1
    # The backend the run will use ("cpu", "gpu", "tpu"): it picks the kernel plan the
    # estimate counts. The preflight does not start JAX to learn it, so "cpu" unless told.
    backend: str = "cpu"
    # Whether the data hold missing values (NaN): a 0/1 mask of the known features then sits beside
    # the examples, and per-unit sums keep one total weight per feature.
    missing: bool = False
    # How many maps train together, each on the same data (a sweep's combinations); sharded, each
    # device holds ``ceil(maps / devices)`` of them.
    maps: int = 1

    @property
    def units(self) -> int:
        return self.height * self.width

    @property
    def data_devices(self) -> int:
        """Devices splitting the examples (the layout's data axis)."""
        return max(1, self.devices // max(self.map_devices, 1))


@dataclass(frozen=True)
class Implementation:
    """A registered implementation.

    ``factory`` is ``"module:Class"``, imported only when a run is created, so
    listing implementations never imports JAX. ``estimate`` gives the bytes a
    problem needs beyond the process's baseline (per device for sharded ones).

    A trainer may also have ``describe() -> dict``: facts about what it compiled
    (e.g. the collectives of a sharded program), called once after
    :meth:`Trainer.warmup` and copied into the run record's ``extra``. Every
    JAX trainer gives there ``kernel_plan`` (its BMU search, a short string
    such as ``"direct/argmin-all/chunk=4096"``, see
    :mod:`som_studio.core.plans.fused_plan`) and ``memory_compiled_bytes`` (XLA's own
    account of the program that runs, per device: arguments + outputs +
    temporaries, aliased buffers once; ``None`` where no one program runs).

    A trainer may also have ``copy_map_async() -> Callable[[], np.ndarray]``:
    it starts copying the map to the host without waiting and returns a function
    that finishes the copy, giving what :meth:`Trainer.get_map` gives. The
    session calls it after a chunk when a watcher is due a frame and finishes the
    copy before the next :meth:`Trainer.run` (which may donate the map's buffer),
    so the copy runs while the session does its own bookkeeping. Without it the
    session calls :meth:`Trainer.get_map`.

    A JAX trainer also has ``programs() -> dict[str, jax.stages.Lowered]``: the
    programs :meth:`Trainer.run` executes, lowered for the trainer's own
    arguments but not compiled (callable before :meth:`Trainer.warmup`). Tests
    read them, e.g. to check that every product asks for full precision
    (:func:`som_studio.core.inspection.hlo.imprecise_dots`) under every kernel plan.
    Where the programs are ``jax.jit`` functions it also has ``traces() ->
    dict[str, jax.stages.Traced]`` (the same programs traced, not yet lowered:
    ``programs()`` lowers them), so the inside of a run
    (:mod:`som_studio.core.inspection.inside`) can time tracing, lowering and compiling
    apart and read each program's jaxpr. The first program is the one each
    call of :meth:`Trainer.run` executes. Two optional attributes say how it
    runs an iteration: ``iterations_per_trip`` (iterations one trip of the
    program's loop trains, default 1) and ``eager`` (``True`` when the
    program's operations are dispatched one by one, not compiled as one).

    ``work`` names the algorithm whose operations :func:`som_studio.core.inspection.inside.analytic`
    counts by hand: ``"online"``, ``"batch-separable"`` (winners, per-unit
    sums, separable smoothing) or ``"batch-per-example"`` (each example's
    neighbourhood over the full map); empty: ``"online"`` or
    ``"batch-separable"`` by :attr:`kind`.
    """

    name: str
    kind: Kind
    backend: Literal["numpy", "jax"]
    description: str
    factory: str
    estimate: Callable[[ProblemSize], int]
    precisions: tuple[str, ...] = ("float32", "float64")
    shards: bool = False
    # Sharded implementations that replicate the map (data-parallel only) say
    # False: their layouts must have map size 1.
    map_axis: bool = True
    # What maps and data it trains: lattices, wrapped (toroid) maps, missing values (NaN).
    topologies: tuple[str, ...] = (Topology.RECT,)
    toroid: bool = False
    missing_values: bool = False
    # A user's implementation (:mod:`som_studio.core.impls.user_impl`): the Python file it was loaded from,
    # absolute, and the sha256 of its bytes then; ``factory`` is then ``"<file>:Class"``.
    file: str | None = None
    file_sha256: str | None = None
    work: str = ""
    # Whether its trainer trains from a stream: batch epochs whose rows come in batches (it meets EpochSums),
    # or online steps fed their rows in the stream's order (it meets StepRows).
    streams: bool = False
    # Makes the trainer where ``factory`` names no importable class (a user's file, imported as it is now, in
    # whichever process runs it: the app's worker too). The maker lives with the loader, so this contract needs
    # no import of it.
    maker: Callable[[Implementation, Problem], Trainer] | None = None

    @property
    def class_name(self) -> str:
        """The class :attr:`factory` names (a user's ``MySom`` in ``my_som.py:MySom``)."""
        return self.factory.rpartition(":")[2]

    @property
    def work_algorithm(self) -> str:
        """:attr:`work`, or the usual algorithm of the implementation's kind."""
        return self.work or ("online" if self.kind == "online" else "batch-separable")

    def refusal(self, topology: str = Topology.RECT, toroid: bool = False, missing: bool = False) -> str | None:
        """Why this implementation cannot train such a map or data, or ``None`` when it can."""
        if self.file is not None:  # a user's class says what it trains by its attributes
            return self._user_refusal(topology, toroid, missing)
        if topology not in self.topologies:
            only = "/".join(self.topologies)
            return _("{impl} trains {only} maps only, not {topology} yet (use {alternatives})").format(
                impl=self.name, only=only, topology=topology, alternatives=_ALTERNATIVES
            )
        if toroid and not self.toroid:
            return _("{impl} does not train toroid maps yet (use {alternatives})").format(
                impl=self.name, alternatives=_ALTERNATIVES
            )
        if missing and not self.missing_values:
            return _("{impl} does not train on data with missing values yet (use {alternatives})").format(
                impl=self.name, alternatives=_ALTERNATIVES
            )
        return None

    def _user_refusal(self, topology: str, toroid: bool, missing: bool) -> str | None:
        cls = self.class_name
        if topology not in self.topologies:
            return _(
                "{impl} trains {only} maps only (its class's {attribute}); if {cls} trains {topology} maps, add "
                "{value} to {attribute}"
            ).format(
                impl=self.name, only="/".join(self.topologies), attribute="topologies", cls=cls, topology=topology,
                value=repr(str(topology)),
            )  # fmt: skip
        for asked, able, attribute, what in (
            (toroid, self.toroid, "toroid", _("toroid maps")),
            (missing, self.missing_values, "missing_values", _("data with missing values")),
        ):
            if asked and not able:
                return _("{impl} does not say it trains {what}; if {cls} does, set {attribute} = True in it").format(
                    impl=self.name, what=what, cls=cls, attribute=attribute
                )
        return None

    def create(self, problem: Problem) -> Trainer:
        if self.maker is not None:
            return self.maker(self, problem)
        module, _, attr = self.factory.partition(":")
        cls: Callable[[Problem], Trainer] = getattr(importlib.import_module(module), attr)
        return cls(problem)

    @property
    def source(self) -> str | None:
        """The Python file that holds this implementation's code (found without importing it), or ``None``."""
        if self.file is not None:
            return self.file
        import importlib.util

        try:
            spec = importlib.util.find_spec(self.factory.partition(":")[0])
        except (ImportError, ValueError):
            return None
        return spec.origin if spec is not None else None

    @property
    def description_text(self) -> str:
        """:attr:`description` in the user's language (the registry marks it for the catalogue)."""
        return _(self.description)

    def supports(self) -> str:
        """One line of what this implementation supports, for listings (in the user's language)."""
        kind = {"online": _("online"), "batch": _("batch")}.get(self.kind, self.kind)
        bits = [kind, self.backend, "/".join(p.replace("float", "f") for p in self.precisions)]
        if self.shards:
            bits.append(_("sharded"))
        return ", ".join(bits)
