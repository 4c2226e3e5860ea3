"""``som-studio install-desktop``: put SOM Studio in the desktop's applications menu.

Installs, for the current user by default (the XDG data home,
``$XDG_DATA_HOME`` or ``~/.local/share``):

* ``applications/io.github.somstudio.SomStudio.desktop``, whose ``Exec`` line
  names this installation's ``som-studio`` by absolute path, so the launcher
  works without a virtual environment on ``PATH``;
* ``icons/hicolor/scalable/apps/...svg`` and ``icons/hicolor/NxN/apps/...png``;
* ``metainfo/io.github.somstudio.SomStudio.metainfo.xml`` for software centres.

Every target is checked before anything is written: a file that exists with
other content is refused without ``--force`` (identical files are left alone),
so a failed install never leaves half an entry behind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from som_studio.i18n import _


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "install-desktop",
        help="add SOM Studio to the desktop's applications menu (this user)",
        description="Install SOM Studio's desktop entry, icons and AppStream metadata for the\n"
        "current user (into $XDG_DATA_HOME, by default ~/.local/share), with the\n"
        "launcher pointing at this installation's som-studio.",
        epilog="examples:\n  som-studio install-desktop --dry-run\n  som-studio install-desktop\n"
        "  sudo som-studio install-desktop --prefix /usr/local   # every user\n"
        "  som-studio install-desktop --uninstall\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--prefix", metavar="DIR", help="install under DIR/share instead of the XDG data home (e.g. /usr/local)"
    )
    p.add_argument("--dry-run", action="store_true", help="print what would be written; write nothing")
    p.add_argument("--force", action="store_true", help="replace files that exist with other content")
    p.add_argument("--uninstall", action="store_true", help="remove the files an install put there")
    return p


@dataclass(frozen=True)
class Target:
    """One file to install: where it goes and its content."""

    path: Path
    content: bytes


def data_dir(prefix: str | None, environ: os._Environ[str] | dict[str, str] | None = None) -> Path:
    """Where ``share/``-style files go: ``PREFIX/share``, else the XDG data home."""
    env = os.environ if environ is None else environ
    if prefix:
        return Path(prefix).expanduser() / "share"
    xdg = env.get("XDG_DATA_HOME", "")
    # The XDG spec: a relative or empty value is invalid and means the default.
    if xdg and os.path.isabs(xdg):
        return Path(xdg)
    return Path(env.get("HOME") or Path.home()) / ".local" / "share"


def launcher_argv() -> list[str]:
    """This installation's ``som-studio`` by absolute path (``python -m som_studio`` when there is none)."""
    # Not resolved: a venv's python is a symlink out of the venv, and the script sits beside the link.
    script = Path(sys.executable).parent / "som-studio"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    found = shutil.which("som-studio")
    if found:
        return [str(Path(found).absolute())]
    return [sys.executable, "-m", "som_studio"]


