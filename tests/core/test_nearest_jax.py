"""Projection's device search (the kernel plans) against the NumPy reference :func:`metrics.nearest_units`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from som_studio.core.plans import fused_plan
from som_studio.core.som import metrics


def _map_and_rows(missing: bool):
    rng = np.random.default_rng(3)
    weights = rng.random((12, 17, 5))
    x = rng.random((300, 5))
    x[:5] = weights.reshape(-1, 5)[[0, 7, 100, 203, 7]]  # rows sitting on units
    x[5] = weights[3, 4]  # ...twice the same unit
    if missing:
        x[rng.random(x.shape) < 0.2] = np.nan
        x[np.isnan(x).all(axis=1), 0] = 0.5
    return weights, x


@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("form", fused_plan.FORMS)
def test_every_plan_finds_the_references_units(form, missing):
    from som_studio.core.plans.nearest_jax import DeviceNearest

    weights, x = _map_and_rows(missing)
    first, _ = metrics.nearest_units(weights, x)
    with fused_plan.forced(form, budget=4096):  # several chunks inside one call
        search = DeviceNearest(weights.reshape(-1, 5), 128, np.float64)
    assert search.plan.form == form
    got = np.concatenate([search(x[s : s + 128]) for s in range(0, len(x), 128)])
    np.testing.assert_array_equal(got, first)
    with pytest.raises(ValueError, match="at most 128 rows"):
        search(x[:129])


def test_a_big_map_projects_on_the_device_as_the_reference_does(monkeypatch):
    from som_studio import trained

    weights, x = _map_and_rows(missing=True)
    run = trained.SomRun(Path("big.somrun"), {}, weights, None)  # a run stored without a model: unscaled
    reference = metrics.nearest_units(weights, x)
    monkeypatch.setattr(trained, "DEVICE_SEARCH_WORK", 0)  # every map counts as big
    monkeypatch.setattr(trained, "PROJECT_CHUNK_ROWS", 64)  # several chunks through one program
    first, d2 = run._nearest(x)
    assert run._device_search is not None
    np.testing.assert_array_equal(first, reference[0])
    np.testing.assert_allclose(d2, reference[1], rtol=1e-12, atol=1e-15)
