"""The elector loop on a FakeClock and an in-memory lock: no real sleeps."""

from __future__ import annotations

import asyncio
import random

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionLostError,
    LeaderElectionRecord,
    LeaderElector,
    default_identity,
)

from .conftest import FakeLock, Store, advance_until, jump, settle

CONFIG = LeaderElectionConfig()  # 15 / 10 / 2


class Recorder:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.leading_cancelled = False

    async def started(self) -> None:
        self.calls.append("started")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.leading_cancelled = True
            raise

    def stopped(self) -> None:
        self.calls.append("stopped")

    def new_leader(self, identity: str) -> None:
        self.calls.append(f"leader={identity}")


def make(
    store: Store,
    identity: str,
    clock: FakeClock,
    rec: Recorder,
    config: LeaderElectionConfig = CONFIG,
    rng: random.Random | None = None,
) -> LeaderElector:
    return LeaderElector(
        FakeLock(store, identity),
        config,
        on_started_leading=rec.started,
        on_stopped_leading=rec.stopped,
        on_new_leader=rec.new_leader,
        clock=clock,
        rng=rng or random.Random(0),
    )


def test_default_identity_is_hostname_underscore_uuid() -> None:
    import socket

    host, _, rest = default_identity().rpartition("_")
    assert host == socket.gethostname()
    assert len(rest) == 36


async def test_first_candidate_creates_the_lease_and_leads(clock: FakeClock, store: Store) -> None:
    rec = Recorder()
    elector = make(store, "a", clock, rec)
    task = asyncio.create_task(elector.run())
    await settle()
    assert elector.is_leader()
    assert store.record is not None
    assert store.record.holder_identity == "a"
    assert store.record.leader_transitions == 0
    assert rec.calls == ["leader=a", "started"]
    elector.stop()
    await task
    assert rec.calls[-1] == "stopped"
    assert rec.leading_cancelled
    assert not elector.is_leader()


async def test_leader_renews_every_retry_period(clock: FakeClock, store: Store) -> None:
    elector = make(store, "a", clock, Recorder())
    task = asyncio.create_task(elector.run())
    await settle()
    writes = len(store.writes)
    await advance_until(clock, lambda: len(store.writes) >= writes + 5, limit=60)
    assert clock.now() - 1000.0 == pytest.approx(10.0)  # five renewals, 2 s apart
    assert store.record is not None
    assert store.record.renew_time == clock.wall()
    elector.stop()
    await task


async def test_exactly_one_of_two_leads_and_release_hands_over(
    clock: FakeClock, store: Store
) -> None:
    ra, rb = Recorder(), Recorder()
    config = LeaderElectionConfig(release_on_cancel=True)
    a = make(store, "a", clock, ra, config)
    b = make(store, "b", clock, rb, config)
    ta = asyncio.create_task(a.run())
    await settle()
    tb = asyncio.create_task(b.run())
    await settle()
    # For a long time with both running: a leads, b never does.
    for _ in range(40):
        clock.advance(1)
        await settle()
        assert a.is_leader()
        assert not b.is_leader()
    assert "started" not in rb.calls
    assert b.leader == "a"
    a.stop()
    await ta
    assert store.record is not None
    assert store.record.holder_identity == ""  # released
    assert store.record.lease_duration_seconds == 1
    started = clock.now()
    await advance_until(clock, b.is_leader, limit=30)
    # Released: b takes over within ~1 s of lease plus one jittered retry, not 15 s.
    assert clock.now() - started <= 1 + 2 * (1 + 1.2)
    assert store.record.holder_identity == "b"
    assert store.record.leader_transitions == 1
    # The release is reported as a change of holder to "" (client-go reports it too).
    assert ra.calls == ["leader=a", "started", "leader=", "stopped"]
    assert rb.calls[-1] == "started"
    b.stop()
    await tb


async def test_follower_waits_a_full_lease_on_its_own_clock(clock: FakeClock, store: Store) -> None:
    # The holder "ghost" stopped renewing. Its server timestamps are irrelevant; b waits until it
    # has seen the record unchanged for leaseDurationSeconds on its own clock.
    store.force(LeaderElectionRecord("ghost", 15, clock.wall(), clock.wall(), 7))
    rb = Recorder()
    b = make(store, "b", clock, rb)
    tb = asyncio.create_task(b.run())
    await settle()
    assert not b.is_leader()
    start = clock.now()
    await advance_until(clock, b.is_leader, limit=60)
    waited = clock.now() - start
    assert 15 <= waited <= 15 + 2 * (1 + 1.2)
    assert store.record is not None
    assert store.record.leader_transitions == 8
    assert rb.calls == ["leader=ghost", "leader=b", "started"]
    b.stop()
    await tb


