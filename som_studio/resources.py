"""Files shipped with SOM Studio: icons (``resources/``), desktop entry and metadata (``packaging/``).

In a source checkout, and an editable install of one, these are the
repository's own ``resources/`` and ``packaging/`` folders. A wheel carries
copies under ``som_studio/_data/`` with the same layout, made by the build
hook in ``setup.py``. :func:`root` finds whichever is there, so callers never
care how SOM Studio was installed.
"""

from __future__ import annotations

from pathlib import Path

#: The reverse-DNS id used everywhere: desktop entry, AppStream id, icon name.
#: The app should call ``QGuiApplication.setDesktopFileName(APP_ID)`` so that
#: Wayland and X11 desktops match its windows to the launcher.
APP_ID = "io.github.somstudio.SomStudio"
DESKTOP_FILE = f"{APP_ID}.desktop"
METAINFO_FILE = f"{APP_ID}.metainfo.xml"
#: PNG sizes shipped next to the SVG (hicolor theme sizes).
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


class ResourceError(FileNotFoundError):
    """A shipped file is missing: the installation is broken."""


def root() -> Path:
    """The folder holding ``resources/`` and ``packaging/`` (wheel copy first, else the checkout)."""
    pkg = Path(__file__).resolve().parent
    for cand in (pkg / "_data", pkg.parent):
        if (cand / "resources").is_dir() and (cand / "packaging" / DESKTOP_FILE).is_file():
            return cand
    raise ResourceError(f"SOM Studio's resources are not in {pkg / '_data'} nor {pkg.parent}: reinstall som-studio")


def _existing(p: Path) -> Path:
    if not p.is_file():
        raise ResourceError(f"{p}: missing from this installation; reinstall som-studio")
    return p


def resource(*parts: str) -> Path:
    """A file under ``resources/``, e.g. ``resource("icons", "som-studio.svg")``."""
    return _existing(root().joinpath("resources", *parts))


def icon_svg() -> Path:
    """The scalable application icon."""
    return resource("icons", "som-studio.svg")


def icon_png(size: int) -> Path:
    """The application icon rendered at ``size`` x ``size`` pixels (one of :data:`ICON_SIZES`)."""
    if size not in ICON_SIZES:
        raise ValueError(f"no {size}px icon; sizes are {', '.join(map(str, ICON_SIZES))}")
    return resource("icons", f"som-studio-{size}.png")


def desktop_entry() -> Path:
    """The desktop entry template (``Exec=som-studio``; ``install-desktop`` makes it absolute)."""
    return _existing(root() / "packaging" / DESKTOP_FILE)


def metainfo() -> Path:
    """The AppStream metadata."""
    return _existing(root() / "packaging" / METAINFO_FILE)
