"""Starting JAX the way SOM Studio needs it, and counting its compilations.

Call :func:`configure` before anything imports JAX (the CLI does it first
thing); :func:`jax` imports it, configured. Choices made here:

* GPU memory is not preallocated (``XLA_PYTHON_CLIENT_PREALLOCATE=false``) unless
  the user set that variable: on a DGX Spark the GPU shares one memory with the
  CPU, and JAX's default of taking 75 % of it starves the desktop.
* ``cpu_devices=N`` selects the CPU backend and makes it expose ``N`` devices,
  so layouts and sharding work on a laptop; it must come before JAX starts.
* 64-bit types are enabled so ``float64`` runs exist; every kernel here names
  its dtypes, so ``float32`` runs stay 32-bit.
* JAX's persistent compilation cache is on, in the user's cache folder
  (:func:`compile_cache_dir`), so the same program compiled again in another
  process is read back instead: ``SOM_STUDIO_COMPILE_CACHE=off`` turns it off,
  a folder there puts it elsewhere, and a cache folder JAX was already given
  (``JAX_COMPILATION_CACHE_DIR``, ``jax.config``) is left as it is.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from som_studio.i18n import _

_lock = threading.Lock()
_compiles = 0
_thread_compiles = threading.local()
_listening = False
_cpu_devices: int | None = None
_preallocate_by_us: bool | None = None  # None until configure() first runs

MAX_CPU_DEVICES = 1024
"""Most simulated CPU devices: JAX's start-up grows faster than linearly with the
count (measured here: 1 s for 1024, 19 s and 1.4 GB for 4096)."""


class JaxConfigError(RuntimeError):
    """JAX is already running with settings that cannot change any more."""


COMPILE_CACHE_VAR = "SOM_STUDIO_COMPILE_CACHE"
"""``off`` (or ``0``, ``no``, ``false``): no persistent compilation cache; a folder: the cache there."""

COMPILE_CACHE_BYTES = 1 << 30
"""The most the compilation cache SOM Studio sets up holds; past it JAX drops the programs used longest ago.
SOM Studio's own programs are 30-110 KB (median, 90th percentile), but the cache is the process's: a
notebook's own jitted functions are kept there too, and one that closes over a large array holds it (a
program of 1,000,000 x 16 examples: 222 MB). Unbounded, it only grows: 6.6 GB, most of it such programs, in
the cache folder of a machine used for benchmarking."""

_DEFAULT_MARK = "SOM_STUDIO_PREALLOCATE_DEFAULT"
"""Set (to ``1``) when ``XLA_PYTHON_CLIENT_PREALLOCATE=false`` is SOM Studio's default, for its child processes."""


def configure(cpu_devices: int | None = None) -> None:
    """Set JAX's environment before it is imported (idempotent)."""
    global _cpu_devices, _preallocate_by_us
    if _preallocate_by_us is None:
        # A process SOM Studio started (the app's workers, the doctor's) inherits the default as if
        # the user had set it: the mark says whose it is.
        inherited = os.environ.get(_DEFAULT_MARK) == "1" and os.environ.get("XLA_PYTHON_CLIENT_PREALLOCATE") == "false"
        _preallocate_by_us = inherited or "XLA_PYTHON_CLIENT_PREALLOCATE" not in os.environ
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if _preallocate_by_us:
        os.environ[_DEFAULT_MARK] = "1"
    if cpu_devices is None:
        _imported_jax_follows(None)
        return
    if not 1 <= cpu_devices <= MAX_CPU_DEVICES:
        raise JaxConfigError(
            "--cpu-devices: "
            + _("must be between 1 and {most}, got {value}").format(most=MAX_CPU_DEVICES, value=cpu_devices)
        )
    if "jax" in sys.modules and _cpu_devices != cpu_devices and started():
        import jax as _jax

        if _jax.default_backend() != "cpu" or _jax.device_count() != cpu_devices:
            raise JaxConfigError(
                _(
                    "JAX has already started with {n} {backend} device(s); "
                    "{want} simulated CPU devices need a fresh process"
                ).format(n=_jax.device_count(), backend=_jax.default_backend(), want=cpu_devices)
            )
    _cpu_devices = cpu_devices
    os.environ["JAX_PLATFORMS"] = "cpu"
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if "xla_force_host_platform_device_count" not in f]
    flags.append(f"--xla_force_host_platform_device_count={cpu_devices}")
    os.environ["XLA_FLAGS"] = " ".join(flags)
    _imported_jax_follows(cpu_devices)


