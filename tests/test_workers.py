"""Every test process is set up alike by tests/conftest.py: ``./dev.sh test`` runs several (pytest-xdist)."""

from __future__ import annotations

import pytest

from tests.conftest import DEFAULT_BACKEND, TEST_CPU_DEVICES


@pytest.mark.skipif(DEFAULT_BACKEND, reason="runs on JAX's default backend (SOM_STUDIO_TEST_DEFAULT_BACKEND=1)")
def test_this_process_sees_the_simulated_cpu_devices():
    # The count is fixed when JAX starts: each worker sets it before it imports JAX (conftest first).
    from som_studio.core import jax_runtime

    jax = jax_runtime.jax()
    assert jax.default_backend() == "cpu" and jax.device_count() == TEST_CPU_DEVICES
