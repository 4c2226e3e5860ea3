"""What the fork server imports once for all the runs it starts (:mod:`som_studio.worker.start`).

The imports that were most of a run process's start: JAX, Orbax (which every run imports
to be ready to write a checkpoint), and the worker's own modules down to the session.
Safe to share because importing them reads no setting a run changes: SOM Studio's
messages are translated where they are shown, in the run's language, never as a module
is imported, and importing JAX starts no backend, no thread and no device (each child
starts its own, after its device count is set).
"""

from som_studio.worker import malloc

# Before JAX: the setting the worker makes before JAX's threads exist, kept by each fork.
malloc.fix_mmap_threshold()

import jax  # noqa: E402, F401
import orbax.checkpoint  # noqa: E402, F401

import som_studio.session.session  # noqa: E402
import som_studio.worker.process  # noqa: E402, F401
