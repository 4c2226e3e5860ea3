"""The environment doctor: what SOM Studio runs on, what is wrong, and the fix.

Three steps, kept apart so each can be tested alone:

* :func:`collect` asks the machine through :class:`Probes` (versions, JAX's
  backend and devices, ``nvidia-smi``, the display, the XLA settings) and
  returns plain :class:`Facts`. Tests pass fake probes; nothing here patches
  the world.
* :func:`diagnose` turns facts into :class:`Finding` s, each with a severity
  (``error``: the main job cannot work as intended; ``warning``: something to
  know; ``ok``: checked and fine), a title, the reason and the fix spelled out.
* :func:`format_report` writes facts and findings as text. :func:`report_text`
  does all three for the running process; the app's Help menu shows it, and
  ``som-studio doctor`` prints it (exit status 1 on errors only).

Qt-free and JAX-lazy: importing this module imports neither.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from typing import Any, Literal

from som_studio import i18n
from som_studio.display import DisplayCheck, check_display
from som_studio.i18n import _, ljust, ngettext, text_width
from som_studio.session.env import PRECISION_ENV, PRECISION_POLICY

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
    )


# --------------------------------------------------------------------------- diagnosis


@dataclass(frozen=True)
class Finding:
    """One conclusion: how bad, what, why, and what to do (empty when nothing)."""

    severity: Severity
    title: str
    detail: str = ""
    fix: str = ""


def install_fix(f: Facts) -> str:
    """The exact commands that install JAX's CUDA plugin matching the driver."""
    extra = f.cuda_extra
    return "\n".join(
        [
            f'pip install -U "jax[{extra}]"   ' + _("(into the Python that runs SOM Studio)"),
            _("this interpreter: {command}").format(command=f'"{f.executable}" -m pip install -U "jax[{extra}]"'),
            _("a source checkout: {command}").format(command=f"SOM_STUDIO_EXTRAS={extra} ./dev.sh app"),
            _("then check again: {command}").format(command="som-studio doctor"),
        ]
    )


def _pyside(f: Facts) -> str | None:
    return f.versions.get("PySide6-Essentials") or f.versions.get("PySide6")


def _minor(version: str | None) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def _gpu_devices(f: Facts) -> list[DeviceFact]:
    return [d for d in f.jax.devices if d.platform in ("gpu", "cuda", "rocm")]


