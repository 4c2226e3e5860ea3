"""File > Add implementation…: the user's own implementation files, remembered and reloaded when they change.

A file is checked in a child process with a time limit before it is imported
(:func:`som_studio.core.impls.user_impl.load`), so a file that hangs or breaks the contract
is refused in a dialog and the app goes on. The files are remembered in the settings
and loaded again at the next start; a file that changes on disk is checked and loaded
again (a file watcher, and a check of its time stamp before each run).

Threads: GUI thread only.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QWidget

from som_studio.core.impls import registry, user_impl
from som_studio.core.impls.protocol import Implementation
from som_studio.qt.settings import Settings

SETTINGS_KEY = "implementations/user"


def classes_in(path: str) -> list[str]:
    """The classes a Python file defines at its top level, read without running it."""
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


class UserImplementations(QObject):
    """The users' implementations: add, remember, reload. ``specs`` are ``FILE.py:CLASS``, absolute.

    Parameters
    ----------
    settings : where the files are remembered.
    window : the parent of the dialogs that ask for a file and a class, and of this object.
    offer : lists a loaded implementation where implementations are chosen (the run panel, the comparison).
    choose : selects an implementation, by name, for the next run (the form).
    show_error : ``(title, message)``: a dialog saying why a file was refused.
    say : a line on the status bar (why a file being edited does not load now).
    """

    def __init__(
        self,
        settings: Settings,
        window: QWidget,
        offer: Callable[[Implementation], None],
        choose: Callable[[str], object],
        show_error: Callable[[str, str], None],
        say: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self.settings, self._window = settings, window
        self._offer, self._choose, self._show_error, self._say = offer, choose, show_error, say
        self.specs: list[str] = []
        self.watcher = QFileSystemWatcher(self)
        self.watcher.fileChanged.connect(self._on_file_changed)
        # An editor's save can change a file several times in a row: load it once, when it settles.
        self._changed: set[str] = set()
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.setInterval(300)
        self._settle.timeout.connect(self._reload_changed)

    # -- settings ----------------------------------------------------------------------
    def remembered(self) -> list[str]:
        value: Any = self.settings.qsettings.value(SETTINGS_KEY, [])
        items: list[Any] = [value] if isinstance(value, str) else list(value or [])
        return [str(s) for s in items if isinstance(s, str) and user_impl.is_spec(s)]

    def _remember(self) -> None:
        self.settings.set_value(SETTINGS_KEY, list(self.specs))

    def restore(self) -> None:
        """Load the remembered files (before the form restores a configuration that may name one)."""
        self.specs = self.remembered()  # one that fails now stays remembered: the user may mend it
        for spec in list(self.specs):
            self.add(spec, select=False)

    # -- adding ------------------------------------------------------------------------
    def ask(self) -> Implementation | None:
        """Ask for a Python file and the class in it, then add it (File > Add implementation…)."""
        path, _filter = QFileDialog.getOpenFileName(
            self._window, self.tr("Add implementation"), "", self.tr("Python files (*.py)")
        )
        if not path:
            return None
        classes = classes_in(path)
        if not classes:
            # A file that does not parse, or defines no class: loading it says which (the import's error), as the
            # command line does, where an empty list of classes to choose from said nothing.
            return self.add(f"{Path(path).resolve()}:{Path(path).stem}")
        if len(classes) == 1:
            name = classes[0]
        else:
            name, ok = QInputDialog.getItem(
                self._window,
                self.tr("Add implementation"),
                self.tr("The class in {file} to run:").format(file=Path(path).name),
                classes,
                0,
                True,
            )
            if not ok or not name:
                return None
        return self.add(f"{Path(path).resolve()}:{name}")

    def add(self, spec: str, select: bool = True) -> Implementation | None:
        """Check and load ``spec``, list it in the run panel and remember it; a dialog says why not."""
        impl = self._load(spec)
        path = spec.rpartition(":")[0]
        if Path(path).is_file() and path not in self.watcher.files():
            self.watcher.addPath(path)  # a file refused now is loaded when it is mended
        if impl is None:
            return None
        if spec not in self.specs:
            self.specs.append(spec)
            self._remember()
        self._offer(impl)
        if select:
            self._choose(impl.name)
        return impl

    def _load(self, spec: str, quiet: bool = False) -> Implementation | None:
        """Load ``spec``; why not in a dialog, or with ``quiet`` on the status line (a file being edited)."""
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            return user_impl.load(spec)
        except user_impl.UserImplError as exc:
            if quiet:
                self._say(str(exc).splitlines()[0])
            else:
                self._show_error(self.tr("Cannot add the implementation"), str(exc))
            return None
        finally:
            QApplication.restoreOverrideCursor()

    # -- changes -----------------------------------------------------------------------
    def ready(self, name: str) -> bool:
        """Before a run of ``name``: a user's file that changed since it was loaded is loaded again."""
        try:
            impl = registry.get(name)
        except registry.UnknownImplementation:
            return True
        if impl.file is None or not user_impl.changed(impl):
            return True
        spec = next((s for s in self.specs if s.rpartition(":")[0] == impl.file), None)
        return spec is not None and self._load(spec) is not None

    def _on_file_changed(self, path: str) -> None:
        self._changed.add(path)
        self._settle.start()

    def _reload_changed(self) -> None:
        """Load the changed files again; one that fails now says so on the status line and again at Run."""
        changed, self._changed = self._changed, set()
        for path in changed:
            for spec in self.specs:
                if spec.rpartition(":")[0] == path:
                    impl = self._load(spec, quiet=True)
                    if impl is not None:
                        self._offer(impl)
            if Path(path).exists() and path not in self.watcher.files():
                self.watcher.addPath(path)  # editors that save by replacing the file end the watch
