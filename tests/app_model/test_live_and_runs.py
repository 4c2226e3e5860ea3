"""The active run's live state and the run list with its ticks, without Qt."""

from __future__ import annotations

import pytest

from som_studio.app_model.live import LiveProgress
from som_studio.app_model.runs import COLUMNS, RunList, row_texts
from som_studio.config import RunConfig
from som_studio.session.events import ChunkTimed, EpochProgress, Started
from som_studio.session.record import RunRecord
from som_studio.storage import RunHistory, StoredRun


def test_live_run_progress_and_time():
    live = LiveProgress()
    assert live.time_text(5.0) == "" and live.progress == 0.0
    text = live.begin(RunConfig(impl="numpy-online", width=10, height=7, steps=1000), now=100.0)
    assert text == "Starting numpy-online on a 10x7 map…"
    live.chunks([ChunkTimed(0, 250, 0.5, 0.5)])
    assert live.progress == 0.25
    # 0.5 s for 250 steps: 1.5 s for the 750 left.
    assert live.time_text(102.0) == "elapsed   2.0 s   ETA   1.5 s   250/1,000"
    assert live.time_text(103.0, running=False) == "elapsed   3.0 s"
    # An hour left reads in hours and minutes, not "ETA 3673.3 s".
    live.chunks([ChunkTimed(250, 1, 1229.5, 1230.0)])
    assert live.time_text(104.0) == "elapsed   4.0 s   ETA 1 h 1 min   251/1,000"
    assert live.failed(_record("numpy-online", "failed", "boom")) == "Failed: boom"
    # A failure without a refusal keeps its words, one that looks like a field's included.
    assert LiveProgress.failed(_record("numpy-batch", "failed", "boom: no field")) == "Failed: boom: no field"
    assert LiveProgress.failed(_record("numpy-batch", "failed", "layout: as written")) == "Failed: layout: as written"


def test_live_run_inside_a_streamed_epoch():
    live = LiveProgress()
    live.begin(RunConfig(impl="jax-fused-batch", width=32, height=32, epochs=10), now=0.0)
    live.chunks([ChunkTimed(0, 2, 40.0, 40.0)])  # two epochs done
    # Epoch 3 (index 2): 4 of 10 million rows in 2 s, 0.5 s of it waiting for the disk.
    text = live.progressed(EpochProgress(iteration=2, row=4_000_000, rows=10_000_000, first=0, seconds=2.0, wait_s=0.5))
    assert text == (
        "Epoch 3 of 10: 4,000,000 of 10,000,000 rows, 2,000,000 rows/s, 3 s left in it; "
        "waiting for the disk 25% of the time"
    )
    assert live.progress == (2 + 0.4) / 10  # the bar moves inside the epoch
    # 3 s left of this epoch, then 7 epochs of 5 s each at this rate.
    assert live.time_text(50.0) == "elapsed  50.0 s   ETA  38.0 s   2/10"
    live.chunks([ChunkTimed(2, 1, 5.0, 45.0)])  # that epoch ended: its progress is history
    assert live.epoch is None and live.epoch_text() == "" and live.progress == 0.3
    assert live.epochs_text() == "3 of 10 epochs done; reading the next"
    # A resumed epoch's pass began at its saved row: the rate counts the rows read since.
    live.progressed(EpochProgress(iteration=3, row=6_000_000, rows=10_000_000, first=5_000_000, seconds=1.0, wait_s=0))
    assert live.epoch.rows_per_s == 1_000_000 and live.epoch.epoch_left_s == 4.0


