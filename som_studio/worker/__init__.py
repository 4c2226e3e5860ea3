"""The app's worker process, Qt-free: one process per run, and its typed messages.

:mod:`.process` is the child's entry point (a run, a device probe, the
doctor's report); :mod:`.messages` the messages both ways; :mod:`.start` how the
child is started (forked from a server that imported JAX: :mod:`.preload`). The app's side
(:mod:`som_studio.qt.controller`) only reads the pipe and turns messages into
Qt signals.
"""