async def test_acquire_retries_with_jitter_up_to_1_2(clock: FakeClock, store: Store) -> None:
    class MaxRandom(random.Random):
        def random(self) -> float:
            return 1.0

    store.force(LeaderElectionRecord("other", 15, None, None, 0))
    b = make(store, "b", clock, Recorder(), rng=MaxRandom())
    tb = asyncio.create_task(b.run())
    await settle()
    assert clock.next_deadline() == pytest.approx(clock.now() + 2 * (1 + 1.2))
    b.stop()
    await tb


async def test_a_follower_tries_when_the_lease_expires_not_at_its_next_retry(
    clock: FakeClock, store: Store
) -> None:
    """With the largest jitter, retries fall at 4.4, 8.8, 13.2 and 17.6 s: client-go
    (``tools/leaderelection/leaderelection.go``, ``acquire`` under ``wait.JitterUntil``) would
    take a lease that expired at 15 s only at 17.6 s. kubectrl also tries at the expiry itself,
    so a takeover is bounded by the lease duration plus the time to observe the last renewal."""

    class MaxRandom(random.Random):
        def random(self) -> float:
            return 1.0

    store.force(LeaderElectionRecord("ghost", 15, None, None, 0))
    b = make(store, "b", clock, Recorder(), rng=MaxRandom())
    tb = asyncio.create_task(b.run())
    await settle()
    start = clock.now()
    await advance_until(clock, b.is_leader, limit=60)
    assert 15 < clock.now() - start < 15.1
    b.stop()
    await tb


@pytest.mark.parametrize("watched", [False, True], ids=["polled", "watched"])
async def test_a_lock_that_saw_the_renewal_first_dates_the_lease_from_then(
    clock: FakeClock, store: Store, watched: bool
) -> None:
    """The ghost renews at 3 s; b, polling at 0 and 4.4 s (largest jitter), sees it at 4.4 s and
    takes the lease at 19.4 s. A lock fed by a watch saw the renewal at 3 s (``first_seen()``),
    so b takes it at 18 s: the lease counted from when this process first saw the record, the
    same clock-skew-free rule, without the poll's lag."""

    class MaxRandom(random.Random):
        def random(self) -> float:
            return 1.0

    class WatchedLock(FakeLock):
        seen_at: float | None = None

        def first_seen(self) -> float | None:
            return self.seen_at if watched else None

    store.force(LeaderElectionRecord("ghost", 15, None, None, 0))
    lock = WatchedLock(store, "b")
    b = LeaderElector(
        lock, CONFIG, on_started_leading=Recorder().started, clock=clock, rng=MaxRandom()
    )
    tb = asyncio.create_task(b.run())
    await settle()
    clock.set(3.0 + clock.now())
    start = clock.now() - 3.0
    store.force(LeaderElectionRecord("ghost", 15, clock.wall(), clock.wall(), 0))  # a renewal
    lock.seen_at = clock.now()
    await settle()
    await advance_until(clock, b.is_leader, limit=60)
    took = clock.now() - start
    if watched:
        assert 18 < took < 18.1
    else:
        assert 19.4 < took < 19.5
    b.stop()
    await tb


async def test_leader_loses_when_another_identity_takes_the_lease(
    clock: FakeClock, store: Store
) -> None:
    rec = Recorder()
    a = make(store, "a", clock, rec)
    task = asyncio.create_task(a.run())
    await settle()
    assert a.is_leader()
    store.force(LeaderElectionRecord("intruder", 15, clock.wall(), clock.wall(), 1))
    lost_at_least = clock.now() + 2  # next renewal attempt
    await advance_until(clock, task.done, limit=60)
    with pytest.raises(LeaderElectionLostError, match="could not renew"):
        await task
    # Renewal kept failing until the renew deadline (10 s after the cycle began).
    assert clock.now() >= lost_at_least + 10 - 1e-9
    assert rec.leading_cancelled
    assert rec.calls == ["leader=a", "started", "leader=intruder", "stopped"]
    assert not a.is_leader()


