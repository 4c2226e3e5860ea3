r"""Exercise 3, "try it without vmap": whole-array operations instead of one example at a time.

    som-studio bench --impl docs/examples/fori_loop.py:ForiLoop,docs/examples/no_vmap.py:NoVmap \
        --grid 60x34 --epochs 20

``jax.vmap`` writes the epoch one example at a time and lets JAX batch it. Written for all
examples at once, the pieces show: one (examples x units) distance matrix by broadcasting, each
example's best unit by ``argmin`` along its row, and the neighbourhood weights as two small
tables, rows (``hy``) and columns (``hx``), because the Gaussian is separable:
``h[n, y, x] = hy[n, y] * hx[n, x]``. The new map's sums are then two ``einsum``s that never
build an (examples x units) table of weights.
"""

import jax
import jax.numpy as jnp
from my_som import MySom


class NoVmap(MySom):
    """The batch epoch as whole-array operations (no vmap), a chunk per jitted lax.fori_loop."""

    def warmup(self):
        epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, 0, 1).block_until_ready()

    def run(self, first, count):
        self.som = epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, first, count)
        self.som.block_until_ready()


def epoch(som, data, xs, ys, sigma_x, sigma_y):
    height, width = ys.shape[0], xs.shape[0]
    dist = ((data[:, None, :] - som[None, :, :]) ** 2).sum(axis=2)  # (examples, units)
    by, bx = jnp.divmod(jnp.argmin(dist, axis=1), width)
    hy = jnp.exp(-((ys[None, :] - by[:, None]) ** 2) / sigma_y**2)  # (examples, rows)
    hx = jnp.exp(-((xs[None, :] - bx[:, None]) ** 2) / sigma_x**2)  # (examples, columns)
    hi = jax.lax.Precision.HIGHEST
    num = jnp.einsum("ny,nx,nd->yxd", hy, hx, data, precision=hi).reshape(height * width, -1)
    den = jnp.einsum("ny,nx->yx", hy, hx, precision=hi).reshape(-1, 1)
    ok = den > 1e-30
    return jnp.where(ok, num / jnp.where(ok, den, 1.0), som)


@jax.jit
def epochs(som, data, xs, ys, sigma_x, sigma_y, first, count):
    def body(t, som):
        return epoch(som, data, xs, ys, sigma_x[t], sigma_y[t])

    return jax.lax.fori_loop(first, first + count, body, som)
