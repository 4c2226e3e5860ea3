"""One preflight: the CLI and the app refuse the same bad configuration with the same field and reason."""

from __future__ import annotations

import pytest

from som_studio.app_model.form import LABELS, RunForm, read_data
from som_studio.cli import build_parser
from som_studio.commands.common import FLAGS, CommandError, configs_from_args
from som_studio.session.preflight import Refusal

# (CLI arguments, the same settings in the app's form, the refusal both must give)
CASES = [
    (
        ["--impl", "jax-pmap-batch", "--layout", "2x2", "--grid", "8x6"],
        {"impl": "jax-pmap-batch", "layout": "2x2", "grid": "8x6"},
        Refusal(
            "layout",
            "jax-pmap-batch is data-parallel only (it replicates the map on every device), so the layout's "
            "map size must be 1; got 2x2: use 4x1 instead",
        ),
    ),
    (
        ["--impl", "numpy-online", "--lr-start", "0", "--grid", "8x6"],
        {"impl": "numpy-online", "lr_start": 0.0, "grid": "8x6"},
        Refusal("lr_start", "learning rate must be in (0, 1], got 0.0"),
    ),
    (
        # The test process has 8 simulated CPU devices (tests/conftest.py); the app is told the same.
        ["--impl", "jax-shardmap-batch", "--layout", "4x4", "--grid", "8x6"],
        {"impl": "jax-shardmap-batch", "layout": "4x4", "grid": "8x6", "simulate": True, "cpu_devices": 8},
        Refusal(
            "layout",
            "layout 4x4 needs 16 devices (4 along data x 4 along map), but JAX sees 8 cpu devices",
            ("cpu_devices", 16),
        ),
    ),
]


# The "devices" case names the simulated CPU devices the tests run with: it needs them.
@pytest.mark.parametrize(
    ("argv", "fields", "refusal"),
    [
        pytest.param(*case, id=name, marks=[pytest.mark.test_devices] if name == "devices" else [])
        for case, name in zip(CASES, ["data-parallel", "learning-rate", "devices"])
    ],
)
def test_the_cli_and_the_app_give_the_same_refusal(argv, fields, refusal):
    args = build_parser().parse_args(["bench", *argv])
    with pytest.raises(CommandError) as cli:
        configs_from_args(args)
    app = RunForm()
    app.edit(**fields)
    assert app.state.refusals[0] == refusal
    # Each names the field its own way: the CLI by its flag, the app by its control.
    assert str(cli.value) == refusal.text(FLAGS)
    assert app.state.reason == refusal.text(LABELS)
    assert str(cli.value).startswith(FLAGS[refusal.field] + ": ")
    assert app.state.reason.startswith(LABELS[refusal.field] + ": ")


def test_a_hex_toroid_with_an_odd_height_is_refused_alike():
    args = build_parser().parse_args(
        ["bench", "--impl", "numpy-batch", "--grid", "12x7", "--topology", "hex", "--toroid"]
    )
    with pytest.raises(CommandError) as cli:
        configs_from_args(args)
    app = RunForm()
    app.edit(impl="numpy-batch", grid="12x7", topology="hex", toroid=True)
    refusal = Refusal("toroid", "a hex toroid needs an even height (rows wrap in pairs of offsets), got 7")
    assert app.state.refusals[0] == refusal
    assert str(cli.value) == refusal.text(FLAGS) and str(cli.value).startswith("--toroid: ")
    assert app.state.reason == refusal.text(LABELS) and app.state.reason.startswith("Toroid: ")


def test_a_text_column_not_named_is_refused_alike(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("a,b,kind\n1,2,x\n3,4,y\n5,6,x\n")
    args = build_parser().parse_args(["bench", "--impl", "numpy-batch", "--data", str(table), "--quiet"])
    with pytest.raises(CommandError) as cli:
        configs_from_args(args)
    app = RunForm()
    st = app.edit(impl="numpy-batch", file=True, path=str(table))
    st = app.data_read(st.data_needed, read_data(st.data_needed))
    reason = (
        f"{table}: non-numeric value 'x' at line 2, column 3 ('kind'): a text column can be the labels "
        "(--labels kind), left out (--ignore kind) or carried through (--id kind); in a column of numbers, a missing "
        "value is an empty cell or NA, NaN, N/A, NULL, None, #N/A, #NA, <NA>, in upper or lower case"
    )
    assert st.refusals[0] == Refusal("data", reason)
    assert str(cli.value) == "--data: " + reason
    # The app names its controls where the CLI names its flags.
    assert st.reason == (
        f"Data: {table}: non-numeric value 'x' at line 2, column 3 ('kind'): a text column can be the labels "
        "(Label column kind), left out (Ignore kind) or carried through (ID column kind); in a column of numbers, a "
        "missing value is an empty cell or NA, NaN, N/A, NULL, None, #N/A, #NA, <NA>, in upper or lower case"
    )


@pytest.mark.test_devices
def test_the_cli_names_the_remedy_by_its_flag(capsys):
    from som_studio import cli

    assert cli.main(["bench", "--impl", "jax-shardmap-batch", "--layout", "4x4", "--grid", "8x6"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith(
            "som-studio bench: error: --layout: layout 4x4 needs 16 devices (4 along data x 4 along map), "
            "but JAX sees 8 cpu devices; simulate more with --cpu-devices 16"
        )
    )
