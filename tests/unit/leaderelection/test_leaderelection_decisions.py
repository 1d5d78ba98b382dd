"""The pure decisions: observation, expiry on the local clock, acquire/renew/release plans."""

from __future__ import annotations

import datetime

import pytest

from kubectrl._internal.lease import (
    Observation,
    format_micro_time,
    lease_valid,
    observe,
    parse_micro_time,
    plan_acquire_or_renew,
    plan_release,
)
from kubectrl.leaderelection import LeaderElectionConfig, LeaderElectionRecord

T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
T1 = T0 + datetime.timedelta(seconds=5)


def rec(holder: str, duration: int = 15, transitions: int = 0) -> LeaderElectionRecord:
    return LeaderElectionRecord(holder, duration, T0, T0, transitions)


def test_config_defaults_are_controller_runtime_s() -> None:
    config = LeaderElectionConfig()
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    assert config.release_on_cancel is False
    assert config.lease_duration_seconds == 15


@pytest.mark.parametrize(
    ("lease", "renew", "retry"),
    [
        (10, 10, 2),  # lease must exceed renew
        (15, 2.4, 2),  # renew must exceed 1.2 * retry
        (15, 10, 0),  # all > 0
        (0, -1, 1),
    ],
)
def test_config_validation(lease: float, renew: float, retry: float) -> None:
    with pytest.raises(ValueError, match="leader election"):
        LeaderElectionConfig(lease_duration=lease, renew_deadline=renew, retry_period=retry)


def test_lease_duration_is_written_in_whole_seconds() -> None:
    config = LeaderElectionConfig(lease_duration=1.5, renew_deadline=1.4, retry_period=0.5)
    assert config.lease_duration_seconds == 1


def test_unchanged_record_keeps_its_observation_time() -> None:
    first = observe(None, rec("a"), 100.0)
    assert observe(first, rec("a"), 110.0).observed_at == 100.0
    changed = LeaderElectionRecord("a", 15, T0, T1, 0)  # a renewal
    assert observe(first, changed, 110.0).observed_at == 110.0


def test_expiry_uses_the_holder_s_duration_and_our_clock_not_server_timestamps() -> None:
    # The renew time on the server is a year old; only our observation time matters.
    stale = LeaderElectionRecord("b", 15, T0, T0 - datetime.timedelta(days=365), 0)
    obs = Observation(stale, observed_at=50.0)
    assert lease_valid(obs, 64.9)
    assert not lease_valid(obs, 65.0)
    released = Observation(rec("", duration=1), observed_at=50.0)
    assert not lease_valid(released, 51.0)


def test_plan_waits_while_another_holder_is_valid() -> None:
    obs = Observation(rec("b", transitions=2), 0.0)
    assert (
        plan_acquire_or_renew(obs, identity="a", lease_duration_seconds=15, now=14.0, wall=T1)
        is None
    )


def test_plan_takes_an_expired_or_free_lease_and_counts_a_transition() -> None:
    expired = Observation(rec("b", transitions=2), 0.0)
    taken = plan_acquire_or_renew(expired, identity="a", lease_duration_seconds=15, now=15, wall=T1)
    assert taken == LeaderElectionRecord("a", 15, T1, T1, 3)
    free = Observation(rec("", duration=1, transitions=3), 0.0)
    taken = plan_acquire_or_renew(free, identity="a", lease_duration_seconds=15, now=0.0, wall=T1)
    assert taken is not None
    assert taken.holder_identity == "a"
    assert taken.leader_transitions == 4


def test_plan_renews_our_own_lease_keeping_acquire_time_and_transitions() -> None:
    ours = Observation(rec("a", transitions=5), 0.0)
    renewed = plan_acquire_or_renew(ours, identity="a", lease_duration_seconds=15, now=1, wall=T1)
    assert renewed == LeaderElectionRecord("a", 15, T0, T1, 5)


def test_release_writes_empty_holder_and_one_second() -> None:
    ours = Observation(rec("a", transitions=5), 0.0)
    assert plan_release(ours, identity="a", wall=T1) == LeaderElectionRecord("", 1, T1, T1, 5)
    assert plan_release(Observation(rec("b"), 0.0), identity="a", wall=T1) is None
    assert plan_release(None, identity="a", wall=T1) is None


def test_lease_spec_round_trip_and_micro_time_format() -> None:
    record = LeaderElectionRecord("a", 15, T0, T1, 2)
    spec = record.to_lease_spec()
    assert spec == {
        "holderIdentity": "a",
        "leaseDurationSeconds": 15,
        "leaseTransitions": 2,
        "acquireTime": "2026-01-01T00:00:00.000000Z",
        "renewTime": "2026-01-01T00:00:05.000000Z",
    }
    assert LeaderElectionRecord.from_lease_spec(spec) == record
    assert LeaderElectionRecord.from_lease_spec({}) == LeaderElectionRecord("", 0, None, None, 0)
    assert parse_micro_time("garbage") is None
    assert parse_micro_time(format_micro_time(T1)) == T1