def test_a_resumed_run_counts_from_its_checkpoint():
    """Resumed inside epoch 3 of 4 (index 2): the count starts there, and the rate is of what this run trains."""
    cfg = RunConfig(impl="numpy-batch", width=8, height=6, epochs=4)
    live = LiveProgress()
    live.begin(cfg, now=0.0)
    assert live.started(Started(cfg, "batch", 4, 1000, 3, {}, "1x1", 0, first=2)) == "numpy-batch: warming up…"
    assert live.left_s() is None  # nothing trained by this run yet: no estimate, not "ETA 0.0 s"
    # Rows 500-750 of the epoch in 1 s: 250 rows/s, 1 s left of it, then one epoch of 4 s.
    live.progressed(EpochProgress(iteration=2, row=750, rows=1000, first=500, seconds=1.0, wait_s=0))
    assert live.progress == (2 + 0.75) / 4
    assert live.time_text(1.0) == "elapsed   1.0 s   ETA   5.0 s   2/4"
    fused = cfg.replace(impl="jax-fused-batch")
    assert LiveProgress().started(Started(fused, "batch", 4, 1000, 3, {}, "1x1", 0)) == (
        "jax-fused-batch: compiling and warming up…"
    )
    live.chunks([ChunkTimed(2, 1, 0.1, 0.1)])  # the rest of epoch 3: its rows were read before the stop
    assert live.left_s() is None and live.done == 3  # no rate from a part of an epoch ("ETA 0.0 s" was shown)
    live.total = 6
    live.chunks([ChunkTimed(3, 1, 2.0, 2.1)])
    assert live.left_s() == pytest.approx(4.0)  # 2 s for the whole epoch this run trained: 4 s for the two left


def _record(impl: str, status: str = "ok", message: str = "") -> RunRecord:
    return RunRecord(impl=impl, kind="batch", config={"grid": [4, 3]}, status=status, message=message)


def test_run_list_names_ticks_and_exports(tmp_path):
    runs = RunList(RunHistory(tmp_path / "history"))
    a, saving = runs.add(StoredRun(_record("numpy-batch")))
    assert a.name == "numpy-batch" and saving.result() == tmp_path / "history" / f"{a.id}.somrun"
    b, _ = runs.add(StoredRun(_record("numpy-batch")), check=True)
    assert b.name == "numpy-batch (2)"  # names tell runs apart in comparisons and their files
    assert runs.checked_runs() == [b] and runs.export_records() == [b.record]
    assert "already called 'numpy-batch'" in runs.rename_problem(b, "numpy-batch")
    assert runs.rename_problem(b, "mine") == ""
    runs.set_checked([])
    assert runs.export_records() == [a.record, b.record]  # none ticked: all
    assert runs.remove(a.id) is False and [r.id for r in runs.runs] == [b.id]
    assert len(row_texts(b)) == len(COLUMNS) and row_texts(b)[COLUMNS.index("grid")] == "4x3"
    # The list is the history: a new list over the same folder has the same runs.
    assert [r.id for r in RunList(RunHistory(tmp_path / "history")).runs] == [b.id]
    out = tmp_path / "runs.json"
    assert runs.write_json(str(out)) == 1 and '"numpy-batch"' in out.read_text()


@pytest.mark.cpu_backend  # the remedy, more simulated CPU devices, is the CPU backend's
def test_a_layout_the_workers_devices_cannot_hold_names_the_apps_control():
    """The worker's session refuses as the CLI words it; the app's status, list and tooltip say it its way."""
    from som_studio.app_model.form import LABELS
    from som_studio.app_model.runs import run_tooltip
    from som_studio.config import DataSpec, Refusal
    from som_studio.session.session import Session, run_to_completion

    cfg = RunConfig(impl="jax-shardmap-batch", width=5, height=4, data=DataSpec(samples=9), epochs=2, layout="16x8")
    record = run_to_completion(Session(cfg))
    assert record.status == "failed" and "--cpu-devices 128" in record.message  # the CLI's words
    # The refusal travels as a value beside the message: nothing reads the message back.
    assert isinstance(record.refusal, Refusal) and record.refusal.field == "layout"
    assert record.refusal.remedy == ("cpu_devices", 128) and "--cpu-devices" not in record.refusal.reason
    assert "refusal" not in record.to_dict()  # the JSON keeps its fields
    app_control = LABELS["cpu_devices"].format(n=128)
    run = StoredRun(record=record, name="refused", created="2026-11-23T14:00:00")
    for text in (LiveProgress.failed(record), run_tooltip(run), " ".join(row_texts(run))):
        assert "--cpu-devices" not in text and app_control in text, text
    assert LiveProgress.failed(record).startswith("Failed: Layout: layout 16x8 needs 128 devices")


