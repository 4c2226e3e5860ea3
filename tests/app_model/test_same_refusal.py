"""One preflight: the CLI and the app refuse the same bad configuration with the same field and reason."""

from __future__ import annotations

import pytest

from som_studio.app_model.form import LABELS, RunForm
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
