"""The doctor's first step: what the machine says, asked through :class:`Probes`, as plain :class:`Facts`."""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Literal

from som_studio import i18n
from som_studio.display import DisplayCheck, check_display
from som_studio.i18n import _
from som_studio.session.env import PRECISION_ENV

Severity = Literal["error", "warning", "ok"]

#: Distributions worth a line in the report, in report order.
DISTRIBUTIONS = ("numpy", "jax", "jaxlib", "PySide6-Essentials", "PySide6", "shiboken6", "pyqtgraph")
#: JAX's CUDA plugins (the ``jax[cuda13]`` / ``jax[cuda12]`` extras install a pair each).
CUDA_PLUGINS = ("jax-cuda13-plugin", "jax-cuda13-pjrt", "jax-cuda12-plugin", "jax-cuda12-pjrt")
#: The environment variables that decide how JAX and XLA use the machine.
XLA_ENV = (
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "XLA_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_MEM_FRACTION",
    "XLA_PYTHON_CLIENT_ALLOCATOR",
    "JAX_PLATFORMS",
    "CUDA_VISIBLE_DEVICES",
    "XLA_FLAGS",
)
#: GPUs whose memory is the system's memory (the DGX Spark's GB10 superchip).
UNIFIED_GPUS = ("GB10",)
#: JAX's default share of GPU memory taken at the first operation when preallocating.
DEFAULT_MEM_FRACTION = 0.75


# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class DeviceFact:
    """One JAX device: id, platform (``cpu``, ``gpu``), kind and memory where reported."""

    id: int
    platform: str
    kind: str
    memory_limit: int | None = None
    memory_in_use: int | None = None


@dataclass(frozen=True)
class JaxFacts:
    """What importing and starting JAX gave.

    ``error`` is set when JAX could not be imported or started; ``gpu_error`` is
    JAX's own reason why no GPU backend is in use (when the backend is the CPU).
    """

    error: str | None = None
    backend: str | None = None
    devices: tuple[DeviceFact, ...] = ()
    gpu_error: str | None = None


@dataclass(frozen=True)
class GpuFact:
    """One GPU as ``nvidia-smi`` lists it; ``memory_total`` is None where not reported."""

    name: str
    memory_total_mib: int | None


@dataclass(frozen=True)
class DriverFacts:
    """``nvidia-smi``: where it is, whether it worked, and what it said."""

    path: str | None = None
    ok: bool = False
    output: str = ""
    driver_version: str | None = None
    cuda_version: str | None = None
    gpus: tuple[GpuFact, ...] = ()

    @property
    def present(self) -> bool:
        return self.path is not None


@dataclass(frozen=True)
class CompileCacheFact:
    """JAX's persistent compilation cache as SOM Studio sets it up: its folder (``None``: turned off) and size."""

    folder: str | None
    size_bytes: int | None
    entries: int | None
    limit_bytes: int | None = None  # the most it holds (the programs used longest ago dropped past it); None: no bound
    #: ``(bytes, programs)`` of the traced programs kept beside the compiled ones (core/kept_programs.py).
    traced: tuple[int, int] | None = None


def _probe_compile_cache() -> CompileCacheFact:
    from som_studio.core import jax_runtime, kept_programs

    folder = jax_runtime.compile_cache_in_use() or jax_runtime.compile_cache_dir()
    if folder is None:
        return CompileCacheFact(None, None, None)
    limit = jax_runtime.compile_cache_limit()
    try:
        files = [p for p in Path(folder).rglob("*-cache") if p.is_file()]  # programs, not their access times
        size = sum(p.stat().st_size for p in files)
        traced = [p.stat().st_size for p in (Path(folder) / kept_programs.FOLDER).glob("*" + kept_programs.SUFFIX)]
    except OSError:
        return CompileCacheFact(folder, None, None, limit)
    return CompileCacheFact(folder, size, len(files), limit, (sum(traced), len(traced)))


@dataclass(frozen=True)
class CeilingFact:
    """One device's ceilings as the Inside page measured and kept them (the cost model of the kernel plans reads
    them): the best of ``measurements`` measurements, the matmul figure's taken at ``measured_at`` (UTC, ISO 8601),
    and ``stale``: how a run proved it too low (measured again when next asked), else empty."""

    device: str
    matmul_flops_per_s: float
    bandwidth_bytes_per_s: float
    measured_at: str
    measurements: int
    stale: str = ""


