"""Implementations written by the user: a class in their own Python file, named ``path/to/file.py:Class``.

The class meets the same contract as the built-in ladder (:class:`~som_studio.core.impls.protocol.Trainer`):
constructed with the :class:`~som_studio.core.som.problem.Problem`, it has ``warmup()``,
``run(first, count)``, ``get_map()`` and ``close()``, and says its ``kind`` (``"online"`` or
``"batch"``) as a class attribute. It may also say ``backend`` (``"jax"`` or ``"numpy"``, the
default), ``name``, ``description``, ``topologies`` (default ``("rect",)``), ``toroid`` and
``missing_values`` (default ``False``). docs/your-implementation.md walks through examples.

Loading a file (:func:`load`) first imports it in a child process with a time limit and trains
the class there on a tiny problem, so a file that loops forever, raises at import, lacks a method
or returns a map of the wrong shape is refused with a message naming the file and the problem,
and nothing in the calling process stops. Only then is it imported here and registered.

Before a run of a user's implementation is timed, the session trains it and the NumPy reference
of its kind on a small problem cut from the run's configuration (:func:`agreement`): a run that
disagrees is recorded as such and never ranked. Errors raised by the user's code are shown with
the user's own traceback lines (:func:`error_text`), not SOM Studio's.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import memory, registry
from som_studio.core.impls.protocol import Implementation, ProblemSize
from som_studio.core.som import metrics
from som_studio.i18n import _
from som_studio.run_settings import Topology

if TYPE_CHECKING:
    from som_studio.core.som.problem import Problem

#: Seconds a file may take to import (in the child) before it is refused as hanging.
IMPORT_TIMEOUT_S = 8.0
#: Seconds the child may take to train the class on its tiny problem (a JAX compile included).
PROBE_TIMEOUT_S = 120.0
#: The methods of the contract (:class:`~som_studio.core.impls.protocol.Trainer`).
METHODS = ("warmup", "run", "get_map", "close")
#: The NumPy reference each kind is checked against.
REFERENCE = {"batch": "numpy-batch", "online": "numpy-online"}
#: The small problem of the agreement check: at most this grid, examples and iterations.
CHECK_GRID = (12, 8)
CHECK_SAMPLES = 300
CHECK_ITERATIONS = {"batch": 10, "online": 300}
#: Agreement: the final maps within this share of the data's span, and at least this share of BMUs equal.
MAP_TOLERANCE = {"float32": 1e-3, "float64": 1e-6}
MIN_BMU_AGREEMENT = 0.99


class UserImplError(ValueError):
    """A user's implementation refused or failed: ``str()`` names the file and the problem.

    ``trace`` holds the user's own traceback lines (frames of their file only), shown after it.
    """

    def __init__(self, path: str, problem: str, trace: str = "") -> None:
        self.path, self.problem, self.trace = path, problem, trace
        super().__init__(f"{path}: {problem}" + (f"\n{trace}" if trace else ""))


def is_spec(text: str) -> bool:
    """Whether ``text`` names a class in a Python file (``file.py:Class``) rather than a built-in."""
    path, sep, _cls = text.rpartition(":")
    return bool(sep) and path.endswith(".py")


def parse_spec(text: str) -> tuple[str, str]:
    """``(path, class name)`` of ``file.py:Class``; :class:`UserImplError` when it is not one."""
    path, _sep, cls = text.rpartition(":")
    if not is_spec(text):
        raise UserImplError(text, _("expected FILE.py:CLASS, such as {example}").format(example="my_som.py:MySom"))
    if not cls.isidentifier():
        raise UserImplError(path, _("{name!r} is not a class name").format(name=cls))
    return path, cls


def display_name(path: str, cls: str) -> str:
    """The name a user's implementation is listed and recorded under: the file's name and the class."""
    return f"{Path(path).name}:{cls}"


# -- loading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Stamp:
    """What says a file changed: its size and modification time."""

    mtime_ns: int
    size: int

    @classmethod
    def of(cls, path: str) -> _Stamp:
        st = os.stat(path)
        return cls(st.st_mtime_ns, st.st_size)


# Files this process has loaded: path -> (stamp when loaded, implementation).
_LOADED: dict[str, tuple[_Stamp, Implementation]] = {}
# Modules imported here: path -> (stamp, module, sha256 of the bytes imported).
_MODULES: dict[str, tuple[_Stamp, types.ModuleType, str]] = {}


def _resolve(path: str) -> str:
    p = Path(path).expanduser()
    if not p.exists():
        raise UserImplError(path, _("no such file"))
    if not p.is_file():
        raise UserImplError(path, _("not a file"))
    return str(p.resolve())


def load(spec: str, *, timeout_s: float | None = None, probe_timeout_s: float | None = None) -> Implementation:
    """Check the class ``spec`` names (in a child process, with time limits), import it here and register it.

    The limits default to :data:`IMPORT_TIMEOUT_S` and :data:`PROBE_TIMEOUT_S`, read at each call.
    Loading the same unchanged file again returns the implementation registered before; a file
    changed since is checked and registered again. Raises :class:`UserImplError`.
    """
    timeout_s = IMPORT_TIMEOUT_S if timeout_s is None else timeout_s
    probe_timeout_s = PROBE_TIMEOUT_S if probe_timeout_s is None else probe_timeout_s
    given, cls_name = parse_spec(spec)
    path = _resolve(given)
    stamp = _Stamp.of(path)
    known = _LOADED.get(path + ":" + cls_name)
    if known is not None and known[0] == stamp and known[1].name in registry.names():
        return known[1]
    facts = _check_in_child(path, cls_name, timeout_s, probe_timeout_s, given)
    cls, sha = import_class(path, cls_name, given)
    impl = _implementation(path, cls_name, cls, sha)
    if facts.get("kind") != impl.kind:  # the file changed between the check and the import
        raise UserImplError(given, _("the file changed while it was checked; add it again"))
    name = impl.name
    if name in registry.names():
        old = registry.get(name)
        if old.file != path:
            raise UserImplError(
                given,
                _("another implementation is already named {name} ({other})").format(
                    name=name, other=old.file or _("built in")
                ),
            )
        registry.unregister(name)
    registry.register(impl)
    _LOADED[path + ":" + cls_name] = (stamp, impl)
    return impl


def changed(impl: Implementation) -> bool:
    """Whether a user's implementation's file changed (or went away) since it was loaded."""
    if impl.file is None:
        return False
    cls = impl.class_name
    known = _LOADED.get(impl.file + ":" + cls)
    try:
        return known is None or known[0] != _Stamp.of(impl.file)
    except OSError:
        return True


def import_class(path: str, cls_name: str, shown: str | None = None) -> tuple[type, str]:
    """The class in ``path`` as it is now, imported in this process, and the sha256 of the bytes imported.

    The module is imported again when the file changed since; errors raise :class:`UserImplError`
    with the user's traceback lines.
    """
    shown = shown or path
    try:
        stamp = _Stamp.of(path)
        known = _MODULES.get(path)
        if known is not None and known[0] == stamp:
            module, sha = known[1], known[2]
        else:
            source = Path(path).read_bytes()
            sha = hashlib.sha256(source).hexdigest()
            module = _import(path, source, shown)
            _MODULES[path] = (stamp, module, sha)
    except OSError as exc:
        raise UserImplError(shown, _("cannot read it ({why})").format(why=exc.strerror or exc)) from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise UserImplError(shown, _("defines no {name}").format(name=cls_name))
    problem = contract_problem(cls, cls_name)
    if problem:
        raise UserImplError(shown, problem)
    return cls, sha


#: The folders of users' files put on ``sys.path``, so each file's helpers import from its own folder.
_USER_FOLDERS: list[str] = []


def _helpers_from(folder: str) -> None:
    """Let a user's file import its helpers from ``folder``, as it would when run as a script.

    The folder goes on ``sys.path`` after the installed packages but before every other user's folder, and a
    helper of the same name that another user's folder brought in earlier (``my_som``) is forgotten, so two
    files that each import their own ``my_som`` each get theirs.
    """
    if folder in sys.path:
        sys.path.remove(folder)
    users = [i for i, entry in enumerate(sys.path) if entry in _USER_FOLDERS]
    sys.path.insert(users[0] if users else len(sys.path), folder)
    if folder not in _USER_FOLDERS:
        _USER_FOLDERS.append(folder)
    for helper in Path(folder).glob("*.py"):
        loaded = sys.modules.get(helper.stem)
        where = str(Path(getattr(loaded, "__file__", None) or "").parent)
        if loaded is not None and where in _USER_FOLDERS and where != folder:
            del sys.modules[helper.stem]


def _import(path: str, source: bytes, shown: str) -> types.ModuleType:
    name = "som_studio_user_" + hashlib.sha256(path.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    _helpers_from(str(Path(path).parent))
    old = sys.modules.get(name)
    sys.modules[name] = module  # dataclasses and pickling look the module up while it runs
    try:
        exec(compile(source, path, "exec"), module.__dict__)
    except BaseException as exc:
        if old is not None:
            sys.modules[name] = old
        else:
            sys.modules.pop(name, None)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise UserImplError(shown, _("raised an error when imported"), error_text(path, exc)) from None
    return module


def contract_problem(cls: Any, cls_name: str) -> str | None:
    """What breaks the contract in ``cls``, in words, or ``None`` when it meets it (without running it)."""
    if not isinstance(cls, type):
        return _("{name} is not a class").format(name=cls_name)
    missing = [m for m in METHODS if not callable(getattr(cls, m, None))]
    if missing:
        return _("{name} lacks the method(s) {methods} of the contract ({contract})").format(
            name=cls_name, methods=", ".join(missing), contract=", ".join(f"{m}()" for m in METHODS)
        )
    kind = getattr(cls, "kind", None)
    if kind not in REFERENCE:
        return _("{name}.kind must be {choices}, got {value!r}").format(
            name=cls_name, choices=_(" or ").join(repr(k) for k in REFERENCE), value=kind
        )
    backend = getattr(cls, "backend", "numpy")
    if backend not in ("numpy", "jax"):
        return _("{name}.backend must be {choices}, got {value!r}").format(
            name=cls_name, choices="'numpy' or 'jax'", value=backend
        )
    topologies = getattr(cls, "topologies", ("rect",))
    if not isinstance(topologies, (tuple, list)) or not set(topologies) <= set(Topology) or not topologies:
        return _("{name}.topologies must name 'rect' and/or 'hex', got {value!r}").format(
            name=cls_name, value=topologies
        )
    try:
        inspect.signature(cls).bind(None)
    except TypeError:
        return _("{name}(problem) must take the problem as its one argument").format(name=cls_name)
    except ValueError:  # no signature to read (a class made in C): let the run say
        pass
    return None


def _implementation(path: str, cls_name: str, cls: Any, sha: str) -> Implementation:
    doc = (inspect.getdoc(cls) or "").strip().split("\n\n")[0].replace("\n", " ")
    description = str(getattr(cls, "description", "") or doc or _("Your implementation in {file}").format(file=path))
    return Implementation(
        name=str(getattr(cls, "name", "") or display_name(path, cls_name)),
        kind=cls.kind,
        backend=getattr(cls, "backend", "numpy"),
        description=description,
        factory=f"{path}:{cls_name}",
        estimate=estimate,
        topologies=tuple(getattr(cls, "topologies", ("rect",))),
        toroid=bool(getattr(cls, "toroid", False)),
        missing_values=bool(getattr(cls, "missing_values", False)),
        file=path,
        file_sha256=sha,
        maker=create,
    )


def create(impl: Implementation, problem: Problem) -> Any:
    """A trainer of a user's class (as the file is now), its maps checked and handed over as NumPy arrays."""
    assert impl.file is not None
    cls = import_class(impl.file, impl.class_name)[0]
    try:
        trainer = cls(problem)
    except Exception as exc:
        raise user_error(impl, _("{name}(problem) raised an error").format(name=impl.name), exc) from None
    return _Checked(trainer, problem, impl)


