"""One entrance: the command line, the Python API and the app's form resolve the same values to the same run.

Driven by :data:`som_studio.config.SETTINGS`: every setting is given its sample value through each
front end (a flag's text, a keyword's Python value, a form field) and the three configurations
must be equal; every setting that can be typed wrong is typed wrong the same way through each,
and the three refusals must name the same field with the same reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import som_studio
from som_studio import cli, config
from som_studio.api import TrainError, prepare
from som_studio.app_model.form import RunForm, control_text, read_data
from som_studio.commands.common import FLAGS, CommandError, configs_from_args
from som_studio.config import SETTINGS, RunConfig
from som_studio.session.resolve import AUTO, coerce, resolve, values_of
from tests.test_settings import SAMPLES

# Settings that need a data file; trained online (their count is steps).
TABLE = ("labels", "ignore", "id_column", "scaling", "data", "init", "stream")
ONLINE = ("impl", "steps", "lr_start", "lr_end")  # the sample implementation trains online

# A wrong value for each setting that can be typed wrong through all three front ends.
BAD = {
    "impl": "numpy-fast",
    "grid": "0x5",
    "topology": "tri",
    "init": "middle",
    "scaling": "log",
    "clusters": "1",
    "epochs": "0",
    "steps": "0",
    "sigma_start": "wide",
    "sigma_end": "-1",
    "lr_start": "0",
    "lr_end": "2",
    "seed": "-1",
    "precision": "float16",
    "layout": "2",
}
# Why the others are not: what they name is refused by the data, or the control cannot hold it.
NOT_BAD = {
    "data": "a file that cannot be read is the data's refusal (tests/core/test_data.py)",
    "samples": "the form's spin box starts at 1",
    "batch_rows": "the form's spin box reads 0 as none: the preflight's default",
    "labels": "a column the table lacks is the data's refusal",
    "ignore": "a column the table lacks is the data's refusal",
    "id_column": "a column the table lacks is the data's refusal",
}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("entrance") / "t.csv"
    rows = ["a,b,c,kind,name"] + [f"{i % 7},{i % 3},{(i * 5) % 11},k{i % 2},n{i}" for i in range(40)]
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def _base(name: str, table: str) -> dict[str, object]:
    """The values every front end gives around the setting under test (a small map; a table's text roles)."""
    online = name in ONLINE
    values: dict[str, object] = {"impl": "numpy-online" if online else "numpy-batch", "grid": "7x6"}
    values["steps" if online else "epochs"] = "40" if online else "4"
    if name in TABLE:
        values.update(data=table, labels="kind", id_column="name")
    return values


def _by_cli(values: dict[str, object]) -> RunConfig:
    argv = ["bench", "-q"]
    for key, value in values.items():
        flag = FLAGS[key]
        if value is True:
            argv.append(flag)
        elif isinstance(value, tuple):
            argv += [flag, ",".join(value)]
        else:
            argv += [flag, str(value)]
    (cfg,) = configs_from_args(cli.build_parser().parse_args(argv))
    return cfg


def _by_api(values: dict[str, object]) -> RunConfig:
    keywords = dict(values)
    return prepare(keywords.pop("data", None), keywords).config


def _form(values: dict[str, object]) -> RunForm:
    form = RunForm()
    fields = dict(values)
    count = fields.pop("epochs", None) or fields.pop("steps", None)
    if "data" in fields:
        fields.update(file=True, path=fields.pop("data"))
    for key in [k for k in fields if k not in ("file", "path")]:  # what a spin box or a check box holds
        control = config.setting_named(key).control
        if control == config.Control.COUNT:
            fields[key] = int(str(fields[key]))
        elif control == config.Control.CHECK:
            fields[key] = bool(fields[key])
    if isinstance(fields.get("ignore"), str):
        fields["ignore"] = (fields["ignore"],)
    form.edit(**fields, iterations=int(str(count)))
    state = form.state
    if state.data_needed is not None:
        form.data_read(state.data_needed, read_data(state.data_needed))
    return form


@pytest.mark.parametrize("s", SETTINGS, ids=lambda s: s.name)
def test_the_cli_the_api_and_the_form_resolve_a_setting_to_one_config(s, table):
    text, value = SAMPLES[s.name]
    values = _base(s.name, table)
    if s.name == "data":
        pass  # the table itself: the base gives it
    else:
        values[s.name] = text
    cli_cfg = _by_cli(values)
    api_values = dict(values)
    if s.name != "data":
        api_values[s.name] = value  # the API takes the Python value, the command line and the form the text
    api_cfg = _by_api(api_values)
    form_values = dict(values)
    if s.name in config.SETTINGS_OWN and s.name not in ("impl", "grid", "epochs", "steps"):
        form_values[s.name] = control_text(s, value)
    form_cfg = _form(form_values).state.config
    assert cli_cfg == api_cfg == form_cfg, s.name


def test_every_setting_is_tried_wrong_or_says_why_not():
    checks = {s.name for s in SETTINGS if s.control == config.Control.CHECK}  # on or off: never wrong
    assert set(BAD) | set(NOT_BAD) | checks == {s.name for s in SETTINGS}
    assert not set(BAD) & set(NOT_BAD)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_wrong_value_is_refused_alike_by_the_cli_the_api_and_the_form(name, table, capsys):
    values = {**_base(name, table), name: BAD[name]}
    refusal = _form(values).state.refusals[0]
    assert refusal.field == name
    keywords = dict(values)
    with pytest.raises(TrainError) as api:
        som_studio.train(keywords.pop("data", None), **keywords)
    assert str(api.value) == refusal.text()
    s = config.setting_named(name)
    try:
        _by_cli(values)
    except SystemExit as exc:  # argparse: the flag's reading refused it
        assert exc.code == 2
        err = capsys.readouterr().err
        if s.choices is not None:  # argparse's own words for a value not among the choices
            assert f"argument {s.flag}: invalid choice: {BAD[name]!r}" in err
        else:
            assert f"argument {s.flag}: {refusal.reason}" in err
    except CommandError as exc:  # the resolver or the preflight refused it
        assert str(exc) == refusal.text(FLAGS)
    else:
        pytest.fail(f"the command line took {name} {BAD[name]!r}")


def test_auto_and_none_leave_a_setting_to_its_default_and_a_run_keeps_that_it_was():
    radii = config.setting_named("sigma_end")
    assert coerce(radii, AUTO) is None and coerce(radii, "") is None and coerce(radii, None) is None
    assert coerce(radii, 0.5) == coerce(radii, "0.5") == coerce(radii, (0.5, 0.5)) == (0.5, 0.5)
    assert coerce(config.setting_named("grid"), (7, 5)) == (7, 5)
    resolved = resolve({"impl": "numpy-batch", "grid": "6x4", "sigma_end": AUTO, "init": "auto", "epochs": 3})
    cfg = resolved.config
    assert (cfg.sigma_end, cfg.init, cfg.epochs) == (None, None, 3)
    d = cfg.to_dict()
    assert d["sigma"]["end"] == list(cfg.sigmas[1]) and set(d["auto"]) == {"sigma_start", "sigma_end", "init"}
    assert RunConfig.from_dict(d) == cfg
    assert resolve(values_of(cfg)).config == cfg


def test_unset_counts_and_implementation_take_the_declared_defaults(table):
    cfg = resolve({}).config
    assert cfg.impl == config.setting_named("impl").default
    assert cfg.epochs == config.setting_named("epochs").fallback and cfg.steps is None
    assert (cfg.width, cfg.height) == (config.DEFAULT_WIDTH, config.DEFAULT_HEIGHT)
    online = resolve({"impl": "numpy-online"}).config
    assert online.steps == config.setting_named("steps").fallback and online.epochs is None
    from_data = resolve({"impl": "numpy-batch", "data": table, "labels": "kind", "id_column": "name"})
    assert from_data.grid_from_data and from_data.table is not None and from_data.table.values.shape == (40, 3)
    assert Path(from_data.config.data.path or "").name == "t.csv"
