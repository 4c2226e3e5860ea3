"""The smallest complete implementation SOM Studio can run: the playbook's batch SOM, in JAX.

    som-studio bench --impl docs/examples/my_som.py:MySom --grid 60x34 --epochs 5

Each epoch finds every example's best-matching unit with ``jax.vmap`` (the playbook's
``batch_step``) and is one jitted call; a Python loop runs the epochs. The three exercises in
docs/your-implementation.md start from this file.
"""

import jax
import jax.numpy as jnp
import numpy as np


class MySom:
    """The playbook's batch step under jax.vmap, one jitted epoch at a time."""

    kind = "batch"  # epochs of the batch SOM ("online": one example per step)
    backend = "jax"

    def __init__(self, problem):
        self.height, self.width, features = problem.init_map.shape
        self.data = jnp.asarray(problem.data)
        self.som = jnp.asarray(problem.init_map.reshape(-1, features))  # one row per unit, row-major
        every = problem.whole()  # every epoch's radii (and, online, learning rate and example order)
        self.sigma_x, self.sigma_y = jnp.asarray(every.sigma_x), jnp.asarray(every.sigma_y)
        self.xs = jnp.arange(self.width, dtype=self.som.dtype)
        self.ys = jnp.arange(self.height, dtype=self.som.dtype)

    def warmup(self):
        """Compile the epoch (its result is thrown away: the map does not change)."""
        epoch(self.som, self.data, self.xs, self.ys, self.sigma_x[0], self.sigma_y[0]).block_until_ready()

    def run(self, first, count):
        """Train epochs first .. first + count - 1 and return with the map ready."""
        for t in range(first, first + count):
            self.som = epoch(self.som, self.data, self.xs, self.ys, self.sigma_x[t], self.sigma_y[t])
        self.som.block_until_ready()

    def get_map(self):
        return np.asarray(self.som).reshape(self.height, self.width, -1)

    def close(self):
        self.som = self.data = None


@jax.jit
def epoch(som, data, xs, ys, sigma_x, sigma_y):
    def one(x):  # one example: its best unit, and its neighbourhood-weighted share of the new map
        bmu = jnp.argmin(((x - som) ** 2).sum(axis=1))
        by, bx = jnp.divmod(bmu, xs.shape[0])
        h = jnp.outer(jnp.exp(-((ys - by) ** 2) / sigma_y**2), jnp.exp(-((xs - bx) ** 2) / sigma_x**2))
        h = h.reshape(-1, 1)
        return x * h, h

    num, den = jax.vmap(one)(data)
    num, den = num.sum(axis=0), den.sum(axis=0)
    ok = den > 1e-30  # a unit no example reaches keeps its weights
    return jnp.where(ok, num / jnp.where(ok, den, 1.0), som)
