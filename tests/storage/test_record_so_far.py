"""The record of a run that ends without its own, built from the events it sent, agrees with the session's."""

from __future__ import annotations

from som_studio.config import RunConfig
from som_studio.session.events import Finished
from som_studio.session.session import Session
from som_studio.storage import RecordSoFar


def test_the_events_tell_what_the_sessions_record_says():
    cfg = RunConfig(impl="numpy-batch", width=6, height=4, epochs=6)
    so_far = RecordSoFar(cfg)
    assert so_far.record.status == "cancelled" and so_far.record.kind == "batch" and not so_far.started
    final = None
    for ev in Session(cfg, snapshot_interval_s=None).run():
        if isinstance(ev, Finished):
            final = ev.record
            break
        so_far.feed(ev)
    assert final is not None and final.status == "ok"
    got = so_far.record
    assert so_far.started and so_far.compiled and so_far.iterations_done == 6
    assert (got.kind, got.layout, got.samples) == (final.kind, final.layout, final.samples)
    assert got.compile_s == final.compile_s and list(got.chunks) == list(final.chunks)
    assert got.history == final.history[: len(got.history)] and got.config == final.config


def test_an_unknown_implementation_is_kept_as_it_was_asked_for():
    so_far = RecordSoFar(RunConfig(impl="no-such-thing"))
    assert so_far.record.impl == "no-such-thing" and so_far.record.kind == "?"
