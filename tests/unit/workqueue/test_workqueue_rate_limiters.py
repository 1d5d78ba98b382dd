"""Rate limiters: delays, caps, the bucket's burst and refill, forget and num_requeues."""

from __future__ import annotations

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_doubles_from_5ms_and_caps_at_1000s() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:5] == pytest.approx([0.005, 0.010, 0.020, 0.040, 0.080])
    assert delays[17] == pytest.approx(0.005 * 2**17)  # 655.36 s
    assert delays[18:] == [1000.0, 1000.0]
    assert limiter.num_requeues("a") == 20


def test_exponential_is_per_item_and_forget_resets() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    limiter.when("a")
    limiter.when("a")
    assert limiter.when("b") == 0.005
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_exponential_survives_huge_failure_counts() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        base_delay=1.0, max_delay=60.0
    )
    delays = [limiter.when("a") for _ in range(1100)]
    assert delays[-1] == 60.0


def test_exponential_rejects_negative_delays() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        ItemExponentialFailureRateLimiter(base_delay=-1.0)


def test_bucket_allows_100_at_once_then_10_per_second() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(clock=clock)
    assert [limiter.when(f"k{i}") for i in range(100)] == [0.0] * 100
    assert limiter.when("k100") == pytest.approx(0.1)
    assert limiter.when("k101") == pytest.approx(0.2)
    assert limiter.when("k102") == pytest.approx(0.3)


def test_bucket_refills_at_qps_up_to_burst() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(qps=10.0, burst=100, clock=clock)
    for i in range(100):
        limiter.when(str(i))
    clock.advance(1.0)  # ten tokens back
    assert [limiter.when(str(i)) for i in range(10)] == [0.0] * 10
    assert limiter.when("x") == pytest.approx(0.1)
    clock.advance(1000.0)  # refills to the burst, not beyond
    assert [limiter.when(str(i)) for i in range(100)] == [0.0] * 100
    assert limiter.when("y") > 0


def test_bucket_tracks_no_items() -> None:
    limiter: BucketRateLimiter[str] = BucketRateLimiter(clock=FakeClock())
    limiter.when("a")
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_bucket_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="qps"):
        BucketRateLimiter(qps=0.0)


def test_fast_slow() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(
        fast_delay=0.1, slow_delay=10.0, max_fast_attempts=3
    )
    assert [limiter.when("a") for _ in range(5)] == [0.1, 0.1, 0.1, 10.0, 10.0]
    assert limiter.num_requeues("a") == 5
    assert limiter.when("b") == 0.1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.1


def test_max_of_takes_the_longest_and_records_in_all() -> None:
    fast_slow: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(
        fast_delay=0.5, slow_delay=3.0, max_fast_attempts=2
    )
    exponential: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        base_delay=0.1
    )
    limiter = MaxOfRateLimiter(fast_slow, exponential)
    assert [limiter.when("a") for _ in range(7)] == pytest.approx(
        [0.5, 0.5, 3.0, 3.0, 3.0, 3.2, 6.4]
    )
    assert fast_slow.num_requeues("a") == exponential.num_requeues("a") == 7
    assert limiter.num_requeues("a") == 7
    limiter.forget("a")
    assert fast_slow.num_requeues("a") == exponential.num_requeues("a") == 0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError, match="at least one"):
        MaxOfRateLimiter()


def test_with_max_wait_caps_delays() -> None:
    inner: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        base_delay=1.0
    )
    limiter = WithMaxWaitRateLimiter(inner, max_delay=5.0)
    assert [limiter.when("a") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert limiter.num_requeues("a") == 5
    limiter.forget("a")
    assert inner.num_requeues("a") == 0


def test_default_controller_rate_limiter_is_max_of_exponential_and_bucket() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    # One key failing: the exponential backoff dominates.
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # Many keys failing at once: after the burst of 100 the bucket dominates.
    delays = [limiter.when(f"k{i}") for i in range(100)]
    assert delays[:97] == [0.005] * 97
    assert delays[-1] == pytest.approx(0.3)
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0


def test_limiters_satisfy_the_protocol() -> None:
    limiters: list[RateLimiter[str]] = [
        ItemExponentialFailureRateLimiter(),
        BucketRateLimiter(clock=FakeClock()),
        ItemFastSlowRateLimiter(fast_delay=1.0, slow_delay=2.0, max_fast_attempts=1),
        default_controller_rate_limiter(),
        WithMaxWaitRateLimiter(ItemExponentialFailureRateLimiter(), max_delay=1.0),
    ]
    for limiter in limiters:
        assert limiter.when("a") >= 0
        assert "RateLimiter" in repr(limiter)
