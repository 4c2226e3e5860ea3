"""Subcommands of ``som-studio``.

Each module here has ``add_parser(subparsers)`` and ``run(args) -> int`` and
imports nothing heavy at module level, so ``som-studio --help`` stays fast and
imports neither Qt nor JAX. :data:`COMMANDS` lists them in help order.
"""

COMMANDS: tuple[str, ...] = (
    "bench",
    "compare",
    "sweep",
    "explain",
    "project",
    "list_impls",
    "devices",
    "doctor",
    "install_desktop",
)