def diagnose(f: Facts) -> list[Finding]:
    """Findings for ``f``, errors first; pure (no I/O)."""
    out: list[Finding] = []
    py = ".".join(map(str, f.python))
    pyside = _pyside(f)

    # Python and Qt.
    if f.python[:2] < (3, 12) and _minor(pyside) == (6, 12):
        out.append(
            Finding(
                "error",
                _("Python {python} with PySide6 {pyside} crashes").format(python=py, pyside=pyside),
                _(
                    "PySide6 6.12 on Python 3.11 aborts after a few thousand signal emissions "
                    "({error}); Python 3.12 is not affected."
                ).format(error="Fatal Python error: bool_dealloc"),
                _("use Python 3.12 or newer: {command}  (in the source folder)").format(
                    command="python3.12 -m venv .venv && .venv/bin/pip install ."
                )
                + "\n"
                + _("or let {command} pick a Python >= 3.12 itself").format(command="./dev.sh env"),
            )
        )
    elif f.python[:2] < (3, 12):
        out.append(
            Finding(
                "warning",
                _("Python {python} is older than SOM Studio supports").format(python=py),
                _("SOM Studio needs Python 3.12 or newer (jax >= 0.11 does too)."),
                _("use Python 3.12 or newer for SOM Studio's environment"),
            )
        )
    else:
        out.append(
            Finding(
                "ok",
                _("Python {python} with PySide6 {pyside}").format(python=py, pyside=pyside)
                if pyside
                else f"Python {py}",
            )
        )

    # JAX and the GPU.
    gpus = _gpu_devices(f)
    if f.jax.error is not None:
        out.append(
            Finding(
                "error",
                _("JAX fails to import or start"),
                f.jax.error,
                _("reinstall it: {command}").format(
                    command=f'"{f.executable}" -m pip install -U --force-reinstall jax jaxlib'
                )
                + (
                    "\n"
                    + _("with the GPU plugin: {command}").format(
                        command=f'"{f.executable}" -m pip install -U "jax[{f.cuda_extra}]"'
                    )
                    if f.driver.present
                    else ""
                ),
            )
        )
    elif gpus:
        out.append(
            Finding(
                "ok",
                _("JAX runs on the GPU ({backend}: {kinds})").format(
                    backend=f.jax.backend, kinds=", ".join(sorted({d.kind for d in gpus}))
                ),
            )
        )
    elif f.driver.present and f.driver.ok:
        platforms = f.env.get("JAX_PLATFORMS", "")
        if platforms and not any(p in platforms for p in ("cuda", "gpu")):
            out.append(
                Finding(
                    "warning",
                    _("JAX is kept on the CPU by {setting}").format(setting=f"JAX_PLATFORMS={platforms}"),
                    _("an NVIDIA driver is present, but {var} (or {flag}) limits JAX to the CPU.").format(
                        var="JAX_PLATFORMS", flag="--cpu-devices"
                    ),
                    _("unset {var} and drop {flag} to use the GPU").format(var="JAX_PLATFORMS", flag="--cpu-devices"),
                )
            )
        else:
            out.append(
                Finding("error", _("an NVIDIA driver is present but JAX runs on the CPU"), _why_cpu(f), install_fix(f))
            )
    elif f.driver.present:
        out.append(
            Finding(
                "warning",
                _("{tool} is installed but cannot talk to the NVIDIA driver").format(tool="nvidia-smi"),
                (f.driver.output.splitlines() or [""])[0],
                _("check the driver with {command} (a reboot after a driver update often helps)").format(
                    command="`nvidia-smi`"
                )
                + (_("; in a container, start it with {flag}").format(flag="--gpus all") if f.in_container else ""),
            )
        )
    else:
        out.append(
            Finding(
                "warning",
                _("no GPU: JAX runs on the CPU"),
                _("{tool} is not on PATH, so no NVIDIA driver is visible to this process.").format(tool="nvidia-smi"),
                _(
                    "on a GPU machine, install the NVIDIA driver; in a container, start it with {flag} "
                    "(NVIDIA Container Toolkit); everything still works on the CPU, only slower"
                ).format(flag="--gpus all"),
            )
        )

    # Plugins whose version does not match jaxlib are refused by JAX.
    jaxlib = f.versions.get("jaxlib")
    stale = {d: v for d, v in f.plugins.items() if jaxlib and v != jaxlib}
    if stale and not gpus and f.jax.error is None:
        out.append(
            Finding(
                "warning",
                _("CUDA plugin version differs from jaxlib"),
                _("{plugins} vs jaxlib {jaxlib}; JAX uses a plugin only when the versions match.").format(
                    plugins=", ".join(f"{d} {v}" for d, v in stale.items()), jaxlib=jaxlib
                ),
                install_fix(f),
            )
        )

    # Memory on a unified-memory machine.
    out.append(_memory_finding(f, bool(gpus) or (f.driver.present and f.driver.ok)))

    # Precision: settings that change float32 products.
    out.extend(_precision_findings(f))

    # Korean needs a font with Hangul: said where the user reads Korean.
    font = _font_finding(f)
    if font is not None:
        out.append(font)

    # Display.
    if f.display is None:
        title = (
            _("no display in an SSH session: the desktop app cannot open")
            if f.over_ssh
            else _("no display in this session: the desktop app cannot open")
        )
        out.append(
            Finding(
                "warning",
                title,
                _("neither {a} nor {b} is set; the headless commands ({commands}) work.").format(
                    a="DISPLAY", b="WAYLAND_DISPLAY", commands="bench, devices, doctor, ..."
                ),
                _(
                    "use the headless commands; or forward X ({ssh}), or run the app on the machine's desktop; "
                    "for screenshots: {xvfb}"
                ).format(ssh="ssh -X", xvfb="xvfb-run -a som-studio"),
            )
        )
    elif f.display_check is not None and f.display_check.kind == "plugin":
        check = f.display_check
        out.append(
            Finding(
                "error",
                _("the desktop app cannot open a window on {display}: Qt's platform plugin cannot load").format(
                    display=f.display
                ),
                check.reason
                + ("" if not check.packages else _("; missing: {packages}").format(packages=", ".join(check.packages))),
                check.install
                or _(
                    "install the libraries Qt's platform plugin names above; the headless "
                    "commands ({commands}) work meanwhile"
                ).format(commands="bench, compare, devices, doctor"),
            )
        )
    elif f.display_check is not None and f.display_check.kind == "unreachable":
        out.append(
            Finding(
                "warning",
                _("the display does not answer ({display}): the desktop app cannot open").format(display=f.display),
                f.display_check.reason
                + _("; the headless commands ({commands}) work.").format(commands="bench, devices, doctor, ..."),
                _("start or forward the display ({ssh}), correct {var}, or run under a virtual one: {xvfb}").format(
                    ssh="ssh -X", var="DISPLAY", xvfb="xvfb-run -a som-studio"
                ),
            )
        )
    else:
        out.append(Finding("ok", _("display available ({display})").format(display=f.display)))

    order = {"error": 0, "warning": 1, "ok": 2}
    return sorted(out, key=lambda x: order[x.severity])


