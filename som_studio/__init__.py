"""SOM Studio: self-organizing maps from NumPy to fused, sharded JAX, timed honestly.

Importing this package imports neither Qt nor JAX; those load lazily where used.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["SOM", "Run", "__version__", "compare", "load_run", "sweep", "train"]

# Where each name lives: imported when first asked for (they import NumPy), so `import som_studio` stays light.
_LAZY = {
    "load_run": "som_studio.trained",
    "Run": "som_studio.trained",
    "train": "som_studio.api",
    "SOM": "som_studio.api",
    "sweep": "som_studio.sweeps",
    "compare": "som_studio.compared",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'som_studio' has no attribute {name!r}")


def __dir__() -> list[str]:
    # What a user reaches for: not the typing names and submodules the package's own imports leave behind.
    return sorted(__all__)
