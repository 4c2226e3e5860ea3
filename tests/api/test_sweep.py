"""som_studio.sweep and `som-studio sweep`: every combination as one batched program, rows that runs reproduce."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import numpy as np
import pytest

import som_studio
from som_studio import cli
from som_studio import config as cfgmod
from som_studio.sweeps import varied_settings

IRIS = Path(__file__).resolve().parents[2] / "resources" / "data" / "iris.csv"
MAP = dict(labels="species", grid="6x4", topology="hex", scaling="zscore", epochs=12)


@pytest.fixture(scope="module")
def rows():
    # 5 combinations: on the tests' 8 fake CPU devices, one map per device
    return som_studio.sweep(IRIS, vary={"sigma_end": [0.5, "1x0.6", 2, 0.8, 1.5]}, init="random", seed=4, **MAP)


def test_the_varied_settings_are_the_declared_ones():
    assert varied_settings() == tuple(s.name for s in cfgmod.SETTINGS if s.sweep)
    assert set(varied_settings()) == {"sigma_start", "sigma_end", "seed"}


def test_every_row_is_the_map_a_fused_batch_run_trains(rows):
    assert len(rows) == 5
    assert [r["settings"] for r in rows] == [
        {"sigma_end": 0.5}, {"sigma_end": [1.0, 0.6]}, {"sigma_end": 2.0}, {"sigma_end": 0.8}, {"sigma_end": 1.5}
    ]  # fmt: skip
    for i in (0, 1, 4):
        end = rows[i]["settings"]["sigma_end"]
        run = som_studio.train(IRIS, impl="jax-fused-batch", sigma_end=end, init="random", seed=4, **MAP)
        assert rows[i]["qe"] == pytest.approx(run.record["quality"]["qe"], rel=1e-3)
        assert rows[i]["te"] == pytest.approx(run.record["quality"]["te"], abs=0.02)
        assert rows[i]["label_purity"] == pytest.approx(run.record["quality"]["label_purity"], abs=0.02)
        kept = rows.run(i)
        np.testing.assert_allclose(kept.codebook, run.codebook, rtol=1e-3, atol=1e-4)
        assert kept.record["quality"]["qe"] == rows[i]["qe"]
    assert rows.timings["wall_s"] > 0 and rows.timings["per_epoch_s"] > 0
    frame = rows.to_pandas()
    assert list(frame.columns) == ["sigma_end", "qe", "te", "label_purity"]


def test_an_arrays_values_are_swept_as_a_lists_and_progress_shows_a_bar(capsys):
    """np.linspace's values were read as one radius ('0.5,1.0,...'); progress=True was dropped without a word."""
    data = np.random.default_rng(0).random((60, 3))
    got = som_studio.sweep(data, vary={"sigma_end": np.linspace(0.5, 2, 4)}, grid="4x3", epochs=3, progress=True)
    assert [r["settings"] for r in got] == [{"sigma_end": v} for v in (0.5, 1.0, 1.5, 2.0)]
    pytest.importorskip("tqdm")
    assert "3/3" in capsys.readouterr().err


def test_a_sweep_shows_its_rows_in_a_notebook_with_the_frontier_in_bold(rows):
    html = rows._repr_html_()  # was only its repr, '<SweepResult: 5 maps, 1.18 s>'
    assert html.count("<tr") == 1 + len(rows) and html.count("font-weight:bold") == len(rows.frontier())
    assert "<th>sigma_end</th>" in html and f"{rows[0]['qe']:.4g}" in html and "5 maps trained together" in html
    assert "<td>1x0.6</td>" in html


def test_the_combinations_are_sharded_over_the_devices(rows):
    from som_studio.core import jax_runtime
    from som_studio.session.sweep import spread

    assert rows.devices == min(5, jax_runtime.jax().device_count())
    assert spread(10, 8) == 5 and spread(16, 8) == 8 and spread(11, 8) == 6 and spread(3, 1) == 1
    # 11 on 8: two maps a device either way; 6 devices pad one map, 8 would pad five


