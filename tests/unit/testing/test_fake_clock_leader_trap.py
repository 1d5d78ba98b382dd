"""A FakeClock jump past the renew deadline under leader election: named, and the safe way works.

One ``clock.advance(60)`` under a leader-elected manager looks like a paused process to the
elector, which stops leading; the test then failed on some unrelated wait, or on
``LeaderElectionLostError: ... (was the process paused?)``. ``run_manager`` now names the trap;
moving the clock with ``consistently(..., clock=clock)`` keeps the lease.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubectrl import FakeClock
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, consistently, eventually, run_manager

TRAP = "lost its leader election because its FakeClock moved past the renew deadline"


def leader_elected(clock: FakeClock) -> Manager:
    options = ManagerOptions(
        leader_election=True, leader_election_id="trap", leader_election_namespace="default"
    )
    return Manager(FakeAPI(clock=clock).config(), options=options, clock=clock)


async def jump_then(manager: Manager, clock: FakeClock, wait: Callable[[], object]) -> None:
    """Run ``manager``, move ``clock`` a minute at once, then ``wait``."""
    async with run_manager(manager):
        clock.advance(60)
        await eventually(wait, 1.0, describe="the controller's work")


async def raise_in_body(manager: Manager) -> None:
    async with run_manager(manager):
        raise ValueError("mine")


async def test_a_jump_past_the_renew_deadline_is_named_on_exit() -> None:
    clock = FakeClock()
    manager = leader_elected(clock)
    with pytest.raises(AssertionError, match=TRAP) as caught:
        await jump_then(manager, clock, lambda: not manager.is_leader())
    assert type(caught.value.__cause__).__name__ == "LeaderElectionLostError"
    assert "renew_deadline - retry_period (10.0 - 2.0 s)" in str(caught.value)


async def test_the_trap_wins_over_the_body_failure_it_caused() -> None:
    clock = FakeClock()
    manager = leader_elected(clock)
    with pytest.raises(AssertionError, match=TRAP) as caught:
        # What a test would wait for next, in vain: the manager has stopped.
        await jump_then(manager, clock, lambda: False)
    assert isinstance(caught.value.__context__, AssertionError)
    assert "the controller's work" in str(caught.value.__context__)


async def test_moving_the_clock_in_steps_keeps_the_lease() -> None:
    clock = FakeClock()
    manager = leader_elected(clock)
    async with run_manager(manager):
        assert await consistently(manager.is_leader, 60, interval=1, clock=clock)
    assert clock.now() >= 1060


async def test_other_body_errors_are_unchanged() -> None:
    manager = leader_elected(FakeClock())
    with pytest.raises(ValueError, match="mine"):
        await raise_in_body(manager)