class _Checked:
    """A user's trainer as the session sees it: ``get_map()`` always a host array of the map's shape.

    Everything else (``warmup``, ``run``, ``close`` and optional methods such as ``describe``) is the
    user's own, so their errors keep their frames.
    """

    def __init__(self, trainer: Any, problem: Problem, impl: Implementation) -> None:
        self._trainer, self._problem, self._impl = trainer, problem, impl
        #: ``(iteration, map)``: the last map :meth:`verify` found whole (the initial one before any).
        self.last_good: tuple[int, np.ndarray] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trainer, name)

    def verify(self, iteration: int) -> None:
        """After each timed chunk (outside its time): refuse a map gone NaN or infinite where it happened, so the
        run's timings end at its last whole map, and keep that map."""
        cls, path = self._impl.class_name, self._impl.file or self._impl.name
        got = np.asarray(self._trainer.get_map())
        want = (self._problem.height, self._problem.width, self._problem.features)
        if got.shape == want and np.issubdtype(got.dtype, np.floating) and not np.isfinite(got).all():
            last = self.last_good[0] if self.last_good is not None else 0
            raise UserImplError(
                path,
                _(
                    "{name}.get_map() returned a map with NaN or infinite values after iteration {n:,} (the last "
                    "whole map: iteration {last:,})"
                ).format(name=cls, n=iteration, last=last),
            )
        self.last_good = (iteration, check_map(got, self._problem, path, cls))

    def warmup(self) -> None:
        self._trainer.warmup()

    def run(self, first: int, count: int) -> None:
        self._trainer.run(first, count)

    def get_map(self) -> np.ndarray:
        cls = self._impl.class_name
        return check_map(self._trainer.get_map(), self._problem, self._impl.file or self._impl.name, cls)

    def close(self) -> None:
        self._trainer.close()


