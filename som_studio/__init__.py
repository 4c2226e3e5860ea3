"""SOM Studio: self-organizing maps from NumPy to fused, sharded JAX, timed honestly.

Importing this package imports neither Qt nor JAX; those load lazily where used.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "load_run"]


def __getattr__(name: str) -> Any:
    # load_run imports NumPy: only when asked for, so `import som_studio` stays light.
    if name == "load_run":
        from som_studio.model import load_run

        return load_run
    raise AttributeError(f"module 'som_studio' has no attribute {name!r}")
