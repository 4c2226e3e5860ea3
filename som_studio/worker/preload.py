"""What the fork server imports once for all the runs it starts (:mod:`som_studio.worker.start`).

The imports that were most of a run process's start: JAX and Orbax (which every run
imports to be ready to write a checkpoint). Nothing of SOM Studio's beyond the malloc
setting: its modules translate messages as they are imported, and the language is the
run's. Importing JAX starts no backend, no thread and no device: each child starts its own.
"""

from som_studio.worker import malloc

# Before JAX: the setting the worker makes before JAX's threads exist, kept by each fork.
malloc.fix_mmap_threshold()

import jax  # noqa: E402, F401
import orbax.checkpoint  # noqa: E402, F401