def estimate(s: ProblemSize) -> int:
    """What any implementation holds: the data, the map, one block of schedules and a few maps of work."""
    return memory.numpy_online(s)


def source_facts(impl: Implementation) -> dict[str, Any]:
    """The record's account of a user's implementation: its file, class and the sha256 of what ran."""
    assert impl.file is not None
    known = _MODULES.get(impl.file)
    return {
        "file": impl.file,
        "class": impl.class_name,
        "sha256": known[2] if known is not None else impl.file_sha256,
    }


# -- errors in the user's code ----------------------------------------------------------


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def error_text(path: str, exc: BaseException) -> str:
    """``exc`` as Python prints it, with only the traceback frames in the user's file ``path``."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _same(f.filename, path)]
    head = "Traceback (most recent call last):\n" if frames else ""
    # JAX's note that it hid its own frames speaks of a traceback the user is not shown.
    notes = [n for n in getattr(exc, "__notes__", ()) if isinstance(n, str) and "JAX_TRACEBACK_FILTERING" in n]
    ours = {line.strip() for n in notes for line in n.splitlines()}
    tail = [line for line in traceback.format_exception_only(exc) if line.strip() not in ours]
    return (head + "".join(traceback.format_list(frames)) + "".join(tail)).rstrip()


def user_error(impl: Implementation, what: str, exc: BaseException) -> UserImplError:
    """An exception raised while running a user's implementation, as the user should see it."""
    assert impl.file is not None
    if isinstance(exc, UserImplError):
        return exc
    return UserImplError(impl.file, what, error_text(impl.file, exc))


