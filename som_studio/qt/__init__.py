"""The desktop app: the only package that imports PySide6 and pyqtgraph.

Two modules here stay Qt-free on purpose, because they run in the worker
process that trains: :mod:`.worker_process` and :mod:`.frames`. Importing this
package imports nothing heavy.
"""
