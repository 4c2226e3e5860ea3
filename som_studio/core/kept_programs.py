"""Traced programs kept between processes, beside JAX's compiled ones.

JAX's persistent compilation cache (:mod:`som_studio.core.jax_runtime`) keeps what XLA compiled, but a new
process still traces and lowers each program before it can look it up: for the fused epoch with its screened
search and the quality pass, 0.3-0.6 s of a second run's start on a 2-core CPU, where reading the compiled
programs back takes 0.1 s. :func:`lower` keeps the lowered program itself, serialized with
:mod:`jax.export`, in ``traced/`` of the compilation cache's folder, and the next process that lowers the
same program with the same arguments reads it back instead of tracing it.

A kept program is used only where everything it was traced from is the same: the caller's key (what the
traced function closes over), its static arguments, the shapes and dtypes of the others, JAX's version and
the settings that change a trace, the device's platform and JAX's default backend, the source of
``som_studio.core`` and the constants its modules hold now (which a test or a user may change). Anything else
traces afresh. A file that cannot be read is traced afresh and written again; one that cannot be written is not
kept. With the compilation cache off (``SOM_STUDIO_COMPILE_CACHE=off``) nothing is kept.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from som_studio.core import jax_runtime

FOLDER = "traced"
"""The kept programs' folder, in the compilation cache's."""

KEPT_BYTES = 64 << 20
"""The most the kept programs take together; past it the ones used longest ago go. One is 40-200 KB."""

SUFFIX = ".exported"

LAPACK = b"lapack"
"""What the names of the CPU calls that need JAX's LAPACK set-up hold: a kept program without it makes none."""

_CONFIG = (
    "jax_enable_x64",
    "jax_default_matmul_precision",
    "jax_numpy_dtype_promotion",
    "jax_numpy_rank_promotion",
    "jax_default_prng_impl",
    "jax_threefry_partitionable",
)
"""JAX's settings that can change what a function traces to."""


def _core_source() -> str:
    """A digest of ``som_studio.core``'s source and the settings it reads (``run_settings.py``: the lattices'
    names), as they were when this module was imported."""
    core = Path(__file__).resolve().parent
    h = hashlib.sha256()
    try:
        for path in [*sorted(core.rglob("*.py")), core.parent / "run_settings.py"]:
            h.update(str(path.relative_to(core.parent)).encode())
            h.update(path.read_bytes())
    except OSError:  # a source that cannot be read (an installation without it): this process's own digest
        return uuid.uuid4().hex  # nothing kept by another process is read back, nor this one's by another
    return h.hexdigest()


_SOURCE = _core_source()