def training_error(impl: Implementation, exc: BaseException) -> UserImplError:
    """An exception raised while a user's implementation trained: ``FILE: Class raised an error while training``
    and the user's traceback lines."""
    cls = impl.class_name
    return user_error(impl, _("{name} raised an error while training").format(name=cls), exc)


# -- running it ---------------------------------------------------------------------------


def _train(trainer: Any, problem: Problem, impl: Implementation, chunks: tuple[int, ...] = ()) -> np.ndarray:
    """Warm up, train every iteration (in ``chunks`` when given), return the final map, checked."""
    name = impl.class_name
    t = problem.iterations
    try:
        trainer.warmup()
        first = 0
        for n in (*chunks, t):
            n = min(n, t - first)
            if n > 0:
                trainer.run(first, n)
                first += n
        out = trainer.get_map()
    except Exception as exc:
        raise training_error(impl, exc) from None
    return check_map(out, problem, impl.file or name, name)


def check_map(out: Any, problem: Problem, path: str, name: str) -> np.ndarray:
    """``get_map()``'s result as an array, refused unless it has the map's shape and finite numbers."""
    want = (problem.height, problem.width, problem.features)
    try:
        arr = np.asarray(out)
    except Exception as exc:  # a JAX array on a lost device, an object NumPy cannot read
        raise UserImplError(path, _("{name}.get_map() returned no array ({why})").format(name=name, why=exc)) from None
    if arr.shape != want:
        raise UserImplError(
            path,
            _("{name}.get_map() returned shape {got}; the contract is (height, width, features) = {want}").format(
                name=name, got=tuple(arr.shape), want=want
            ),
        )
    if not np.issubdtype(arr.dtype, np.floating):
        raise UserImplError(
            path,
            _("{name}.get_map() returned {dtype} numbers; the map is floating point").format(
                name=name, dtype=arr.dtype
            ),
        )
    if not np.isfinite(arr).all():
        raise UserImplError(path, _("{name}.get_map() returned a map with NaN or infinite values").format(name=name))
    return np.array(arr, dtype=problem.dtype)


