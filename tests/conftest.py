"""Test set-up shared by every tier.

Runs before anything imports Qt or JAX: Qt draws offscreen, and JAX's CPU
backend exposes 8 simulated devices for the sharding tests (the device count is
fixed per process; tests that need another count start a subprocess). Each
pytest-xdist worker (``./dev.sh test`` starts one per core) is such a process and
reads this file first, so each gets the same set-up.

``SOM_STUDIO_TEST_DEFAULT_BACKEND=1`` runs the Qt-free tiers on JAX's default
backend instead (a GPU where there is one: ``bench/gpu_check.py`` does so):
CPU devices are not forced, the Qt tier is not collected, and tests that need
the 8 simulated devices or the CPU backend skip with the reason.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from pathlib import Path

# Where PYTHONDONTWRITEBYTECODE is set (many containers set it), pytest never kept the test modules it rewrites
# for their asserts, and each worker rewrote all of them at every run: 9 s of collection against 4 s. The
# suite's own processes keep them (in tests/__pycache__); the processes the tests start keep the setting.
sys.dont_write_bytecode = False

# No test writes into the real home (~/.local/share/som-studio, ~/.config): the whole run,
# and the processes it starts, get a temporary home before anything reads these variables,
# and each test gets a fresh one of its own (the ``temporary_home`` fixture below). The
# caches stay where they were (compiled programs, fonts): they only make the suite faster.
_REAL_CACHE = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
TEST_HOME = Path(tempfile.mkdtemp(prefix="som-studio-test-home-"))


def _use_home(home: Path, setenv=os.environ.__setitem__) -> None:
    for name, sub in (("HOME", ""), ("XDG_DATA_HOME", ".local/share"), ("XDG_CONFIG_HOME", ".config")):
        (home / sub).mkdir(parents=True, exist_ok=True)
        setenv(name, str(home / sub))
    setenv("XDG_CACHE_HOME", _REAL_CACHE)


_use_home(TEST_HOME)
# JAX's persistent compilation cache goes to this session's folder, never the user's (a folder JAX is
# given otherwise, JAX_COMPILATION_CACHE_DIR or jax.config, wins over it).
os.environ.setdefault("SOM_STUDIO_COMPILE_CACHE", str(TEST_HOME / "compile-cache"))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# One persistent JAX compilation cache for the whole run: every process of it (pytest-xdist's
# workers, which inherit the variable from the process that starts them, the app's worker
# processes and the commands the tests start) reads and writes it, so a program already compiled
# by another test, another parametrisation or another process is read back instead of compiled
# again. Each run starts with an empty one (a clean clone's run is as fast as any, and nothing is
# written into the user's home); the process that made it removes it when the run ends.
# ``SOM_STUDIO_TEST_JAX_CACHE=DIR`` names a folder of one's own instead (kept; reused by later runs).
_MADE_JAX_CACHE = "SOM_STUDIO_TEST_JAX_CACHE" not in os.environ
if _MADE_JAX_CACHE:
    os.environ["SOM_STUDIO_TEST_JAX_CACHE"] = tempfile.mkdtemp(prefix="som-studio-test-jax-cache-")
os.environ["JAX_COMPILATION_CACHE_DIR"] = os.environ["SOM_STUDIO_TEST_JAX_CACHE"]
os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"  # small programs are most of the suite's
os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "-1"
TEST_CPU_DEVICES = 8
#: Run on JAX's default backend (see the module's docstring).
DEFAULT_BACKEND = os.environ.get("SOM_STUDIO_TEST_DEFAULT_BACKEND", "") == "1"

from som_studio.core import jax_runtime  # noqa: E402

if DEFAULT_BACKEND:
    # The Qt tier needs PySide6 and a display; a GPU check needs neither.
    collect_ignore_glob = ["qt/*"]
else:
    # The suite's programs are small and each runs a few times: LLVM's optimisation of the CPU code
    # costs more than it saves (measured: the core tier 2:36 -> 1:58 on 2 cores). The HLO, where the
    # numerics and the products' precision are decided, is optimised as in a user's run. The processes
    # the tests start inherit it. A level set in XLA_FLAGS already wins.
    if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0").strip()
    jax_runtime.configure(TEST_CPU_DEVICES)

import pytest  # noqa: E402

#: Whether Qt can draw here. The Qt-free tier also runs where PySide6 and pyqtgraph are not installed
#: (a GPU machine), and there ``compare --report/--pdf`` refuse: the tests that draw charts skip.
QT_INSTALLED = all(importlib.util.find_spec(m) is not None for m in ("PySide6", "pyqtgraph"))
needs_qt = pytest.mark.skipif(not QT_INSTALLED, reason="draws charts with Qt: PySide6 or pyqtgraph is not installed")

#: Modules whose tests lay out meshes over TEST_CPU_DEVICES devices (or start
#: processes that simulate them): on the default backend they need as many devices.
MULTI_DEVICE_MODULES = ("core/test_sharded.py", "core/test_sharding.py", "session/test_distributed.py")


def pytest_unconfigure(config: pytest.Config) -> None:
    if _MADE_JAX_CACHE:
        import shutil

        shutil.rmtree(os.environ["SOM_STUDIO_TEST_JAX_CACHE"], ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "exhaustive: a case of a grid beyond its representative slice (tests/grids.py); "
        "left out of a run without -m, run by ./dev.sh test -m exhaustive",
    )
    config.addinivalue_line("markers", "cpu_backend: asserts facts of the CPU backend (skipped on another backend)")
    config.addinivalue_line(
        "markers", "test_devices: needs the TEST_CPU_DEVICES simulated devices (skipped on the default backend)"
    )


def _parametrized_over_devices(item: pytest.Item, available: int) -> bool:
    """Whether a parametrized case needs more devices than ``available``: a ``layout`` parameter
    larger than that, or a sharded implementation named by a ``name`` parameter (their cases lay
    the map over several simulated devices)."""
    from som_studio.core.impls import registry

    params = getattr(getattr(item, "callspec", None), "params", {})
    layout = params.get("layout")
    if isinstance(layout, str) and "x" in layout:
        data, _, map_ = layout.partition("x")
        if data.isdigit() and map_.isdigit() and int(data) * int(map_) > available:
            return True
    name = params.get("name")
    return isinstance(name, str) and name in registry.names() and registry.get(name).shards


def _leave_out_exhaustive(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without ``-m``, a grid's cases beyond its slice are left out, unless named one by one (``file::test[id]``)."""
    if config.option.markexpr:
        return
    named = {arg for arg in config.args if "[" in arg}
    out = [i for i in items if i.get_closest_marker("exhaustive") and not any(i.nodeid in a for a in named)]
    if out:
        config.hook.pytest_deselected(items=out)
        left = set(map(id, out))
        items[:] = [i for i in items if id(i) not in left]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _leave_out_exhaustive(config, items)
    if not DEFAULT_BACKEND:
        return
    jax = jax_runtime.jax()
    backend, n = jax.default_backend(), jax.device_count()
    multi = pytest.mark.skip(
        reason=f"needs {TEST_CPU_DEVICES} devices; the default backend ({backend}) has {n} "
        "(SOM_STUDIO_TEST_DEFAULT_BACKEND=1)"
    )
    cpu = pytest.mark.skip(reason=f"asserts the CPU backend; the default backend is {backend}")
    for item in items:
        path = item.path.as_posix()
        many = (
            any(path.endswith(m) for m in MULTI_DEVICE_MODULES)
            or item.get_closest_marker("test_devices")
            or _parametrized_over_devices(item, n)
        )
        if n < TEST_CPU_DEVICES and many:
            item.add_marker(multi)
        elif backend != "cpu" and item.get_closest_marker("cpu_backend"):
            item.add_marker(cpu)


