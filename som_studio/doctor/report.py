"""The doctor's third step: facts and findings as text (``som-studio doctor``), as JSON data, as an exit status."""

from __future__ import annotations

import textwrap
from dataclasses import asdict
from typing import Any

from som_studio import i18n
from som_studio.doctor.facts import DEFAULT_MEM_FRACTION, DISTRIBUTIONS, XLA_ENV, Facts
from som_studio.doctor.findings import Finding, gpu_devices
from som_studio.i18n import _, ljust, ngettext, text_width
from som_studio.session.env import PRECISION_ENV, PRECISION_POLICY

# --------------------------------------------------------------------------- report


def format_bytes(n: int | None) -> str:
    from som_studio.i18n import format_bytes as fmt

    return fmt(n or 0)


class _Text:
    """The report's lines: aligned key/value rows and wrapped prose."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        keys = [  # every row's key, for the width of the keys' column
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
        self.key_width = max(16, *(text_width(k) + 2 for k in keys))

    def heading(self, title: str) -> None:
        self.lines += ["", title]

    def row(self, key: str, value: str) -> None:
        self.lines.append(f"  {ljust(key, self.key_width)}{value}")

    def para(self, first: str, text: str) -> None:
        # Wrap prose, but never inside a word: commands stay copyable.
        for i, ln in enumerate(text.splitlines()):
            self.lines.extend(
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


def format_report(f: Facts, findings: list[Finding]) -> str:
    """The doctor's report as plain text (what ``som-studio doctor`` prints)."""
    t = _Text()
    t.lines += [_("SOM Studio {version} doctor").format(version=f.som_studio), "", _("Versions")]
    _versions(t, f)
    t.heading(_("NVIDIA driver"))
    _driver(t, f)
    t.heading("JAX")
    _jax(t, f)
    t.heading(_("Memory and XLA settings in force"))
    _memory_settings(t, f)
    _compile_cache(t, f)
    _ceilings(t, f)
    t.heading(_("Precision policy"))
    t.para("", _(PRECISION_POLICY))
    for k in PRECISION_ENV:
        t.lines.append(f"  {k}={f.env[k]}" if k in f.env else f"  {k} " + _("unset"))
    if f.language == "ko":
        t.heading(_("Language"))
        t.row(_("language"), i18n.LANGUAGE_NAMES["ko"])
        fonts = f.hangul_fonts
        t.row(_("Hangul fonts"), _("not known (no fontconfig)") if fonts is None else ", ".join(fonts[:3]) or _("none"))
    t.heading(_("Display"))
    t.row(_("display"), f.display or _("none ({a} and {b} unset)").format(a="DISPLAY", b="WAYLAND_DISPLAY"))
    if f.over_ssh:
        t.row(_("session"), _("over SSH"))
    t.heading(_("Findings"))
    _findings(t, findings)
    return "\n".join(t.lines) + "\n"


def _compile_cache(t: _Text, f: Facts) -> None:
    cache = f.compile_cache
    if cache is None:
        return
    t.heading(_("Compiled programs"))
    if cache.folder is None:
        t.row(_("kept in"), _("nowhere: the cache is off ({var})").format(var="SOM_STUDIO_COMPILE_CACHE=off"))
        return
    t.row(_("kept in"), cache.folder)
    size = format_bytes(cache.size_bytes) if cache.size_bytes is not None else "?"
    count = cache.entries if cache.entries is not None else 0
    t.row(_("size"), size + " (" + ngettext("{n} program", "{n} programs", count).format(n=count) + ")")
    if cache.limit_bytes is not None:
        t.row(
            _("at most"),
            _("{size}: past it the programs used longest ago are dropped").format(size=format_bytes(cache.limit_bytes)),
        )
    if cache.traced is not None:
        from som_studio.core.kept_programs import KEPT_BYTES

        traced_bytes, traced_count = cache.traced
        t.row(
            _("traced"),
            _("{size} ({programs}) read back instead of traced again; at most {most}").format(
                size=format_bytes(traced_bytes),
                programs=ngettext("{n} program", "{n} programs", traced_count).format(n=traced_count),
                most=format_bytes(KEPT_BYTES),
            ),
        )


def _ceilings(t: _Text, f: Facts) -> None:
    t.heading(_("Device ceilings"))
    if not f.ceilings:
        t.row(_("measured"), _("not yet (the Inside page and bench/envelope.py measure them)"))
        return
    for c in f.ceilings:
        when = c.measured_at.replace("T", " ").replace("Z", " UTC") if c.measured_at else _("at an unknown time")
        text = _("{flops} GFLOP/s float32 matmul, {bw} GB/s memory; measured {when}").format(
            flops=f"{c.matmul_flops_per_s / 1e9:.3g}", bw=f"{c.bandwidth_bytes_per_s / 1e9:.3g}", when=when
        )
        text += " " + ngettext(
            "(the best of {n} measurement)", "(the best of {n} measurements)", c.measurements
        ).format(n=c.measurements)
        if c.stale:
            text += "; " + _("too low ({why}): measured again when next needed").format(why=c.stale)
        t.row(c.device, text)