def small_config(cfg: RunConfig, kind: str) -> RunConfig:
    """The agreement check's problem: ``cfg`` cut to a small grid, few iterations and one device."""
    width, height = min(cfg.width, CHECK_GRID[0]), min(cfg.height, CHECK_GRID[1])
    n = min(cfg.iterations, CHECK_ITERATIONS[kind])
    counts = {"epochs": n} if kind == "batch" else {"steps": n}
    sigma_start = sigma_end = None  # the small grid's own default radii, unless given
    if cfg.sigma_start is not None:
        sigma_start = (min(cfg.sigma_start[0], width), min(cfg.sigma_start[1], height))
    if cfg.sigma_end is not None:
        sigma_end = (min(cfg.sigma_end[0], width), min(cfg.sigma_end[1], height))
    return cfg.replace(
        width=width,
        height=height,
        layout="1x1",
        clusters=None,
        sigma_start=sigma_start,
        sigma_end=sigma_end,
        **{"steps": None, "epochs": None, **counts},
    )


def agreement(impl: Implementation, cfg: RunConfig, data: np.ndarray) -> dict[str, Any]:
    """Train ``impl`` and the NumPy reference of its kind on a small problem cut from ``cfg``; compare.

    Returns the record's ``extra["agreement"]``: the reference, the small problem, the final maps'
    largest difference, the share of examples whose best unit is the same on both maps, the
    tolerances and ``agrees``. Raises :class:`UserImplError` when the user's code fails or breaks
    the contract.
    """
    from som_studio.core.som.problem import make_problem

    t0 = time.perf_counter()
    small = small_config(cfg, impl.kind)
    rows = np.asarray(data[:CHECK_SAMPLES])
    problem = make_problem(small, impl.kind, rows)
    reference = registry.get(REFERENCE[impl.kind])
    ref = reference.create(problem)
    try:
        want = _train(ref, problem, reference)
    finally:
        ref.close()
    try:
        mine = impl.create(problem)
    except UserImplError:
        raise
    except Exception as exc:
        raise user_error(impl, _("{name}(problem) raised an error").format(name=impl.name), exc) from None
    try:
        got = _train(mine, problem, impl, chunks=(1, 2))  # uneven chunks, as the session cuts them
    finally:
        try:
            mine.close()
        except Exception:
            pass  # a failing close() must not hide what training said
    span = float(np.nanmax(rows) - np.nanmin(rows)) if rows.size else 1.0
    span = span if span > 0 else 1.0
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64))))
    bmu_mine = metrics.nearest_units(got, problem.data)[0]
    bmu_ref = metrics.nearest_units(want, problem.data)[0]
    bmus = float(np.mean(bmu_mine == bmu_ref)) if len(bmu_ref) else 1.0
    tol = MAP_TOLERANCE.get(cfg.precision, MAP_TOLERANCE["float32"]) * span
    return {
        "reference": reference.name,
        "grid": [small.width, small.height],
        "samples": int(rows.shape[0]),
        "iterations": small.iterations,
        "max_map_difference": diff,
        "bmu_agreement": bmus,
        "map_tolerance": tol,
        "min_bmu_agreement": MIN_BMU_AGREEMENT,
        "agrees": bool(diff <= tol and bmus >= MIN_BMU_AGREEMENT),
        "seconds": time.perf_counter() - t0,
    }


