from __future__ import annotations

import pytest

from som_studio.config import ConfigError, DataSpec, Refusal, RunConfig, parse_grid, parse_layout


def test_parse_grid_is_width_by_height():
    assert parse_grid("240x135") == (240, 135)
    assert parse_grid(" 7 X 1 ") == (7, 1)


@pytest.mark.parametrize("text", ["240", "0x5", "5x0", "-3x4", "axb", "3x4x5", ""])
def test_parse_grid_refuses_bad_text(text):
    with pytest.raises(ConfigError) as info:
        parse_grid(text)
    assert info.value.field == "grid"


def test_parse_layout():
    assert parse_layout("2x4") == (2, 4)
    with pytest.raises(ConfigError, match="layout"):
        parse_layout("0x2")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"width": 0}, "grid"),
        ({"height": -1}, "grid"),
        ({"width": 40000}, "grid"),
        ({"width": 32768, "height": 32768 * 2}, "grid"),
        ({"data": DataSpec(samples=0)}, "samples"),
        ({"epochs": 0}, "epochs"),
        ({"epochs": -5}, "epochs"),
        ({"sigma_start": (0.0, 1.0)}, "sigma_start"),
        ({"sigma_end": (1.0, -2.0)}, "sigma_end"),
        ({"sigma_start": (float("nan"), 1.0)}, "sigma_start"),
        ({"lr_start": 0.0}, "lr_start"),
        ({"lr_end": 1.5}, "lr_end"),
        ({"seed": -1}, "seed"),
        ({"precision": "float16"}, "precision"),
        ({"layout": "2"}, "layout"),
        ({"steps": 10, "epochs": None}, "steps"),  # batch kind given steps
    ],
)
def test_validate_names_the_field(changes, field):
    cfg = RunConfig(impl="numpy-batch", epochs=3).replace(**changes)
    with pytest.raises(ConfigError) as info:
        cfg.validate("batch")
    assert info.value.field == field
    assert field.split("_")[0] in str(info.value)


def test_online_run_refuses_epochs():
    cfg = RunConfig(impl="numpy-online", epochs=5)
    with pytest.raises(ConfigError) as info:
        cfg.validate("online")
    assert info.value.field == "epochs"
    assert "steps" in info.value.refusal.reason


def test_a_refusal_is_a_value_the_error_carries():
    with pytest.raises(ConfigError) as info:
        RunConfig(impl="numpy-batch", epochs=2, lr_end=2.0).validate("batch")
    assert info.value.refusal == Refusal("lr_end", "learning rate must be in (0, 1], got 2.0")
    assert info.value.field == "lr_end" and info.value.refusal.remedy is None


def test_a_refusal_with_a_remedy_is_rendered_in_each_front_ends_words():
    reason = "layout 2x2 needs 4 devices (2 along data x 2 along map), but JAX sees 3 cpu devices"
    err = ConfigError("layout", reason, remedy=("cpu_devices", 4))
    r = err.refusal
    # The field, the reason and the remedy are values: the reason holds no remedy and no flag.
    assert (r.field, r.reason, r.remedy) == ("layout", reason, ("cpu_devices", 4))
    # A run's record words it with the field as it is and the remedy by the command line's option.
    assert str(err) == str(r) == f"layout: {reason}; simulate more with --cpu-devices 4"
    # The CLI names its flags; the app its controls, whose names may place the value.
    flags = {"layout": "--layout", "cpu_devices": "--cpu-devices"}
    assert r.text(flags) == f"--layout: {reason}; simulate more with --cpu-devices 4"
    controls = {"layout": "Layout", "cpu_devices": "the box set to {n} devices"}
    assert r.text(controls) == f"Layout: {reason}; simulate more with the box set to 4 devices"
    assert r.explanation(controls) == f"{reason}; simulate more with the box set to 4 devices"


def test_counts_required_for_the_kind():
    with pytest.raises(ConfigError, match="steps"):
        RunConfig(impl="numpy-online").validate("online")
    with pytest.raises(ConfigError, match="epochs"):
        RunConfig(impl="numpy-batch").validate("batch")


def test_round_trip_through_dict():
    cfg = RunConfig(
        impl="numpy-online",
        width=30,
        height=7,
        steps=123,
        sigma_start=(5.0, 2.0),
        lr_start=0.3,
        seed=9,
        precision="float64",
        data=DataSpec(path="x.csv", scale=True),
    )
    again = RunConfig.from_dict(cfg.to_dict())
    assert again.to_dict() == cfg.to_dict()
    assert again.validate("online") is again


