"""Per-object timers: kopf's ``@kopf.timer`` semantics, driven by a FakeClock.

Expected behaviour from kopf (nolar/kopf): ``kopf/_core/engines/daemons.py`` (``_timer``: the
idle wait re-checked against the last change, sharp timing on a grid, the error delay instead
of the interval) and ``docs/timers.rst`` (intervals, sharpness, idling, postponing, errors).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubectrl import FakeClock
from kubectrl.objects import ObjectKey
from kubectrl.operator._daemons import Daemons

from . import daemons_kit
from .daemons_kit import KIND, StandInOperator, asleep_until, obj, until

# The kit's fixtures (kept out of conftest.py, which the operator's handler tests own).
clock = daemons_kit.clock
operator = daemons_kit.operator
daemons = daemons_kit.daemons

KEY = ObjectKey("ns", "one")


async def test_interval_and_initial_delay(daemons: Daemons, clock: FakeClock) -> None:
    """First call after ``initial_delay``, then every ``interval`` (``docs/timers.rst``,
    Intervals and Postponing)."""
    calls: list[float] = []

    @daemons.timer(KIND, interval=30, initial_delay=5)
    async def ping(**_: Any) -> None:
        calls.append(clock.now())

    start = clock.now()
    await daemons.seen(KIND, obj())
    await asleep_until(clock, start + 5)
    clock.advance(4.9)
    await asyncio.sleep(0)
    assert calls == []
    clock.advance(0.1)
    await asleep_until(clock, start + 35)
    assert calls == [start + 5]
    clock.advance(30)
    await asleep_until(clock, start + 65)
    assert calls == [start + 5, start + 35]


async def test_an_idle_timer_waits_while_the_object_keeps_changing(
    daemons: Daemons, clock: FakeClock
) -> None:
    """``idle=60`` with a change every 10 s: never called; called 60 s after the last change
    (``docs/timers.rst``, Idling: creation counts as a change)."""
    calls: list[float] = []

    @daemons.timer(KIND, interval=5, idle=60)
    async def ping(**_: Any) -> None:
        calls.append(clock.now())

    await daemons.seen(KIND, obj(rv="0"))
    for step in range(1, 31):  # five minutes, a change every 10 s
        clock.advance(10)
        await daemons.seen(KIND, obj(rv=str(step)))
        await asyncio.sleep(0)
    last_change = clock.now()
    # It woke 60 s after an earlier change, saw a newer one, and sleeps on: the sleep is
    # never shortened, only prolonged at each wake-up (kopf's ``_timer``).
    await asleep_until(clock, last_change + 10)
    clock.advance(10)
    await asleep_until(clock, last_change + 60)
    assert calls == []
    clock.advance(49.9)
    await asyncio.sleep(0)
    assert calls == []
    clock.advance(0.1)
    await asleep_until(clock, last_change + 65)
    assert calls == [last_change + 60]
    clock.advance(5)
    await asleep_until(clock, last_change + 70)
    assert calls == [last_change + 60, last_change + 65]


async def test_a_change_puts_an_idle_timer_back_to_waiting(
    daemons: Daemons, clock: FakeClock
) -> None:
    """Once changed, an idling timer stops and waits for the idle time again
    (``docs/timers.rst``, Idling with an interval)."""
    calls: list[float] = []

    @daemons.timer(KIND, interval=5, idle=20)
    async def ping(**_: Any) -> None:
        calls.append(clock.now())

    start = clock.now()
    await daemons.seen(KIND, obj(rv="1"))
    await asleep_until(clock, start + 20)
    clock.advance(20)
    await asleep_until(clock, start + 25)
    assert calls == [start + 20]
    clock.advance(3)
    await daemons.seen(KIND, obj(rv="2"))  # changed at start + 23
    clock.advance(2)
    await asleep_until(clock, start + 43)
    assert calls == [start + 20]
    clock.advance(18)
    await asleep_until(clock, start + 48)
    assert calls == [start + 20, start + 43]


async def test_reconciles_and_unrelated_changes_do_not_rerun_it(
    daemons: Daemons, clock: FakeClock
) -> None:
    """A timer is its own loop: the object seen every 5 s (changes and resyncs) does not
    call it more often than ``interval``."""
    calls: list[float] = []

    @daemons.timer(KIND, interval=30)
    async def ping(**_: Any) -> None:
        calls.append(clock.now())

    start = clock.now()
    for step in range(18):  # 90 s
        await daemons.seen(KIND, obj(rv=str(step // 2)))  # a change every other time
        await until(lambda: clock.next_deadline() is not None)
        clock.advance(5)
    await asleep_until(clock, start + 120)
    assert calls == [start, start + 30, start + 60, start + 90]


@pytest.mark.parametrize(("sharp", "expected"), [(False, [0, 14, 28]), (True, [0, 10, 20])])
async def test_sharp_keeps_a_grid_however_long_the_call(
    daemons: Daemons, clock: FakeClock, sharp: bool, expected: list[float]
) -> None:
    """A call that takes 4 s: ``interval=10`` after each return, or on a 10 s grid with
    ``sharp=True`` (``docs/timers.rst``, Sharpness)."""
    calls: list[float] = []

    @daemons.timer(KIND, interval=10, sharp=sharp)
    async def slow(**_: Any) -> None:
        calls.append(clock.now())
        await clock.sleep(4)

    start = clock.now()
    await daemons.seen(KIND, obj())
    while len(calls) < 3:
        await until(lambda: clock.next_deadline() is not None)
        clock.set(clock.next_deadline() or 0.0)
    assert [c - start for c in calls] == expected


async def test_errors_wait_the_backoff_then_the_interval(
    daemons: Daemons, clock: FakeClock
) -> None:
    """Failing 3 times with ``backoff=5``, ``interval=10``: next cycle 25 s after the first
    attempt, ``retry`` back to 0 (``docs/timers.rst``, Errors in timers)."""
    calls: list[tuple[float, int]] = []

    @daemons.timer(KIND, interval=10, backoff=5)
    async def flaky(retry: int, **_: Any) -> None:
        calls.append((clock.now(), retry))
        if retry < 3 and len(calls) < 4:
            raise RuntimeError("not yet")

    start = clock.now()
    await daemons.seen(KIND, obj())
    while len(calls) < 5:
        await until(lambda: clock.next_deadline() is not None)
        clock.set(clock.next_deadline() or 0.0)
    assert [(t - start, r) for t, r in calls] == [(0, 0), (5, 1), (10, 2), (15, 3), (25, 0)]


async def test_deletion_and_stop_end_timers(daemons: Daemons, clock: FakeClock) -> None:
    """Timers end on deletion and on stop like daemons; none is left running."""
    calls: list[str] = []

    @daemons.timer(KIND, interval=10)
    async def ping(name: str, **_: Any) -> None:
        calls.append(name)

    await daemons.seen(KIND, obj("one"))
    await daemons.seen(KIND, obj("two"))
    await until(lambda: len(calls) == 2)
    assert await daemons.gone(KIND, KEY, None) is True
    assert len(daemons.running()) == 1
    await daemons.stop()
    assert daemons.running() == []
    clock.advance(100)
    await asyncio.sleep(0)
    assert sorted(calls) == ["one", "two"]


def test_interval_is_required_and_positive(operator: StandInOperator) -> None:
    daemons = Daemons(operator)
    with pytest.raises(ValueError, match="interval must be > 0"):
        daemons.timer(KIND, interval=0)
    with pytest.raises(ValueError, match="idle must be >= 0"):
        daemons.timer(KIND, interval=1, idle=-1)