def _versions(t: _Text, f: Facts) -> None:
    t.row("Python", f"{'.'.join(map(str, f.python))} ({f.executable})")
    t.row(_("platform"), f"{f.system} {f.machine}" + (_(" (in a container)") if f.in_container else ""))
    for dist in DISTRIBUTIONS:
        if dist == "PySide6" and f.versions.get("PySide6-Essentials"):
            continue
        t.row("PySide6" if dist == "PySide6-Essentials" else dist, f.versions.get(dist) or _("not installed"))
    t.row(_("CUDA plugins"), ", ".join(f"{d} {v}" for d, v in f.plugins.items()) or _("none installed"))


def _driver(t: _Text, f: Facts) -> None:
    if not f.driver.present:
        t.row("nvidia-smi", _("not found on PATH"))
    elif not f.driver.ok:
        first = (f.driver.output.splitlines() or [""])[0]
        t.row("nvidia-smi", _("{path}: failed: {output}").format(path=f.driver.path, output=first))
    else:
        t.row("nvidia-smi", f.driver.path or "")
        t.row(_("driver / CUDA"), f"{f.driver.driver_version or '?'} / {f.driver.cuda_version or '?'}")
        for i, g in enumerate(f.driver.gpus):
            mem = f"{g.memory_total_mib} MiB" if g.memory_total_mib is not None else _("memory not reported (unified)")
            t.row(f"GPU {i}", f"{g.name}, {mem}")


def _jax(t: _Text, f: Facts) -> None:
    if f.jax.error is not None:
        t.row(_("status"), _("failed: {error}").format(error=f.jax.error))
        return
    n = len(f.jax.devices)
    t.row(_("backend"), f"{f.jax.backend} (" + ngettext("{n} device", "{n} devices", n).format(n=n) + ")")
    for d in f.jax.devices:
        mem = (
            _("memory {used} in use of {limit}").format(
                used=format_bytes(d.memory_in_use), limit=format_bytes(d.memory_limit)
            )
            if d.memory_limit
            else _("memory not reported (host RAM)")
        )
        t.lines.append(f"    {d.id:>3}  {d.platform:<5} {d.kind:<24} {mem}")
    if f.jax.gpu_error and (f.plugins or f.driver.present):
        t.row(_("GPU backend"), f.jax.gpu_error)
    if f.plugins and not gpu_devices(f):
        t.row(_("CUDA plugin"), _("installed but not in use (see the findings)"))
    elif f.plugins:
        t.row(_("CUDA plugin"), _("in use"))


def _memory_settings(t: _Text, f: Facts) -> None:
    for k in XLA_ENV:
        v = f.env.get(k)
        if k == "XLA_PYTHON_CLIENT_PREALLOCATE":
            if v is None:
                t.lines.append(f"  {k} " + _("unset  (JAX's default: preallocate)"))
            else:
                whose = _("SOM Studio's default") if f.preallocate_is_ours else _("your setting")
                t.lines.append(f"  {k}={v}  ({whose})")
        elif k == "XLA_PYTHON_CLIENT_ALLOCATOR" and v is None:
            t.lines.append(f"  {k} " + _("unset  (JAX's default: a pool that keeps freed memory for reuse)"))
        elif v is not None:
            t.lines.append(f"  {k}={v}")
    if f.mem_fraction is None:
        share = f"{DEFAULT_MEM_FRACTION:.0%}"
        t.lines.append(
            "  " + _("memory fraction unset  (JAX's default: {share} when preallocating)").format(share=share)
        )
    t.lines.append("  " + (_("unified CPU/GPU memory: yes") if f.unified_memory else _("unified CPU/GPU memory: no")))


def _findings(t: _Text, findings: list[Finding]) -> None:
    severity = {"error": _("[error]"), "warning": _("[warning]"), "ok": _("[ok]")}
    for x in findings:
        t.lines.append(f"  {severity.get(x.severity, f'[{x.severity}]')} {x.title}")
        if x.detail:
            t.para("", x.detail)
        if x.fix:
            t.para(_("fix: "), x.fix)
    n_err = sum(x.severity == "error" for x in findings)
    n_warn = sum(x.severity == "warning" for x in findings)
    t.lines += [
        "",
        ngettext("{n} error", "{n} errors", n_err).format(n=n_err)
        + ", "
        + ngettext("{n} warning.", "{n} warnings.", n_warn).format(n=n_warn),
    ]


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
