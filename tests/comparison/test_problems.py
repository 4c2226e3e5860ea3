"""Speed-ups only between runs of the same problem; runs grouped by problem; simulated devices said."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.config import DataSpec, RunConfig
from som_studio.report import compare
from som_studio.session.session import Session, run_to_completion


def _run(impl: str, **kw):
    kw.setdefault("data", DataSpec(samples=40))
    cfg = RunConfig(impl=impl, width=kw.pop("width", 8), height=kw.pop("height", 5), epochs=3, seed=1, **kw)
    record = run_to_completion(Session(cfg, quality_points=0))
    assert record.status == "ok", record.message
    return record


@pytest.fixture(scope="module")
def iris_like(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "iris.csv"
    rows = np.random.default_rng(0).uniform(size=(30, 4))
    path.write_text("a,b,c,d\n" + "\n".join(",".join(f"{v:.3f}" for v in r) for r in rows) + "\n")
    return str(path)


def _cell(comparison, name: str, column: str = "speed-up") -> str:
    names = [r.name for r in comparison.runs]
    return comparison.summary_rows()[names.index(name)][comparison.SUMMARY_HEADER.index(column)]


def test_runs_of_different_problems_have_no_speed_up_and_group_by_problem(iris_like) -> None:
    colour_np = _run("numpy-batch", width=24, height=13)
    iris_jax = _run("jax-vmap-batch", data=DataSpec(path=iris_like), width=12, height=8)
    colour_jax = _run("jax-vmap-batch", width=24, height=13)
    comparison = compare([colour_np, iris_jax, colour_jax])
    names = [r.name for r in comparison.runs]
    # Grouped: both colour runs side by side, the iris run after them.
    assert [r.record.config["grid"] for r in comparison.runs] == [[24, 13], [24, 13], [12, 8]]
    assert _cell(comparison, names[0]) == "baseline"
    assert _cell(comparison, names[1]).endswith("x")  # against the NumPy run of its own problem
    assert _cell(comparison, names[2]) == "n/a: different problem"
    texts = [f.text for f in comparison.flags]
    assert any("they solve 2 different problems" in t for t in texts)
    problems = [t for t in texts if t.startswith("problem ")]
    assert len(problems) == 2
    assert problems[0].startswith("problem 1: random colours (40 x 3), grid 24 x 13 (rect): ")
    assert problems[1].startswith(f"problem 2: {iris_like} (30 x 4), grid 12 x 8 (rect): ")
    assert all(len(t) < 300 for t in texts)  # a list of short items, not one run-on paragraph


def test_a_lone_run_on_each_of_two_problems_reads_not_applicable(iris_like) -> None:
    iris = _run("numpy-batch", data=DataSpec(path=iris_like), width=12, height=8)
    colour = _run("jax-vmap-batch", width=24, height=13)
    comparison = compare([iris, colour])
    assert [_cell(comparison, r.name) for r in comparison.runs] == ["n/a: different problem"] * 2
    assert comparison.speedup == [None, None]


@pytest.mark.test_devices
def test_runs_on_simulated_devices_say_they_share_the_cores() -> None:
    np_run = _run("numpy-batch")
    sharded = _run("jax-shardmap-batch", layout="2x1")
    comparison = compare([np_run, sharded])
    cell = _cell(comparison, "jax-shardmap-batch")
    cores = sharded.env["cpu_count"]
    assert cell.endswith(f"x (2 simulated devices share {cores} cores)")
    assert any("share the machine's cores" in f.text for f in comparison.flags)
    from som_studio.commands.bench import format_table

    assert f"(2 simulated devices share {cores} cores)" in format_table([np_run, sharded])


def test_a_neighbourhood_that_grows_is_noted_and_the_defaults_are_not() -> None:
    grows = _run("numpy-batch", sigma_start=(0.5, 0.5), sigma_end=(2.0, 1.0))
    shrinks = _run("numpy-batch")
    texts = [f.text for f in compare([grows]).flags]
    assert any("neighbourhood grows during training (radius 0.5 to 2x1)" in t for t in texts), texts
    assert not any("grows" in f.text for f in compare([shrinks]).flags)


def test_features_far_apart_unscaled_are_noted_and_scaled_ones_are_not(tmp_path) -> None:
    # wine's proline spans 1,400, its hue 1: unscaled, a map of it is a map of proline. The app's form said so;
    # bench and compare did not.
    path = tmp_path / "wide.csv"
    rows = np.random.default_rng(0).uniform(size=(30, 3)) * [1.0, 10.0, 2500.0]
    path.write_text("a,b,c\n" + "\n".join(",".join(f"{v:.4f}" for v in r) for r in rows) + "\n")
    unscaled = _run("numpy-batch", data=DataSpec(path=str(path)))
    texts = [f.text for f in compare([unscaled]).flags]
    assert any("ranges differ up to" in t and "scaling zscore gives every feature" in t for t in texts), texts
    assert any("the widest feature, 'c', shapes the map alone" in t for t in texts), texts
    scaled = _run("numpy-batch", data=DataSpec(path=str(path)), scaling="zscore")
    assert not any("ranges differ" in f.text for f in compare([scaled]).flags)
    assert not any("ranges differ" in f.text for f in compare([_run("numpy-batch")]).flags)  # random colours


def test_a_table_with_fewer_rows_than_units_is_noted_and_random_colours_are_not(tmp_path) -> None:
    path = tmp_path / "few.csv"
    rows = np.random.default_rng(0).uniform(size=(3, 2))
    path.write_text("a,b\n" + "\n".join(",".join(f"{v:.4f}" for v in r) for r in rows) + "\n")
    few = _run("numpy-batch", data=DataSpec(path=str(path)), width=8, height=5)
    also = _run("jax-vmap-batch", data=DataSpec(path=str(path)), width=8, height=5)
    texts = [f.text for f in compare([few, also]).flags if "win no row" in f.text]
    assert texts == [
        "numpy-batch, jax-vmap-batch: 3 rows for a map of 40 units: most units win no row, and the map shows the "
        "neighbourhood's spread more than the data; about 9 units (5 √rows, a common rule) suit it"
    ]
    fits = _run("numpy-batch", data=DataSpec(path=str(path)), width=1, height=3)
    assert not any("win no row" in f.text for f in compare([fits]).flags)
    # The playbook's picture: 40 colours over 40 units and more, on purpose.
    assert not any("win no row" in f.text for f in compare([_run("numpy-batch", width=24, height=13)]).flags)


def test_rows_without_a_label_are_noted_beside_the_purity_that_leaves_them_out(tmp_path) -> None:
    path = tmp_path / "labels.csv"
    rows = np.random.default_rng(0).uniform(size=(30, 2))
    kinds = ["" if i % 10 == 0 else "ab"[i % 2] for i in range(30)]
    path.write_text("a,b,kind\n" + "\n".join(f"{r[0]:.3f},{r[1]:.3f},{k}" for r, k in zip(rows, kinds)) + "\n")
    record = _run("numpy-batch", data=DataSpec(path=str(path)), labels="kind", width=3, height=2)
    assert record.extra["unlabelled"] == 3
    texts = [f.text for f in compare([record]).flags]
    assert "numpy-batch's label purity leaves out the 3 rows without a label" in texts, texts


def test_a_peak_memory_below_a_mebibyte_reads_so_and_the_report_says_what_that_means() -> None:
    import json

    from som_studio.comparison.summary import text_table
    from som_studio.report.html import report_html
    from som_studio.session.record import runs_document

    record = _run("numpy-batch")
    record.peak_bytes = 0  # the run fit in memory the process already held

    def cell(comparison) -> str:
        return _cell(comparison, "numpy-batch", "peak memory")

    comparison = compare([record])
    assert cell(comparison) == "< 1 MiB"
    assert "< 1 MiB" in "\n".join(text_table(comparison.runs, comparison.verdict))
    html = report_html(comparison, {})
    assert "It reads <b>&lt; 1 MiB</b> where it grew by less" in html and "0 B" not in html
    assert json.loads(json.dumps(runs_document([record])))["runs"][0]["memory"]["peak_bytes"] == 0
    record.peak_bytes = 5 << 20
    assert cell(compare([record])) == "5.0 MiB"
