"""The report's first line: the fastest run against its baseline, per iteration and end to end."""

from __future__ import annotations

from som_studio.report.content import build_report
from som_studio.report.html import report_html
from som_studio.session.record import Chunk, RunRecord


def _record(impl: str, kind: str, per_iteration: float, compile_s: float, n: int = 10) -> RunRecord:
    iterations = {"batch": "epochs", "online": "steps"}[kind]
    return RunRecord(
        impl=impl,
        kind=kind,
        config={"impl": impl, "grid": [8, 5], iterations: n},
        status="ok",
        chunks=[Chunk(i, 1, per_iteration) for i in range(n)],
        compile_s=compile_s,
        total_s=compile_s + n * per_iteration,
        qe=0.1,
        te=0.02,
        samples=50,
    )


def test_the_headline_names_the_fastest_run_its_speed_up_and_end_to_end():
    runs = [
        _record("numpy-batch", "batch", 0.296, 0.0),
        _record("jax-vmap-batch", "batch", 0.1, 0.5),
        _record("jax-fused-batch", "batch", 0.01, 0.8),
    ]
    report = build_report(runs)
    # 0.296 / 0.01 per epoch; whole runs: 2.96 s against 0.8 + 0.1 s.
    assert report.headline() == "jax-fused-batch: 29.6x faster per epoch than numpy-batch, 3.29x end to end"
    html = report_html(report, {})
    # It opens the page: right under the title, before the summary.
    assert html.index(report.headline()) < html.index(">Summary</h2>")
    assert html.index(report.title) < html.index(report.headline())
    # Its footer names where the raw numbers are, on the command line and in the app that may have written it.
    assert "--json FILE</code>" in html and "in the app, Export > Full records (JSON) and Timed chunks (CSV)" in html


def test_online_runs_say_per_step_and_a_slower_run_says_so():
    report = build_report(
        [_record("numpy-online", "online", 1e-4, 0.0), _record("jax-naive-online", "online", 4e-4, 0.0)]
    )
    assert report.headline() == "jax-naive-online: 4x slower per step than numpy-online, 4x slower end to end"
    # Faster per iteration but not over the whole run: the compile cost more than the iterations saved.
    report = build_report([_record("numpy-batch", "batch", 0.01, 0.0), _record("jax-fused-batch", "batch", 0.001, 0.2)])
    assert report.headline() == "jax-fused-batch: 10x faster per epoch than numpy-batch, 2.1x slower end to end"


def test_no_headline_without_a_baseline_to_compare_with():
    assert build_report([_record("numpy-batch", "batch", 0.1, 0.0)]).headline() is None
    assert 'class="headline"' not in report_html(build_report([_record("numpy-batch", "batch", 0.1, 0.0)]), {})


def test_a_cancelled_baseline_is_said_in_the_headline_and_a_whole_run_is_preferred():
    import dataclasses

    stopped = dataclasses.replace(_record("numpy-batch", "batch", 0.3, 0.0, n=2), status="cancelled")
    fused = _record("jax-fused-batch", "batch", 0.01, 0.8)
    report = build_report([stopped, fused])
    assert report.baseline_of == ["numpy-batch", "numpy-batch"]
    assert report.headline() == (
        "jax-fused-batch: 30x faster per epoch than numpy-batch "
        "(numpy-batch was cancelled: its figures cover only what ran)"
    )
    # With a whole run of the reference beside it, the speed-ups are measured against that one.
    whole = _record("numpy-batch", "batch", 0.25, 0.0)
    report = build_report([stopped, whole, fused])
    assert report.baseline_of == ["numpy-batch (2)"] * 3
    assert report.headline() == "jax-fused-batch: 25x faster per epoch than numpy-batch (2), 2.78x end to end"


def test_a_small_end_to_end_ratio_keeps_its_digits_in_the_table():
    # 0.01 s of NumPy against 0.8 s of compile: the table read "0.00x".
    report = build_report([_record("numpy-batch", "batch", 0.001, 0.0), _record("jax-fused-batch", "batch", 1e-4, 0.8)])
    row = report.summary_rows()[1]
    assert row[report.SUMMARY_HEADER.index("end-to-end")] == "0.012x"
    assert row[report.SUMMARY_HEADER.index("speed-up")] == "10.00x"