def _string_escape(value: str) -> str:
    """Escape a desktop-entry string value (backslash, newline, tab)."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def exec_quote(arg: str) -> str:
    """Quote one argument for the ``Exec`` key (Desktop Entry spec, 'The Exec key'), unescaped form."""
    reserved = set(" \t\n\"'\\><~|&;$*?#()`")
    if arg and not (set(arg) & reserved):
        return arg.replace("%", "%%")
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg)
    return '"' + inner.replace("%", "%%") + '"'


def exec_line(argv: list[str]) -> str:
    """The ``Exec`` value for ``argv``: each argument quoted, then string-escaped as the spec requires."""
    return _string_escape(" ".join(exec_quote(a) for a in argv))


def desktop_text(template: str, argv: list[str]) -> str:
    """The desktop entry with ``Exec`` (and ``TryExec``) pointing at ``argv``."""
    out = []
    for line in template.splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_line(argv)}"
        elif line.startswith("TryExec="):
            if len(argv) > 1:
                continue  # TryExec names one program; `python -m` has no script to test
            line = f"TryExec={_string_escape(argv[0])}"
        out.append(line)
    return "\n".join(out) + "\n"


def targets(share: Path, argv: list[str]) -> list[Target]:
    """Every file an install writes under ``share``."""
    from som_studio import resources as res

    icons = share / "icons" / "hicolor"
    out = [
        Target(
            share / "applications" / res.DESKTOP_FILE,
            desktop_text(res.desktop_entry().read_text(encoding="utf-8"), argv).encode(),
        ),
        Target(share / "metainfo" / res.METAINFO_FILE, res.metainfo().read_bytes()),
        Target(icons / "scalable" / "apps" / f"{res.APP_ID}.svg", res.icon_svg().read_bytes()),
    ]
    for size in res.ICON_SIZES:
        out.append(Target(icons / f"{size}x{size}" / "apps" / f"{res.APP_ID}.png", res.icon_png(size).read_bytes()))
    return out


def run(args: argparse.Namespace) -> int:
    from som_studio.commands.common import CommandError
    from som_studio.resources import ResourceError
    from som_studio.storage.writers import OutputError, write_atomic

    share = data_dir(args.prefix)
    argv = launcher_argv()
    try:
        todo = targets(share, argv)
    except ResourceError as exc:
        raise CommandError(str(exc)) from None

    if args.uninstall:
        for t in todo:
            if t.path.is_file():
                if not args.dry_run:
                    t.path.unlink()
                print((_("would remove {path}") if args.dry_run else _("removed {path}")).format(path=t.path))
        _refresh_caches(share, args.dry_run)
        return 0

    # Check everything first: refuse before writing anything.
    changed: list[Target] = []
    for t in todo:
        if t.path.is_dir():
            raise CommandError(_("{path}: is a folder; remove it first").format(path=t.path))
        if t.path.is_file():
            if t.path.read_bytes() == t.content:
                print(_("unchanged {path}").format(path=t.path))
                continue
            if not args.force:
                raise CommandError(
                    _("{path}: exists with other content (an older install?); use {flag} to replace it").format(
                        path=t.path, flag="--force"
                    )
                )
        changed.append(t)
    for t in changed:
        if args.dry_run:
            print(_("would write {path}").format(path=t.path))
            continue
        try:
            t.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(t.path, t.content, force=True)  # refusals were decided above
        except (OutputError, OSError) as exc:
            raise CommandError(str(exc)) from None
        print(_("wrote {path}").format(path=t.path))
    if args.dry_run:
        print(_("(dry run: nothing written; the launcher would run {command})").format(command=exec_line(argv)))
        return 0
    _refresh_caches(share, False)
    _hint(share, args.prefix)
    return 0


def _refresh_caches(share: Path, dry_run: bool) -> None:
    """Tell the desktop about the change where its cache tools exist (optional, quiet)."""
    if dry_run:
        return
    cmds = []
    if shutil.which("update-desktop-database") and (share / "applications").is_dir():
        cmds.append(["update-desktop-database", "-q", str(share / "applications")])
    if shutil.which("gtk-update-icon-cache") and (share / "icons" / "hicolor").is_dir():
        cmds.append(["gtk-update-icon-cache", "-q", "-t", "-f", str(share / "icons" / "hicolor")])
    for cmd in cmds:
        try:
            subprocess.run(cmd, capture_output=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            pass  # a stale cache only delays the icon; the entry itself is in place


def _hint(share: Path, prefix: str | None) -> None:
    dirs = [Path(d) for d in (os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":") if d]
    if prefix and share not in dirs and share != data_dir(None):
        print(
            _("note: {path} is not in {var}, so desktops will not look there").format(path=share, var="XDG_DATA_DIRS"),
            file=sys.stderr,
        )
    else:
        print(
            _(
                "SOM Studio is now in the applications menu (search for 'SOM Studio'; "
                "if it does not appear, log out and in again)."
            )
        )
