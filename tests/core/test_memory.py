from __future__ import annotations

from som_studio.core import memory, registry
from som_studio.core.protocol import ProblemSize


def _size(side, samples=1000, features=3):
    return ProblemSize(height=side, width=side, features=features, samples=samples, iterations=50, itemsize=4)


def test_every_implementation_estimates_memory():
    for impl in registry.all_implementations():
        assert impl.estimate(_size(16)) > 0


def test_numpy_batch_needs_no_quadratic_memory():
    # The playbook reserves an M x M neighbourhood cache: 8.4 GB at 240 x 135.
    # Ours is bounded: growing the map 16x in units grows the estimate ~linearly.
    small = memory.numpy_batch(_size(256, samples=100_000))
    big = memory.numpy_batch(_size(1024, samples=100_000))
    assert big < 20 * small
    m = 1024 * 1024
    assert big < m * m * 4 / 1000


def test_vmap_batch_estimate_scales_with_examples_times_units():
    a = memory.jax_vmap_batch(_size(64, samples=1000))
    b = memory.jax_vmap_batch(_size(64, samples=2000))
    assert 1.8 < (b - memory.JAX_OVERHEAD) / (a - memory.JAX_OVERHEAD) < 2.1


def test_format_bytes():
    assert memory.format_bytes(512) == "512 B"
    assert memory.format_bytes(3 * 1024**3) == "3.0 GiB"