def test_the_frontier_is_the_rows_nothing_beats(rows):
    front = rows.frontier()
    for i in front:
        assert not any(r["qe"] < rows[i]["qe"] and r["te"] < rows[i]["te"] for r in rows)


@pytest.mark.parametrize(
    ("vary", "words"),
    [
        ({"lr_start": [0.1, 0.5]}, r"vary: lr_start cannot vary in a sweep .*; it varies sigma_start, sigma_end, seed"),
        ({"grid": ["4x4"]}, r"grid cannot vary"),
        ({}, r"a sweep needs at least one varied setting"),
        ({"seed": []}, r"seed: a sweep with no value of seed has no combination"),
        ({"sigma_end": [-1]}, r"sigma_end: radii must be finite and > 0"),
        ({"seed": [3, 1, 3]}, r"vary: seed: 3 is given twice"),  # two maps alike
    ],
)
def test_bad_sweeps_are_refused_by_name(vary, words):
    with pytest.raises(ValueError, match=words) as err:
        som_studio.sweep(IRIS, vary=vary, **MAP)
    assert [f.name for f in traceback.extract_tb(err.value.__traceback__)][1:] == ["sweep"]


def test_values_as_a_string_are_read_as_vary_reads_them():
    # "0.5,1" trained one map, of radius 0.5 along x and 1 along y, where --vary sigma_end=0.5,1 trains two.
    rows = som_studio.sweep(IRIS, vary={"sigma_end": "0.5,1x0.6"}, **MAP)
    assert [r["settings"]["sigma_end"] for r in rows] == [0.5, [1.0, 0.6]]


def test_the_commands_data_warnings_are_the_command_lines(tmp_path, capsys):
    # They came as Python warnings naming the API's keywords: "... carry it with id_column=sample_id".
    table = tmp_path / "ids.csv"
    lines = IRIS.read_text().splitlines()
    table.write_text("\n".join([f"sample_id,{lines[0]}"] + [f"{i},{line}" for i, line in enumerate(lines[1:])]) + "\n")
    argv = ["sweep", "--data", str(table), "--labels", "species", "--grid", "4x3", "--epochs", "2"]
    assert cli.main([*argv, "--vary", "seed=0,1", "-q"]) == 0
    err = capsys.readouterr().err
    assert "warning: " in err and "--id sample_id" in err and "id_column=" not in err and "DataNote" not in err