def agreement_text(agreement: dict[str, Any]) -> str:
    """One line on how a run agreed with its reference (the CLI's table, the app)."""
    words = (
        _("agrees with {reference}: final maps differ by at most {diff:.2g}, BMUs agree for {bmus:.1%} of examples")
        if agreement.get("agrees")
        else _(
            "disagrees with {reference}: final maps differ by up to {diff:.2g} (tolerance {tol:.2g}), "
            "BMUs agree for {bmus:.1%} of examples (at least {least:.0%} needed); not ranked"
        )
    )
    return words.format(
        reference=agreement.get("reference"),
        diff=agreement.get("max_map_difference", float("nan")),
        tol=agreement.get("map_tolerance", float("nan")),
        bmus=agreement.get("bmu_agreement", float("nan")),
        least=agreement.get("min_bmu_agreement", MIN_BMU_AGREEMENT),
    )


def disagrees(extra: dict[str, Any]) -> bool:
    """Whether a record's ``extra`` says its run disagreed with the reference (it is then never ranked)."""
    agreement = extra.get("agreement")
    return isinstance(agreement, dict) and agreement.get("agrees") is False


# -- the check in a child process ------------------------------------------------------------


def source_root() -> Path:
    """The folder that holds the ``som_studio`` package: site-packages, or a plain source tree."""
    return Path(__file__).resolve().parents[3]


