"""The runs the app remembers: a folder of ``.somrun`` files, one per run.

Every run the app finishes is saved there at once, so the history survives a
crash or a restart; renaming or removing a run rewrites or deletes its file.
Qt-free.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import replace
from pathlib import Path

from som_studio.i18n import _
from som_studio.storage.runfile import SUFFIX, HistoryError, StoredRun
from som_studio.storage.writers import OutputError


class RunHistory:
    """The runs kept in ``folder`` (one ``.somrun`` file each), oldest first.

    Files that cannot be read are left alone and listed in :attr:`problems`.
    Every change is written through at once.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.problems: list[str] = []
        self.runs: list[StoredRun] = []
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.problems.append(
                _("{path}: cannot create the history folder ({why})").format(path=self.folder, why=exc.strerror or exc)
            )
            return
        try:  # scandir, not glob: glob would hide an unreadable folder as an empty one
            with os.scandir(self.folder) as entries:
                paths = sorted(Path(e.path) for e in entries if e.name.endswith(SUFFIX))
        except OSError as exc:
            self.problems.append(
                _("{path}: cannot read the runs folder ({why})").format(path=self.folder, why=exc.strerror or exc)
            )
            return
        for p in paths:
            try:
                self.runs.append(StoredRun.load(p))
            except HistoryError as exc:
                self.problems.append(str(exc))
        self.runs.sort(key=lambda r: r.created)

    def _path(self, run: StoredRun) -> Path:
        return self.folder / f"{run.id}{SUFFIX}"

    def get(self, run_id: str) -> StoredRun:
        return next(r for r in self.runs if r.id == run_id)

    def find(self, run: StoredRun) -> StoredRun | None:
        """The kept run that ``run`` is (the same file opened again: same id, made at the same time), or None."""
        return next((r for r in self.runs if r.id == run.id and r.created == run.created), None)

    def add(self, run: StoredRun) -> StoredRun:
        """Keep ``run`` (a copy with a fresh id if its id is already here); returns what was kept."""
        if any(r.id == run.id for r in self.runs):
            run = replace(run, id=uuid.uuid4().hex[:12])
        run.save(self._path(run), force=True)
        self.runs.append(run)
        return run

    def rename(self, run_id: str, name: str) -> None:
        run = self.get(run_id)
        name = name.strip()
        if not name:
            raise ValueError(_("a run needs a name"))
        old = run.name
        run.name = name
        try:
            run.save(self._path(run), force=True)
        except OutputError:
            run.name = old
            raise

    def remove(self, run_id: str) -> None:
        run = self.get(run_id)
        try:
            self._path(run).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise OutputError(
                _("{path}: cannot remove ({why})").format(path=self._path(run), why=exc.strerror or exc)
            ) from None
        self.runs.remove(run)
