"""The desktop app: the only package that imports PySide6 and pyqtgraph.

Every module here is a view or a Qt adapter: the state it renders lives in
:mod:`som_studio.app_model`, the worker process in :mod:`som_studio.worker`
(both Qt-free; this package imports them, never the other way).
:mod:`.frames` is the one Qt-free module left, until the picture pipeline
takes it. Importing this package imports nothing heavy.
"""
