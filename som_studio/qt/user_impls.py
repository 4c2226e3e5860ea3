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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QFileSystemWatcher, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog

from som_studio.core.impls import registry, user_impl
from som_studio.core.impls.protocol import Implementation

if TYPE_CHECKING:
    from som_studio.qt.main_window import MainWindow

SETTINGS_KEY = "implementations/user"


def classes_in(path: str) -> list[str]:
    """The classes a Python file defines at its top level, read without running it."""
    try:
        tree = ast.parse(Path(path).read_bytes(), filename=path)
    except (OSError, SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.ClassDef)]


class UserImplementations(QObject):
    """The window's users' implementations: add, remember, reload. ``specs`` are ``FILE.py:CLASS``, absolute."""

    def __init__(self, win: MainWindow) -> None:
        super().__init__(win)
        self.win = win
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
        value: Any = self.win.settings.qsettings.value(SETTINGS_KEY, [])
        items: list[Any] = [value] if isinstance(value, str) else list(value or [])
        return [str(s) for s in items if isinstance(s, str) and user_impl.is_spec(s)]

    def _remember(self) -> None:
        self.win.settings.set_value(SETTINGS_KEY, list(self.specs))

    def restore(self) -> None:
        """Load the remembered files (before the form restores a configuration that may name one)."""
        self.specs = self.remembered()  # one that fails now stays remembered: the user may mend it
        for spec in list(self.specs):
            self.add(spec, select=False)

    # -- adding ------------------------------------------------------------------------
    def ask(self) -> Implementation | None:
        """Ask for a Python file and the class in it, then add it (File > Add implementation…)."""
        path, _filter = QFileDialog.getOpenFileName(
            self.win, self.tr("Add implementation"), "", self.tr("Python files (*.py)")
        )
        if not path:
            return None
        classes = classes_in(path)
        if len(classes) == 1:
            name = classes[0]
        else:
            name, ok = QInputDialog.getItem(
                self.win,
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
        self._list(impl)
        if select:
            self.win.form.edit(impl=impl.name)
        return impl

    def _list(self, impl: Implementation) -> None:
        """Offer ``impl`` where implementations are chosen: the run panel and the comparison."""
        self.win.panel.add_implementation(impl)
        comparison = getattr(self.win, "comparison", None)
        if comparison is not None:
            comparison.picker.add_implementation(impl)

    def _load(self, spec: str, quiet: bool = False) -> Implementation | None:
        """Load ``spec``; why not in a dialog, or with ``quiet`` on the status line (a file being edited)."""
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
        try:
            return user_impl.load(spec)
        except user_impl.UserImplError as exc:
            if quiet:
                self.win.status_label.setText(str(exc).splitlines()[0])
            else:
                self.win.show_error(self.tr("Cannot add the implementation"), str(exc))
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
                        self._list(impl)
            if Path(path).exists() and path not in self.watcher.files():
                self.watcher.addPath(path)  # editors that save by replacing the file end the watch
