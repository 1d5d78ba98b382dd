"""Leader election against the real API server: one leader, hand-over, loss of the lease.

Short timings (lease 4 s, renew 3 s, retry 0.5 s) keep the tests quick; every wait is a condition
with a generous deadline, and no assertion depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionLostError,
    LeaderElector,
    LeaseLock,
)
from kubectrl.leaderelection._lock import LEASE

pytestmark = pytest.mark.integration

FAST = LeaderElectionConfig(lease_duration=4, renew_deadline=3, retry_period=0.5)
DEADLINE = 60.0


async def eventually(condition: Callable[[], bool], timeout: float = DEADLINE) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.05)


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


class Candidate:
    """One elector with a log of what happened to it."""

    def __init__(
        self, client: AsyncClient, namespace: str, identity: str, config: LeaderElectionConfig
    ) -> None:
        self.identity = identity
        self.events: list[str] = []
        self.elector = LeaderElector(
            LeaseLock(client, namespace=namespace, name="test-lease", identity=identity),
            config,
            on_started_leading=self._started,
            on_stopped_leading=lambda: self.events.append("stopped"),
        )
        self.task: asyncio.Task[None] = asyncio.create_task(self.elector.run())

    async def _started(self) -> None:
        self.events.append("started")
        await asyncio.Event().wait()

    async def stop(self) -> None:
        self.elector.stop()
        await asyncio.wait_for(self.task, DEADLINE)


async def read_holder(client: AsyncClient, namespace: str) -> str:
    lease = await client.get(LEASE, "test-lease", namespace=namespace)
    return str(lease["spec"].get("holderIdentity") or "")


async def wait_holder(client: AsyncClient, namespace: str, expected: str) -> None:
    end = time.monotonic() + DEADLINE
    while await read_holder(client, namespace) != expected:
        assert time.monotonic() < end, f"lease never held by {expected!r}"
        await asyncio.sleep(0.1)


async def any_leader(candidates: list[Candidate]) -> Candidate:
    end = time.monotonic() + DEADLINE
    while True:
        leaders = [c for c in candidates if c.elector.is_leader()]
        if leaders:
            return leaders[0]
        assert time.monotonic() < end, "nobody became leader"
        await asyncio.sleep(0.05)


async def watch_for_overlap(candidates: list[Candidate], until: Awaitable[None]) -> None:
    """Poll both electors while ``until`` runs; never may both lead at once."""
    task = asyncio.ensure_future(until)
    while not task.done():
        assert sum(c.elector.is_leader() for c in candidates) <= 1, "two leaders at once"
        await asyncio.sleep(0.01)
    await task


async def test_exactly_one_of_two_leads_and_stop_with_release_hands_over(
    client: AsyncClient, namespace: str
) -> None:
    config = LeaderElectionConfig(
        lease_duration=FAST.lease_duration,
        renew_deadline=FAST.renew_deadline,
        retry_period=FAST.retry_period,
        release_on_cancel=True,
    )
    a = Candidate(client, namespace, "cand-a", config)
    b = Candidate(client, namespace, "cand-b", config)
    try:
        leader = await any_leader([a, b])
        follower = b if leader is a else a
        # Several lease durations with both campaigning: still exactly one leader, and the lease
        # on the server names it.
        await watch_for_overlap([a, b], asyncio.sleep(3 * FAST.lease_duration))
        assert leader.elector.is_leader()
        assert not follower.elector.is_leader()
        assert "started" not in follower.events
        assert await read_holder(client, namespace) == leader.identity

        await watch_for_overlap([a, b], leader.stop())
        assert leader.events == ["started", "stopped"]
        await eventually(follower.elector.is_leader)
        await wait_holder(client, namespace, follower.identity)
        lease = await client.get(LEASE, "test-lease", namespace=namespace)
        assert lease["spec"]["leaseTransitions"] >= 1
    finally:
        for c in (a, b):
            c.elector.stop()
        await asyncio.gather(a.task, b.task, return_exceptions=True)


async def test_leader_crash_without_release_hands_over_after_expiry(
    client: AsyncClient, namespace: str
) -> None:
    a = Candidate(client, namespace, "cand-a", FAST)
    await eventually(a.elector.is_leader)
    b = Candidate(client, namespace, "cand-b", FAST)
    try:
        # Simulate a crash: cancel the leader without release (release_on_cancel is off).
        a.task.cancel()
        await asyncio.gather(a.task, return_exceptions=True)
        assert await read_holder(client, namespace) == "cand-a"
        await eventually(b.elector.is_leader)
        await wait_holder(client, namespace, "cand-b")
    finally:
        await b.stop()


async def test_leader_loses_when_another_identity_force_writes_the_lease(
    client: AsyncClient, namespace: str
) -> None:
    a = Candidate(client, namespace, "cand-a", FAST)
    await eventually(a.elector.is_leader)
    lease = await client.get(LEASE, "test-lease", namespace=namespace)
    lease["spec"]["holderIdentity"] = "intruder"
    lease["spec"]["leaseDurationSeconds"] = 3600
    await client.update(lease)
    with pytest.raises(LeaderElectionLostError, match="cand-a"):
        await asyncio.wait_for(a.task, DEADLINE)
    assert a.events == ["started", "stopped"]
    assert not a.elector.is_leader()
    assert await read_holder(client, namespace) == "intruder"
