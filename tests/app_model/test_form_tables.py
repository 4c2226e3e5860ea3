"""The form's real-table fields: lattice, toroid, initialisation, scaling, column roles, clusters, default grid."""

from __future__ import annotations

from som_studio import resources
from som_studio.app_model.form import LABELS, DataKey, RunForm, app_words, read_data
from som_studio.config import RunConfig

IRIS = resources.resource("data", "iris.csv")


def read(form: RunForm):
    """Answer what the form asks to read until it asks for nothing (as the panel does off the GUI thread)."""
    st = form.state
    while st.data_needed is not None:
        st = form.data_read(st.data_needed, read_data(st.data_needed))
    return st


def iris_form(**changes) -> RunForm:
    form = RunForm()
    form.edit(impl="numpy-batch", iterations=3, file=True, path=str(IRIS), **changes)
    read(form)
    return form


def test_the_header_is_offered_and_a_text_column_is_refused_until_named():
    form = iris_form()
    st = form.state
    assert st.columns == ("sepal_length", "sepal_width", "petal_length", "petal_width", "species")
    assert not st.runnable and st.refusals[0].field == "data" and "non-numeric value 'setosa'" in st.reason
    # The app names its controls where the CLI names --labels, --ignore and --id.
    assert "(Label column species)" in st.reason and "(Ignore species)" in st.reason
    assert "--labels" not in st.reason and "(ID column species)" in st.reason
    st = form.edit(labels="species")
    st = read(form)
    assert st.runnable, st.reason
    assert st.config.labels == "species" and (st.samples, st.features) == (150, 4)
    st = form.edit(labels="", ignore=("species",))
    assert read(form).runnable and form.state.config.ignore == ("species",)


def test_a_grid_left_to_auto_follows_the_data_and_the_form_says_so():
    from som_studio.core.data import read_table
    from som_studio.core.som.init import default_grid

    form = iris_form(labels="species", scaling="zscore")
    st = read(form)
    values = read_table(IRIS, "species").scaled("zscore").values
    assert (st.config.width, st.config.height) == default_grid(values)
    assert st.grid_text.startswith(f"Grid: {st.config.grid} for 150 rows (about 5·√N units")
    assert st.config.init_method == "pca"  # the default for a file, as the CLI's
    st = form.edit(topology="hex", toroid=True)
    assert (st.config.width, st.config.height) == default_grid(values, "hex", True) and st.config.height % 2 == 0
    st = form.edit(grid="12x8")
    assert st.config.grid == "12x8" and st.grid_text == ""
    # Colours keep the playbook's map.
    st = RunForm().state
    assert st.config.grid == "240x135" and "playbook" in st.grid_text


def test_every_new_field_reaches_the_config_and_a_loaded_config_comes_back():
    form = iris_form(labels="species", grid="12x8", topology="hex", init="sample", scaling="minmax", clusters=3)
    st = read(form)
    cfg = st.config
    assert (cfg.topology, cfg.toroid, cfg.init, cfg.scaling, cfg.clusters) == ("hex", False, "sample", "minmax", 3)
    other = RunForm()
    other.set_config(cfg)
    assert read(other).config == cfg


def test_choices_of_another_file_are_let_go(tmp_path):
    form = iris_form(labels="species", id_column="species")
    assert form.state.reason.startswith("ID column: ")  # labels and id may not be the same column
    two = tmp_path / "two.csv"
    two.write_text("a,b\n1,2\n3,4\n")
    form.edit(path=str(two))
    st = read(form)
    assert form.fields.labels == "" and form.fields.id_column == "" and st.runnable and st.columns == ("a", "b")


def test_scaling_and_roles_do_not_apply_to_random_colours():
    form = RunForm()
    st = form.edit(impl="numpy-batch", grid="6x4", scaling="zscore", labels="species")
    assert st.runnable and st.config.scaling == "none" and st.config.labels is None