def _font_finding(f: Facts) -> Finding | None:
    """Under Korean: a warning naming the package to install when no font has Hangul, else an ok line."""
    if f.language != "ko" or f.hangul_fonts is None:
        return None
    if f.hangul_fonts:
        return Finding("ok", _("Hangul font: {family}").format(family=f.hangul_fonts[0]))
    return Finding(
        "warning",
        _("no font with Hangul glyphs: Korean text shows as empty boxes"),
        _("fontconfig ({command}) lists no font for Korean.").format(command="fc-list :lang=ko"),
        _("install {package}, then start SOM Studio again").format(package=i18n.font_package())
        + "\n"
        + _("Debian/Ubuntu: {command}").format(command="sudo apt install fonts-noto-cjk   (or fonts-nanum)"),
    )


def _precision_findings(f: Facts) -> list[Finding]:
    """A warning per precision variable set; one ok line stating the policy when none is."""
    out = []
    jdmp = f.env.get("JAX_DEFAULT_MATMUL_PRECISION")
    if jdmp is not None:
        out.append(
            Finding(
                "warning",
                _("{setting} is set").format(setting=f"JAX_DEFAULT_MATMUL_PRECISION={jdmp}"),
                _(
                    "it sets JAX's precision for every float32 product that names none: SOM Studio names "
                    "HIGHEST on each of its own, so its maps do not change, but other JAX code in this process "
                    "does, and timings compared with other tools are then not like for like."
                ),
                _("unset {var}").format(var="JAX_DEFAULT_MATMUL_PRECISION"),
            )
        )
    tf32 = f.env.get("NVIDIA_TF32_OVERRIDE")
    if tf32 is not None:
        out.append(
            Finding(
                "warning",
                _("{setting} is set").format(setting=f"NVIDIA_TF32_OVERRIDE={tf32}"),
                _(
                    "it overrides whether NVIDIA's libraries (cuBLAS, cuDNN) use TF32 for float32 products, "
                    "under every framework in this process: figures measured under it do not compare with "
                    "figures measured without it."
                ),
                _("unset {var}").format(var="NVIDIA_TF32_OVERRIDE"),
            )
        )
    if not out:
        out.append(Finding("ok", _("precision: {policy}").format(policy=_(PRECISION_POLICY))))
    return out


def _why_cpu(f: Facts) -> str:
    gpu = ", ".join(g.name for g in f.driver.gpus) or _("an NVIDIA GPU")
    cuda = f" (CUDA {f.driver.cuda_version})" if f.driver.cuda_version else ""
    if not f.plugins:
        reason = _("no CUDA plugin for JAX is installed ({plugins}), so JAX only has its CPU backend.").format(
            plugins="jax-cuda13-plugin / jax-cuda12-plugin"
        )
    elif f.jax.gpu_error:
        reason = _("JAX's CUDA plugin is installed but did not start: {error}").format(error=f.jax.gpu_error)
    else:
        reason = _("JAX's CUDA plugin is installed but did not start.")
    return (
        _("{tool} sees {gpu}, but JAX's backend is {backend}: {reason}").format(
            tool="nvidia-smi", gpu=gpu + cuda, backend=f.jax.backend or _("unknown"), reason=reason
        )
        + " "
        + _("This is the CUDA/JAX mismatch: training runs, but on the CPU.")
    )