def test_the_command_writes_rows_report_and_runs(tmp_path, capsys):
    argv = ["sweep", "--data", str(IRIS), "--labels", "species", "--grid", "5x4", "--epochs", "6"]
    argv += ["--vary", "sigma_end=0.5,1x0.6", "--vary", "seed=0,1", "--json", str(tmp_path / "s.json")]
    argv += ["--report", str(tmp_path / "s.html"), "--save-runs", str(tmp_path / "runs")]
    assert cli.main(argv) == 0
    out, err = capsys.readouterr()
    assert "sigma_end" in out and "frontier" in out
    assert "the seed does not change these maps" in err  # init pca
    doc = json.loads((tmp_path / "s.json").read_text())
    assert doc["schema_version"] == 1 and len(doc["rows"]) == 4
    assert doc["rows"][2]["settings"] == {"sigma_end": [1.0, 0.6], "seed": 0}
    assert set(doc["rows"][0]) == {"settings", "qe", "te", "label_purity"}
    assert set(doc["timings"]) >= {"wall_s", "per_epoch_s"}
    assert "\n1x0.6 " in out and "[1.0, 0.6]" not in out  # a radius per axis as typed, in every view
    html = (tmp_path / "s.html").read_text()
    assert "<svg" in html and "<td>1x0.6</td>" in html and "sigma_end 1x0.6, seed 0: QE" in html
    assert "[1.0, 0.6]" not in html
    # What the maps share, for a reader of the report alone: the data, its size, the settings not varied.
    assert f"<td>{IRIS}</td>" in html and "<td>150 x 4</td>" in html and "<th>epochs</th><td>6</td>" in html
    assert "<th>sigma.start</th>" in html and "<th>sigma.end</th>" not in html and "<th>seed</th><td>" not in html
    saved = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert saved[0] == "sigma_end-0.5_seed-0.somrun" and len(saved) == 4
    run = som_studio.load_run(tmp_path / "runs" / "sigma_end-1x0.6_seed-1.somrun")
    assert run.record["quality"]["qe"] == pytest.approx(doc["rows"][3]["qe"])


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--vary", "lr_end=0.1"], "--vary: lr_end cannot vary in a sweep"),
        (["--vary", "sigma_end"], "--vary: expected KEY=V1,V2"),
        ([], "--vary: a sweep needs at least one --vary"),
        (["--vary", "seed=a"], "--vary: seed: expected a whole number"),
        # Radii per axis in --vary: the comma separates values, so the words say 1x0.5, not X,Y.
        (["--vary", "sigma_end=a,b"], "--vary: sigma_end: expected a radius or radii per axis such as 1x0.5"),
        (["--vary", "sigma_end=1", "--sigma-end", "2"], "--sigma-end is given and varied"),
        (["--vary", "sigma_end=1,1x1"], "--vary: sigma_end: 1x1 is given twice"),  # as typed, read alike
        # Refused before the data are read (a text column unlabelled would be refused there).
        (["--vary", "sigma_end=-1,1"], "--vary: sigma_end: radii must be finite and > 0"),
        (["--vary", "seed=-1"], "--vary: seed: "),
        # Taken silently, it was recorded as the layout that ran.
        (["--labels", "species", "--vary", "seed=0,1", "--layout", "2x2"], "--layout: a sweep spreads its maps"),
        # Read by online runs only: taken silently, they changed nothing.
        (["--vary", "seed=0,1", "--lr-start", "0.3"], "--lr-start: a sweep trains in batch epochs, which have no"),
        (["--vary", "seed=0,1", "--stream"], "--stream: a sweep trains its maps together on data held in memory"),
    ],
)
def test_the_command_refuses_bad_vary(extra, words, capsys):
    assert cli.main(["sweep", "--data", str(IRIS), "--grid", "4x3", *extra]) == 2
    assert words in capsys.readouterr().err


def test_the_commands_help_lists_only_what_a_sweep_takes(capsys):
    from som_studio.commands.sweep import NOT_TAKEN

    with pytest.raises(SystemExit):
        cli.main(["sweep", "--help"])
    shown = capsys.readouterr().out
    assert "--epochs" in shown and "--sigma-end" in shown
    assert not any(f"--{name.replace('_', '-')} " in shown for name in NOT_TAKEN)


def test_a_sweep_with_missing_values_agrees_with_its_run():
    rng = np.random.default_rng(0)
    X = rng.random((100, 4))
    X[::7, 2] = np.nan  # missing values: the epoch's known-feature path
    rows = som_studio.sweep(X, vary={"sigma_end": [0.5, 1]}, grid="5x4", epochs=10)
    run = som_studio.train(X, sigma_end=1, grid="5x4", epochs=10)
    assert rows[1]["qe"] == pytest.approx(run.record["quality"]["qe"], rel=1e-3)
    assert rows[0]["label_purity"] is None


def _sweep_session(**options):
    from som_studio.api import prepare
    from som_studio.session.session import Session
    from som_studio.sweeps import combinations

    prepared = prepare(IRIS, {"impl": "jax-fused-batch", "labels": "species", "grid": "5x4", "epochs": 8})
    combos = combinations({"sigma_end": [0.5, 1.0], "seed": [0, 1]})
    return Session(prepared.config, data=prepared.table, sweep=combos, snapshot_interval_s=None, **options), combos