def test_an_implementation_without_hex_is_refused_by_its_control():
    import dataclasses

    from som_studio.core.impls import registry

    # Every built-in implementation trains hex maps; one that declares rect only is refused.
    rect_only = dataclasses.replace(registry.get("jax-fused-batch"), name="jax-rect-only", topologies=("rect",))
    with registry.registered(rect_only):
        form = iris_form(labels="species", grid="12x8", topology="hex")
        st = form.edit(impl="jax-rect-only")
    assert st.refusals[0].field == "impl" and st.reason.startswith("Implementation: ")
    assert "hex" in st.reason


def test_every_builtin_implementation_takes_the_iris_hex_map():
    from som_studio.core.impls import registry

    form = iris_form(labels="species", grid="12x8", topology="hex")
    for impl in registry.all_implementations():
        if not impl.shards:
            st = form.edit(impl=impl.name)
            assert not [r for r in st.refusals if r.field == "impl"], (impl.name, st.reason)


def test_read_data_reports_without_raising(tmp_path):
    info = read_data(DataKey(str(tmp_path / "none.csv")))
    assert info.shape is None and "no such file" in info.error
    assert app_words("x (--labels a), (--ignore a) or (--id a)") == "x (Label column a), (Ignore a) or (ID column a)"
    assert LABELS["topology"] == "Lattice" and isinstance(RunConfig(), RunConfig)


def test_what_reading_the_file_guessed_is_shown_with_its_shape(tmp_path):
    path = tmp_path / "years.csv"
    path.write_text("2019,2020,2021\n1.5,2.5,3.5\n4,5,6\n")
    info = read_data(DataKey(str(path)))
    assert info.columns == ("2019", "2020", "2021") and info.shape == (2, 3)
    (note,) = info.notes
    assert "is read as the header: its numbers are years" in note
    form = RunForm()
    form.edit(impl="numpy-batch", iterations=3, file=True, path=str(path))
    st = read(form)
    assert st.data_text.splitlines() == ["2 x 3 loaded", note]


def test_a_column_that_looks_like_an_identifier_is_said_in_the_forms_words(tmp_path):
    path = tmp_path / "cells.csv"
    path.write_text("event_id,a,b\n" + "".join(f"{i * 3 % 7},{i / 7:.3f},{i % 5}\n" for i in range(12)))
    form = RunForm()
    form.edit(impl="numpy-batch", iterations=3, file=True, path=str(path))
    text = read(form).data_text
    assert "carry it with ID column event_id or leave it out with Ignore event_id" in text and "--" not in text


def test_ranges_far_apart_suggest_zscore_and_say_why():
    wine = resources.resource("data", "wine.csv")  # proline in the hundreds, hue about 1
    form = RunForm()
    form.edit(impl="numpy-batch", iterations=3, file=True, path=str(wine), labels="cultivar")
    st = read(form)
    assert st.runnable and (st.samples, st.features) == (178, 13)
    assert "zscore" in st.data_text and "differ up to" in st.data_text and "same weight" in st.data_text
    assert "the widest, 'proline', would shape the map alone" in st.data_text
    st = form.edit(scaling="zscore")
    assert "zscore" not in read(form).data_text  # chosen: nothing to suggest
    form.edit(scaling="none", path=str(IRIS), labels="species")  # ranges within 100x of each other
    assert "differ up to" not in read(form).data_text


def test_ranges_past_float64s_range_read_as_a_number_not_inf(tmp_path):
    path = tmp_path / "sentinel.csv"
    # b spans 0.01: the ratio of the ranges overflows float64
    path.write_text("a,b\n" + "".join(f"{i / 7:.3f},{i % 2 / 100}\n" for i in range(30)) + "1.7976931348623157e308,0\n")
    form = RunForm()
    form.edit(impl="numpy-batch", iterations=3, file=True, path=str(path))
    text = read(form).data_text
    assert "differ up to 1.8e+308x" in text and "inf" not in text, text
