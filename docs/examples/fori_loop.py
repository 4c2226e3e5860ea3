r"""Exercise 2, "rewrite the loop with lax.fori_loop": one program for every chunk.

    som-studio bench --impl docs/examples/jit_loop.py:JitLoop,docs/examples/fori_loop.py:ForiLoop \
        --grid 60x34 --epochs 20

``jax.lax.fori_loop(first, first + count, body, som)`` is a loop *in* the compiled program:
``first`` and ``count`` are traced values, so growing chunks reuse one program (one compile,
at warm-up) and the program's size does not grow with the chunk.
"""

import jax
from my_som import MySom, epoch


class ForiLoop(MySom):
    """A chunk of epochs as one jitted lax.fori_loop (first and count traced: one compile)."""

    def warmup(self):
        epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, 0, 1).block_until_ready()

    def run(self, first, count):
        self.som = epochs(self.som, self.data, self.xs, self.ys, self.sigma_x, self.sigma_y, first, count)
        self.som.block_until_ready()


@jax.jit
def epochs(som, data, xs, ys, sigma_x, sigma_y, first, count):
    def body(t, som):
        return epoch(som, data, xs, ys, sigma_x[t], sigma_y[t])

    return jax.lax.fori_loop(first, first + count, body, som)
