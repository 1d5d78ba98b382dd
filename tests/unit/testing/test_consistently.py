"""kubectrl.testing's ``consistently``: gomega's Consistently beside ``eventually``.

The predicate must hold on every try for the whole duration; the first try where it does not
(falsy, or raising) fails at once with what it saw. With a FakeClock the duration is fake time.
"""

from __future__ import annotations

import asyncio

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.errors import NotFoundError
from kubectrl.testing._helpers import consistently


async def test_returns_the_last_value_when_the_predicate_always_holds() -> None:
    values = iter(range(1, 1_000_000))
    assert await consistently(lambda: next(values), 0.02, interval=0.005) >= 2


async def test_fails_at_the_first_false_try_with_the_value_and_description() -> None:
    calls: list[int] = []

    def flaky() -> dict[str, int] | None:
        calls.append(1)
        return None if len(calls) == 3 else {"replicas": 2}

    with pytest.raises(AssertionError) as info:
        await consistently(flaky, 60.0, interval=0.001, describe="two replicas")
    message = str(info.value)
    assert message.startswith("consistently: two replicas became false after ")
    assert message.endswith("(try 3); value: None")
    assert len(calls) == 3  # no try after the failure: it did not wait out the 60 s


async def test_an_exception_fails_at_once_and_is_chained() -> None:
    async def gone() -> bool:
        raise NotFoundError('configmaps "settings" not found')

    with pytest.raises(
        AssertionError, match=r"gone raised after .* \(try 1\): NotFoundError"
    ) as info:
        await consistently(gone, 60.0)
    assert isinstance(info.value.__cause__, NotFoundError)


async def test_awaits_an_async_predicate() -> None:
    async def ready() -> str:
        await asyncio.sleep(0)
        return "yes"

    assert await consistently(ready, 0.01, interval=0.005) == "yes"


async def test_with_a_fake_clock_tries_every_interval_until_the_end_of_the_duration() -> None:
    clock = FakeClock()
    start = clock.now()
    seen: list[float] = []

    def record() -> bool:
        seen.append(clock.now() - start)
        return True

    assert await consistently(record, 3600.0, interval=600.0, clock=clock) is True
    assert seen == [0.0, 600.0, 1200.0, 1800.0, 2400.0, 3000.0, 3600.0]
    assert clock.now() - start == 3600.0


async def test_with_a_fake_clock_a_timer_firing_during_the_duration_is_caught() -> None:
    clock = FakeClock()
    state = {"ready": True}

    async def flip_later() -> None:
        await clock.sleep(30)
        state["ready"] = False

    task = asyncio.ensure_future(flip_later())
    try:
        with pytest.raises(AssertionError, match=r"ready became false after 3\d s"):
            await consistently(
                lambda: state["ready"], 60.0, interval=5.0, clock=clock, describe="ready"
            )
    finally:
        await task
    assert clock.now() - 1000.0 < 60.0  # stopped at the failure, not at the end


async def test_a_zero_duration_tries_once() -> None:
    calls: list[int] = []

    def once() -> bool:
        calls.append(1)
        return True

    assert await consistently(once, 0.0) is True
    assert calls == [1]


@pytest.mark.parametrize(
    ("duration", "interval", "message"),
    [(-1.0, 0.01, "duration must be >= 0"), (1.0, 0.0, "interval must be > 0")],
)
async def test_rejects_bad_arguments(duration: float, interval: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        await consistently(lambda: True, duration, interval=interval)


async def test_names_the_predicate_by_default() -> None:
    def cache_synced() -> bool:
        return False

    with pytest.raises(AssertionError, match=r"consistently: .*cache_synced became false"):
        await consistently(cache_synced)