def test_from_dict_refuses_garbage():
    with pytest.raises(ConfigError, match="config"):
        RunConfig.from_dict({"grid": "nope"})


def test_default_schedules_follow_the_grid():
    (sx0, sy0), (sx1, sy1) = RunConfig(width=240, height=135).sigmas
    assert (sx0, sy0) == (60.0, 33.75)
    assert (sx1, sy1) == (2.0, 2.0)
    (sx0, sy0), (sx1, sy1) = RunConfig(width=8, height=1).sigmas
    assert sy0 == 1.0 and sy1 == 1.0 and sx1 <= sx0


@pytest.mark.parametrize("table", [False, True])
def test_the_default_end_radius_never_passes_the_start_radius_given(table):
    # A neighbourhood that shrinks: a start radius of 1 once ran to the default end of 2.
    data = DataSpec(path="rows.csv") if table else DataSpec()
    start, end = RunConfig(width=20, height=20, sigma_start=(1.0, 0.5), data=data).sigmas
    assert start == (1.0, 0.5) and end == ((0.75 if table else 1.0), 0.5)
    assert RunConfig(width=20, height=20, sigma_start=(6.0, 6.0), data=data).sigmas[1] == (
        (0.75,) * 2 if table else (2.0, 2.0)
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"seed": float("nan")}, "seed"),
        ({"seed": float("inf")}, "seed"),
        ({"width": float("inf")}, "grid"),
        ({"height": float("nan")}, "grid"),
        ({"layout": 5}, "layout"),
    ],
)
def test_non_finite_or_mistyped_values_name_their_field(changes, field):
    with pytest.raises(ConfigError) as info:
        RunConfig(epochs=1, **changes).validate("batch")
    assert info.value.field == field


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"topology": "square"}, "topology", "rect, hex"),
        ({"topology": "hex", "toroid": True, "height": 5}, "toroid", "even height"),
        ({"init": "zeros"}, "init", "random, pca, sample"),
        ({"sigma_start": (1e308, 1e308)}, "sigma_start", "at most 1,000,000"),  # its float32 square overflowed
        ({"scaling": "log"}, "scaling", "none, minmax, zscore"),
        ({"scaling": "zscore"}, "scaling", "data file"),  # random colours
        ({"labels": "species"}, "labels", "data file"),
        ({"clusters": 1}, "clusters", "at least 2"),
        ({"clusters": 99, "width": 4, "height": 3}, "clusters", "between 2 and 12 (the units)"),
    ],
)
def test_map_and_table_fields_are_validated_by_name(changes, field, words):
    cfg = RunConfig(impl="numpy-batch", epochs=3).replace(**changes)
    with pytest.raises(ConfigError) as info:
        cfg.validate("batch")
    assert info.value.field == field
    assert words in info.value.refusal.reason


def test_hex_toroid_with_even_height_is_fine_and_defaults_follow_the_data():
    RunConfig(impl="numpy-batch", epochs=3, topology="hex", toroid=True, height=6).validate("batch")
    assert RunConfig().init_method == "random"
    assert RunConfig(data=DataSpec(path="x.csv")).init_method == "pca"
    # the older switch reads as minmax
    assert RunConfig(data=DataSpec(path="x.csv", scale=True)).scaling_method == "minmax"


def test_hex_default_radius_is_a_quarter_of_each_side_in_plane_units():
    (sx, sy), _ = RunConfig(width=40, height=40, topology="hex").sigmas
    assert sx == 10.0 and sy == pytest.approx(40 * 3**0.5 / 2 / 4)


def test_new_fields_round_trip_and_old_records_read_scale_as_minmax():
    cfg = RunConfig(
        impl="numpy-batch",
        epochs=3,
        data=DataSpec(path="iris.csv"),
        topology="hex",
        toroid=True,
        height=8,
        init="sample",
        scaling="zscore",
        labels="species",
        ignore=("date",),
        id_column="id",
        clusters=3,
    )
    d = cfg.to_dict()
    assert (d["topology"], d["toroid"], d["init"], d["scaling"], d["labels"]) == (
        "hex",
        True,
        "sample",
        "zscore",
        "species",
    )
    back = RunConfig.from_dict(d)
    assert back.replace(sigma_start=None, sigma_end=None) == cfg and back.sigmas == cfg.sigmas
    old = {"impl": "numpy-batch", "epochs": 2, "data": {"source": "file", "path": "a.csv", "scale": True}}
    back = RunConfig.from_dict(old)
    assert back.scaling_method == "minmax" and back.topology == "rect" and back.init_method == "pca"