async def test_leader_loses_when_the_server_is_unreachable(clock: FakeClock, store: Store) -> None:
    config = LeaderElectionConfig(release_on_cancel=True)
    rec = Recorder()
    a = make(store, "a", clock, rec, config)
    task = asyncio.create_task(a.run())
    await settle()
    store.broken = True
    await advance_until(clock, task.done, limit=60)
    with pytest.raises(LeaderElectionLostError):
        await task
    assert rec.calls[-1] == "stopped"


async def test_a_hanging_renewal_is_bounded_by_the_renew_deadline(
    clock: FakeClock, store: Store
) -> None:
    config = LeaderElectionConfig(release_on_cancel=True)
    rec = Recorder()
    a = make(store, "a", clock, rec, config)
    task = asyncio.create_task(a.run())
    await settle()
    store.hang = True
    start = clock.now()
    await advance_until(clock, task.done, limit=60)
    with pytest.raises(LeaderElectionLostError):
        await task
    assert clock.now() - start == pytest.approx(2 + 10)  # next renewal + renew deadline
    assert rec.calls[-1] == "stopped"


async def test_transient_renew_failure_within_deadline_keeps_leadership(
    clock: FakeClock, store: Store
) -> None:
    a = make(store, "a", clock, Recorder())
    task = asyncio.create_task(a.run())
    await settle()
    store.broken = True
    clock.advance(2)  # renewal attempt fails
    await settle()
    clock.advance(2)  # retry fails
    await settle()
    store.broken = False
    clock.advance(2)  # retry succeeds, 4 s into the 10 s deadline
    await settle()
    assert a.is_leader()
    assert not task.done()
    a.stop()
    await task


async def test_stopped_leading_runs_even_if_never_led(clock: FakeClock, store: Store) -> None:
    store.force(LeaderElectionRecord("other", 15, None, None, 0))
    rec = Recorder()
    b = make(store, "b", clock, rec)
    task = asyncio.create_task(b.run())
    await settle()
    b.stop()
    await task
    assert rec.calls == ["leader=other", "stopped"]


async def test_cancel_while_leading_releases_and_runs_stopped(
    clock: FakeClock, store: Store
) -> None:
    rec = Recorder()
    a = make(store, "a", clock, rec, LeaderElectionConfig(release_on_cancel=True))
    task = asyncio.create_task(a.run())
    await settle()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert store.record is not None
    assert store.record.holder_identity == ""
    assert rec.calls[-1] == "stopped"


async def test_no_release_without_release_on_cancel(clock: FakeClock, store: Store) -> None:
    a = make(store, "a", clock, Recorder())
    task = asyncio.create_task(a.run())
    await settle()
    a.stop()
    await task
    assert store.record is not None
    assert store.record.holder_identity == "a"


async def test_stop_before_run_returns_at_once(clock: FakeClock, store: Store) -> None:
    rec = Recorder()
    a = make(store, "a", clock, rec)
    a.stop()
    await a.run()
    assert rec.calls == ["stopped"]
    assert store.record is None


async def test_callback_exceptions_do_not_stop_the_elector(clock: FakeClock, store: Store) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("boom")

    a = LeaderElector(
        FakeLock(store, "a"),
        on_started_leading=boom,
        on_new_leader=boom,
        clock=clock,
    )
    task = asyncio.create_task(a.run())
    await settle()
    assert a.is_leader()
    a.stop()
    await task


async def test_master_status_metric(clock: FakeClock, store: Store) -> None:
    prometheus_client = pytest.importorskip("prometheus_client")
    registry = prometheus_client.CollectorRegistry()
    a = LeaderElector(
        FakeLock(store, "a"),
        LeaderElectionConfig(name="my-lease"),
        clock=clock,
        registry=registry,
    )
    labels = {"name": "my-lease"}
    assert registry.get_sample_value("leader_election_master_status", labels) == 0
    task = asyncio.create_task(a.run())
    await settle()
    assert registry.get_sample_value("leader_election_master_status", labels) == 1
    a.stop()
    await task
    assert registry.get_sample_value("leader_election_master_status", labels) == 0


# ---------------------------------------------------------------- fence (issue 16, defect 3)


async def test_fence_is_closed_before_leading_and_after_a_clean_stop(
    clock: FakeClock, store: Store
) -> None:
    store.force(LeaderElectionRecord("other", 15, None, None, 0))
    b = make(store, "b", clock, Recorder())
    assert not b.fence()  # never ran
    task = asyncio.create_task(b.run())
    await settle()
    assert not b.fence()  # a follower
    b.stop()
    await task
    a = make(store, "a", clock, Recorder(), LeaderElectionConfig(release_on_cancel=True))
    store.record = None
    ta = asyncio.create_task(a.run())
    await settle()
    assert a.fence()
    a.stop()
    await ta
    assert not a.fence()


