"""The picture pipeline: one colour-range rule for every view, frames that carry it across processes."""

from __future__ import annotations

import pickle

import numpy as np

from som_studio import picture
from som_studio.core.som import metrics


def test_the_range_is_the_first_maps_and_frames_carry_it():
    rng = np.random.default_rng(0)
    first = rng.uniform(-3.0, 7.0, (6, 9, 3))
    lo, hi = picture.colour_range(first)
    np.testing.assert_array_equal(lo, first.reshape(-1, 3).min(axis=0))
    np.testing.assert_array_equal(hi, first.reshape(-1, 3).max(axis=0))
    # A later, contracted map is drawn on the first map's range: it no longer spans 0..255.
    later = first.mean(axis=(0, 1)) + 0.25 * (first - first.mean(axis=(0, 1)))
    frame = picture.make_frame(40, later, picture.ViewChoice(picture.RGB), lo, hi)
    assert frame.range is not None
    np.testing.assert_array_equal(frame.range.lo, lo)
    assert 0 < frame.image.min() and frame.image.max() < 255
    # A component plane is the exception: coloured over the map's own range, it spans 0..255 again.
    plane = picture.make_frame(40, later, picture.ViewChoice(picture.COMPONENT, 2), lo, hi)
    assert plane.image.min() == 0 and plane.image.max() == 255
    assert isinstance(plane.legend, picture.ColourBar) and plane.legend.hi == later[..., 2].max()
    # Frames cross the worker's pipe: they pickle with their range.
    back = pickle.loads(pickle.dumps(frame))
    np.testing.assert_array_equal(back.image, frame.image)
    np.testing.assert_array_equal(back.range.hi, hi)


def test_rgb_agrees_with_the_cores_colours_and_umatrix_is_relative():
    w = np.random.default_rng(1).uniform(0.2, 0.9, (5, 7, 3))
    lo, hi = picture.colour_range(w)
    rgb = picture.make_frame(0, w, picture.ViewChoice(), lo, hi)
    np.testing.assert_array_equal(rgb.image, metrics.to_rgb(w, lo, hi))
    um = picture.make_frame(0, w, picture.ViewChoice(picture.UMATRIX), lo, hi)
    assert um.image.max() == 255  # each U-matrix picture on its own maximum
    twice = picture.make_frame(0, 2 * w, picture.ViewChoice(picture.UMATRIX), lo, hi)
    np.testing.assert_array_equal(um.image, twice.image)


def test_the_kept_picture_is_the_frame_in_rgb():
    w = np.random.default_rng(2).random((4, 6, 5))
    lo, hi = picture.colour_range(w)
    kept = picture.map_image(w, lo, hi)
    frame = picture.make_frame(0, w, picture.ViewChoice(), lo, hi)  # RGB fits to the U-matrix for 5 features
    assert frame.view.mode == picture.UMATRIX and kept.shape == (4, 6, 3)
    np.testing.assert_array_equal(kept, picture.as_rgb(frame.image))
    three = np.random.default_rng(3).random((4, 6, 3))
    np.testing.assert_array_equal(picture.map_image(three), metrics.to_rgb(three))  # no range: values in [0, 1]
