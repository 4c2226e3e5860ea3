"""``som-studio list``: the registered implementations."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap

from som_studio.i18n import _, text_width


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("list", help="list the implementations", description="List the registered SOM implementations.")
    p.add_argument("--names", action="store_true", help="names only, one per line")
    return p


def run(args: argparse.Namespace) -> int:
    from som_studio.core.impls import registry

    impls = registry.all_implementations()
    if args.names:
        print("\n".join(i.name for i in impls))
        return 0
    width = max(len(i.name) for i in impls)
    indent = " " * (width + 2)
    # On a terminal, descriptions wrap under their name; piped, each stays one line (for grep).
    columns = shutil.get_terminal_size().columns if sys.stdout.isatty() else 0
    for i in impls:
        print(f"{i.name:<{width}}  {i.supports()}")
        if columns > len(indent) + 20:
            # The plain words, then the technical detail as a paragraph of its own (a description's
            # second sentence on, the registry's order), each wrapped under the name.
            for text in _paragraphs(i.description_text):
                # columns - 1 terminal columns: Hangul takes two each, so fewer characters fit.
                fill = (columns - 1) * len(text) // max(text_width(text), 1)
                print(textwrap.fill(text, fill, initial_indent=indent, subsequent_indent=indent))
        else:
            print(indent + i.description_text)
    print()
    print(indent + _("your own: {flag} ({doc})").format(flag="--impl FILE.py:CLASS", doc="docs/your-implementation.md"))
    return 0


def _paragraphs(text: str) -> list[str]:
    """A description split before its last sentence that starts a technical account (``Technically:``…)."""
    for mark in (". Technically:", ". 기술적으로:"):
        head, sep, tail = text.partition(mark)
        if sep:
            return [head + ".", sep[2:] + tail]
    return [text]
