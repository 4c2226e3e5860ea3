"""Build hook: put the top-level ``resources/`` and the desktop files into the wheel.

Everything else is in ``pyproject.toml``. Setuptools only ships files that live
inside a package, and ``resources/`` and ``packaging/`` sit beside the package
(where people look for them). Rather than move them or rely on symlinks, the
wheel gets copies under ``som_studio/_data/`` with the same layout;
``som_studio.resources.root()`` looks there first and falls back to the
checkout, which is what an editable install (``./dev.sh``) uses. ``MANIFEST.in``
puts the same files in the sdist so a wheel built from it has them too.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PACKAGING_FILES = ("io.github.somstudio.SomStudio.desktop", "io.github.somstudio.SomStudio.metainfo.xml")


def shipped() -> list[Path]:
    """The files copied into the wheel, relative to the project root."""
    files = [p.relative_to(HERE) for p in sorted((HERE / "resources").rglob("*")) if p.is_file()]
    files += [Path("packaging") / name for name in PACKAGING_FILES]
    return files


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own folders
        dest = Path(self.build_lib) / "som_studio" / "_data"
        for rel in shipped():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(HERE / rel, target)


setup(cmdclass={"build_py": BuildPyWithData})
