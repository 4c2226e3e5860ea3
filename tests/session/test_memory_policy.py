"""The unified-memory policy: no preallocation unless the user asks, and a run's buffers go back."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace

import pytest

from som_studio.core import jax_runtime
from som_studio.core.impls import registry
from som_studio.session.events import ChunkTimed
from som_studio.session.session import Session, run_to_completion
from tests.grids import product, representative


def _env_in_child(env: dict[str, str], *argv: str) -> str:
    """XLA_PYTHON_CLIENT_PREALLOCATE as seen by ``som-studio ARGV`` once the CLI has configured JAX."""
    # A stand-in for the app reports the setting when the app would start, and that JAX has not.
    code = (
        "import os, sys\n"
        "from som_studio import cli\n"
        "def app(parser, args):\n"
        "    print(os.environ.get('XLA_PYTHON_CLIENT_PREALLOCATE'), 'jax' in sys.modules, end='')\n"
        "    return 0\n"
        "cli._open_app = app\n"
        "sys.exit(cli.main(sys.argv[1:]))\n"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(("XLA_", "JAX_"))}
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], env={**base, **env}, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_app_starts_with_preallocation_off():
    # Bare `som-studio` (the desktop launcher's command) goes through cli.main.
    assert _env_in_child({}) == "false False"


def test_the_users_setting_wins():
    assert _env_in_child({"XLA_PYTHON_CLIENT_PREALLOCATE": "true"}) == "true False"


def _left_after_first_chunk(session: Session) -> None:
    """Stop reading the run's events after its first timed chunk, as a caller breaking out of its loop does."""
    events = session.run()
    for ev in events:
        if isinstance(ev, ChunkTimed):
            break
    events.close()


@pytest.mark.parametrize(
    ("impl", "end"),
    representative(
        product([i.name for i in registry.all_implementations() if i.backend == "jax"], ["left", "finished"])
    ),
)
def test_a_runs_device_buffers_are_freed_when_it_ends(impl, end, small_config):
    jax = jax_runtime.jax()
    before = {id(a) for a in jax.live_arrays()}
    kind = registry.get(impl).kind
    # Long enough that a run left after its first timed chunk is left before its end.
    cfg = replace(
        small_config,
        impl=impl,
        steps=(50 if end == "finished" else 2_000) if kind == "online" else None,
        epochs=(2 if end == "finished" else 40) if kind == "batch" else None,
    )
    session = Session(cfg, snapshot_interval_s=None, quality_points=0)
    if end == "left":
        _left_after_first_chunk(session)
    else:
        record = run_to_completion(session)
        assert record.status == "ok", record.message
        # Every JAX run records its BMU search and, where one program runs, XLA's figure for it.
        assert isinstance(record.extra.get("kernel_plan"), str) and record.extra["kernel_plan"]
        assert "memory_compiled_bytes" in record.extra
    left = [a for a in jax.live_arrays() if id(a) not in before]
    assert left == [], f"{impl} left {len(left)} device arrays alive: {[a.shape for a in left]}"