def test_a_sweep_is_a_session_whose_combinations_come_as_typed_events_before_finished():
    from som_studio.core import jax_runtime
    from som_studio.session.events import ChunkTimed, CombinationTrained, Compiled, Finished, QualityMeasured
    from som_studio.session.sweep import spread

    session, _ = _sweep_session()
    events = list(session.run())
    names = [type(ev).__name__ for ev in events]
    assert names[-1] == "Finished" and names[-5:-1] == ["CombinationTrained"] * 4
    assert any(isinstance(ev, Compiled) for ev in events) and any(isinstance(ev, ChunkTimed) for ev in events)
    assert not any(isinstance(ev, QualityMeasured) for ev in events)  # each map's quality is its record's
    done = [ev for ev in events if isinstance(ev, CombinationTrained)]
    assert [ev.index for ev in done] == [0, 1, 2, 3] and all(ev.map.shape == (4, 5, 4) for ev in done)
    record = events[-1].record
    assert isinstance(events[-1], Finished) and record.status == "ok" and record.impl == "jax-fused-batch"
    assert sum(c.count for c in record.chunks) == 8
    rows = record.extra["sweep"]["rows"]
    assert [r["settings"] for r in rows] == [ev.record.extra["sweep"]["settings"] for ev in done]
    assert [r["qe"] for r in rows] == [ev.record.qe for ev in done]
    # the maps spread over the devices there are (4 simulated CPU devices of the 8, one GPU's 1)
    devices = spread(4, jax_runtime.jax().device_count())
    assert record.extra["sweep"]["combinations"] == 4 and record.extra["sweep"]["devices"] == devices
    assert len({round(r["qe"], 6) for r in rows}) >= 2  # the radii make different maps


def test_a_cancelled_sweep_stops_between_chunks_and_keeps_no_map():
    from som_studio.session.events import CombinationTrained, Compiled, Finished

    session, _ = _sweep_session()
    events = []
    for ev in session.run():
        events.append(ev)
        if isinstance(ev, Compiled):
            session.cancel()
    assert isinstance(events[-1], Finished) and events[-1].record.status == "cancelled"
    assert not any(isinstance(ev, CombinationTrained) for ev in events)
    assert events[-1].record.extra["sweep"]["rows"] == []


def test_the_memory_check_counts_every_combination():
    from som_studio.config import RunConfig
    from som_studio.core.impls import registry
    from som_studio.session.preflight import Devices, memory_need, preflight

    cfg = RunConfig(impl="jax-fused-batch", width=40, height=30, epochs=10)
    impl = registry.get(cfg.impl)
    one = memory_need(impl, cfg, 20_000, 8)[0]
    eight = memory_need(impl, cfg, 20_000, 8, Devices(count=1, backend="cpu"), maps=8)[0]
    spread = memory_need(impl, cfg, 20_000, 8, Devices(count=8, backend="cpu"), maps=8)[0]
    assert one < spread < eight
    device = Devices(count=1, backend="cpu", memory=((one + eight) // 2, "test memory"))
    assert preflight(cfg, data_shape=(20_000, 8), devices=device) == []
    (refusal,) = preflight(cfg, data_shape=(20_000, 8), devices=device, maps=8)
    assert refusal.field == "memory" and "a sweep of 8 maps with jax-fused-batch" in refusal.reason


def test_a_sweep_too_big_for_memory_is_refused_by_name():
    with pytest.raises(ValueError, match=r"memory: a sweep of 400 maps with jax-fused-batch on a 3000x3000 map"):
        som_studio.sweep(IRIS, vary={"seed": range(400)}, labels="species", grid="3000x3000", epochs=2, init="random")


def test_a_sweeps_purity_leaves_out_rows_without_a_label_and_says_how_many(tmp_path):
    lines = IRIS.read_text().splitlines()
    cut = [lines[0]] + [line.rsplit(",", 1)[0] + "," if i % 10 == 0 else line for i, line in enumerate(lines[1:])]
    data = tmp_path / "unlabelled.csv"
    data.write_text("\n".join(cut) + "\n")
    rows = som_studio.sweep(data, vary={"seed": [1, 2]}, init="random", **MAP)
    assert "label purity leaves out the 15 rows without a label" in rows.notes
    kinds = np.array([line.rsplit(",", 1)[1] for line in lines[1:]])
    labelled = np.arange(150) % 10 != 0
    for i, row in enumerate(rows):
        own = rows.run(i).project(data).label == kinds  # each row's unit's majority label
        assert row["label_purity"] == pytest.approx(np.mean(own[labelled]))