def _plain(value: Any) -> str | None:
    """``value`` written out the same in every process, where it is a plain value (else ``None``)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, dict):
        value = tuple((k, v) for k, v in value.items())
    # Not a list: the lists in upper case there are registries that grow as a process goes (the user's folders).
    if isinstance(value, (tuple, frozenset)):
        items = [_plain(v) for v in value]
        if None in items:
            return None
        if isinstance(value, frozenset):  # its order follows its strings' hashes, which differ between processes
            items.sort()
        return f"{type(value).__name__}({', '.join(items)})"  # type: ignore[arg-type]
    return None


def _constants() -> str:
    """The module constants (upper-case names of plain values) of every ``som_studio.core`` module loaded now."""
    parts = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("som_studio.core") or module is None:
            continue
        for attr, value in sorted(vars(module).items()):
            if attr.lstrip("_")[:1].isupper() and attr.upper() == attr:
                plain = _plain(value)
                if plain is not None:
                    parts.append(f"{name}.{attr}={plain}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def folder() -> Path | None:
    """Where programs are kept in this process (``None``: not kept, the compilation cache being off or remote)."""
    cache = jax_runtime.compile_cache_in_use()
    if not cache or "://" in cache:
        return None
    return Path(cache) / FOLDER


def _aval(a: Any) -> Any:
    jax = jax_runtime.jax()
    return jax.ShapeDtypeStruct(np.shape(a), np.dtype(a.dtype))


def _key(name: str, key: tuple[Any, ...], static: list[Any], dynamic: list[Any], platform: str) -> str:
    jax = jax_runtime.jax()
    import jaxlib

    parts = [
        name,
        repr(key),
        repr(static),
        repr([(tuple(a.shape), str(a.dtype)) for a in dynamic]),
        jax.__version__,
        getattr(jaxlib, "__version__", ""),
        repr([(c, getattr(jax.config, c, None)) for c in _CONFIG]),
        platform,
        jax.default_backend(),  # the kernels ask it as they trace (the CPU's screened search or the matmul form)
        _SOURCE,
        _constants(),
    ]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:40]


def _single_device(args: list[Any]) -> bool:
    for a in args:
        sharding = getattr(a, "sharding", None)
        if sharding is not None and len(sharding.device_set) != 1:
            return False
    return True


def lower(
    program: Any,
    args: tuple[Any, ...],
    *,
    name: str,
    key: tuple[Any, ...] = (),
    static_argnums: tuple[int, ...] = (),
    donate_argnums: tuple[int, ...] = (),
    platform: str | None = None,
) -> Any:
    """``program.lower(*args)`` (``program``: a :func:`jax.jit` function of one device), or the same program kept
    by an earlier process and read back (see the module's docstring).

    ``name`` names the program's file; ``key``: whatever else the traced function depends on (the values it
    closes over), as plain values whose ``repr`` says all of them. ``static_argnums`` and ``donate_argnums``
    are the ones ``program`` was made with; ``platform``: the device's (default JAX's default backend's).
    The program returned takes the arguments that are not static, as ``program.lower(*args)``'s does.
    """
    jax = jax_runtime.jax()
    where = folder()
    dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
    if where is None or not _single_device(dynamic):
        return program.lower(*args)
    from jax import export

    platform = platform or jax.default_backend()
    static = [a for i, a in enumerate(args) if i in static_argnums]
    path = where / f"{name}-{_key(name, key, static, dynamic, platform)}{SUFFIX}"
    exported, blob = _read(path, [_aval(a) for a in dynamic])
    if exported is None:
        try:
            exported = export.export(program, platforms=(platform,))(
                *[a if i in static_argnums else _aval(a) for i, a in enumerate(args)]
            )
            blob = bytes(exported.serialize())
        except Exception:  # a program jax.export cannot keep (a custom call it does not vouch for): lowered here
            return program.lower(*args)
        _write(path, blob)
    donate = tuple(sum(1 for j in range(i) if j not in static_argnums) for i in donate_argnums)
    read_back = jax.jit(exported.call, donate_argnums=donate)
    if LAPACK in blob or not _hook_lapack_set_up():
        return read_back.lower(*dynamic)
    _skipping.lapack = True
    try:
        return read_back.lower(*dynamic)
    finally:
        _skipping.lapack = False


_skipping = threading.local()
_hooked = threading.Lock()


def _hook_lapack_set_up() -> bool:
    """Put a switch on JAX's LAPACK set-up (once), so that lowering a kept program that calls no LAPACK routine
    can leave it out; whether the switch is there.

    Lowering any exported program for the CPU first makes JAX's LAPACK calls ready, and that imports
    SciPy's linear algebra: a good part of a second run's start on a 2-core CPU, more than reading the kept
    program back saves at some shapes (docs/benchmarks.md). The fused epoch and the quality pass call no
    LAPACK routine. The set-up is JAX's private ``_ensure_backends_initialized``, wrapped by a function that
    skips it on a thread whose ``_skipping.lapack`` is set: where a JAX has none, nothing is left out.
    """
    try:
        from jax._src.export import _export
    except ImportError:
        return False
    with _hooked:
        ensure = getattr(_export, "_ensure_backends_initialized", None)
        if ensure is None:
            return False
        if not getattr(ensure, "skips_lapack", False):

            def ready(platforms: tuple[str, ...]) -> None:
                if not getattr(_skipping, "lapack", False):
                    ensure(platforms)

            ready.skips_lapack = True  # type: ignore[attr-defined]
            _export._ensure_backends_initialized = ready
    return True


def _read(path: Path, avals: list[Any]) -> tuple[Any, bytes]:
    """``(program, its bytes)`` kept at ``path`` if it is there, whole, and takes ``avals``; else ``(None, b"")``."""
    from jax import export

    try:
        blob = path.read_bytes()
    except OSError:
        return None, b""
    try:
        exported = export.deserialize(bytearray(blob))
        took = [(tuple(a.shape), np.dtype(a.dtype)) for a in exported.in_avals]
        if took != [(tuple(a.shape), np.dtype(a.dtype)) for a in avals]:
            raise ValueError("arguments differ")
    except Exception:  # written by another version, or damaged: traced again, and written over
        return None, b""
    try:
        os.utime(path)  # used now: the last to go when the folder is full
    except OSError:
        pass
    return exported, blob


def _write(path: Path, blob: bytes | bytearray) -> None:
    """Keep ``blob`` at ``path`` (whole or not at all: written aside, then renamed), then bound the folder."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=path.parent, prefix=".writing-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(aside, path)
        except BaseException:
            Path(aside).unlink(missing_ok=True)
            raise
        _bound(path.parent)
    except OSError:
        pass  # not kept: the next process traces it again


def _bound(where: Path, most: int | None = None) -> None:
    """Remove the programs used longest ago until those left take at most ``most`` bytes (:data:`KEPT_BYTES`)."""
    most = KEPT_BYTES if most is None else most
    kept = []
    for path in where.glob(f"*{SUFFIX}"):
        try:
            st = path.stat()
        except OSError:
            continue
        kept.append((st.st_mtime, st.st_size, path))
    total = sum(size for _, size, _ in kept)
    for _, size, path in sorted(kept):
        if total <= most:
            break
        path.unlink(missing_ok=True)
        total -= size