async def test_fence_open_while_renewals_succeed(clock: FakeClock, store: Store) -> None:
    a = make(store, "a", clock, Recorder())
    task = asyncio.create_task(a.run())
    await settle()
    for _ in range(20):  # 40 s of renewals every 2 s: always younger than the 10 s deadline
        clock.advance(2)
        await settle()
        assert a.fence()
    a.stop()
    await task


async def test_fence_closes_once_the_renewal_is_older_than_the_renew_deadline(
    clock: FakeClock, store: Store
) -> None:
    """A leader frozen past its renew deadline (SIGSTOP) stops leader-only work on waking.

    client-go (tools/leaderelection/leaderelection.go, ``renew``) only notices at its next
    renewal attempt, after work resumed; the fence is checked before each step instead.
    """
    rec = Recorder()
    config = LeaderElectionConfig(release_on_cancel=True)
    a = make(store, "a", clock, rec, config)
    task = asyncio.create_task(a.run())
    await settle()
    renewed_at = clock.now()
    assert a.fence()
    # The process is frozen: its clock moves on but none of its tasks run. When it resumes,
    # the first thing to run may be a worker asking the fence, before the renew loop.
    jump(clock, 9.9)
    assert a.fence()  # still younger than renew_deadline (10 s)
    jump(clock, 0.1)
    assert clock.now() == pytest.approx(renewed_at + 10)
    assert not a.fence()  # declared lost right here, synchronously
    assert not a.is_leader()
    assert not a.fence()  # and stays closed
    await settle()
    assert task.done()
    with pytest.raises(LeaderElectionLostError, match=r"last renewed lease ns/lease 10\.0 s ago"):
        await task
    assert rec.leading_cancelled
    assert rec.calls[-1] == "stopped"
    # Lost, not stopped: the lease is never released (a successor may already hold it).
    assert store.record is not None
    assert store.record.holder_identity == "a"


async def test_lost_is_declared_once_from_a_thread(clock: FakeClock, store: Store) -> None:
    a = make(store, "a", clock, Recorder())
    task = asyncio.create_task(a.run())
    await settle()
    jump(clock, 30)
    results = await asyncio.gather(*(asyncio.to_thread(a.fence) for _ in range(8)))
    assert results == [False] * 8
    await settle()
    with pytest.raises(LeaderElectionLostError, match=r"30\.0 s ago"):
        await task


async def test_renew_loop_waking_late_declares_lost_without_renewing(
    clock: FakeClock, store: Store
) -> None:
    a = make(store, "a", clock, Recorder())
    task = asyncio.create_task(a.run())
    await settle()
    writes = len(store.writes)
    clock.advance(12)  # the renew timer fires 10 s late, as after SIGSTOP/SIGCONT
    await settle()
    assert task.done()
    with pytest.raises(LeaderElectionLostError, match=r"12\.0 s ago"):
        await task
    assert len(store.writes) == writes  # no renewal on a lease that may be someone else's


@pytest.mark.parametrize("polls_before", [0, 1, 2])
async def test_a_jump_the_moment_leadership_shows_is_still_seen_by_the_renew_loop(
    clock: FakeClock, store: Store, polls_before: int
) -> None:
    """The renew loop's timer counts from when it was asked for, not from when its task ran.

    A synchronous ``on_started_leading`` (the Manager's) makes leadership visible in the same
    step that starts the renew loop's sleep; a test that saw it and moved the clock before that
    sleep's task first ran used to leave the timer due ``retry_period`` after the *new* time: the
    loop never woke, the jump went unnoticed, and the Manager's FakeClock-jump trap was reported
    as an unrelated wait timing out (once in a loaded CI run). client-go's fake clock registers
    a timer when it is created (k8s.io/utils/clock/testing/fake_clock.go, ``After``).
    """
    leading = asyncio.Event()
    elector = LeaderElector(
        FakeLock(store, "a"),
        CONFIG,
        on_started_leading=leading.set,
        clock=clock,
        rng=random.Random(0),
    )
    task = asyncio.create_task(elector.run())
    await leading.wait()  # resumed before the renew loop's sleep task has run once
    for _ in range(polls_before):
        await asyncio.sleep(0)
    clock.advance(60)
    await settle()
    assert task.done()
    with pytest.raises(LeaderElectionLostError, match=r"60\.0 s ago"):
        await task
