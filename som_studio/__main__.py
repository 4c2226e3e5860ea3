"""``python -m som_studio`` is the ``som-studio`` command."""

from som_studio.cli import entry

entry()