def _memory_finding(f: Facts, has_gpu: bool) -> Finding:
    frac = f.mem_fraction if f.mem_fraction is not None else DEFAULT_MEM_FRACTION
    if not has_gpu:
        return Finding("ok", _("memory: no GPU, so JAX's GPU memory settings do not apply"))
    if f.preallocate and f.unified_memory:
        return Finding(
            "warning",
            _("GPU memory preallocation is on for unified memory ({share} of it at JAX's first operation)").format(
                share=f"{frac:.0%}"
            ),
            _(
                "this GPU shares its memory with the CPU: preallocating takes that share away from the desktop "
                "and every other program for as long as SOM Studio runs."
            ),
            _("unset {var} (SOM Studio then sets it to false), or export {setting}").format(
                var="XLA_PYTHON_CLIENT_PREALLOCATE", setting="XLA_PYTHON_CLIENT_PREALLOCATE=false"
            ),
        )
    if f.preallocate:
        return Finding(
            "ok", _("memory: JAX preallocates {share} of the GPU's memory (your setting)").format(share=f"{frac:.0%}")
        )
    who = _("SOM Studio's default") if f.preallocate_is_ours else _("your setting")
    return Finding(
        "ok",
        _("memory: JAX allocates GPU memory on demand ({setting}, {whose})").format(
            setting="XLA_PYTHON_CLIENT_PREALLOCATE=false", whose=who
        ),
    )


# --------------------------------------------------------------------------- report


def format_bytes(n: int | None) -> str:
    from som_studio.i18n import format_bytes as fmt

    return fmt(n or 0)


