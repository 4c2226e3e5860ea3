"""SOM.partial_fit (more training on new rows) and train()'s checkpoint and resume."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

import som_studio
from som_studio.api import SOM, TrainError
from som_studio.session.events import ChunkTimed


def _batch_epoch(w: np.ndarray, x: np.ndarray, sigma: tuple[float, float]) -> np.ndarray:
    """One batch epoch of a rect map at a fixed radius, written out (docs/internals.md's formula)."""
    h, wd, d = w.shape
    flat = w.reshape(-1, d)
    bmu = np.argmin(((x[:, None, :] - flat[None]) ** 2).sum(-1), axis=1)
    by, bx = np.divmod(bmu, wd)
    ys, xs = np.arange(h), np.arange(wd)
    hy = np.exp(-((ys[None, :] - by[:, None]) ** 2) / sigma[1] ** 2)  # (N, H)
    hx = np.exp(-((xs[None, :] - bx[:, None]) ** 2) / sigma[0] ** 2)  # (N, W)
    weight = hy[:, :, None] * hx[:, None, :]  # (N, H, W)
    num = np.einsum("nhw,nd->hwd", weight, x)
    den = weight.sum(0)[:, :, None]
    return np.where(den > 1e-30, num / np.maximum(den, 1e-300), w)


def test_partial_fit_trains_the_fitted_map_on_new_rows_at_its_final_radius():
    rng = np.random.default_rng(0)
    old, new = rng.random((200, 3)), rng.random((150, 3)) * 0.5 + 0.5
    som = SOM((5, 4), impl="numpy-batch", epochs=4, precision="float64", scaling="minmax").fit(old)
    before, scaling = som.run_._trained.copy(), som.run_.scaling
    qe_before = -som.score(new)
    assert som.partial_fit(new) is som
    sigma_end = tuple(som.run_.record["config"]["sigma"]["end"])
    expected = before
    for _ in range(4):  # the estimator's epochs, each at the fitted run's final radius
        expected = _batch_epoch(expected, scaling.apply(new), sigma_end)
    np.testing.assert_allclose(som.run_._trained, expected, rtol=1e-10, atol=1e-12)
    assert som.run_.scaling.to_dict() == scaling.to_dict()  # new rows in the first fit's units
    assert -som.score(new) < qe_before


def test_partial_fit_first_call_fits_and_online_goes_on_at_the_final_rate():
    rng = np.random.default_rng(1)
    x = rng.random((100, 3))
    first = SOM((4, 3), impl="numpy-online", steps=300).partial_fit(x)
    fitted = SOM((4, 3), impl="numpy-online", steps=300).fit(x)
    np.testing.assert_array_equal(first.codebook_, fitted.codebook_)
    first.partial_fit(rng.random((50, 3)))
    cfg = first.run_.record["config"]
    assert (
        cfg["learning_rate"]["start"]
        == cfg["learning_rate"]["end"]
        == fitted.run_.record["config"]["learning_rate"]["end"]
    )
    with pytest.raises(ValueError, match="X has 2 features, but SOM is expecting 3"):
        first.partial_fit(x[:, :2])


def test_train_checkpoints_and_refuses_to_resume_other_settings(tmp_path):
    run = som_studio.train(None, impl="numpy-batch", grid=(5, 4), epochs=3, samples=60, checkpoint=tmp_path)
    again = som_studio.train(None, impl="numpy-batch", grid=(5, 4), epochs=3, samples=60, resume=tmp_path)
    np.testing.assert_array_equal(again.codebook, run.codebook)  # it had ended: nothing more to train
    assert again.record["extra"]["resumed"]["iteration"] == 3
    with pytest.raises(TrainError, match=r"grid: differs from the checkpoint .*\(5x4 there, 6x4 here\)"):
        som_studio.train(None, impl="numpy-batch", grid=(6, 4), epochs=3, samples=60, resume=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(TrainError, match="holds no complete checkpoint"):
        som_studio.train(None, impl="numpy-batch", grid=(5, 4), epochs=3, samples=60, resume=tmp_path / "empty")
    (tmp_path / "table.csv").write_text("a,b\n1,2\n")
    with pytest.raises(TrainError, match=r"resume: .*table.csv: a file, not a folder of checkpoints"):
        som_studio.train(None, impl="numpy-batch", grid=(5, 4), epochs=3, samples=60, resume=tmp_path / "table.csv")


def test_ctrl_c_saves_where_the_run_stood_and_resume_ends_at_the_uninterrupted_map(tmp_path):
    x = np.random.default_rng(3).random((120, 4))
    settings = dict(impl="numpy-batch", grid="6x5", epochs=30, seed=4)
    before = signal.getsignal(signal.SIGINT)

    def ctrl_c_after_the_first_chunk(ev):
        if isinstance(ev, ChunkTimed) and ev.first == 0:
            os.kill(os.getpid(), signal.SIGINT)  # a real SIGINT, as a terminal or a notebook's interrupt sends

    ck = tmp_path / "ck"
    with pytest.raises(KeyboardInterrupt, match=rf"cancelled after \d+ of 30 iterations; saved in {ck}"):
        som_studio.train(x, checkpoint=ck, progress=ctrl_c_after_the_first_chunk, **settings)
    assert signal.getsignal(signal.SIGINT) is before
    # The same call again, resume forgotten: the stopped run's checkpoint is kept, and the way on said.
    with pytest.raises(TrainError, match=rf"checkpoint: {ck} holds an unfinished run's checkpoint .*resume="):
        som_studio.train(x, checkpoint=ck, **settings)
    # Data given in memory has no file to stamp: other rows, or the same rows with one value changed, are refused.
    changed = x.copy()
    changed[7, 2] += 0.25
    for other, said in ((x[:100], r"100 rows x 4 columns here"), (changed, r"holds other values than the data")):
        with pytest.raises(TrainError, match=rf"data: .*{said}"):
            som_studio.train(other, resume=ck, **settings)
    resumed = som_studio.train(x, resume=ck, **settings)
    assert 0 < resumed.record["extra"]["resumed"]["iteration"] < 30
    np.testing.assert_array_equal(resumed.codebook, som_studio.train(x, **settings).codebook)
    # Without checkpoints the interrupt still reaches the caller.
    with pytest.raises(KeyboardInterrupt, match=r"cancelled after \d+ of 30 iterations$"):
        som_studio.train(x, progress=ctrl_c_after_the_first_chunk, **settings)
