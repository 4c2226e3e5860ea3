"""A live view's draws are paced by what they cost: within their share of a core, between two bounds."""

from __future__ import annotations

import pytest

from som_studio.app_model.pacing import DrawPacer


def test_a_view_draws_as_often_as_its_share_of_a_core_allows_between_its_bounds():
    pacer = DrawPacer(share=0.01, least_s=0.05, most_s=1.0)
    assert pacer.cost_s is None and pacer.interval_s() == 0.05  # nothing measured: the most draws
    for _ in range(7):
        pacer.book(0.002)  # 2 ms a draw at 1 % of a core: one every 0.2 s
    assert pacer.interval_s() == pytest.approx(0.2)
    assert pacer.wait_s(None, 10.0) == 0.0  # never drawn: now
    assert pacer.wait_s(10.0, 10.05) == pytest.approx(0.15)
    assert pacer.wait_s(10.0, 10.3) == 0.0
    for _ in range(7):
        pacer.book(0.0001)  # cheap: the most draws, no more
    assert pacer.interval_s() == 0.05
    for _ in range(7):
        pacer.book(5.0)  # however slow: the view still moves
    assert pacer.interval_s() == 1.0


def test_one_slow_draw_does_not_slow_the_view_and_clear_forgets():
    pacer = DrawPacer(share=0.01, least_s=0.0, most_s=10.0, kept=5)
    for cost in (0.001, 0.001, 0.5, 0.001, 0.001):  # a resize's paint among ordinary ones
        pacer.book(cost)
    assert pacer.cost_s == 0.001 and pacer.interval_s() == pytest.approx(0.1)
    for cost in (0.004, 0.004, 0.004):  # the last few count: the view got dearer (a larger window)
        pacer.book(cost)
    assert pacer.cost_s == 0.004
    pacer.clear()
    assert pacer.cost_s is None and pacer.interval_s() == 0.0


def test_bounds_that_cannot_hold_are_refused():
    with pytest.raises(ValueError, match="share"):
        DrawPacer(share=0.0, least_s=0.1, most_s=1.0)
    with pytest.raises(ValueError, match="least"):
        DrawPacer(share=0.01, least_s=1.0, most_s=0.1)
