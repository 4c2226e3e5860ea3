"""The report's content (Qt-free): speed-up baselines, flags, configurations, CSV, HTML."""

from __future__ import annotations

import base64
import csv
import io
import json
from html.parser import HTMLParser

import numpy as np
import pytest

from som_studio.comparison.rules import config_differences
from som_studio.comparison.words import format_seconds
from som_studio.config import DataSpec, RunConfig
from som_studio.report.content import build_report
from som_studio.report.html import report_html
from som_studio.report.tables import CSV_COLUMNS, chunks_csv
from som_studio.session.record import Chunk, RunRecord, runs_document
from som_studio.session.session import Session
from som_studio.session.timing import nothing_compiled
from som_studio.storage import RunRecorder as RunCapture
from som_studio.storage.runfile import StoredRun


@pytest.fixture(scope="module")
def captures() -> list[RunCapture]:
    """Real runs of the same small SOM: JAX listed before NumPy, so the default baseline is not just 'the first'."""
    base = RunConfig(width=10, height=7, data=DataSpec(samples=80), seed=5, epochs=4)
    out = []
    for impl in ("jax-vmap-batch", "numpy-batch"):
        cap = RunCapture.new()
        cap.feed_all(Session(base.replace(impl=impl), quality_points=4, quality_share=None).run())
        assert cap.record is not None and cap.record.status == "ok", cap.record and cap.record.message
        out.append(cap)
    return out


def _record(name: str, kind: str = "batch", seconds=(0.01,) * 8, **kw) -> RunRecord:
    cfg = {
        "impl": name,
        "grid": [10, 7],
        "data": {"source": "random", "samples": 80},
        "seed": 5,
        ("epochs" if kind == "batch" else "steps"): len(seconds),
    }
    cfg.update(kw.pop("config", {}))
    chunks = [Chunk(i, 1, s) for i, s in enumerate(seconds)]
    return RunRecord(
        impl=name,
        kind=kind,
        config=cfg,
        status=kw.pop("status", "ok"),
        chunks=chunks,
        total_s=sum(seconds),
        samples=80,
        **kw,
    )


def test_default_baseline_is_the_numpy_run_of_the_kind(captures) -> None:
    report = build_report(captures)
    assert [r.name for r in report.runs] == ["jax-vmap-batch", "numpy-batch"]
    assert report.baseline_of == ["numpy-batch", "numpy-batch"]
    jax_rec, np_rec = (c.record for c in captures)
    assert report.speedup[1] == pytest.approx(1.0)
    assert report.speedup[0] == pytest.approx(np_rec.median_s / jax_rec.median_s)
    rows = report.summary_rows()
    assert rows[1][report.SUMMARY_HEADER.index("speed-up")] == "baseline"


def test_explicit_baseline(captures) -> None:
    report = build_report(captures, baseline="jax-vmap-batch")
    assert report.baseline_of == ["jax-vmap-batch", "jax-vmap-batch"]
    jax_rec, np_rec = (c.record for c in captures)
    assert report.speedup[1] == pytest.approx(jax_rec.median_s / np_rec.median_s)
    with pytest.raises(ValueError, match="not among the runs"):
        build_report(captures, baseline="numpy-online")


def test_baselines_stay_within_a_kind() -> None:
    recs = [
        _record("jax-jit-online", "online", (1e-4,) * 6),
        _record("numpy-batch", "batch", (0.02,) * 6),
        _record("numpy-online", "online", (4e-4,) * 6),
    ]
    report = build_report(recs)
    assert report.baseline_of == ["numpy-online", "numpy-batch", "numpy-online"]
    assert report.speedup == pytest.approx([4.0, 1.0, 1.0])
    assert report.progress_axis  # mixed kinds: curves share a progress axis
    assert any("online and batch" in f.text for f in report.flags)


def test_steady_identical_runs_raise_no_flag(captures) -> None:
    recs = [_record("numpy-batch"), _record("jax-vmap-batch", compiles=2, warmup_compiles=2)]
    assert build_report(recs).flags == []