def _probe_ceilings() -> tuple[CeilingFact, ...]:
    from som_studio.core.inspection import inside

    out = []
    for key, v in inside._read_table().items():
        if not isinstance(v, dict):
            continue
        try:
            out.append(
                CeilingFact(
                    str(v.get("device") or key),
                    float(v["matmul_flops_per_s"]),
                    float(v["bandwidth_bytes_per_s"]),
                    str(v.get("measured_at") or ""),
                    int(v.get("measurements") or 1),
                    str(v.get("stale") or ""),
                )
            )
        except (KeyError, TypeError, ValueError):
            continue  # an entry another version wrote, or a damaged one: not this report's business
    return tuple(out)


@dataclass(frozen=True)
class Facts:
    """Everything the diagnosis looks at, as plain data."""

    som_studio: str
    python: tuple[int, int, int]
    executable: str
    machine: str
    system: str
    versions: dict[str, str | None]
    plugins: dict[str, str]
    jax: JaxFacts
    driver: DriverFacts
    env: dict[str, str]
    preallocate_is_ours: bool
    in_container: bool
    #: Whether the app could open a window here (:func:`som_studio.display.check_display`).
    display_check: DisplayCheck | None = None
    #: The language the report speaks (``en``/``ko``), and the font families with Hangul
    #: (``None``: not known here, no fontconfig): Korean needs one.
    language: str = "en"
    hangul_fonts: tuple[str, ...] | None = None
    #: JAX's persistent compilation cache (``None``: not asked).
    compile_cache: CompileCacheFact | None = None
    #: The devices' measured ceilings kept in the user's cache folder.
    ceilings: tuple[CeilingFact, ...] = ()

    @property
    def display(self) -> str | None:
        """The display the app would open on, or None without one."""
        if self.env.get("WAYLAND_DISPLAY"):
            return f"WAYLAND_DISPLAY={self.env['WAYLAND_DISPLAY']}"
        if self.env.get("DISPLAY"):
            return f"DISPLAY={self.env['DISPLAY']}"
        return None

    @property
    def over_ssh(self) -> bool:
        return bool(self.env.get("SSH_CONNECTION") or self.env.get("SSH_TTY"))

    @property
    def unified_memory(self) -> bool:
        """The GPU shares the system's memory (DGX Spark): from its name or unreported memory."""
        for g in self.driver.gpus:
            if any(u in g.name for u in UNIFIED_GPUS) or g.memory_total_mib is None:
                return True
        return any(any(u in d.kind for u in UNIFIED_GPUS) for d in self.jax.devices)

    @property
    def preallocate(self) -> bool:
        """Whether JAX will preallocate GPU memory under the settings in force."""
        return self.env.get("XLA_PYTHON_CLIENT_PREALLOCATE", "true").strip().lower() not in ("false", "0", "no")

    @property
    def mem_fraction(self) -> float | None:
        """The preallocated share set by the user (the new name wins over the old one)."""
        for name in ("XLA_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_MEM_FRACTION"):
            if name in self.env:
                try:
                    return float(self.env[name])
                except ValueError:
                    return None
        return None

    @property
    def cuda_extra(self) -> str:
        """The ``jax[...]`` extra that matches the driver: cuda12 for a CUDA 12 driver, else cuda13."""
        major = (self.driver.cuda_version or "").split(".")[0]
        return "cuda12" if major == "12" else "cuda13"


# --------------------------------------------------------------------------- probes


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _run(argv: Sequence[str]) -> tuple[int, str] | None:
    """Run a short command; None if it cannot start or does not answer in 20 s."""
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def _probe_jax() -> JaxFacts:
    """Import and start JAX here (configured as the CLI does) and read its devices."""
    from som_studio.core import jax_runtime

    try:
        jax = jax_runtime.jax()
        backend = jax.default_backend()
        devices = jax.devices()
    except Exception as exc:  # an import or plugin failure of any kind is the finding
        return JaxFacts(error=f"{type(exc).__name__}: {exc}")
    facts = []
    for d in devices:
        try:
            stats = d.memory_stats() or {}
        except Exception:  # not every backend reports memory
            stats = {}
        facts.append(
            DeviceFact(
                int(d.id), str(d.platform), str(d.device_kind), stats.get("bytes_limit"), stats.get("bytes_in_use")
            )
        )
    gpu_error = None
    if backend == "cpu":
        # JAX keeps the reason a GPU backend failed to start; asking for it repeats it.
        try:
            jax.devices("gpu")
        except Exception as exc:
            gpu_error = str(exc)
    return JaxFacts(backend=backend, devices=tuple(facts), gpu_error=gpu_error)


