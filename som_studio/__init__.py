"""SOM Studio: self-organizing maps from NumPy to fused, sharded JAX, timed honestly.

Importing this package imports neither Qt nor JAX; those load lazily where used.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