def test_flags_recompile_noise_failure_and_config_difference() -> None:
    recs = [
        _record("numpy-batch"),
        _record("jax-vmap-batch", compiles=5, warmup_compiles=2),
        _record("jax-jit-online", "online", (1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 1e-4, 9e-4, 9e-4)),
        _record("numpy-online", "online", (), status="failed", message="memory: too big", config={"steps": 10}),
        _record("jax-naive-online", "online", (1e-3,) * 10, config={"grid": [20, 7], "seed": 6}),
    ]
    report = build_report(recs)
    text = "\n".join(f.text for f in report.flags)
    assert "jax-vmap-batch compiled 3 more times after warm-up" in text
    assert "jax-jit-online has noisy iterations" in text
    assert "numpy-online failed: memory: too big" in text
    assert set(report.config_diffs) == {"grid", "seed"}  # not impl, not steps vs epochs across kinds
    assert report.config_diffs["grid"]["jax-naive-online"] == "20 x 7"
    assert "configurations differ: they solve 2 different problems" in text  # a list, one item a line:
    assert "configurations differ in Seed: numpy-batch" in text  # the setting as the window names it
    assert not any(f.run == "numpy-batch" for f in report.flags)


def test_steps_differ_within_a_kind() -> None:
    recs = [_record("numpy-online", "online", (1e-4,) * 5), _record("jax-jit-online", "online", (1e-4,) * 7)]
    diffs = config_differences([StoredRun(r) for r in recs])
    assert diffs == {"steps": {"numpy-online": "5", "jax-jit-online": "7"}}


