"""The app's end of the worker's pipe: a GUI thread slower than the worker gets the newest frame only."""

from __future__ import annotations

import multiprocessing

from som_studio.qt.pipe_reader import PipeReader
from som_studio.session.events import ChunkTimed
from som_studio.worker import messages as m
from som_studio.worker.process import send


class _Ended:
    """What the reader needs of a worker process: a sentinel that is ready once the worker ended."""

    def __init__(self, sentinel) -> None:
        self.sentinel = sentinel
        self.exitcode = 0

    def join(self, timeout: float | None = None) -> None:
        pass


def test_a_slow_gui_thread_gets_every_event_and_only_the_newest_frame(qtbot):
    events_r, events_w = multiprocessing.Pipe(duplex=False)
    end_r, end_w = multiprocessing.Pipe(duplex=False)
    reader = PipeReader(events_r, _Ended(end_r))
    with qtbot.waitSignal(reader.ended, timeout=30_000):
        reader.start()
        # The worker sends 40 chunks and 40 frames while the GUI thread is busy elsewhere (it takes nothing).
        for i in range(40):
            send(events_w, m.EventMessage(ChunkTimed(i, 1, 1e-3, 1e-3 * i)))
            send(events_w, m.FrameMessage(("frame", i + 1)))
        events_w.close()
        end_w.close()  # the worker is gone
    reader.wait()
    items, frame = reader.take()
    assert [x.event.first for x in items if isinstance(x, m.EventMessage)] == list(range(40))
    assert not any(isinstance(x, m.FrameMessage) for x in items)  # frames are never queued with the events
    assert frame is not None and frame.frame == ("frame", 40)
    assert reader.take() == ([], None)
