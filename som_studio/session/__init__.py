"""The Qt-free training driver: a generator of typed events (see :mod:`.events`)."""
