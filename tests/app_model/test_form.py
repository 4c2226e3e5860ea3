"""The configuration being edited, driven without Qt: fields, the config they make, and every refusal."""

from __future__ import annotations

import numpy as np
import pytest

from som_studio.app_model.form import DataKey, RunForm, read_data
from som_studio.config import DataSpec, RunConfig
from som_studio.session.preflight import CPU_DEVICES, Refusal


def small_form(**changes) -> RunForm:
    form = RunForm()
    form.edit(**{"impl": "numpy-batch", "grid": "12x9", "samples": 120, "iterations": 5, **changes})
    return form


def test_the_defaults_make_a_runnable_config():
    st = RunForm().state
    assert st.runnable and st.refusals == ()
    assert st.config is not None and st.config.grid == "240x135" and st.config.data == DataSpec()
    assert st.memory_text.startswith("Memory: about ")


def test_a_bad_grid_is_one_refusal_named_by_the_control():
    form = small_form()
    st = form.edit(grid="0x9")
    assert not st.runnable and st.config is None
    assert st.refusals == (Refusal("grid", "width and height must be positive, got 0x9"),)
    assert st.reason == "Grid: width and height must be positive, got 0x9"
    assert form.edit(grid="12x9").runnable


def test_seeds_beyond_a_spin_box_are_kept_exactly():
    form = small_form()
    assert form.edit(seed=str(2**40)).config.seed == 2**40  # a Qt spin box stops at 2^31 - 1
    st = form.edit(seed=str(2**63))
    assert st.refusals[0].field == "seed" and not st.runnable
    assert "below 2^63" in st.reason  # a whole number >= 0, which it is, is not the reason
    assert form.edit(seed="twelve").refusals[0].field == "seed"


def test_a_config_shown_is_the_config_run():
    # No round trip through widgets (or through short text): what is set is what runs.
    cfg = RunConfig(
        impl="numpy-online",
        width=17,
        height=5,
        data=DataSpec(samples=77),
        steps=123,
        sigma_start=(1.2345678901, 2.0),
        sigma_end=(0.3, 0.3),
        lr_start=0.123456789,
        lr_end=0.0123,
        seed=2**50 + 1,
        precision="float64",
    )
    form = RunForm()
    assert form.set_config(cfg).config == cfg
    assert form.fields.sigma_end == "0.3,0.3" and form.fields.seed == str(2**50 + 1)


def test_steps_and_epochs_follow_the_implementation_and_are_kept_per_kind():
    form = small_form()
    assert form.state.config.epochs == 5 and form.state.config.steps is None
    st = form.edit(impl="numpy-online")
    assert st.config.steps == form.fields.steps and st.config.epochs is None
    form.edit(iterations=777)
    assert form.edit(impl="numpy-batch").config.epochs == 5
    assert form.counts() == {"online": 777, "batch": 5}


def test_a_data_file_is_read_by_the_caller_and_its_answer_checked(tmp_path):
    good = tmp_path / "good.npy"
    np.save(good, np.random.default_rng(0).random((50, 5)))
    form = small_form()
    st = form.edit(file=True, path=str(good))
    # The form never reads a file itself: it says which one it needs (the app reads it off the GUI thread).
    assert st.data_needed == DataKey(str(good)) and not st.runnable and st.refusals[0].field == "data"
    st = form.data_read(st.data_needed, read_data(st.data_needed))
    assert st.runnable and (st.samples, st.features) == (50, 5) and st.data_text == "50 x 5 loaded"
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,x\n")
    st = form.edit(path=str(bad))
    st = form.data_read(st.data_needed, read_data(st.data_needed))
    assert st.refusals[0].field == "data" and "non-numeric value 'x'" in st.reason
    assert st.reason.startswith("Data: ")


def test_a_gzipd_data_file_reads_as_its_text(tmp_path):
    import gzip

    text = "a,b,c\n" + "".join(f"{i % 7},{i * 0.5},{i % 3}\n" for i in range(50))
    (tmp_path / "t.csv").write_text(text)
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress(text.encode()))
    plain, zipped = (read_data(DataKey(str(tmp_path / n))) for n in ("t.csv", "t.csv.gz"))
    assert zipped.error == "" and zipped.shape == plain.shape == (50, 3) and zipped.columns == plain.columns
    assert zipped.grids == plain.grids
    form = small_form()
    st = form.edit(file=True, path=str(tmp_path / "t.csv.gz"))
    st = form.data_read(st.data_needed, read_data(st.data_needed))
    assert st.runnable and (st.samples, st.features) == (50, 3), st.reason


