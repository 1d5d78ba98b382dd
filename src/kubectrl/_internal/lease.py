"""The leader election record and the pure decisions made on it.

A Lease says who leads (``holderIdentity``), for how long a holder may go without renewing
(``leaseDurationSeconds``), and when it last renewed. client-go never trusts the timestamps in
it: clocks differ between machines. Instead each candidate remembers *when it last saw the record
change* on its own monotonic clock, and considers the lease expired once
``observed_at + leaseDurationSeconds`` has passed without a change. That is what
:func:`observe`, :func:`lease_valid` and :func:`plan_acquire_or_renew` compute; the elector wraps
them in a thin I/O loop, so they are unit-tested without a server.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping
from typing import Any

__all__ = [
    "LeaderElectionRecord",
    "Observation",
    "format_micro_time",
    "lease_valid",
    "observe",
    "parse_micro_time",
    "plan_acquire_or_renew",
    "plan_release",
]


def format_micro_time(value: datetime.datetime) -> str:
    """Kubernetes ``MicroTime``: RFC 3339 in UTC with microseconds (``...T10:00:00.000000Z``)."""
    utc = value.astimezone(datetime.timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: object) -> datetime.datetime | None:
    """Parse a ``MicroTime`` or ``Time`` string; ``None`` for a missing or unreadable value."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclasses.dataclass(frozen=True)
class LeaderElectionRecord:
    """What a lock stores: client-go's ``LeaderElectionRecord``, one field per Lease spec field.

    ``holder_identity`` is ``""`` when nobody holds the lease (after a release).

    Example::

        >>> r = LeaderElectionRecord("a", 15, None, None, 0)
        >>> r.holder_identity
        'a'
    """

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: datetime.datetime | None
    renew_time: datetime.datetime | None
    leader_transitions: int

    @classmethod
    def from_lease_spec(cls, spec: Mapping[str, Any]) -> LeaderElectionRecord:
        """Read a Lease's ``spec`` (missing fields become empty values, as in Go)."""
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=parse_micro_time(spec.get("acquireTime")),
            renew_time=parse_micro_time(spec.get("renewTime")),
            leader_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_lease_spec(self) -> dict[str, Any]:
        """The Lease ``spec`` holding this record."""
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.leader_transitions,
        }
        if self.acquire_time is not None:
            spec["acquireTime"] = format_micro_time(self.acquire_time)
        if self.renew_time is not None:
            spec["renewTime"] = format_micro_time(self.renew_time)
        return spec


@dataclasses.dataclass(frozen=True)
class Observation:
    """The last record seen and the local monotonic time at which it was first seen."""

    record: LeaderElectionRecord
    observed_at: float


def observe(previous: Observation | None, current: LeaderElectionRecord, now: float) -> Observation:
    """Update what we know: an unchanged record keeps its old observation time.

    This is the whole trick of clock-skew-free expiry: only a *change* in the record (a renewal by
    the holder) restarts the holder's lease on our clock.

    Example::

        >>> r = LeaderElectionRecord("a", 15, None, None, 0)
        >>> observe(Observation(r, 1.0), r, 9.0).observed_at
        1.0
    """
    if previous is not None and previous.record == current:
        return previous
    return Observation(current, now)


def lease_valid(observation: Observation, now: float) -> bool:
    """Whether the observed holder's lease has not yet expired on our clock.

    Uses the holder's own ``leaseDurationSeconds`` (a released lease says 1 s), as client-go.

    Example::

        >>> r = LeaderElectionRecord("a", 15, None, None, 0)
        >>> lease_valid(Observation(r, 0.0), 14.9), lease_valid(Observation(r, 0.0), 15.0)
        (True, False)
    """
    return observation.observed_at + observation.record.lease_duration_seconds > now


def plan_acquire_or_renew(
    observation: Observation,
    *,
    identity: str,
    lease_duration_seconds: int,
    now: float,
    wall: datetime.datetime,
) -> LeaderElectionRecord | None:
    """The record to write to take or keep the lease, or ``None`` when someone else holds it.

    - Another holder whose lease is still valid on our clock: ``None`` (wait).
    - We hold it: renew, keeping ``acquire_time`` and ``leader_transitions``.
    - Free or expired: take it, ``acquire_time`` now, ``leader_transitions`` + 1.

    Example::

        >>> import datetime
        >>> t = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
        >>> other = Observation(LeaderElectionRecord("b", 15, t, t, 3), observed_at=0.0)
        >>> plan_acquire_or_renew(other, identity="a", lease_duration_seconds=15, now=1.0,
        ...                       wall=t) is None
        True
        >>> plan_acquire_or_renew(other, identity="a", lease_duration_seconds=15, now=16.0,
        ...                       wall=t).leader_transitions
        4
    """
    old = observation.record
    holder = old.holder_identity
    if holder and holder != identity and lease_valid(observation, now):
        return None
    if holder == identity:
        return LeaderElectionRecord(
            holder_identity=identity,
            lease_duration_seconds=lease_duration_seconds,
            acquire_time=old.acquire_time or wall,
            renew_time=wall,
            leader_transitions=old.leader_transitions,
        )
    return LeaderElectionRecord(
        holder_identity=identity,
        lease_duration_seconds=lease_duration_seconds,
        acquire_time=wall,
        renew_time=wall,
        leader_transitions=old.leader_transitions + 1,
    )


def plan_release(
    observation: Observation | None, *, identity: str, wall: datetime.datetime
) -> LeaderElectionRecord | None:
    """The record that gives the lease up, or ``None`` when we do not hold it.

    client-go's release: empty holder and ``leaseDurationSeconds=1``, so the others take over
    about a second after they see it instead of waiting out a full lease.

    Example::

        >>> plan_release(None, identity="a", wall=None) is None  # type: ignore[arg-type]
        True
    """
    if observation is None or observation.record.holder_identity != identity:
        return None
    return LeaderElectionRecord(
        holder_identity="",
        lease_duration_seconds=1,
        acquire_time=wall,
        renew_time=wall,
        leader_transitions=observation.record.leader_transitions,
    )
