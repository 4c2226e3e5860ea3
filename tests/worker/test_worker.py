"""The worker without Qt: its typed messages, and a run in a real process started as the app starts it."""

from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.core.impls import registry
from som_studio.session.events import ChunkTimed, Compiled, EpochProgress, Failed, Finished, Started
from som_studio.worker import messages as m
from som_studio.worker import start
from som_studio.worker.process import RunRequest, describe_exit, receive, run_worker, send
from tests.worker.fakes import broken_impl

TIMEOUT_S = 120  # guards against a hang on a loaded machine, not a timing assertion


@pytest.mark.parametrize(
    "msg",
    [
        m.Cancel(),
        m.Pause(),
        m.Resume(),
        m.SetView("component", 2),
        m.FrameInterval(0.2),
        m.ChunksMessage((ChunkTimed(0, 4, 0.02, 0.02), ChunkTimed(4, 4, 0.021, 0.041))),
        m.WorkerError("boom"),
        m.Info({"backend": "cpu"}),
        m.EventMessage(EpochProgress(iteration=3, row=4_200_000, rows=10**7, first=0, seconds=2.5, wait_s=0.3)),
    ],
)
def test_messages_round_trip(msg):
    wire = m.encode(msg)
    assert wire[:2] == (m.PROTOCOL_VERSION, type(msg).__name__)
    assert m.decode(wire) == msg


def test_another_version_or_a_stranger_is_refused_by_name():
    with pytest.raises(m.ProtocolError, match="protocol version 99"):
        m.decode((99, "Cancel"))
    with pytest.raises(m.ProtocolError, match="unknown worker message 'Explode'"):
        m.decode((m.PROTOCOL_VERSION, "Explode"))
    with pytest.raises(m.ProtocolError, match="not a worker message"):
        m.decode("cancel")  # a bare string, not a versioned tuple
    with pytest.raises(m.ProtocolError, match="malformed SetView"):
        m.decode((m.PROTOCOL_VERSION, "SetView", "rgb", 0, "extra"))
    with pytest.raises(m.ProtocolError):
        m.encode(("event", None))  # type: ignore[arg-type]


def test_exit_codes_are_described():
    assert "SIGKILL" in describe_exit(-9) and "out of memory" in describe_exit(-9)
    assert describe_exit(3) == "the training process exited with status 3"


def _run(request: RunRequest) -> list[m.Message]:
    ctx = start.context()  # as the app starts its runs
    events_r, events_w = ctx.Pipe(duplex=False)
    control_r, control_w = ctx.Pipe(duplex=False)
    proc = start.process(ctx, run_worker, (request, events_w, control_r), daemon=True)
    proc.start()
    events_w.close()
    control_r.close()
    out: list[m.Message] = []
    try:
        while events_r.poll(TIMEOUT_S):
            try:
                out.append(receive(events_r))
            except EOFError:
                break
    finally:
        control_w.close()
        proc.join(TIMEOUT_S)
        if proc.is_alive():
            proc.kill()
            proc.join(TIMEOUT_S)
    assert proc.exitcode == 0
    return out


def test_a_run_streams_typed_messages():
    cfg = RunConfig(impl="numpy-batch", width=6, height=5, data=DataSpec(samples=40), epochs=3, seed=1)
    out = _run(RunRequest(cfg, view=("umatrix", 0)))
    events = [x.event for x in out if isinstance(x, m.EventMessage)]
    assert isinstance(events[0], Started) and any(isinstance(e, Compiled) for e in events)
    assert isinstance(events[-1], Finished) and events[-1].record.status == "ok"
    frames = [x.frame for x in out if isinstance(x, m.FrameMessage)]
    assert frames and frames[-1].view.mode == "umatrix" and frames[-1].image.shape == (5, 6)
    (final,) = [x for x in out if isinstance(x, m.FinalMap)]
    assert np.asarray(final.map).shape == (5, 6, 3)
    assert out.index(final) < len(out) - 1  # the final map comes before Finished


def test_a_fake_implementation_reaches_the_worker_through_the_registry():
    # Registered here for the test only; the request carries it and the worker registers it for the run.
    with registry.registered(broken_impl()) as (impl,):
        cfg = RunConfig(impl=impl.name, width=6, height=5, data=DataSpec(samples=40), epochs=3)
        out = _run(RunRequest(cfg, implementations=(impl,)))
    assert impl.name not in registry.names()
    failed = [x.event for x in out if isinstance(x, m.EventMessage) and isinstance(x.event, Failed)]
    assert len(failed) == 1 and "the test's engine broke at its first chunk" in failed[0].record.message