def started() -> bool:
    """Whether JAX's backends have started in this process (they fix the devices for good)."""
    if "jax" not in sys.modules:
        return False
    # Importing waits for an import under way in another thread (Orbax's, in the background) to end:
    # JAX is in sys.modules while it is being imported, and its half-made modules must not be read.
    import jax  # noqa: F401

    try:
        from jax._src import xla_bridge

        return bool(xla_bridge.backends_are_initialized())
    except (ImportError, AttributeError):  # another JAX: take it as started, the safe answer
        return True


def _imported_jax_follows(cpu_devices: int | None) -> None:
    """Give a JAX imported but not started (a run's process forked from the app's fork server) this environment.

    JAX reads ``JAX_PLATFORMS`` as it is imported, so the server's setting would win over the
    run's; ``XLA_FLAGS`` (the simulated device count) is read when the backend starts, after this.
    """
    if "jax" not in sys.modules or started():
        return
    import jax as _jax

    _jax.config.update("jax_platforms", os.environ.get("JAX_PLATFORMS") or None)
    if cpu_devices is not None:
        _jax.config.update("jax_num_cpu_devices", cpu_devices)


def preallocate_is_ours() -> bool:
    """True when ``XLA_PYTHON_CLIENT_PREALLOCATE`` is SOM Studio's default, not the user's."""
    return bool(_preallocate_by_us)


def jax() -> ModuleType:
    """Import JAX, configured, with the compile counter listening."""
    global _listening
    configure()
    import jax as _jax

    with _lock:
        if not _listening:
            if _cpu_devices is not None:
                try:
                    _jax.config.update("jax_num_cpu_devices", _cpu_devices)
                except Exception:  # already initialised: the XLA flag above decided it
                    pass
            _jax.config.update("jax_enable_x64", True)
            _use_compile_cache(_jax)
            from jax import monitoring

            monitoring.register_event_duration_secs_listener(_on_event)
            _listening = True
    return _jax


def cache_dir() -> Path:
    """Where SOM Studio keeps what it measured once: ``$SOM_STUDIO_CACHE_DIR``, else the user's cache folder."""
    own = os.environ.get("SOM_STUDIO_CACHE_DIR")
    if own:
        return Path(own)
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "som-studio"
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local") / "som-studio" / "Cache"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "som-studio"


def compile_cache_dir() -> str | None:
    """The folder SOM Studio gives JAX's persistent compilation cache, or ``None`` when it is turned off.

    ``$SOM_STUDIO_COMPILE_CACHE`` when it names a folder, else ``jax/`` in the user's cache folder
    (:func:`cache_dir`).
    """
    own = os.environ.get(COMPILE_CACHE_VAR, "").strip()
    if own.lower() in ("off", "0", "no", "false"):
        return None
    if own:
        return own
    return str(cache_dir() / "jax")


def compile_cache_in_use() -> str | None:
    """The folder JAX's persistent compilation cache uses in this process (``None``: none, or JAX not started)."""
    if "jax" not in sys.modules:
        return None
    import jax as _jax

    return _jax.config.jax_compilation_cache_dir or None


def compile_cache_limit() -> int | None:
    """The most bytes the compilation cache in use holds (``None``: no bound): JAX's setting once it runs here,
    else what SOM Studio would set (:data:`COMPILE_CACHE_BYTES`)."""
    if compile_cache_in_use():
        import jax as _jax

        limit = int(_jax.config.jax_compilation_cache_max_size)
        return None if limit < 0 else limit
    return COMPILE_CACHE_BYTES if importlib.util.find_spec("filelock") else None


def _use_compile_cache(jax_module: ModuleType) -> None:
    """Turn JAX's persistent compilation cache on in :func:`compile_cache_dir` unless JAX already has a folder.

    Every program is kept, however quick its compile: a run's few programs each compile in a fraction of
    a second, and together they are most of a small run's start.
    """
    if jax_module.config.jax_compilation_cache_dir:
        return  # the user's, or a test session's own
    folder = compile_cache_dir()
    if folder is None:
        return
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return  # a cache that cannot be made is gone without, never an error
    jax_module.config.update("jax_compilation_cache_dir", folder)
    jax_module.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax_module.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    # Bounded (JAX's eviction locks the folder with filelock; without it JAX would refuse every compile).
    if jax_module.config.jax_compilation_cache_max_size == -1 and importlib.util.find_spec("filelock"):
        jax_module.config.update("jax_compilation_cache_max_size", COMPILE_CACHE_BYTES)
        # A program larger than the whole cache is not kept: JAX says so as a warning, which is no news to a user.
        warnings.filterwarnings("ignore", message="Cache value for key .* exceeds the maximum cache size")


