"""Test set-up shared by every tier.

Runs before anything imports Qt or JAX: Qt draws offscreen, and JAX's CPU
backend exposes 8 simulated devices for the sharding tests (the device count is
fixed per process; tests that need another count start a subprocess).
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
TEST_CPU_DEVICES = 8

from som_studio.core import jax_runtime  # noqa: E402

jax_runtime.configure(TEST_CPU_DEVICES)

import pytest  # noqa: E402

from som_studio.config import DataSpec, RunConfig  # noqa: E402


@pytest.fixture
def small_config() -> RunConfig:
    """A small SOM that trains in well under a second with any implementation."""
    return RunConfig(width=12, height=9, data=DataSpec(samples=120), seed=3)


@pytest.fixture
def register_impl():
    """Register a batch implementation made by ``factory`` ("module:Class") for one test."""
    from som_studio.core import registry
    from som_studio.core.protocol import Implementation

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
