"""The runs the app remembers: a folder of ``.somrun`` files, one per run.

Every run the app finishes is saved there at once, so the history survives a
crash or a restart; renaming or removing a run rewrites or deletes its file.
Qt-free.

Threads: the methods are called from one thread (the app's GUI thread); the
files are written on the history's own writer thread, one change at a time in
the order asked, so a run's kept frames (seconds of PNG for a long run) are
encoded while the app goes on drawing.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

from som_studio.i18n import _
from som_studio.storage.runfile import SUFFIX, HistoryError, StoredRun
from som_studio.storage.writers import OutputError

T = TypeVar("T")


class RunHistory:
    """The runs kept in ``folder`` (one ``.somrun`` file each), oldest first.

    Files that cannot be read are left alone and listed in :attr:`problems`.
    Every change is written through at once.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.problems: list[str] = []
        self.runs: list[StoredRun] = []
        self._writer: ThreadPoolExecutor | None = None  # started with the first write, ended by close()
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

    def _write(self, job: Callable[[], T]) -> Future[T]:
        """Run ``job`` on the writer thread, after every write asked for before it."""
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="som-history")
        return self._writer.submit(job)

    def add_later(self, run: StoredRun) -> tuple[StoredRun, Future[Path]]:
        """Keep ``run`` at once (a copy with a fresh id if its id is already here) and write its file on the
        writer thread; returns what was kept and the write (its path, or the
        :class:`~som_studio.storage.writers.OutputError` that says why the file could not be written).
        """
        if any(r.id == run.id for r in self.runs):
            run = replace(run, id=uuid.uuid4().hex[:12])
        self.runs.append(run)
        path = self._path(run)
        return run, self._write(lambda: run.save(path, force=True))

    def add(self, run: StoredRun) -> StoredRun:
        """Keep ``run`` (a copy with a fresh id if its id is already here), its file written when this returns;
        returns what was kept. Not kept if its file cannot be written (the error is raised)."""
        kept, saving = self.add_later(run)
        try:
            saving.result()
        except OutputError:
            self.runs.remove(kept)
            raise
        return kept

    def rename(self, run_id: str, name: str) -> None:
        run = self.get(run_id)
        name = name.strip()
        if not name:
            raise ValueError(_("a run needs a name"))
        old = run.name
        run.name = name
        path = self._path(run)
        try:
            self._write(lambda: run.save(path, force=True)).result()
        except OutputError:
            run.name = old
            raise

    def remove(self, run_id: str) -> None:
        run = self.get(run_id)
        path = self._path(run)

        def unlink() -> None:
            try:
                path.unlink()
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise OutputError(
                    _("{path}: cannot remove ({why})").format(path=path, why=exc.strerror or exc)
                ) from None

        self._write(unlink).result()  # after its own file was written, if that was still under way
        self.runs.remove(run)

    def close(self) -> None:
        """Finish the writes asked for and end the writer thread (the app closes); a later write starts it again."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