def test_a_refusal_crosses_the_pipe_as_a_value():
    # The worker's devices cannot hold the layout: the app gets the refusal itself, not only its words.
    cfg = RunConfig(impl="jax-shardmap-batch", width=6, height=5, data=DataSpec(samples=40), epochs=3, layout="2x2")
    out = _run(RunRequest(cfg, cpu_devices=2))
    (failed,) = [x.event for x in out if isinstance(x, m.EventMessage) and isinstance(x.event, Failed)]
    refusal = failed.record.refusal
    assert refusal is not None and refusal.field == "layout" and refusal.remedy == ("cpu_devices", 4)
    assert failed.record.message == str(refusal) and failed.record.message.endswith("--cpu-devices 4")


def test_send_writes_what_receive_reads():
    r, w = multiprocessing.Pipe(duplex=False)
    send(w, m.SetView("rgb"))
    assert receive(r) == m.SetView("rgb", 0)


def test_the_worker_loads_a_users_implementation_from_its_file(tmp_path):
    # As the app sends it: the implementation loaded here travels with the request, and the
    # spawned worker imports the user's file itself to create it.
    from som_studio.core.impls import user_impl
    from tests.core.test_user_impl import GOOD

    path = tmp_path / "good.py"
    path.write_text(GOOD)
    impl = user_impl.load(f"{path}:Good")
    try:
        cfg = RunConfig(impl=impl.name, width=6, height=5, data=DataSpec(samples=40), epochs=3)
        out = _run(RunRequest(cfg, implementations=(impl,)))
    finally:
        registry.unregister(impl.name)
    (finished,) = [x.event for x in out if isinstance(x, m.EventMessage) and isinstance(x.event, Finished)]
    record = finished.record
    assert record.status == "ok" and record.extra["agreement"]["agrees"] is True
    assert record.extra["user_impl"]["file"] == str(path.resolve()) and record.extra["user_impl"]["class"] == "Good"


def test_a_busy_sender_gets_the_newest_snapshot_and_every_event():
    # While the sender is busy (a slow reader holds the pipe), snapshots are replaced, never queued;
    # every other event waits its turn, in order; timed chunks go together, each as it was timed.
    from som_studio.session.events import ChunkTimed, Snapshot
    from som_studio.worker.process import _Outbox

    box = _Outbox()
    chunks = [ChunkTimed(i, 1, 1e-3 * (i + 1), 1e-3 * i) for i in range(20)]
    for i, c in enumerate(chunks):
        box.put(m.EventMessage(c))
        box.put(Snapshot(i + 1, np.full((2, 3, 1), float(i + 1))), snapshot=True)
    box.close()
    items = list(iter(box.get, None))
    assert [s.iteration for s in items if isinstance(s, Snapshot)] == [20]
    assert [c for x in items if isinstance(x, m.ChunksMessage) for c in x.chunks] == chunks


def test_timed_chunks_are_held_together_and_go_before_the_next_event():
    # A sender that keeps up still sends the chunks of a fast run a few times a second, not one message
    # each: the chunks timed while the last message's interval runs go together.
    from som_studio.session.events import ChunkTimed, QualityMeasured
    from som_studio.worker.process import _Outbox

    box = _Outbox(chunks_interval_s=3600.0)  # longer than the test: only an event or the end sends them now
    box.put(m.EventMessage(ChunkTimed(0, 1, 0.01, 0.01)))
    (first,) = [box.get()]  # the first chunks go at once: nothing was sent yet
    assert first == m.ChunksMessage((ChunkTimed(0, 1, 0.01, 0.01),))
    for i in range(1, 4):
        box.put(m.EventMessage(ChunkTimed(i, 1, 0.01, 0.01 * (i + 1))))
    quality = m.EventMessage(QualityMeasured(4, 0.5, 0.1))
    box.put(quality)  # another event: the held chunks go first, in one message
    assert box.get() == m.ChunksMessage(tuple(ChunkTimed(i, 1, 0.01, 0.01 * (i + 1)) for i in range(1, 4)))
    assert box.get() == quality
    box.put(m.EventMessage(ChunkTimed(4, 1, 0.01, 0.05)))
    box.close()  # the end: nothing held back
    assert box.get() == m.ChunksMessage((ChunkTimed(4, 1, 0.01, 0.05),))
    assert box.get() is None