def _on_event(event: str, duration_secs: float, **_kw: str | int) -> None:
    global _compiles
    if event == "/jax/core/compile/backend_compile_duration":
        with _lock:
            _compiles += 1
        _thread_compiles.n = getattr(_thread_compiles, "n", 0) + 1  # JAX reports on the compiling thread


def compile_count(this_thread: bool = False) -> int:
    """XLA compilations in this process so far (0 until JAX is started here); ``this_thread``: on the calling
    thread only (a program compiled on a thread of its own counts there)."""
    return int(getattr(_thread_compiles, "n", 0)) if this_thread else _compiles


HOST_ALIGN = 64
"""Bytes to which a host array's start is aligned for JAX's CPU device to use it in place."""


def host_array(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised array whose memory JAX's CPU device uses without a copy (``jax.device_put``).

    The CPU client aliases a NumPy array aligned to :data:`HOST_ALIGN` bytes instead of copying it;
    NumPy aligns large arrays to 16. For an array made only to be placed (never written after), that
    is one copy of the data fewer: at 10^6 x 30 float32, 120 MB of fresh memory less to fault in.
    The device array keeps the host one alive.
    """
    dt = np.dtype(dtype)
    size = int(np.prod(shape)) * dt.itemsize
    raw = np.empty(size + HOST_ALIGN, np.uint8)
    start = -raw.ctypes.data % HOST_ALIGN
    out: np.ndarray = raw[start : start + size].view(dt).reshape(shape)
    return out


def placeable(data: np.ndarray, dtype: Any, copy: bool = False) -> np.ndarray:
    """``data`` in ``dtype``, C-ordered in a :func:`host_array`: as it is where it already is so (unless
    ``copy``), else copied once.

    What the trainers and the quality pass place, so both place the same memory (on the CPU, the run's one
    copy of its examples)."""
    dt = np.dtype(dtype)
    if not copy and data.dtype == dt and data.flags.c_contiguous and data.ctypes.data % HOST_ALIGN == 0:
        return data
    out = host_array(data.shape, dt)
    np.copyto(out, data, casting="unsafe")
    return out


def compiled_bytes(compiled: object) -> int | None:
    """XLA's own account of a compiled program's memory: arguments + outputs + temporaries - aliased.

    Donated arguments whose buffers the outputs reuse (``alias``) are counted
    once. ``None`` when there is no compiled program or the backend does not say.
    """
    if compiled is None:
        return None
    try:
        m = compiled.memory_analysis()  # type: ignore[attr-defined]
    except Exception:  # not every backend implements it
        return None
    if m is None:
        return None
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes)


# -- several processes (JAX's distributed runtime): what each holds, gathered by every one -----------


def processes() -> tuple[int, int]:
    """``(this process's index, the process count)`` of a run joined with JAX's distributed runtime;
    ``(0, 1)`` in a process that joined none (JAX is then neither imported nor started for this)."""
    imported = sys.modules.get("jax")
    distributed = getattr(imported, "distributed", None)
    if distributed is None or not distributed.is_initialized():  # asked without configuring or starting JAX
        return 0, 1
    j = jax()
    return int(j.process_index()), int(j.process_count())


def process_gather(a: Any) -> Any:
    """Every process's ``a`` (a small host array of the same shape and dtype everywhere), stacked:
    ``(process count, *a.shape)``, on every process. Each process must call it at the same point."""
    import numpy as np
    from jax.experimental import multihost_utils

    jax()
    return np.asarray(multihost_utils.process_allgather(np.asarray(a)))


def gather_json(value: Any) -> list[Any]:
    """Every process's ``value`` (JSON-able, of any size), in process order, on every process."""
    import json

    import numpy as np

    data = np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)
    sizes = process_gather(np.array([data.size], np.int64))[:, 0]
    # Lengths rounded up to a power of two: each new length would compile the gather again.
    padded = np.zeros(1 << max(6, int(sizes.max() - 1).bit_length()), np.uint8)
    padded[: data.size] = data
    every = process_gather(padded)
    return [json.loads(bytes(every[i, : int(n)]).decode()) for i, n in enumerate(sizes)]