def test_csv_round_trips_to_the_json_numbers(captures) -> None:
    records = [c.record for c in captures]
    doc = json.loads(json.dumps(runs_document(records)))
    rows = list(csv.DictReader(io.StringIO(chunks_csv(records))))
    assert tuple(rows[0]) == CSV_COLUMNS
    for run in doc["runs"]:
        mine = [r for r in rows if r["impl"] == run["impl"]]
        chunks = run["timings"]["chunks"]
        assert len(mine) == len(chunks) > 0
        for i, (row, c) in enumerate(zip(mine, chunks)):
            assert int(row["chunk"]) == i
            assert (int(row["first"]), int(row["count"]), float(row["seconds"])) == (
                c["first"],
                c["count"],
                c["seconds"],
            )
            assert float(row["iteration_s"]) == run["timings"]["iteration_s"][i]
            assert float(row["compile_s"]) == run["timings"]["compile_s"]
            assert row["status"] == run["status"] and row["kind"] == run["kind"]


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.images: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        elif tag not in ("meta", "br"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def test_html_parses_and_holds_every_runs_figures(captures) -> None:
    from PIL import Image

    report = build_report(captures)
    png = io.BytesIO()
    Image.new("RGB", (4, 3), (10, 20, 30)).save(png, format="PNG")
    charts = {"maps": png.getvalue(), "timing": png.getvalue(), "quality": None}
    page = report_html(report, charts)
    parser = _Collect()
    parser.feed(page)
    parser.close()
    assert parser.stack == []  # every element closed, in order
    text = " ".join(parser.text)
    for run in report.runs:
        r = run.record
        for figure in (
            run.name,
            format_seconds(r.median_s),
            format_seconds(r.p95_s),
            "-" if nothing_compiled(r.compile_s, r.warmup_compiles) else format_seconds(r.compile_s),
            f"{r.qe:.4f}",
            f"{r.te:.3f}",
        ):
            assert figure in text, figure
    assert "Time per iteration" in text and "compile" in text and "p95" in text
    # Every figure of the summary is said, end-to-end too: it counts compile and training (not the initial map,
    # which total counts), and read against total it seemed wrong.
    assert "is the baseline's compile and training over the run's (the initial map" in page
    assert "is the whole training, the initial map and the compile included" in page
    assert len(parser.images) == 2  # the quality chart was not drawn: no broken image
    for src in parser.images:
        head, data = src.split(",", 1)
        assert head == "data:image/png;base64"
        assert Image.open(io.BytesIO(base64.b64decode(data))).size == (4, 3)
    assert "(chart not drawn)" in text
    # environment and configuration are there
    assert r.env["numpy"] in text and "XLA_FLAGS" in text and "sigma.start" in text


def test_report_of_bare_records_from_json(captures) -> None:
    """A report can be made again from a saved JSON document (no maps then)."""
    doc = json.loads(json.dumps(runs_document([c.record for c in captures])))
    records = [RunRecord.from_dict(d) for d in doc["runs"]]
    report = build_report(records)
    assert [r.name for r in report.runs] == ["jax-vmap-batch", "numpy-batch"]
    assert report.summary_rows() == build_report(captures).summary_rows()
    assert all(r.final_image is None for r in report.runs)


def test_timing_series_are_the_chunks(captures) -> None:
    report = build_report(captures)
    (series, compile_s), _ = report.timing_series()
    rec = captures[0].record
    assert compile_s == rec.compile_s
    assert series.x.tolist() == [c.first for c in rec.chunks] + [rec.iterations_done]
    np.testing.assert_array_equal(series.y, rec.iteration_s)
    qe = report.quality_series("qe")[1]
    assert qe.y.tolist() == [h["qe"] for h in captures[1].record.history]


def test_older_records_without_warmup_compiles_are_not_flagged() -> None:
    d = _record("jax-vmap-batch", compiles=3, warmup_compiles=3).to_dict()
    del d["timings"]["warmup_compiles"]
    old = RunRecord.from_dict(d)
    assert old.recompiles == 0
    assert RunRecord.from_dict(_record("jax-vmap-batch", compiles=3, warmup_compiles=1).to_dict()).recompiles == 2


def test_sessions_count_warmup_compiles_apart(captures) -> None:
    rec = captures[0].record  # jax-vmap-batch: everything compiles in warm-up, nothing after
    assert rec.warmup_compiles == rec.compiles
    assert rec.recompiles == 0
    assert RunRecord.from_dict(rec.to_dict()).warmup_compiles == rec.warmup_compiles


def test_a_run_stopped_before_it_started(captures) -> None:
    """The app's record of a run killed while starting has no kind, no chunks and no map."""
    stopped = RunRecord(
        impl="jax-jit-online",
        kind="?",
        config={"impl": "jax-jit-online"},
        status="cancelled",
        message="stopped while starting",
    )
    report = build_report([captures[1], stopped])
    assert report.speedup[1] is None and not report.progress_axis
    assert report.summary_rows()[1][2] == "cancelled"
    assert report_html(report, {})  # renders


def test_runs_that_never_started_are_grouped_by_their_configs_kind() -> None:
    online = RunRecord(impl="numpy-online", kind="?", config={"impl": "numpy-online", "steps": 500}, status="failed")
    batch = RunRecord(impl="numpy-batch", kind="?", config={"impl": "numpy-batch", "epochs": 5}, status="failed")
    report = build_report([online, batch])
    assert report.config_diffs == {}


def test_summary_shows_mean_end_to_end_and_where_a_run_pays_off() -> None:
    # NumPy: no compile, 10 ms per epoch; JAX: 0.3 s of compile, 1 ms per epoch; 100 epochs each.
    ref = _record("numpy-batch", seconds=(0.01,) * 100)
    fast = _record("jax-fused-batch", seconds=(0.001,) * 100, compile_s=0.3)
    fast.total_s += 0.3
    report = build_report([ref, fast])
    h = report.SUMMARY_HEADER
    row = report.summary_rows()[1]
    assert row[h.index("mean / it")] == format_seconds(fast.mean_s) == "1.00 ms"
    assert row[h.index("speed-up")] == "10.00x"
    assert row[h.index("end-to-end")] == "2.50x"  # 1.0 s against 0.4 s
    assert row[h.index("faster after")] == "34 it"  # 0.3 s of compile repaid at 9 ms per epoch
    assert report.summary_rows()[0][h.index("faster after")] == "-"  # the baseline
    # A cancelled run has a speed-up from what it timed, but no whole time to pay off: "-", not "never".
    fast.status = "cancelled"
    row = build_report([ref, fast]).summary_rows()[1]
    assert row[h.index("speed-up")] == "10.00x" and row[h.index("faster after")] == "-"


def test_end_to_end_and_where_a_run_pays_off_count_the_same_seconds() -> None:
    # As the app recorded them: NumPy's initial map 0.61 s (the same work for every rung, on the host), JAX's
    # 0.18 s; 50 epochs, JAX 0.5 s of compile. Over the whole total_s JAX read 1.14x "end to end" while it pays
    # off only after 150 epochs: the initial map is not the implementation's, and is left out of both.
    ref = _record("numpy-batch", seconds=(0.0038,) * 50)
    ref.phases.update(init=0.61, train=0.19)
    ref.total_s = 0.61 + 0.19
    fast = _record("jax-fused-batch", seconds=(0.00046,) * 50, compile_s=0.5)
    fast.phases.update(init=0.18, train=0.023)
    fast.total_s = 0.18 + 0.5 + 0.023
    report = build_report([ref, fast])
    h = report.SUMMARY_HEADER
    row = report.summary_rows()[1]
    assert row[h.index("end-to-end")] == "0.36x"  # 0.19 s against 0.523 s
    assert row[h.index("faster after")] == "150 it"  # more than the 50 it ran: slower end to end, as it says


def test_env_table_states_the_precision_policy(captures) -> None:
    shared, _, _ = build_report(captures).env_table()
    assert dict(shared)["precision"].startswith("float32 products at lax.Precision.HIGHEST")


def test_a_run_whose_frames_for_the_app_cost_more_than_5_percent_is_flagged():
    watched = _record("jax-fused-batch", seconds=(0.25,) * 8, wall_s=2.5)  # 2 s of training
    watched.phases.update(train=2.0, frames=0.12)  # 6 %
    calm = _record("jax-scan-online", kind="online", seconds=(0.25,) * 8, wall_s=2.5)
    calm.phases.update(train=2.0, frames=0.04)  # 2 %: within the frames' budget
    flags = [f for f in build_report([watched, calm]).flags if "watched live" in f.text]
    assert [(f.level, f.run) for f in flags] == [("warning", "jax-fused-batch")]
    assert "cost 6% of its training time (120.00 ms)" in flags[0].text


def test_a_run_whose_training_is_under_80_percent_of_its_wall_time_says_where_the_rest_went():
    from som_studio.commands.bench import format_table

    slow = _record("jax-fused-batch", seconds=(0.25,) * 8, wall_s=10.0)
    slow.phases.update(data=0.5, compile=1.0, train=1.5, quality=6.0, model=0.4)
    fine = _record("numpy-batch", seconds=(1.125,) * 8, wall_s=10.0)
    report = build_report([slow, fine])
    notes = [f.text for f in report.flags if f.level == "note" and "the rest" in f.text]
    # The training's share is its phase's (1.5 s), not total_s (2 s, which holds the compile listed below):
    # the share and the parts add up to the wall time.
    assert len(notes) == 1 and notes[0].startswith("jax-fused-batch: training took 15% of 10.00 s")
    # Largest first; what no phase holds is "other" (10 - 1.5 - 7.9 s).
    assert notes[0].endswith(
        "quality 6.00 s, compiling (the training's and the quality pass's programs) 1.00 s, other 600.00 ms, "
        "reading data 500.00 ms, hits and labels 400.00 ms"
    )
    header = report.SUMMARY_HEADER
    assert report.summary_rows()[0][header.index("wall")] == format_seconds(10.0)
    table = format_table([slow, fine])
    assert "wall" in table.splitlines()[0] and notes[0].split(": ", 1)[1] in table


def test_a_numpy_runs_compile_is_named_as_its_quality_passs():
    # A streamed NumPy run spent 2.5 s "compiling (the training's and the quality pass's programs)": its training
    # compiles nothing; the quality pass's JAX programs did.
    slow = _record("numpy-online", "online", seconds=(0.01,) * 8, wall_s=3.0, env={"backend": "numpy"})
    slow.phases.update(compile=2.5, train=0.08)
    (note,) = [f.text for f in build_report([slow]).flags if "the rest" in f.text]
    assert "compiling (the quality pass's JAX programs) 2.50 s" in note and "training's" not in note


def test_a_pdf_s_configurations_hold_four_runs_a_table_and_break_a_long_path_after_its_separators() -> None:
    """Five runs' settings side by side ran past a landscape page's edge, a data path the widest cell."""
    path = "/home/someone/projects/cytometry/panel-2026/batch-07.csv"
    data = {"source": "file", "path": path, "scale": False}
    names = ["numpy-batch", "jax-vmap-batch", "jax-fused-batch", "jax-pmap-batch", "jax-shardmap-batch"]
    report = build_report([StoredRun(_record(n, config={"data": data}), name=n) for n in names])
    start = report_html(report, {}, for_qt=True).index("Configurations")
    pdf = report_html(report, {}, for_qt=True)[start:].split("<h2>")[0]
    assert pdf.count("<table") == 2  # four runs, then one
    assert path not in pdf and path.replace("/", "/\u200b") in pdf  # Qt may break it after a separator
    html = report_html(report, {})
    page = html[html.index("Configurations") :].split("<h2>")[0]
    assert page.count("<table") == 1 and path in page  # a browser's page keeps the path whole, as it is copied


def test_the_configurations_leave_out_the_older_scale_switch_where_no_run_set_it() -> None:
    """The older switch ("data.scale False") beside "scaling zscore" read as a contradiction; set, it stays."""
    data = {"source": "file", "path": "t.csv", "scale": False}
    plain = [StoredRun(_record(n, config={"data": data, "scaling": "zscore"}), name=n) for n in ("a", "b")]
    keys, _rows = build_report(plain).config_table()
    assert "data.scale" not in keys and "scaling" in keys and "data.path" in keys
    older = plain + [StoredRun(_record("c", config={"data": {**data, "scale": True}}), name="c")]
    assert "data.scale" in build_report(older).config_table()[0]


def test_the_configuration_reads_as_words_and_a_run_past_its_bandwidth_is_explained():
    from som_studio.report.inside import inside_rows, notes

    # "None" and "False" were Python's words in the report's configuration table.
    cfg = RunConfig(impl="numpy-batch", width=4, height=3, epochs=2, data=DataSpec(samples=30)).to_dict()
    a, b = _record("numpy-batch", config=cfg), _record("numpy-batch", config={**cfg, "toroid": True})
    keys, rows = build_report([StoredRun(a), StoredRun(b)]).config_table()
    values = {k: row for k, row in zip(keys, rows)}
    assert values["toroid"] == ["no", "yes"] and values["labels"] == ["none", "none"]
    assert not any(v in ("None", "True", "False") for row in rows for v in row)
    # Memory bound past the measured bandwidth (its bytes in the caches): marked and said why, not left at 146 %.
    a.extra["inside"] = {"fraction_of_ceiling": 1.458, "bound": "memory", "flops_source": "xla"}
    b.extra["inside"] = {"fraction_of_ceiling": 0.5, "bound": "memory", "flops_source": "xla"}
    a.extra["inside"]["bytes_per_iteration"], b.extra["inside"]["bytes_per_iteration"] = 620.0, 3450.0
    rows = inside_rows(["a", "b"], [a, b])
    assert "145.8% †" in rows[0] and "50.0%" in rows[1] and not any("†" in c for c in rows[1])
    assert "620 B" in rows[0] and "3.45 kB" in rows[1]  # it read 620B beside 3.45 kB
    assert any(
        n.startswith("† above its ceiling: the bytes it moves come from the caches") for n in notes(["a", "b"], [a, b])
    )
    assert not any(n.startswith("†") for n in notes(["b"], [b]))
