"""JAX's persistent compilation cache: on by default in the user's cache folder, turned off or moved by a setting.

The processes here get their own cache folder (``SOM_STUDIO_COMPILE_CACHE``): no test writes into the
user's cache folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from som_studio.core import jax_runtime

ROOT = Path(__file__).resolve().parents[2]

# A fresh process compiles one program and says how many compilations JAX read from the persistent cache.
PROGRAM = """
import json
from jax import monitoring
hits = []
monitoring.register_event_listener(lambda event, **kw: hits.append(event) if event.endswith("cache_hits") else None)
from som_studio.core import jax_runtime
jax = jax_runtime.jax()
jax.jit(lambda x: (x * 2.5 + 1.0).sum())(jax.numpy.arange(7.0)).block_until_ready()
c = jax.config
print(json.dumps({"dir": c.jax_compilation_cache_dir, "hits": len(hits), "max": c.jax_compilation_cache_max_size}))
"""


def _run(env: dict[str, str]) -> dict:
    full = {k: v for k, v in os.environ.items() if not k.startswith("JAX_COMPILATION_CACHE")}
    full.update(env, JAX_PLATFORMS="cpu")
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=full, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_second_process_reads_the_compiled_program_back(tmp_path):
    first = _run({"SOM_STUDIO_COMPILE_CACHE": str(tmp_path)})
    assert first == {"dir": str(tmp_path), "hits": 0, "max": jax_runtime.COMPILE_CACHE_BYTES}  # bounded
    assert any(tmp_path.iterdir())  # the program was written
    second = _run({"SOM_STUDIO_COMPILE_CACHE": str(tmp_path)})
    assert second["hits"] >= 1


def test_the_cache_can_be_turned_off_and_a_folder_jax_was_given_is_kept(tmp_path):
    assert _run({"SOM_STUDIO_COMPILE_CACHE": "off"})["dir"] is None
    theirs = tmp_path / "theirs"
    got = _run({"SOM_STUDIO_COMPILE_CACHE": str(tmp_path / "ours"), "JAX_COMPILATION_CACHE_DIR": str(theirs)})
    assert got["dir"] == str(theirs) and not (tmp_path / "ours").exists()
    assert got["max"] == -1  # their cache, their bound: JAX's default, none


def test_the_default_folder_is_in_the_user_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv(jax_runtime.COMPILE_CACHE_VAR, raising=False)
    monkeypatch.setenv("SOM_STUDIO_CACHE_DIR", str(tmp_path))
    assert jax_runtime.compile_cache_dir() == str(tmp_path / "jax")
    for off in ("off", "0", "No"):
        monkeypatch.setenv(jax_runtime.COMPILE_CACHE_VAR, off)
        assert jax_runtime.compile_cache_dir() is None
