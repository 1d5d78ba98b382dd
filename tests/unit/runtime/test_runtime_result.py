"""``Result`` validation: a requeue delay must be a real, finite, representable duration."""

from __future__ import annotations

import datetime
import math

import pytest

from kubectrl.runtime import Result
from kubectrl.runtime._reconcile import MAX_REQUEUE_AFTER


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, -math.inf, 1e300, -1, -0.001, MAX_REQUEUE_AFTER * 2],
    ids=["nan", "inf", "-inf", "1e300", "-1", "-1ms", "over-max"],
)
def test_result_rejects_requeue_after_that_is_not_a_sane_duration(bad: float) -> None:
    with pytest.raises(ValueError, match=r"requeue_after") as info:
        Result(requeue_after=bad)
    # The message names the value the caller passed.
    assert repr(float(bad)) in str(info.value) or str(float(bad)) in str(info.value)


def test_result_rejects_huge_timedelta_and_non_numbers() -> None:
    with pytest.raises(ValueError, match="requeue_after"):
        Result(requeue_after=datetime.timedelta(days=999_999_999))
    with pytest.raises(TypeError, match="requeue_after"):
        Result(requeue_after="30")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="requeue_after"):
        Result(requeue_after=None)  # type: ignore[arg-type]


def test_result_accepts_zero_fractions_and_the_maximum() -> None:
    assert Result(requeue_after=0).is_zero()
    assert Result(requeue_after=0.25).requeue_after == 0.25
    assert Result(requeue_after=MAX_REQUEUE_AFTER).requeue_after == MAX_REQUEUE_AFTER
    assert Result(requeue_after=datetime.timedelta(days=30)).requeue_after == 30 * 86400