def format_report(f: Facts, findings: list[Finding]) -> str:
    """The doctor's report as plain text (what ``som-studio doctor`` prints)."""
    lines = [_("SOM Studio {version} doctor").format(version=f.som_studio), ""]
    keys = [
        "Python",
        _("platform"),
        _("CUDA plugins"),
        "nvidia-smi",
        _("driver / CUDA"),
        _("status"),
        _("backend"),
        _("GPU backend"),
        _("CUDA plugin"),
        _("display"),
        _("session"),
        "GPU 0",
    ]
    key_width = max(16, *(text_width(k) + 2 for k in keys))

    def row(key: str, value: str) -> None:
        lines.append(f"  {ljust(key, key_width)}{value}")

    def para(first: str, text: str) -> None:
        # Wrap prose, but never inside a word: commands stay copyable.
        for i, ln in enumerate(text.splitlines()):
            lines.extend(
                textwrap.wrap(
                    ln,
                    # 100 terminal columns: Hangul takes two each, so fewer characters fit.
                    100 * len(ln) // max(text_width(ln), 1),
                    initial_indent=f"      {first if i == 0 else ' ' * text_width(first)}",
                    subsequent_indent=" " * (6 + text_width(first)),
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )

    lines.append(_("Versions"))
    row("Python", f"{'.'.join(map(str, f.python))} ({f.executable})")
    row(_("platform"), f"{f.system} {f.machine}" + (_(" (in a container)") if f.in_container else ""))
    for dist in DISTRIBUTIONS:
        if dist == "PySide6" and f.versions.get("PySide6-Essentials"):
            continue
        row("PySide6" if dist == "PySide6-Essentials" else dist, f.versions.get(dist) or _("not installed"))
    row(_("CUDA plugins"), ", ".join(f"{d} {v}" for d, v in f.plugins.items()) or _("none installed"))

    lines += ["", _("NVIDIA driver")]
    if not f.driver.present:
        row("nvidia-smi", _("not found on PATH"))
    elif not f.driver.ok:
        row(
            "nvidia-smi",
            _("{path}: failed: {output}").format(path=f.driver.path, output=(f.driver.output.splitlines() or [""])[0]),
        )
    else:
        row("nvidia-smi", f.driver.path or "")
        row(_("driver / CUDA"), f"{f.driver.driver_version or '?'} / {f.driver.cuda_version or '?'}")
        for i, g in enumerate(f.driver.gpus):
            mem = f"{g.memory_total_mib} MiB" if g.memory_total_mib is not None else _("memory not reported (unified)")
            row(f"GPU {i}", f"{g.name}, {mem}")

    lines += ["", "JAX"]
    if f.jax.error is not None:
        row(_("status"), _("failed: {error}").format(error=f.jax.error))
    else:
        n = len(f.jax.devices)
        row(_("backend"), f"{f.jax.backend} (" + ngettext("{n} device", "{n} devices", n).format(n=n) + ")")
        for d in f.jax.devices:
            mem = (
                _("memory {used} in use of {limit}").format(
                    used=format_bytes(d.memory_in_use), limit=format_bytes(d.memory_limit)
                )
                if d.memory_limit
                else _("memory not reported (host RAM)")
            )
            lines.append(f"    {d.id:>3}  {d.platform:<5} {d.kind:<24} {mem}")
        if f.jax.gpu_error and (f.plugins or f.driver.present):
            row(_("GPU backend"), f.jax.gpu_error)
        if f.plugins and not _gpu_devices(f):
            row(_("CUDA plugin"), _("installed but not in use (see the findings)"))
        elif f.plugins:
            row(_("CUDA plugin"), _("in use"))

    lines += ["", _("Memory and XLA settings in force")]
    for k in XLA_ENV:
        v = f.env.get(k)
        if k == "XLA_PYTHON_CLIENT_PREALLOCATE":
            if v is None:
                lines.append(f"  {k} " + _("unset  (JAX's default: preallocate)"))
            else:
                whose = _("SOM Studio's default") if f.preallocate_is_ours else _("your setting")
                lines.append(f"  {k}={v}  ({whose})")
        elif k == "XLA_PYTHON_CLIENT_ALLOCATOR" and v is None:
            lines.append(f"  {k} " + _("unset  (JAX's default: a pool that keeps freed memory for reuse)"))
        elif v is not None:
            lines.append(f"  {k}={v}")
    if f.mem_fraction is None:
        lines.append(
            "  "
            + _("memory fraction unset  (JAX's default: {share} when preallocating)").format(
                share=f"{DEFAULT_MEM_FRACTION:.0%}"
            )
        )
    lines.append("  " + (_("unified CPU/GPU memory: yes") if f.unified_memory else _("unified CPU/GPU memory: no")))

    lines += ["", _("Precision policy")]
    para("", _(PRECISION_POLICY))
    for k in PRECISION_ENV:
        lines.append(f"  {k}={f.env[k]}" if k in f.env else f"  {k} " + _("unset"))

    if f.language == "ko":
        lines += ["", _("Language")]
        row(_("language"), i18n.LANGUAGE_NAMES["ko"])
        fonts = f.hangul_fonts
        row(_("Hangul fonts"), _("not known (no fontconfig)") if fonts is None else ", ".join(fonts[:3]) or _("none"))

    lines += ["", _("Display")]
    row(_("display"), f.display or _("none ({a} and {b} unset)").format(a="DISPLAY", b="WAYLAND_DISPLAY"))
    if f.over_ssh:
        row(_("session"), _("over SSH"))

    lines += ["", _("Findings")]
    severity = {"error": _("[error]"), "warning": _("[warning]"), "ok": _("[ok]")}
    for x in findings:
        lines.append(f"  {severity.get(x.severity, f'[{x.severity}]')} {x.title}")
        if x.detail:
            para("", x.detail)
        if x.fix:
            para(_("fix: "), x.fix)
    n_err = sum(x.severity == "error" for x in findings)
    n_warn = sum(x.severity == "warning" for x in findings)
    lines += [
        "",
        ngettext("{n} error", "{n} errors", n_err).format(n=n_err)
        + ", "
        + ngettext("{n} warning.", "{n} warnings.", n_warn).format(n=n_warn),
    ]
    return "\n".join(lines) + "\n"


def as_dict(f: Facts, findings: list[Finding]) -> dict[str, Any]:
    """Facts and findings as JSON-ready data (``som-studio doctor --json``)."""
    d = asdict(f)
    d["unified_memory"] = f.unified_memory
    d["display"] = f.display
    d["findings"] = [asdict(x) for x in findings]
    return d


def exit_status(findings: list[Finding]) -> int:
    """1 when any finding is an error, else 0 (warnings do not fail scripts)."""
    return int(any(x.severity == "error" for x in findings))


def report_text(probes: Probes | None = None) -> str:
    """The full report for this process: what the app's Help menu shows.

    Starts JAX if it has not started (configured as SOM Studio configures it) and
    runs ``nvidia-smi``: call it off the GUI thread if a pause of a second matters.
    """
    facts = collect(probes)
    return format_report(facts, diagnose(facts))
