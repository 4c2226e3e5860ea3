"""A batch's block of values filled from the pieces a file is read in: an (n, D) array or D columns."""

from __future__ import annotations

import numpy as np

# Bytes of a batch's rows filled from columns at a time: written column by column, the block's rows
# stay in the cache (about 2x faster than writing each whole column across the batch).
FILL_BYTES = 1 << 20


def piece_rows(values: np.ndarray | list[np.ndarray]) -> int:
    """The rows of a piece: an (n, D) array's, or its columns'."""
    return int(values.shape[0]) if isinstance(values, np.ndarray) else int(values[0].shape[0])


def fill_block(dst: np.ndarray, values: np.ndarray | list[np.ndarray], at: int) -> None:
    """``dst`` (n, D) from rows ``at`` to ``at + n`` of ``values``, converted to ``dst``'s type."""
    n = dst.shape[0]
    if isinstance(values, np.ndarray):
        part = values[at : at + n]
        if np.float64 not in (part.dtype, dst.dtype) and part.dtype != dst.dtype:  # through float64, as a table loads
            part = part.astype(np.float64)
        dst[...] = part
        return
    step = max(64, FILL_BYTES // max(1, dst.itemsize * dst.shape[1]))
    for s in range(0, n, step):
        block = dst[s : s + step]
        m = block.shape[0]
        for j, col in enumerate(values):
            block[:, j] = col[at + s : at + s + m]
