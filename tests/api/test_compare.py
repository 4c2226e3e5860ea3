"""som_studio.compare: implementations raced from Python as `som-studio compare` races them."""

from __future__ import annotations

import json

import numpy as np
import pytest

import som_studio
from tests.conftest import needs_qt

DATA = np.random.default_rng(0).random((60, 3))


@pytest.fixture(scope="module")
def race():
    # A batch and an online rung of each: each takes its own kind's count, the other one left out.
    impls = "numpy-batch,jax-fused-batch,numpy-online,jax-jit-online"
    return som_studio.compare(DATA, impl=impls, grid="5x4", epochs=4, steps=300, seed=2)


def test_each_implementation_trains_the_same_som_and_is_measured_against_its_kinds_reference(race):
    rows = {r["implementation"]: r for r in race.summary()}
    assert list(rows) == ["numpy-batch", "jax-fused-batch", "numpy-online", "jax-jit-online"]
    assert [r.record["config"].get("epochs") or r.record["config"].get("steps") for r in race.runs] == [4, 4, 300, 300]
    assert rows["numpy-batch"]["speed-up"] == 1.0 and rows["numpy-online"]["speed-up"] == 1.0
    assert rows["jax-fused-batch"]["speed-up"] > 0 and rows["jax-jit-online"]["speed-up"] > 0
    np.testing.assert_allclose(race.runs[0].codebook, race.runs[1].codebook, rtol=1e-4, atol=1e-5)
    assert race.to_pandas().loc["jax-fused-batch", "kind"] == "batch"
    assert "online and batch runs are both here" in " ".join(race.flags())
    html = race._repr_html_()
    assert html.count("<tr>") == 1 + 4 and "speed-up" in html


def test_it_saves_what_the_command_writes_and_never_over_a_file_unasked(race, tmp_path):
    doc = json.loads(race.save(tmp_path / "race.json").read_text())
    assert [r["impl"] for r in doc["runs"]] == ["numpy-batch", "jax-fused-batch", "numpy-online", "jax-jit-online"]
    assert race.save(tmp_path / "chunks.csv").read_text().startswith("impl,")
    with pytest.raises(FileExistsError, match=r"race.json: exists; pass force=True to overwrite it"):
        race.save(tmp_path / "race.json")
    with pytest.raises(ValueError, match=r"race.txt: a comparison is saved as .html, .pdf, .json, .csv"):
        race.save(tmp_path / "race.txt")
    with pytest.raises(ValueError, match=r"impl: a comparison needs two implementations or more"):
        som_studio.compare(DATA, impl="numpy-batch")


@needs_qt
def test_the_report_shows_each_runs_final_map(race, tmp_path):
    html = race.save(tmp_path / "race.html").read_text()
    assert "no map" not in html and html.count("data:image/png;base64,") >= 4


@pytest.mark.parametrize(
    ("impl", "counts", "words"),
    [
        (["numpy-online", "jax-scan-online"], dict(epochs=5), "epochs: applies to batch implementations and none"),
        (["numpy-batch", "jax-fused-batch"], dict(steps=50), "steps: applies to online implementations and none"),
    ],
)
def test_a_count_no_implementation_listed_takes_is_refused_not_dropped(impl, counts, words):
    # The online runs trained their default 50,000 steps where epochs=5 was asked, without a word.
    with pytest.raises(ValueError, match=words):
        som_studio.compare(DATA, impl=impl, grid="5x4", **counts)
