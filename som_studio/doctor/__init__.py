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

from som_studio.doctor.facts import (
    CUDA_PLUGINS,
    DEFAULT_MEM_FRACTION,
    DISTRIBUTIONS,
    UNIFIED_GPUS,
    XLA_ENV,
    CeilingFact,
    CompileCacheFact,
    DeviceFact,
    DriverFacts,
    Facts,
    GpuFact,
    JaxFacts,
    Probes,
    Severity,
    collect,
    parse_nvidia_smi,
)
from som_studio.doctor.findings import Finding, diagnose, install_fix
from som_studio.doctor.report import as_dict, exit_status, format_bytes, format_report
from som_studio.session.env import PRECISION_ENV, PRECISION_POLICY

__all__ = [
    "CUDA_PLUGINS",
    "DEFAULT_MEM_FRACTION",
    "DISTRIBUTIONS",
    "PRECISION_ENV",
    "PRECISION_POLICY",
    "UNIFIED_GPUS",
    "XLA_ENV",
    "CeilingFact",
    "CompileCacheFact",
    "DeviceFact",
    "DriverFacts",
    "Facts",
    "Finding",
    "GpuFact",
    "JaxFacts",
    "Probes",
    "Severity",
    "as_dict",
    "collect",
    "diagnose",
    "exit_status",
    "format_bytes",
    "format_report",
    "install_fix",
    "parse_nvidia_smi",
    "report_text",
]


def report_text(probes: Probes | None = None) -> str:
    """The full report for this process: what the app's Help menu shows.

    Starts JAX if it has not started (configured as SOM Studio configures it) and
    runs ``nvidia-smi``: call it off the GUI thread if a pause of a second matters.
    """
    facts = collect(probes)
    return format_report(facts, diagnose(facts))
