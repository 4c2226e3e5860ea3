"""How run processes start: forked from a server that imported JAX, each in the app's environment of the moment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from som_studio.worker import start

TIMEOUT_S = 120  # guards against a hang on a loaded machine, not a timing assertion
VAR = "SOM_STUDIO_TEST_START_VAR"

forks = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs are forked from a server on Linux only")


def _report(conn, cpu_devices):
    """What a run's process sees as it begins, then once it has set up JAX as a run does."""
    seen = {"var": os.environ.get(VAR), "jax_imported": "jax" in sys.modules}
    from som_studio.core import jax_runtime
    from som_studio.worker.process import _forget_inherited_cpu_devices

    seen["started"] = jax_runtime.started()
    _forget_inherited_cpu_devices()  # as a run's process begins
    jax_runtime.configure(cpu_devices)
    jax = jax_runtime.jax()
    seen["platforms"] = jax.config.jax_platforms
    seen["devices"] = (jax.default_backend(), jax.device_count())
    conn.send(seen)
    conn.close()


def _seen(ctx, cpu_devices):
    r, w = ctx.Pipe(duplex=False)
    proc = start.process(ctx, _report, (w, cpu_devices), daemon=True)
    proc.start()
    w.close()
    try:
        assert r.poll(TIMEOUT_S), "the process did not answer"
        return r.recv()
    finally:
        proc.join(TIMEOUT_S)
        assert proc.exitcode == 0


@forks
@pytest.mark.cpu_backend
def test_runs_are_forked_with_jax_imported_not_started_each_with_its_own_devices():
    # The suite's processes run on 8 simulated CPU devices (JAX_PLATFORMS=cpu): so does the fork server's JAX.
    assert os.environ["JAX_PLATFORMS"] == "cpu"
    assert start.warm(TIMEOUT_S)
    ctx = start.context()
    assert ctx.get_start_method() == "forkserver"
    first, second, third = _seen(ctx, 3), _seen(ctx, 2), _seen(ctx, None)
    assert first["jax_imported"] and not first["started"]  # the server's import, the run's backend
    assert first["devices"] == ("cpu", 3) and second["devices"] == ("cpu", 2)
    # A run without simulated devices gets the machine's own, not the platform JAX read in the server.
    assert third["platforms"] is None and third["devices"][1] == 1


@forks
def test_a_run_gets_the_apps_environment_as_it_is_when_the_run_starts(monkeypatch):
    assert start.warm(TIMEOUT_S)  # the server's environment is older than the variable
    monkeypatch.setenv(VAR, "set after the server started")
    assert start.context().get_start_method() == "forkserver"
    assert _seen(start.context(), 1)["var"] == "set after the server started"
    monkeypatch.delenv(VAR)
    assert _seen(start.context(), 1)["var"] is None


@forks
def test_jax_settings_other_than_the_servers_are_spawned(monkeypatch):
    assert start.warm(TIMEOUT_S)
    monkeypatch.setenv("JAX_DEBUG_NANS", "true")  # read by JAX as it is imported: the server's import won't do
    ctx = start.context()
    assert ctx.get_start_method() == "spawn"
    seen = _seen(ctx, 1)
    assert seen["devices"] == ("cpu", 1) and not seen["jax_imported"]


def test_spawn_is_chosen_by_its_variable(monkeypatch):
    monkeypatch.setenv(start.START_VAR, "spawn")
    ctx = start.context()
    assert ctx.get_start_method() == "spawn"
    assert _seen(ctx, 2)["devices"] == ("cpu", 2)


@forks
def test_until_the_server_has_imported_runs_are_spawned_and_nothing_waits_for_it():
    # In a fresh process: the server imports JAX for a second or so, and a run started meanwhile would wait for it
    # in proc.start(), the app's window with it.
    script = (
        "from som_studio.worker import start\n"
        "first = start.context().get_start_method()  # had it waited for the server, it would be forkserver\n"
        "print(first, start.warm(120), start.context().get_start_method())\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    assert out.stdout.split() == ["spawn", "True", "forkserver"], out.stderr[-2000:]
