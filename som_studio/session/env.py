"""The environment a run ran in: versions, backend, devices, and the precision policy."""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from importlib import metadata
from typing import Any

from som_studio.i18n import N_

#: How SOM Studio computes in float32, stated in every record's ``env`` and the report.
PRECISION_POLICY = N_(
    "float32 products at lax.Precision.HIGHEST (no TF32 or bfloat16 passes on GPUs); "
    "best-matching units by the elementwise form sum (x - w)^2"
)
#: Environment variables that change float32 matrix products on NVIDIA GPUs
#: (JAX's default precision for products that name none; cuBLAS/cuDNN's TF32 use).
PRECISION_ENV = ("JAX_DEFAULT_MATMUL_PRECISION", "NVIDIA_TF32_OVERRIDE")


def precision_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The :data:`PRECISION_ENV` variables that are set, with their values."""
    env = os.environ if environ is None else environ
    return {k: env[k] for k in PRECISION_ENV if k in env}


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(backend: str | None) -> dict[str, Any]:
    """Environment of a run on ``backend`` (``"numpy"`` or ``"jax"``).

    ``None``: a run that failed before its backend was known or started; its
    ``backend`` is ``None`` and ``devices`` empty, the other facts as usual.
    """
    import numpy as np

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "platform": f"{platform.system()} {platform.machine()}",
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "precision_policy": PRECISION_POLICY,
        "precision_env": precision_env(),
    }
    if backend == "jax":
        from som_studio.core import jax_runtime

        jax = jax_runtime.jax()
        env["backend"] = jax.default_backend()
        env["devices"] = [device_info(d) for d in jax.devices()]
    elif backend == "numpy":
        env["backend"] = "numpy"
        env["devices"] = [{"id": 0, "kind": "cpu"}]
    else:
        env["backend"] = None
        env["devices"] = []
    return env


def device_info(device: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"id": int(device.id), "kind": str(device.device_kind)}
    try:
        stats = device.memory_stats()
    except Exception:  # not every backend reports memory
        stats = None
    if stats:
        info["memory_limit"] = stats.get("bytes_limit")
        info["memory_in_use"] = stats.get("bytes_in_use")
    return info