@pytest.mark.cpu_backend
def test_a_worker_speaking_korean_has_its_layout_remedy_named_as_the_apps_control():
    """The worker speaks the app's language: its Korean refusal is named by the app's Korean controls."""
    from som_studio import i18n
    from som_studio.app_model.form import LABELS, app_message
    from som_studio.config import DataSpec
    from som_studio.session.session import Session, run_to_completion

    cfg = RunConfig(impl="jax-shardmap-batch", width=5, height=4, data=DataSpec(samples=9), epochs=2, layout="16x8")
    i18n.install("ko")
    try:
        record = run_to_completion(Session(cfg))
        assert "--cpu-devices 128" in record.message and "가상" in record.message  # the CLI's words, in Korean
        text = app_message(record)
        assert text.startswith(i18n._(LABELS["layout"]) + ": ") and "가상" in text
        assert "--cpu-devices" not in text and i18n._(LABELS["cpu_devices"]).format(n=128) in text, text
    finally:
        i18n.install("en")


def test_a_stopped_runs_message_kept_in_english_reads_in_the_apps_language():
    """The run was stopped in an English session; the app, in Korean since, showed its note in English."""
    from som_studio import i18n
    from som_studio.app_model.form import app_message
    from som_studio.session.record import RunRecord

    record = RunRecord(impl="numpy-batch", kind="batch", config={}, status="cancelled")
    record.message = "cancelled after 1,200 of 40,000 iterations"
    i18n.install("ko")
    try:
        assert app_message(record) == i18n.ngettext(
            "cancelled after {done:,} of {n:,} iteration", "cancelled after {done:,} of {n:,} iterations", 40_000
        ).format(done=1_200, n=40_000)
        assert "cancelled" not in app_message(record)
    finally:
        i18n.install("en")
    assert app_message(record) == "cancelled after 1,200 of 40,000 iterations"


def test_the_status_line_says_no_warm_up_for_a_rung_that_compiles_nothing():
    from som_studio.session.events import Compiled

    assert LiveProgress.compiled(Compiled(3e-6, 0)) == "Training"
    assert LiveProgress.compiled(Compiled(0.148, 0)) == "Training (148.00 ms warm-up)"
    assert LiveProgress.compiled(Compiled(1.2, 3)) == "Training (3 compilations, 1.20 s compile + warm-up)"


def test_settings_that_differ_are_said_in_the_forms_words():
    from som_studio.app_model.runs import differing_settings

    def run(run_id: str, **config) -> StoredRun:
        base = {"impl": "numpy-batch", "grid": [6, 4], "epochs": 5, "data": {"source": "file", "path": "a.csv"}}
        record = RunRecord(impl="numpy-batch", kind="batch", config={**base, **config}, status="ok")
        return StoredRun(record, name=run_id, id=run_id)

    a = run("a", labels="species", feature_names=["x", "y"], sigma={"start": [3, 2], "end": [1, 1]})
    b = run("b", labels=None, feature_names=["x", "z"], sigma={"start": [3, 2], "end": [2, 2]})
    differs = differing_settings([a, b])
    assert differs == {"a": "Label column species · Radius σ (end) 1, 1", "b": "Label column - · Radius σ (end) 2, 2"}


def test_the_run_tables_figures_line_up_and_a_numpy_warm_up_is_no_compile():
    numpy, jax = _record("numpy-batch"), _record("jax-fused-batch")
    numpy.compile_s, jax.compile_s, jax.warmup_compiles = 3e-6, 0.25, 2
    numpy.qe, jax.qe = 0.0797, 0.08
    compile_at, qe_at = COLUMNS.index("compile"), COLUMNS.index("QE")
    rows = [row_texts(StoredRun(r)) for r in (numpy, jax)]
    assert [r[compile_at] for r in rows] == ["", "250.00 ms"]
    assert [r[qe_at] for r in rows] == ["0.0797", "0.0800"]  # four decimals each, not 0.0797 and 0.08