def _check_in_child(path: str, cls_name: str, timeout_s: float, probe_timeout_s: float, shown: str) -> dict[str, Any]:
    """Import ``path`` and train ``cls_name`` on a tiny problem in a child process, within time limits.

    The child says when it is ready (its own imports done), when the user's file is imported,
    and what the class is; the import must come within ``timeout_s`` of ready, the rest within
    ``probe_timeout_s``. Returns the class's facts; raises :class:`UserImplError`.
    """
    read_fd, write_fd = os.pipe()
    env = dict(os.environ)
    # The child runs in the user's folder: the package must be found from there, a source tree too.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(source_root()), env.get("PYTHONPATH", "")) if p)
    # A file, not a pipe, for what the child writes to stderr: nobody reads it while the child runs,
    # and its last line explains a child that dies.
    stderr = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "som_studio.core.impls.user_impl", str(write_fd), path, cls_name],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            pass_fds=(write_fd,),
            env=env,
            cwd=str(Path(path).parent),
        )
    except BaseException:
        stderr.close()
        raise
    finally:
        os.close(write_fd)
    messages = _Lines(read_fd)

    def died(problem: str) -> UserImplError:
        proc.wait()
        stderr.seek(0)
        last = next((ln for ln in reversed(stderr.read().decode(errors="replace").splitlines()) if ln.strip()), "")
        return UserImplError(shown, f"{problem}: {last.strip()}" if last else problem)

    try:
        start = messages.next(60.0)  # Python's and NumPy's start-up, on a busy machine
        if start is None or start.get("stage") != "ready":
            if messages.eof:
                raise died(_("could not be checked: the checking process did not start"))
            raise UserImplError(shown, _("could not be checked: the checking process did not start"))
        imported = messages.next(timeout_s)
        if imported is None and not messages.eof:
            raise UserImplError(
                shown,
                _("did not finish importing within {s:g} s (does it loop or wait at import?)").format(s=timeout_s),
            )
        last = imported
        while last is not None and "error" not in last and last.get("stage") != "probed":
            last = messages.next(probe_timeout_s)
        if last is None:
            if not messages.eof:
                raise UserImplError(
                    shown,
                    _("{name} did not finish training a tiny map within {s:g} s").format(
                        name=cls_name, s=probe_timeout_s
                    ),
                )
            proc.wait()  # the pipe closes a moment before the exit status is there to read
            ended = _("the process checking it ended unexpectedly (exit status {code})")
            raise died(ended.format(code=proc.returncode))
        if "error" in last:
            raise UserImplError(shown, str(last["error"]), str(last.get("trace", "")).replace(path, shown))
        return dict(last)
    finally:
        messages.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        stderr.close()


class _Lines:
    """JSON lines from a pipe, each read with a time limit (POSIX ``select``)."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "rb", buffering=0)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._file, selectors.EVENT_READ)
        self._buf = b""
        self._eof = False

    @property
    def eof(self) -> bool:
        """Whether the writer closed the pipe (the child ended) rather than went quiet."""
        return self._eof

    def next(self, timeout_s: float) -> dict[str, Any] | None:
        """The next message, or ``None`` at the end of the pipe or after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf and not self._eof:
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                return None
            chunk = self._file.read(65536)
            if not chunk:
                self._eof = True
            self._buf += chunk or b""
        if b"\n" not in self._buf:
            return None
        line, self._buf = self._buf.split(b"\n", 1)
        value = json.loads(line)
        return value if isinstance(value, dict) else None

    def close(self) -> None:
        self._sel.close()
        self._file.close()


def _child(fd: int, path: str, cls_name: str) -> None:
    """The checking process: import ``path``, check ``cls_name`` and train it on a tiny problem."""
    out = os.fdopen(fd, "w", buffering=1)

    def say(**msg: Any) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()

    from som_studio import i18n
    from som_studio.core.som.problem import make_problem

    i18n.install(i18n.default_language())  # the messages in the language of the process that asked
    say(stage="ready")
    try:
        cls, _sha = import_class(path, cls_name)
    except UserImplError as exc:
        say(error=exc.problem, trace=exc.trace)
        return
    say(stage="imported")
    impl = _implementation(path, cls_name, cls, _sha)
    counts = {"epochs": 3} if impl.kind == "batch" else {"steps": 3}
    cfg = RunConfig(impl=impl.name, width=5, height=4, data=DataSpec(samples=24), topology=impl.topologies[0], **counts)  # type: ignore[arg-type]
    problem = make_problem(cfg, impl.kind)
    try:
        try:
            trainer = cls(problem)
        except Exception as exc:
            raise user_error(impl, _("{name}(problem) raised an error").format(name=cls_name), exc) from None
        try:
            _train(trainer, problem, impl, chunks=(1,))
        finally:
            try:
                trainer.close()
            except Exception:
                pass
    except UserImplError as exc:
        say(error=exc.problem, trace=exc.trace)
        return
    say(stage="probed", kind=impl.kind, backend=impl.backend, name=impl.name)


if __name__ == "__main__":
    _child(int(sys.argv[1]), sys.argv[2], sys.argv[3])
