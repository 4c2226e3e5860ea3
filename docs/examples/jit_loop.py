r"""Exercise 1, "jit the whole batch loop": a chunk of epochs is one jitted call.

    som-studio bench --impl docs/examples/my_som.py:MySom,docs/examples/jit_loop.py:JitLoop \
        --grid 60x34 --epochs 20

``my_som.py`` calls one jitted epoch per epoch from Python. Here the loop over a chunk's
epochs is inside ``jax.jit``: one dispatch per chunk instead of one per epoch. ``count`` is a
static argument, so the Python loop is unrolled into the program, and every new chunk size
compiles a new program: the record's ``compiles`` shows how many (exercise 2 removes them).
"""

from functools import partial

import jax
from my_som import MySom, epoch


class JitLoop(MySom):
    """A chunk of epochs unrolled under one jax.jit (count static: a compile per chunk size)."""

    def warmup(self):
        epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, 0, 1).block_until_ready()

    def run(self, first, count):
        self.som = epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, first, count)
        self.som.block_until_ready()


@partial(jax.jit, static_argnums=(7,))
def epochs(som, data, xs, ys, sigma_x, sigma_y, first, count):
    for i in range(count):  # unrolled: count is known when the program is traced
        som = epoch(som, data, xs, ys, sigma_x[first + i], sigma_y[first + i])
    return som