from som_studio.config import DataSpec, RunConfig  # noqa: E402


@pytest.fixture(autouse=True)
def temporary_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This test's own home folder (``HOME``, ``XDG_DATA_HOME``, ``XDG_CONFIG_HOME`` inside it)."""
    home = tmp_path_factory.mktemp("home")
    _use_home(home, monkeypatch.setenv)
    return home


def _qt_app():  # type: ignore[no-untyped-def]
    """The test process's QApplication, if a test made one (without importing Qt otherwise)."""
    import sys

    if "PySide6.QtWidgets" not in sys.modules:
        return None
    from PySide6.QtWidgets import QApplication

    return QApplication.instance()


@pytest.fixture(autouse=True)
def qt_objects_gone_with_their_test():
    """The Qt objects a test made are deleted when it ends, not in a later test.

    ``deleteLater`` (pytest-qt's ``qtbot.addWidget`` closes each widget with it, the report renderer
    drops its charts with it) deletes only from an event loop, which most tests never run. So
    hundreds of windows and their plots stayed alive across a worker's tests, to be deleted or
    painted in whichever later test ran one (a pyqtgraph view painted there crashed a worker).
    Windows a test left shown are closed with it, for the same reason. (What only Python's cycle
    collector frees, pyqtgraph's parentless menus, is left to it: a collection per test costs up to
    0.9 s in a worker that holds JAX.)
    """
    yield
    app = _qt_app()
    if app is None:
        return
    from PySide6.QtCore import QCoreApplication, QEvent

    for widget in app.topLevelWidgets():
        if widget.isVisible():
            widget.close()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


