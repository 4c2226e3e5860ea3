"""The doctor's second step: :class:`Finding` s from :class:`~som_studio.doctor.facts.Facts` (pure, no I/O)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from som_studio import i18n
from som_studio.doctor.facts import DEFAULT_MEM_FRACTION, DeviceFact, Facts, Severity
from som_studio.i18n import _
from som_studio.session.env import PRECISION_POLICY

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


def gpu_devices(f: Facts) -> list[DeviceFact]:
    return [d for d in f.jax.devices if d.platform in ("gpu", "cuda", "rocm")]


def diagnose(f: Facts) -> list[Finding]:
    """Findings for ``f``, errors first; pure (no I/O)."""
    gpus = gpu_devices(f)
    out = [_python_finding(f), _jax_finding(f, gpus)]
    stale = _plugin_finding(f, gpus)  # plugins whose version does not match jaxlib are refused by JAX
    if stale is not None:
        out.append(stale)
    out.append(_memory_finding(f, bool(gpus) or (f.driver.present and f.driver.ok)))  # on unified memory too
    out.extend(_precision_findings(f))  # settings that change float32 products
    font = _font_finding(f)  # Korean needs a font with Hangul: said where the user reads Korean
    if font is not None:
        out.append(font)
    out.append(_display_finding(f))
    order = {"error": 0, "warning": 1, "ok": 2}
    return sorted(out, key=lambda x: order[x.severity])


def _python_finding(f: Facts) -> Finding:
    """Python and Qt: a version pair that crashes, a Python too old, or the versions in use."""
    py = ".".join(map(str, f.python))
    pyside = _pyside(f)
    if f.python[:2] < (3, 12) and _minor(pyside) == (6, 12):
        return Finding(
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
    elif f.python[:2] < (3, 12):
        return Finding(
            "warning",
            _("Python {python} is older than SOM Studio supports").format(python=py),
            _("SOM Studio needs Python 3.12 or newer (jax >= 0.11 does too)."),
            _("use Python 3.12 or newer for SOM Studio's environment"),
        )
    else:
        return Finding(
            "ok",
            _("Python {python} with PySide6 {pyside}").format(python=py, pyside=pyside) if pyside else f"Python {py}",
        )


def _jax_finding(f: Facts, gpus: list[DeviceFact]) -> Finding:
    """JAX and the GPU: whether JAX starts, and whether it runs on the GPU a driver says is there."""
    if f.jax.error is not None:
        return Finding(
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
    elif gpus:
        return Finding(
            "ok",
            _("JAX runs on the GPU ({backend}: {kinds})").format(
                backend=f.jax.backend, kinds=", ".join(sorted({d.kind for d in gpus}))
            ),
        )
    elif f.driver.present and f.driver.ok:
        platforms = f.env.get("JAX_PLATFORMS", "")
        if platforms and not any(p in platforms for p in ("cuda", "gpu")):
            return Finding(
                "warning",
                _("JAX is kept on the CPU by {setting}").format(setting=f"JAX_PLATFORMS={platforms}"),
                _("an NVIDIA driver is present, but {var} (or {flag}) limits JAX to the CPU.").format(
                    var="JAX_PLATFORMS", flag="--cpu-devices"
                ),
                _("unset {var} and drop {flag} to use the GPU").format(var="JAX_PLATFORMS", flag="--cpu-devices"),
            )
        else:
            return Finding(
                "error", _("an NVIDIA driver is present but JAX runs on the CPU"), _why_cpu(f), install_fix(f)
            )
    elif f.driver.present:
        return Finding(
            "warning",
            _("{tool} is installed but cannot talk to the NVIDIA driver").format(tool="nvidia-smi"),
            (f.driver.output.splitlines() or [""])[0],
            _("check the driver with {command} (a reboot after a driver update often helps)").format(
                command="`nvidia-smi`"
            )
            + (_("; in a container, start it with {flag}").format(flag="--gpus all") if f.in_container else ""),
        )
    else:
        return Finding(
            "warning",
            _("no GPU: JAX runs on the CPU"),
            _("{tool} is not on PATH, so no NVIDIA driver is visible to this process.").format(tool="nvidia-smi"),
            _(
                "on a GPU machine, install the NVIDIA driver; in a container, start it with {flag} "
                "(NVIDIA Container Toolkit); everything still works on the CPU, only slower"
            ).format(flag="--gpus all"),
        )


def _plugin_finding(f: Facts, gpus: list[DeviceFact]) -> Finding | None:
    """A CUDA plugin whose version differs from jaxlib's, while JAX runs without the GPU."""
    jaxlib = f.versions.get("jaxlib")
    stale = {d: v for d, v in f.plugins.items() if jaxlib and v != jaxlib}
    if stale and not gpus and f.jax.error is None:
        return Finding(
            "warning",
            _("CUDA plugin version differs from jaxlib"),
            _("{plugins} vs jaxlib {jaxlib}; JAX uses a plugin only when the versions match.").format(
                plugins=", ".join(f"{d} {v}" for d, v in stale.items()), jaxlib=jaxlib
            ),
            install_fix(f),
        )
    return None


def _display_finding(f: Facts) -> Finding:
    """Whether the desktop app can open a window here, and what to do when it cannot."""
    if f.display is None:
        title = (
            _("no display in an SSH session: the desktop app cannot open")
            if f.over_ssh
            else _("no display in this session: the desktop app cannot open")
        )
        return Finding(
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
    elif f.display_check is not None and f.display_check.kind == "plugin":
        check = f.display_check
        return Finding(
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
    elif f.display_check is not None and f.display_check.kind == "unreachable":
        return Finding(
            "warning",
            _("the display does not answer ({display}): the desktop app cannot open").format(display=f.display),
            f.display_check.reason
            + _("; the headless commands ({commands}) work.").format(commands="bench, devices, doctor, ..."),
            _("start or forward the display ({ssh}), correct {var}, or run under a virtual one: {xvfb}").format(
                ssh="ssh -X", var="DISPLAY", xvfb="xvfb-run -a som-studio"
            ),
        )
    else:
        return Finding("ok", _("display available ({display})").format(display=f.display))


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
