"""Every run setting, declared once: each front end offers, reads and records it from the declaration.

Driven by :data:`som_studio.config.SETTINGS`, as the implementation tests are driven by the
registry: a setting declared tomorrow is held to the same rules without a line here, but for
its sample value in :data:`SAMPLES` (the test says so when one is missing).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from som_studio import cli, config
from som_studio.app_model import estimate
from som_studio.app_model.form import LABELS, RunForm, control_text, control_value, setting_values
from som_studio.commands.common import FLAGS, configs_from_args
from som_studio.config import SETTINGS, SETTINGS_OWN, DataSpec, RunConfig, Topology

# A value other than the default for each setting, as the command line types it and as the config holds it.
SAMPLES = {
    "impl": ("numpy-online", "numpy-online"),
    "grid": ("7x5", (7, 5)),
    "data": (None, None),  # a file: given by the table fixture
    "samples": ("321", 321),
    "topology": ("hex", Topology.HEX),
    "toroid": (True, True),
    "init": ("sample", "sample"),
    "scaling": ("zscore", "zscore"),
    "labels": ("kind", "kind"),
    "ignore": ("b", ("b",)),
    "id_column": ("name", "name"),
    "clusters": ("3", 3),
    "epochs": ("4", 4),
    "steps": ("40", 40),
    "sigma_start": ("3,2", (3.0, 2.0)),
    "sigma_end": ("0.5", (0.5, 0.5)),
    "lr_start": ("0.25", 0.25),
    "lr_end": ("0.02", 0.02),
    "seed": ("12", 12),
    "precision": ("float64", "float64"),
    "layout": ("2x1", "2x1"),
    "stream": (True, True),
    "batch_rows": ("5000", 5000),
}
# Settings the CLI reads another way than one option of their own: the implementations' list.
LISTED = ("impl",)
NEEDS_TABLE = ("labels", "ignore", "id_column", "scaling", "data", "stream")
ONLINE = ("steps", "lr_start", "lr_end")


@pytest.fixture
def table(tmp_path: Path) -> str:
    path = tmp_path / "t.csv"
    rows = ["a,b,c,kind,name"] + [f"{i % 7},{i % 3},{(i * 5) % 11},k{i % 2},n{i}" for i in range(40)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def value_of(cfg: RunConfig, name: str) -> object:
    s = config.setting_named(name)
    if s.name == "data":
        return cfg.data.path
    if s.name == "samples":
        return cfg.data.samples
    values = tuple(getattr(cfg, t) for t in s.targets)
    return values[0] if len(values) == 1 else values


def with_value(name: str, value: object, table: str) -> RunConfig:
    base = RunConfig(impl="numpy-online" if name in ONLINE else "numpy-batch", width=7, height=6)
    if name in NEEDS_TABLE or name in ("init", "topology"):
        base = base.replace(data=DataSpec(path=table))
    if name == "samples":
        return base.replace(data=DataSpec(samples=int(value)))  # type: ignore[call-overload]
    if name == "data":
        return base
    s = config.setting_named(name)
    if len(s.targets) > 1:
        return base.replace(**dict(zip(s.targets, value)))  # type: ignore[arg-type]
    return base.replace(**{name: value})


def test_every_config_field_is_a_declared_setting():
    own = {t for s in SETTINGS_OWN for t in s.targets}
    assert own | {"data"} == {f.name for f in dataclasses.fields(RunConfig)}
    assert {f.name for f in dataclasses.fields(DataSpec)} == {"path", "samples", "scale"}
    names = [s.name for s in SETTINGS]
    assert len(set(names)) == len(names) and len({s.flag for s in SETTINGS}) == len(SETTINGS)


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: s.name)
def test_each_setting_has_a_sample_here(s):
    assert s.name in SAMPLES, f"give the setting {s.name!r} a sample value in SAMPLES"


@pytest.mark.parametrize("command", ["bench", "compare"])
def test_every_setting_is_an_option_of_the_training_commands(command, capsys):
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = capsys.readouterr().out
    for s in SETTINGS:
        assert s.flag in text, s.name
        assert FLAGS[s.name] == s.flag


def test_the_command_line_defaults_are_the_declared_ones():
    args = cli.build_parser().parse_args(["bench"])
    for s in SETTINGS:
        if s.name not in LISTED and s.name not in ("grid", "epochs", "steps", "scaling"):
            assert getattr(args, s.name) == s.default, s.name


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.name not in LISTED], ids=lambda s: s.name)
def test_the_command_line_sets_each_setting(s, table):
    text, want = SAMPLES[s.name]
    argv = ["bench", "--impl", "numpy-online" if s.name in ONLINE else "numpy-batch", "--grid", "7x6", "-q"]
    if s.name in NEEDS_TABLE or s.name in ("init", "topology", "toroid"):
        argv += ["--data", table]
    if s.name != "data":
        argv += [s.flag] if text is True else [s.flag, str(text)]
    if s.name == "toroid":
        argv += ["--topology", "rect"]
    (cfg,) = configs_from_args(cli.build_parser().parse_args(argv))
    assert value_of(cfg, s.name) == (table if s.name == "data" else want)


@pytest.mark.parametrize("s", [s for s in SETTINGS_OWN if s.name not in ("impl",)], ids=lambda s: s.name)
def test_the_form_shows_and_reads_back_each_setting(s, table):
    _text, value = SAMPLES[s.name]
    cfg = with_value(s.name, value, table)
    form = RunForm()
    form.set_config(cfg)
    if s.name == "grid":
        assert form.fields.grid == "7x5"
        return
    if s.name in ("epochs", "steps"):
        assert form.fields.iterations == value
        return
    assert setting_values(form.fields)[s.name] == value
    assert control_value(s, control_text(s, value)) == value


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: s.name)
def test_a_record_keeps_each_setting(s, table):
    _text, value = SAMPLES[s.name]
    cfg = with_value(s.name, value, table)
    back = RunConfig.from_dict(cfg.to_dict())
    assert value_of(back, s.name) == value_of(cfg, s.name)
    assert back == RunConfig.from_dict(back.to_dict())


def test_each_setting_has_a_label_in_every_language():
    pofile = pytest.importorskip("babel.messages.pofile")  # a test requirement; the GPU tier may lack it
    po = Path(config.__file__).parent / "locale" / "ko" / "LC_MESSAGES" / "som_studio.po"
    with po.open("rb") as f:
        catalogue = pofile.read_po(f)
    for s in SETTINGS:
        assert LABELS[s.name] == s.label
        assert catalogue.get(s.label) is not None and catalogue.get(s.label).string, s.label


def test_the_time_estimate_matches_runs_on_the_settings_of_one_iteration():
    per_iteration = {s.record_key for s in SETTINGS if s.per_iteration}
    assert set(estimate.SAME) == per_iteration
    assert {"impl", "grid", "topology", "precision"} <= per_iteration and "seed" not in per_iteration


def test_allowed_values_are_enums_that_read_as_text():
    cfg = RunConfig(topology="hex", init="pca", scaling="zscore", precision="float64")
    assert cfg.topology is Topology.HEX and cfg.topology == "hex"
    d = cfg.to_dict()
    assert type(d["topology"]) is str and type(d["init"]) is str and type(d["precision"]) is str
    assert RunConfig(topology="hexagonal").topology == "hexagonal"  # kept, for validate() to refuse
    with pytest.raises(config.ConfigError) as info:
        RunConfig(topology="hexagonal").validate()
    assert info.value.field == "topology"


def test_only_the_radii_and_the_seed_may_vary_in_a_sweep():
    assert {s.name for s in SETTINGS if s.sweep} == {"sigma_start", "sigma_end", "seed"}


@pytest.mark.parametrize(("flag", "value"), [("--topology", "hexa"), ("--precision", "float16"), ("--init", "x")])
def test_a_value_not_allowed_is_refused_with_the_allowed_values_as_text(flag, value, capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["bench", flag, value])
    err = capsys.readouterr().err
    assert info.value.code == 2 and f"invalid choice: {value!r}" in err and "<" not in err


def test_a_record_s_null_reads_as_the_setting_s_default_and_a_bad_count_is_refused():
    d = {
        "impl": "numpy-batch",
        "ignore": None,
        "toroid": None,
        "layout": None,
        "data": {"source": "file", "path": "a.csv"},
    }
    cfg = RunConfig.from_dict(d)
    assert (cfg.ignore, cfg.toroid, cfg.layout) == ((), False, "1x1")
    for bad in ({"impl": "numpy-batch", "steps": 5.7}, {"impl": "numpy-batch", "clusters": "4"}):
        with pytest.raises(config.ConfigError) as info:
            RunConfig.from_dict(bad)
        assert info.value.field == "config" and "whole number" in str(info.value)


def test_a_run_file_checks_every_setting_s_key_as_its_declaration_says():
    from som_studio.storage.runfile import _RECORD_FIELDS

    fields = _RECORD_FIELDS["config"]
    assert set(fields) == {s.record_key for s in SETTINGS}
    assert fields["grid"] == ("list",) and fields["seed"] == ("whole",) and fields["sigma"] == ("object",)
    assert "null" in fields["clusters"] and "null" not in fields["topology"]


@pytest.mark.parametrize(
    "s", [s for s in SETTINGS if s.check is not None or s.choices is not None], ids=lambda s: s.name
)
def test_validation_follows_each_setting_s_declaration(s):
    # A value of no kind any setting takes: each declared check (or allowed values) refuses it,
    # naming that setting, so validate() needs no line of its own per setting.
    bad = object()
    base = RunConfig(impl="numpy-batch", epochs=1)
    if s in config.SETTINGS_DATA:
        cfg = dataclasses.replace(base, data=dataclasses.replace(base.data, **{t: bad for t in s.targets}))
    else:
        cfg = dataclasses.replace(base, **{t: bad for t in s.targets})
    with pytest.raises(config.ConfigError) as err:
        cfg.validate("batch")
    assert err.value.field == s.name
    base.validate("batch")  # the same configuration with the declared values passes