@pytest.fixture
def small_config() -> RunConfig:
    """A small SOM that trains in well under a second with any implementation."""
    return RunConfig(impl="numpy-batch", width=12, height=9, data=DataSpec(samples=120), seed=3)


@pytest.fixture
def register_impl():
    """Register a batch implementation made by ``factory`` ("module:Class") for one test."""
    from som_studio.core.impls import registry
    from som_studio.core.impls.protocol import Implementation

    added: list[str] = []

    def register(name: str, factory: str) -> Implementation:
        impl = registry.register(
            Implementation(
                name=name,
                kind="batch",
                backend="numpy",
                description=f"{name}, for a test",
                factory=factory,
                estimate=lambda s: 0,
            )
        )
        added.append(name)
        return impl

    yield register
    for name in added:
        registry._REGISTRY.pop(name)


@pytest.fixture
def english_left():
    """``english_left(text)``: the English sentences of the gettext catalogue still in ``text``.

    For a test that reads output under Korean: every marked string's words between its
    placeholders (a dozen characters or more, two words at least) that its Korean
    translation does not itself keep (code, flags and units stay as they are).
    """
    import re

    from som_studio import i18n

    catalogue = i18n.LOCALE_DIR / "ko" / "LC_MESSAGES" / f"{i18n.DOMAIN}.mo"
    with catalogue.open("rb") as f:
        pairs = i18n._gettext.GNUTranslations(f)._catalog  # type: ignore[attr-defined]
    fragments: set[str] = set()
    for msgid, msgstr in pairs.items():
        source = msgid[0] if isinstance(msgid, tuple) else msgid
        if not source:
            continue
        for piece in re.split(r"\{[^{}]*\}|%\(\w+\)\w|%s", source):
            piece = piece.strip(" .,;:()'\"\n")
            if len(piece) >= 12 and len(re.findall(r"[A-Za-z]{2,}", piece)) >= 2 and piece not in msgstr:
                fragments.add(piece)

    def find(text: str) -> list[str]:
        return sorted(f for f in fragments if f in text)

    return find


@pytest.fixture
def forget():
    """Unregister the implementations a test loaded (a user's files: the registry is the process's)."""
    from som_studio.core.impls import registry

    before = set(registry.names())
    yield
    for name in set(registry.names()) - before:
        registry.unregister(name)