def test_a_layout_beyond_the_simulated_devices_suggests_more():
    form = small_form()
    st = form.edit(impl="jax-shardmap-batch", layout="2x2", simulate=True, cpu_devices=3)
    (r,) = st.refusals
    assert r.field == "layout" and r.remedy == (CPU_DEVICES, 4)
    assert "needs 4 devices" in r.reason and "JAX sees 3 cpu devices" in r.reason
    assert st.reason == f"Layout: {r.reason}; simulate more with Layout's “simulate” box set to 4 CPU devices"
    assert "--cpu-devices" not in st.reason  # the app names its control, not the CLI's flag
    assert form.edit(cpu_devices=4).runnable


def test_a_remedy_is_named_by_the_apps_control_in_the_users_language():
    from som_studio import i18n

    form = small_form()
    i18n.install("ko")
    try:
        st = form.edit(impl="jax-shardmap-batch", layout="2x2", simulate=True, cpu_devices=3)
        (r,) = st.refusals
        assert r.remedy == (CPU_DEVICES, 4) and "--cpu-devices" not in r.reason
        assert (
            st.reason
            == f"장치 배치: {r.reason}; 가상 CPU 장치를 늘리세요: 장치 배치의 “가상” 상자를 CPU 장치 4개로 설정"
        )
    finally:
        i18n.install("en")


def test_the_app_renders_the_remedy_it_is_given_and_reads_no_words_back():
    from som_studio.app_model.form import app_text

    # A remedy is a value; words that merely look like one are a reason's own, shown as they are.
    assert app_text(Refusal("layout", "too few", (CPU_DEVICES, 8))) == (
        "Layout: too few; simulate more with Layout's “simulate” box set to 8 CPU devices"
    )
    assert app_text(Refusal("layout", "too few; simulate more with --cpu-devices 8")) == (
        "Layout: too few; simulate more with --cpu-devices 8"
    )


def test_devices_seen_hold_for_the_setting_they_were_seen_with():
    form = small_form(impl="jax-shardmap-batch", layout="2x1")
    form.set_devices({"backend": "cpu", "devices": [{"kind": "cpu"}]}, None)
    assert form.known_device_count() == 1
    assert form.state.refusals[0].field == "layout"  # one device seen, two needed
    form.edit(simulate=True, cpu_devices=2)
    assert form.state.runnable and form.known_device_count() is None and form.devices_info() is None
    # A kept run shown again (after a restart) describes the one device it had: not what these settings give.
    one = {"backend": "cpu", "devices": [{"kind": "cpu"}]}
    form.set_devices(one, None)
    assert form.devices_info() is None
    two = {"backend": "cpu", "devices": [{"kind": "cpu"}] * 2}
    form.set_devices(two, 2)
    assert form.devices_info() == (two, 2)


def test_missing_values_are_refused_once_by_the_preflight(tmp_path, register_impl):
    from som_studio.core.impls import registry
    from som_studio.session.preflight import preflight

    impl = register_impl("test-no-missing", registry.get("numpy-batch").factory)
    table = tmp_path / "holes.csv"
    table.write_text("a,b\n1,2\n3,\n5,6\n7,8\n")
    form = small_form(grid="3x2", file=True, path=str(table))
    st = form.data_read(form.state.data_needed, read_data(form.state.data_needed))
    assert st.runnable and st.missing
    st = form.edit(impl=impl.name)
    assert st.refusals == tuple(preflight(st.candidate, data_shape=(4, 2), missing=True))
    (r,) = st.refusals
    assert r.field == "impl" and st.reason == f"Implementation: {r.reason}"
    assert "missing values" in r.reason


#: The largest map the form takes, with 2e9 examples in float64: about 141 GiB for numpy-online and
#: 189 GiB for numpy-batch, beyond a workstation's memory (a GPU machine's host has 128 GiB).
BEYOND_THE_HOST = {"grid": "32768x32768", "samples": 2_000_000_000, "precision": "float64"}


@pytest.fixture
def host_below_the_largest_run() -> None:
    from som_studio.core.impls import memory

    if memory.host_available() > 141 << 30:
        pytest.skip("this host has more memory than the largest run the form takes needs (141 GiB)")


def test_a_variant_of_the_forms_configuration_is_judged_by_the_preflight(host_below_the_largest_run):
    # What a comparison runs: the form's configuration with another implementation.
    form = small_form(layout="2x2")  # numpy-batch runs on one device: the layout is not its
    base = form.state.config
    assert form.state.runnable and form.judge(base) == ()
    pmap = base.replace(impl="jax-pmap-batch")
    (r,) = form.judge(pmap)
    assert r == Refusal(
        "layout",
        "jax-pmap-batch is data-parallel only (it replicates the map on every device), so the layout's "
        "map size must be 1; got 2x2: use 4x1 instead",
    )
    big = form.edit(**BEYOND_THE_HOST).candidate
    # Its random colours, too, may not fit this host: then that is said first (below 89 GiB).
    assert [r.field for r in form.judge(big.replace(impl="numpy-online", epochs=None, steps=5))][-1:] == ["memory"]


