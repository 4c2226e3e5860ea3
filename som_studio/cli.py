"""The ``som-studio`` command: the desktop app by default, headless subcommands.

Nothing heavy is imported here: ``som-studio --help`` and every subcommand's
``--help`` import neither Qt nor JAX.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import re
import sys
import threading
from typing import NoReturn

from som_studio import __version__

DESCRIPTION = """\
SOM Studio trains self-organizing maps with a ladder of implementations, from
the NumPy reference to fused and sharded JAX, and times them honestly.

Run with no command to open the desktop app (when it is installed and a display
is available); the subcommands below work headless, e.g. over SSH.
"""

EPILOG = """\
examples:
  som-studio list
  som-studio bench --impl numpy-batch,jax-vmap-batch --grid 60x34 --epochs 10
  som-studio compare --impl numpy-batch,jax-fused-batch --grid 60x34 --epochs 10 \\
      --report report.html
  som-studio explain --impl jax-fused-batch --hlo fused.hlo
  som-studio --cpu-devices 8 devices --layout 2x4
  som-studio doctor

`som-studio COMMAND --help` explains each command's options.
"""


def build_parser() -> argparse.ArgumentParser:
    from som_studio.commands import COMMANDS

    p = argparse.ArgumentParser(
        prog="som-studio", description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--version", action="version", version=f"som-studio {__version__}")
    p.add_argument(
        "--cpu-devices",
        type=int,
        metavar="N",
        help="use JAX's CPU backend with N simulated devices (1-1024), even where a GPU "
        "exists: try device layouts without a cluster",
    )
    p.add_argument(  # read before parsing by i18n.language_flag; declared here for --help and to be accepted
        "--lang",
        metavar="ko|en",
        help="the language of messages: ko (Korean) or en (English); default: $SOM_STUDIO_LANG, "
        "else the locale (LANGUAGE, then the first of LC_ALL, LC_MESSAGES, LANG that is set)",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        mod = importlib.import_module(f"som_studio.commands.{name}")
        sp = mod.add_parser(sub)
        sp.set_defaults(_module=mod, _parser=sp)
    return p


def main(argv: list[str] | None = None) -> int:
    from som_studio.commands.common import CommandError

    raw = list(sys.argv[1:] if argv is None else argv)
    # i18n: the language before anything is parsed, so flag-value errors are in it too.
    from som_studio import i18n
    from som_studio.i18n import _

    try:
        i18n.install(i18n.resolve_language(i18n.language_flag(raw), os.environ))
    except i18n.LanguageError as exc:
        i18n.install(i18n.default_language())
        print(_("som-studio: error: {message}").format(message=exc), file=sys.stderr)
        return 2
    parser = build_parser()
    args, extra = parser.parse_known_args(_dashed_values(raw))
    if extra:  # told by the command they were given to, with its usage (argparse's own: the top level's)
        getattr(args, "_parser", parser).error(_("unrecognized arguments: %s") % " ".join(extra))
    args._argv = raw  # to re-run in a supervised child
    from som_studio.core import jax_runtime

    try:
        jax_runtime.configure(args.cpu_devices)
    except jax_runtime.JaxConfigError as exc:
        parser.error(str(exc))
    if args.command is None:
        return _open_app(parser, args)
    try:
        return int(args._module.run(args) or 0)
    except CommandError as exc:
        print(_("som-studio {command}: error: {message}").format(command=args.command, message=exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(_("som-studio {command}: interrupted").format(command=args.command), file=sys.stderr)
        return 130
    except BrokenPipeError:  # `som-studio list | head`: the reader left, not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _dashed_values(argv: list[str]) -> list[str]:
    """``--grid -3x5`` as ``--grid=-3x5``.

    argparse takes a word that starts with a dash for an option, unless it is a plain negative
    number, and says the option before it "expected one argument". No option here starts with a
    dash and a digit, so such a word is the value of the option before it, and that option's own
    check refuses it in its own words (``width and height must be positive, got -3x5``).
    """
    out: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":  # what follows is no option
            return out + argv[i:]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if word.startswith("--") and "=" not in word and re.match(r"-\.?\d", value):
            out.append(f"{word}={value}")
            i += 2
        else:
            out.append(word)
            i += 1
    return out


def entry() -> NoReturn:
    """The ``som-studio`` command itself (its script and ``python -m som_studio``): :func:`main`, then exit.

    A headless command leaves through :func:`leave`; the app (Qt loaded) exits the ordinary way,
    so Qt tears its objects down in its own order.
    """
    code = main()
    if "PySide6" in sys.modules:
        sys.exit(code)
    leave(code)


def leave(code: int) -> NoReturn:
    """Exit with ``code`` as Python's own exit does, less freeing every object one by one.

    What a user could see still happens, in Python's order: the other non-daemon threads are
    waited for, the ``atexit`` functions run (logging's flush, JAX's shutdown of a run over several
    processes) and the standard streams are flushed. What is skipped is the interpreter's teardown:
    each module and object freed in turn, and XLA's runtime with the run's buffers, which the
    operating system takes back at once. After a one-epoch ``bench`` of 10^6 x 30 rows that
    teardown took 0.34-0.47 s, a fifth of the time outside the run's ``total_s``.
    """
    main_thread = threading.main_thread()
    for t in threading.enumerate():
        if t is not main_thread and t is not threading.current_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: Python's exit says so with status 120
            code = code or 120
    os._exit(code)


def _open_app(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    try:
        app = importlib.import_module("som_studio.qt.app")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("som_studio.qt"):
            parser.print_help()
            return 0
        raise
    return int(app.main(args) or 0)


if __name__ == "__main__":
    entry()
