"""A data table (:class:`Table`): numeric features, the optional label and id columns, its scaling and notes."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from som_studio.core import jax_runtime
from som_studio.core.data.checks import MISSING_MARK_MIN, DataError, any_missing, column_flag
from som_studio.core.data.scaling import Scaling, fit_scaling, row_blocks
from som_studio.i18n import _


def random_colours(count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` x 3 colours, uniform in [0, 1] (float64)."""
    return rng.random((count, 3))


@dataclass(frozen=True, eq=False)
class Table:
    """A data table: numeric features, and the optional label and id columns.

    Attributes
    ----------
    values : (N, D) float64 array, or float32 as a float32 file or array holds it; NaN marks a missing value
    feature_names : one name per feature column
    labels : (N,) array of str, or ``None``
    ids : (N,) array of str, or ``None``
    label_column, id_column : the chosen columns' names, or ``None``
    scaling : how ``values`` were scaled from the file's units (``none`` when not)
    source : the file the table was read from (``data`` for one made in memory), for messages
    notes : what reading it decided without certainty (a guessed encoding, a header of years,
        an unnamed column), one line each, for the user to see
    """

    values: np.ndarray
    feature_names: tuple[str, ...]
    labels: np.ndarray | None = None
    ids: np.ndarray | None = None
    label_column: str | None = None
    id_column: str | None = None
    scaling: Scaling | None = field(default=None)
    source: str = "data"
    notes: tuple[str, ...] = ()

    @property
    def has_missing(self) -> bool:
        return any_missing(self.values)

    def scaled(self, method: str, dtype: Any = np.float64) -> Table:
        """This table with its features scaled by ``method`` (fitted to these values), kept in ``dtype``.

        The arithmetic is float64's whatever ``dtype``: a float32 run's table holds each scaled value rounded once
        to float32, the very number it would train on, in half the memory of float64.

        A feature whose values are too large for the scaling's arithmetic (its range or
        squares overflow float64) is refused by name: its scaled values would be NaN, read
        as missing everywhere, and the run could not be saved.
        """
        s = fit_scaling(self.values, method)
        if method == "none":
            return replace(self, scaling=s)
        # Scaled a block of rows at a time into memory JAX's CPU device places as it is (the run's examples).
        n, d = self.values.shape
        values = jax_runtime.host_array((n, d), dtype)
        lost = ~(np.isfinite(s.offset) & np.isfinite(s.scale))
        with np.errstate(over="ignore", invalid="ignore"):
            for rows in row_blocks(n, d):
                values[rows] = s.apply(self.values[rows])
                lost |= (~np.isfinite(values[rows]) & ~np.isnan(self.values[rows])).any(axis=0)
        if lost.any():
            j = int(np.argmax(lost))
            top = float(np.nanmax(np.abs(self.values[:, j])))
            name = self.feature_names[j]
            fix = (
                _("a value this large often marks a missing one: write those as empty cells or NA")
                if top >= MISSING_MARK_MIN
                else _("divide the column by a power of ten")
            )
            raise DataError(
                _(
                    "{path}: feature {name!r} cannot be scaled with {method}: its values (up to {top:.3g} in size) "
                    "overflow the arithmetic; {fix}, or leave it out with {flag}"
                ).format(
                    path=self.source, name=name, method=method, top=top, fix=fix, flag=column_flag("--ignore", name)
                )
            )
        return replace(self, values=values, scaling=s)


def default_feature_names(count: int) -> tuple[str, ...]:
    """Names for features of a file without a header: ``x1``, ``x2``, ..."""
    return tuple(f"x{j + 1}" for j in range(count))
