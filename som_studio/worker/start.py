"""How the app starts the processes that train: forked from a server that has imported JAX.

Each run trains in a process of its own (:mod:`som_studio.worker.process` says why).
Spawned, each began by importing JAX and Orbax: 1.2-1.6 s of CPU before its first
compile, every run. On Linux the processes come from
:mod:`multiprocessing`'s fork server instead, a process that imported those once
(:mod:`som_studio.worker.preload`) and forks a copy of itself for each run.

A fork carries the server's state from when it started, so two things are set
again in each child:

* the environment: a child takes the app's as it is when the run starts (the
  language chosen since, a test's home), not the server's (:func:`process`);
* JAX's settings that JAX read from ``JAX_*`` variables as it was imported: while
  those are the server's, the child re-reads the few a run changes itself
  (:func:`som_studio.core.jax_runtime.configure`); where the app's differ from
  the server's, the run is spawned as before (:func:`context`).

JAX's backend, its threads and devices start in the child, after the run's
device count is set; never in the server. ``SOM_STUDIO_WORKER_START=spawn``
spawns every run.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Mapping
from multiprocessing.context import BaseContext
from typing import Any

START_VAR = "SOM_STUDIO_WORKER_START"
"""``spawn``: start every run's process fresh, importing everything itself."""

PRELOAD = "som_studio.worker.preload"

_server_jax_env: dict[str, str] | None = None  # the JAX_* variables the fork server was started with
_serving = threading.Event()  # set once the server has imported and forked a first process
_usable = True  # False if the server could not fork that first process


def _jax_env(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("JAX_")}


def context() -> BaseContext:
    """The context to start a process in now: the fork server once it serves, else ``spawn``.

    Starts the server the first time (:func:`warm`). Until it has imported, runs are spawned: starting a
    process from a server still importing waits for it, and the app's window would wait too.
    """
    spawn = multiprocessing.get_context("spawn")
    if not _forks_here():
        return spawn
    ctx = _server()
    if not (_serving.is_set() and _usable) or _jax_env(os.environ) != _server_jax_env:
        return spawn  # not serving yet, or JAX in the server read other settings
    return ctx


def warm(wait_s: float = 0.0) -> bool:
    """Start the fork server now, so that runs started later need not wait for its imports.

    Returns whether it serves, having waited up to ``wait_s`` seconds for it to.
    """
    if not _forks_here():
        return False
    _server()
    return _serving.wait(wait_s) and _usable


def _forks_here() -> bool:
    # Linux only: macOS has a fork server too, but forking a process that has loaded its system frameworks
    # (NumPy's Accelerate among them) is unsafe there.
    return os.environ.get(START_VAR, "").strip().lower() != "spawn" and sys.platform.startswith("linux")


def _server() -> BaseContext:
    global _server_jax_env
    ctx = multiprocessing.get_context("forkserver")
    if _server_jax_env is None:
        _server_jax_env = _jax_env(os.environ)
        ctx.set_forkserver_preload([PRELOAD])
        threading.Thread(target=_first_fork, args=(ctx,), name="som-studio-fork-server", daemon=True).start()
    return ctx


def _first_fork(ctx: BaseContext) -> None:
    """Start the server and fork one process from it: that returns once the server has imported."""
    global _usable
    try:
        first = ctx.Process(target=_nothing, name="som-studio-first-fork", daemon=True)  # type: ignore[attr-defined]
        first.start()
        first.join()
        _usable = first.exitcode == 0
    except Exception:
        _usable = False
    finally:
        _serving.set()


def _nothing() -> None:
    pass


def process(ctx: BaseContext, target: Callable[..., object], args: tuple[Any, ...], **kwargs: Any) -> Any:
    """A process of ``ctx`` that runs ``target(*args)`` in this process's environment as it is now."""
    if ctx.get_start_method() == "forkserver":
        return ctx.Process(target=in_environment, args=(dict(os.environ), target, *args), **kwargs)  # type: ignore[attr-defined]
    return ctx.Process(target=target, args=args, **kwargs)  # type: ignore[attr-defined]


def in_environment(env: dict[str, str], target: Callable[..., object], *args: Any) -> None:
    """Call ``target(*args)`` in the environment ``env`` (a child's first step: the app's, not the server's)."""
    os.environ.clear()
    os.environ.update(env)
    target(*args)