def test_memory_beyond_the_machine_is_refused_with_the_estimate(host_below_the_largest_run):
    st = small_form().edit(**BEYOND_THE_HOST)
    assert [r.field for r in st.refusals][-1:] == ["memory"]  # after the colours' own, where they do not fit
    memory = st.refusals[-1].reason
    assert memory.startswith("numpy-batch on a 32768x32768 map with 2,000,000,000 x 3 data needs about")
    assert st.memory_text  # the estimate is shown with the refusal


def test_listeners_hear_edits_and_loaded_configs():
    form = small_form()
    states, fields = [], []
    form.on_state(states.append)
    form.on_fields(fields.append)
    form.edit(grid="10x7")
    assert states[-1].config.grid == "10x7" and fields == []
    form.set_config(RunConfig(impl="numpy-batch", width=3, height=4, epochs=2))
    assert fields[-1].grid == "3x4" and states[-1].config.grid == "3x4"


@pytest.mark.parametrize("impl", ["not-an-implementation"])
def test_an_unknown_implementation_is_refused(impl):
    st = RunForm().edit(impl=impl)
    assert st.refusals[0].field == "impl" and impl in st.reason


def test_a_folder_is_streamed_its_size_said_and_its_grid_from_one_pass(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from som_studio.core.som.init import default_grid

    x = np.random.default_rng(2).random((500, 3)) * [1.0, 3.0, 0.2]
    for i, (a, b) in enumerate([(0, 200), (200, 500)]):
        pq.write_table(pa.table({c: x[a:b, j] for j, c in enumerate("abc")}), tmp_path / f"p{i}.parquet")
    form = RunForm()
    st = form.set_config(RunConfig(impl="numpy-batch", data=DataSpec(path=str(tmp_path)), epochs=1))
    info = read_data(st.data_needed)
    assert info.shape == (500, 3) and info.streamed is not None and info.streamed[0] == 2
    assert info.grids[("rect", False)] == default_grid(x, "rect", False)  # the in-memory rule, from a stream
    st = form.data_read(st.data_needed, info)
    assert st.runnable, st.reason
    assert st.data_text.startswith("500 x 3 in 2 files (") and "read into memory (it fits" in st.data_text
    st = form.edit(stream=True)
    assert st.runnable and "Streamed: read in batches of 500 rows every epoch" in st.data_text
    assert "would not fit" not in st.data_text  # asked for, not forced
    # The NumPy reference has no cost model: the epoch's reading alone, at the rate the form's own pass went.
    assert info.read_rate > 0 and st.time_text.startswith("Time: more than ")
    assert "reading alone takes about that" in st.time_text and "under 1 s" not in st.time_text
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "holds no data files" in read_data(DataKey(str(empty))).error


def test_a_folder_too_big_for_memory_streams_unasked_says_why_and_is_judged_on_a_batch(tmp_path, monkeypatch):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from som_studio.core.impls import memory

    # 420,000 x 8 loads as about 77 MiB (a small file: few distinct values); with 150 MB available it would
    # take more than half, while a batch of 256 rows on a 6x5 map needs about 100 MB.
    x = np.random.default_rng(4).integers(0, 4, (420_000, 8)).astype(np.float64)
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({f"f{j}": x[:, j] for j in range(8)}), path)
    monkeypatch.setattr(memory, "host_available", lambda: 150_000_000)
    form = RunForm()
    cfg = RunConfig(impl="jax-fused-batch", data=DataSpec(path=str(path)), width=6, height=5, epochs=10)
    st = form.set_config(cfg.replace(batch_rows=256))
    info = read_data(st.data_needed)
    assert info.streamed == (1, path.stat().st_size)  # one file, never loaded whole
    st = form.data_read(st.data_needed, info)
    assert st.runnable, st.reason  # the whole table is not what the run holds: a batch of 256 rows is
    assert "Streamed: read in batches of 256 rows every epoch" in st.data_text
    assert "its table would take about 76.9 MiB, more than 50% of the 143.1 MiB of memory available" in st.data_text
    assert st.memory_text.startswith("Memory: about ")
    # jax-fused-batch's arithmetic by the cost model, beside the reading as the form's pass went.
    assert st.time_text.startswith("Time: about ") and "for 10: the arithmetic " in st.time_text
    assert "(the cost model, CPU)" in st.time_text and "rows/s, as the pass over the data went" in st.time_text