def _preallocate_is_ours() -> bool:
    from som_studio.core import jax_runtime

    return jax_runtime.preallocate_is_ours()


def _hangul_fonts() -> tuple[str, ...] | None:
    """Font families with Hangul glyphs (fontconfig's answer); ``None`` without ``fc-list``."""
    if not shutil.which("fc-list"):
        return None
    return tuple(i18n.hangul_fonts())


def _in_container() -> bool:
    return os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv")


@dataclass
class Probes:
    """How :func:`collect` asks the machine; replace any of them to fake a condition."""

    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)
    python: tuple[int, int, int] = tuple(sys.version_info[:3])  # type: ignore[assignment]
    executable: str = sys.executable
    machine: str = platform.machine()
    system: str = platform.system()
    version: Callable[[str], str | None] = _dist_version
    which: Callable[[str], str | None] = shutil.which
    run: Callable[[Sequence[str]], tuple[int, str] | None] = _run
    jax: Callable[[], JaxFacts] = _probe_jax
    preallocate_is_ours: Callable[[], bool] = _preallocate_is_ours
    in_container: Callable[[], bool] = _in_container
    #: The app's own display check (sockets, then Qt's platform plugin in a child process).
    display: Callable[[Mapping[str, str]], DisplayCheck] = check_display
    #: The language in force (:func:`som_studio.i18n.current_language`) and the Hangul fonts.
    language: Callable[[], str] = i18n.current_language
    hangul_fonts: Callable[[], tuple[str, ...] | None] = _hangul_fonts
    compile_cache: Callable[[], CompileCacheFact] = _probe_compile_cache
    ceilings: Callable[[], tuple[CeilingFact, ...]] = _probe_ceilings


def parse_nvidia_smi(summary: str, query: str) -> tuple[str | None, str | None, tuple[GpuFact, ...]]:
    """Driver version, CUDA version and GPUs from ``nvidia-smi`` and its CSV query."""
    drv = re.search(r"Driver Version:\s*([\w.]+)", summary)
    cuda = re.search(r"CUDA Version:\s*([\w.]+)", summary)
    gpus = []
    for line in query.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2 or not parts[0]:
            continue
        mem = parts[1].split()[0] if parts[1] else ""
        gpus.append(GpuFact(parts[0], int(mem) if mem.isdigit() else None))
    return (drv.group(1) if drv else None, cuda.group(1) if cuda else None, tuple(gpus))


def _probe_driver(p: Probes) -> DriverFacts:
    path = p.which("nvidia-smi")
    if path is None:
        return DriverFacts()
    res = p.run([path])
    if res is None or res[0] != 0:
        return DriverFacts(path=path, ok=False, output=res[1] if res else _("did not answer within 20 s"))
    q = p.run([path, "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"])
    drv, cuda, gpus = parse_nvidia_smi(res[1], q[1] if q and q[0] == 0 else "")
    return DriverFacts(path=path, ok=True, output=res[1], driver_version=drv, cuda_version=cuda, gpus=gpus)


def collect(probes: Probes | None = None) -> Facts:
    """Ask the machine (through ``probes``) everything :func:`diagnose` needs."""
    from som_studio import __version__

    p = probes or Probes()
    language = p.language()
    env = {
        k: p.environ[k]
        for k in (*XLA_ENV, *PRECISION_ENV, "DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY")
        if k in p.environ
    }
    return Facts(
        som_studio=__version__,
        python=tuple(p.python[:3]),  # type: ignore[arg-type]
        executable=p.executable,
        machine=p.machine,
        system=p.system,
        versions={d: p.version(d) for d in DISTRIBUTIONS},
        plugins={d: v for d in CUDA_PLUGINS if (v := p.version(d))},
        jax=p.jax(),
        driver=_probe_driver(p),
        env=env,
        preallocate_is_ours=p.preallocate_is_ours(),
        in_container=p.in_container(),
        display_check=p.display(p.environ),
        language=language,
        hangul_fonts=p.hangul_fonts() if language == "ko" else None,
        compile_cache=p.compile_cache(),
        ceilings=p.ceilings(),
    )
