"""Replicas sharing a fleet: rendezvous hashing over live peers, one fencing Lease per cluster.

multicluster-runtime's sharded coordinator (``docs/designs/coordination.md``,
``pkg/manager/coordinator/sharded``):

- **peers**: every replica renews a Lease of its own, ``<name>-peer-<hash of identity>``
  (labelled ``multicluster.kubectrl.dev/fleet=<name>``), every ``retry_period``, and deletes it
  on a clean stop. A peer counts as alive until its Lease has not changed for
  ``lease_duration`` on this replica's clock (leader election's clock-skew-free rule).
- **assignment**: each cluster goes to the live peer with the highest
  ``fnv1a64(cluster + "|" + peer)`` (highest-random-weight hashing; ties to the greater
  identity), computed alike on every replica; a peer joining or leaving moves only the
  clusters it wins or held.
- **fencing**: every replica runs a :class:`~kubectrl.leaderelection.LeaderElector` on each
  cluster's Lease, ``<name>-cluster-<hash of cluster>``, but only the chosen replica may take
  it (the others just observe it, so that when the choice moves to them they already know how
  long it has been unchanged); only while a replica holds the Lease is the cluster engaged
  there (its sources, its reconciles, and every write of its client go through the elector's
  fence). A replica that stops being the
  choice disengages the cluster (waiting for its in-flight reconciles) and only then releases
  the Lease; a killed replica's Leases expire after ``lease_duration``.

So no cluster is reconciled by two replicas at once (the Lease), and a killed replica's
clusters are taken over after at most ``lease_duration`` plus a ``retry_period``: the time to
observe its last renewal of each cluster's Lease, then that Lease's expiry (the elector tries at
the expiry itself, and the gate leaves a holder whose Lease expired out of the rendezvous).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime
import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.client import AsyncClient, ClientConfig, EventType
from kubectrl.errors import AlreadyExistsError, ConflictError, KubectrlError, NotFoundError
from kubectrl.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionLostError,
    LeaderElectionRecord,
    LeaderElector,
    LeaseLock,
    default_identity,
)


class _Engager(Protocol):
    """What the fleet drives: the manager's engagement of one cluster, under a fence."""

    async def _engage(
        self, name: str, config: ClientConfig, fence: Callable[[], bool] | None
    ) -> None: ...

    async def _disengage(self, name: str) -> None: ...


__all__ = ["FLEET_LABEL", "FleetOptions", "rendezvous_owner"]

log = logging.getLogger("kubectrl.multicluster.fleet")

#: The label on every peer Lease: the fleet's name.
FLEET_LABEL = "multicluster.kubectrl.dev/fleet"
_LEASE = ("coordination.k8s.io/v1", "Lease")


def _fnv1a_64(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode():
        value = ((value ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return value


def rendezvous_owner(cluster: str, peers: Iterable[str]) -> str | None:
    """The peer that owns ``cluster`` among ``peers`` by highest-random-weight hashing.

    The score of a peer is FNV-1a 64 of ``cluster + "|" + peer`` (as multicluster-runtime's
    ``sharder/hrw.go``); the highest wins, ties going to the greater identity. ``None`` when
    there is no peer.

    Example::

        >>> owner = rendezvous_owner("east", ["replica-a", "replica-b"])
        >>> owner in ("replica-a", "replica-b")
        True
        >>> rendezvous_owner("east", ["replica-b", "replica-a"]) == owner
        True
    """
    best: tuple[int, str] | None = None
    for peer in peers:
        score = (_fnv1a_64(f"{cluster}|{peer}"), peer)
        if best is None or score > best:
            best = score
    return None if best is None else best[1]


@dataclasses.dataclass(frozen=True)
class FleetOptions:
    """How replicas share the fleet.

    ``name`` prefixes the Leases (``<name>-peer-*``, ``<name>-cluster-*``) in ``namespace``
    of the manager's local cluster; timings are leader election's (``lease_duration`` >
    ``renew_deadline`` > 1.2 x ``retry_period``); ``identity`` defaults to
    :func:`~kubectrl.leaderelection.default_identity`.

    Example::

        >>> FleetOptions(name="cm-copier", namespace="kube-system").lease_duration
        15.0
    """

    name: str
    namespace: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("FleetOptions: name (the Leases' prefix) must not be empty")
        if not self.namespace:
            raise ValueError("FleetOptions: namespace (where the Leases live) is required")
        self.election_config("check")  # validates the timings

    def election_config(self, name: str) -> LeaderElectionConfig:
        """The per-cluster Lease's timings (released on a clean hand-over)."""
        return LeaderElectionConfig(
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
            release_on_cancel=True,
            name=name,
        )

    def cluster_lease(self, cluster: str) -> str:
        """The name of ``cluster``'s fencing Lease."""
        return f"{self.name}-cluster-{_fnv1a_64(cluster):016x}"

    def peer_lease(self, identity: str) -> str:
        """The name of a replica's peer Lease."""
        return f"{self.name}-peer-{_fnv1a_64(identity):016x}"


class NotChosenError(KubectrlError):
    """This replica may not take the cluster's Lease: rendezvous hashing picks another."""


class _GatedLock:
    """A LeaseLock that takes the Lease only while ``gate(holder)`` says this replica is the
    choice.

    Reads always go through, so the elector keeps observing the Lease (and judging its
    expiry) while another replica holds it: when the choice moves here, a Lease that stopped
    changing ``lease_duration`` ago is taken at once rather than observed afresh. Renewing and
    releasing a Lease this replica holds always go through.

    ``holder`` is the replica named in the Lease. The elector writes over another holder only
    once that holder's Lease has expired on this replica's clock, so the gate leaves it out of
    the rendezvous: a replica killed while holding clusters is judged dead for those clusters at
    their Leases' expiry, not one more peer-Lease expiry and retry later.
    """

    def __init__(
        self,
        inner: LeaseLock,
        gate: Callable[[str], bool],
        seen: Callable[[LeaderElectionRecord], float | None],
    ) -> None:
        self._inner = inner
        self._gate = gate
        self._seen = seen
        self._holder = ""
        self._record: LeaderElectionRecord | None = None

    @property
    def identity(self) -> str:
        return self._inner.identity

    @property
    def name(self) -> str:
        return self._inner.name

    def describe(self) -> str:
        return self._inner.describe()

    async def get(self) -> LeaderElectionRecord:
        record = await self._inner.get()
        self._holder = record.holder_identity
        self._record = record
        return record

    def first_seen(self) -> float | None:
        """When the fleet's Lease watch delivered the record read last (``None``: unknown)."""
        return self._seen(self._record) if self._record is not None else None

    def _check(self) -> None:
        if self._holder != self.identity and not self._gate(self._holder):
            raise NotChosenError(f"{self.describe()}: another replica is the rendezvous choice")

    async def create(self, record: LeaderElectionRecord) -> None:
        self._check()
        await self._inner.create(record)
        self._holder = record.holder_identity

    async def update(self, record: LeaderElectionRecord) -> None:
        self._check()
        await self._inner.update(record)
        self._holder = record.holder_identity


@dataclasses.dataclass
class _Owned:
    elector: LeaderElector
    task: asyncio.Task[None]
    leading: bool = False


class _Fleet:
    def __init__(
        self,
        manager: _Engager,
        api: AsyncClient,
        options: FleetOptions,
        *,
        clock: Clock | None = None,
    ) -> None:
        self._manager = manager
        self._api = api
        self.options = options
        self.identity = options.identity or default_identity()
        self._clock: Clock = clock if clock is not None else RealClock()
        self._known: dict[str, ClientConfig] = {}
        self._owned: dict[str, _Owned] = {}
        self._restart: set[str] = set()
        # peer lease name -> (holder, resourceVersion, when this replica saw it change)
        self._seen: dict[str, tuple[str, str, float]] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # cluster Lease name -> (its record, when this replica's watch first delivered it)
        self._lease_seen: dict[str, tuple[LeaderElectionRecord, float]] = {}
        self._watch_task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ provider side

    def add(self, name: str, config: ClientConfig) -> None:
        changed = name in self._known and self._known[name] is not config
        self._known[name] = config
        if changed:
            self._restart.add(name)  # re-engaged with the new config on the next pass
        self._wake.set()

    async def remove(self, name: str) -> None:
        self._known.pop(name, None)
        await self._release(name)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self._renew_peer()
        self._watch_task = asyncio.create_task(self._watch_leases(), name="multicluster-leases")
        self._task = asyncio.create_task(self._loop(), name="multicluster-fleet")

    async def stop(self) -> None:
        for task in (self._task, self._watch_task):
            if task is not None:
                task.cancel()
                await asyncio.wait({task})
        for name in list(self._owned):
            await self._release(name)
        try:
            await self._api.delete(
                _LEASE, self.options.peer_lease(self.identity), namespace=self.options.namespace
            )
        except NotFoundError:
            pass
        except KubectrlError as err:
            log.warning("fleet %s: could not delete peer Lease: %s", self.options.name, err)

    @property
    def owned(self) -> frozenset[str]:
        return frozenset(n for n, o in self._owned.items() if o.leading)

    async def _loop(self) -> None:
        while True:
            try:
                await self._renew_peer()
                peers = await self._live_peers()
                await self._balance(peers)
            except asyncio.CancelledError:
                raise
            except KubectrlError as err:
                log.warning("fleet %s: balancing failed, retrying: %s", self.options.name, err)
            self._wake.clear()
            sleep = asyncio.ensure_future(self._clock.sleep(self.options.retry_period))
            wake = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({sleep, wake}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleep.cancel()
                wake.cancel()

    async def _balance(self, peers: list[str]) -> None:
        for name in sorted(self._restart & set(self._owned)):
            await self._release(name)
        self._restart.clear()
        for name in sorted(self._known):
            mine = rendezvous_owner(name, peers) == self.identity
            owned = self._owned.get(name)
            if owned is not None and owned.task.done():
                del self._owned[name]  # lost its Lease (or stopped): campaign afresh
                owned = None
            if owned is None:
                self._campaign(name)
            elif not mine and owned.leading:
                log.info(
                    "fleet %s: cluster %s now belongs to %s: handing it over",
                    self.options.name,
                    name,
                    rendezvous_owner(name, peers),
                    extra={"cluster": name},
                )
                await self._release(name)
                self._campaign(name)  # keep observing the Lease for when it comes back

    def _campaign(self, name: str) -> None:
        lock = _GatedLock(
            LeaseLock(
                self._api,
                namespace=self.options.namespace,
                name=self.options.cluster_lease(name),
                identity=self.identity,
            ),
            lambda holder: (
                rendezvous_owner(name, [p for p in self._alive() if p != holder]) == self.identity
            ),
            lambda record: self._first_seen(self.options.cluster_lease(name), record),
        )
        elector: LeaderElector
        owned: _Owned

        async def lead() -> None:
            config = self._known.get(name)
            if config is None:
                return
            owned.leading = True
            await self._manager._engage(name, config, elector.fence)
            try:
                await asyncio.Event().wait()
            finally:
                owned.leading = False
                await self._manager._disengage(name)

        elector = LeaderElector(
            lock,
            self.options.election_config(f"{self.options.name}-{name}"),
            on_started_leading=lead,
            clock=self._clock,
        )

        async def run() -> None:
            try:
                await elector.run()
            except LeaderElectionLostError as err:
                log.warning("fleet %s: cluster %s: %s", self.options.name, name, err)

        task = asyncio.create_task(run(), name=f"multicluster-fleet-{name}")
        owned = _Owned(elector, task)
        self._owned[name] = owned

    async def _release(self, name: str) -> None:
        owned = self._owned.pop(name, None)
        if owned is None:
            return
        owned.elector.stop()
        await asyncio.wait({owned.task})

    # ------------------------------------------------------------------ cluster Leases

    def _first_seen(self, name: str, record: LeaderElectionRecord) -> float | None:
        seen = self._lease_seen.get(name)
        return seen[1] if seen is not None and seen[0] == record else None

    def _saw(self, lease: dict[str, Any], now: float) -> None:
        name = str((lease.get("metadata") or {}).get("name", ""))
        if not name.startswith(f"{self.options.name}-cluster-"):
            return
        record = LeaderElectionRecord.from_lease_spec(lease.get("spec") or {})
        previous = self._lease_seen.get(name)
        if previous is None or previous[0] != record:
            self._lease_seen[name] = (record, now)

    async def _watch_leases(self) -> None:
        """Watch the namespace's Leases, noting when each cluster Lease's record changed.

        The electors poll each Lease every (jittered) retry period; a renewal seen here when
        the server sends it dates the holder's lease from then (``first_seen``), so a killed
        replica's Lease expires on this replica's clock ``lease_duration`` after its last
        renewal rather than up to 2.2 retry periods later. Errors relist after a retry period.
        """
        namespace = self.options.namespace
        while True:
            try:
                listed: Any = await self._api.list(_LEASE, namespace=namespace)
                now = self._clock.now()
                for lease in listed.get("items") or []:
                    self._saw(lease, now)
                version = str((listed.get("metadata") or {}).get("resourceVersion", ""))
                async with self._api.watch(
                    _LEASE, namespace=namespace, resource_version=version
                ) as events:
                    async for event in events:
                        if event.type is EventType.DELETED:
                            name = str(event.object.get("metadata", {}).get("name", ""))
                            self._lease_seen.pop(name, None)
                        elif event.type in (EventType.ADDED, EventType.MODIFIED):
                            self._saw(event.object, self._clock.now())
            except asyncio.CancelledError:
                raise
            except KubectrlError as err:
                log.info("fleet %s: Lease watch: %s; relisting", self.options.name, err)
            await self._clock.sleep(self.options.retry_period)

    # ------------------------------------------------------------------ peers

    async def _renew_peer(self) -> None:
        name = self.options.peer_lease(self.identity)
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(self.options.lease_duration)),
            "renewTime": now,
        }
        namespace = self.options.namespace
        try:
            current: Any = await self._api.get(_LEASE, name, namespace=namespace)
        except NotFoundError:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {FLEET_LABEL: self.options.name},
                },
                "spec": spec,
            }
            with contextlib.suppress(AlreadyExistsError):  # another pass made it
                await self._api.create(body)
            return
        current = dict(current)
        current["spec"] = {**(current.get("spec") or {}), **spec}
        with contextlib.suppress(ConflictError):  # renewed on the next pass
            await self._api.update(current)

    async def _live_peers(self) -> list[str]:
        listed: Any = await self._api.list(
            _LEASE,
            namespace=self.options.namespace,
            label_selector=f"{FLEET_LABEL}={self.options.name}",
        )
        now = self._clock.now()
        present: set[str] = set()
        for lease in listed.get("items") or []:
            meta = lease.get("metadata") or {}
            name = str(meta.get("name", ""))
            holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
            version = str(meta.get("resourceVersion", ""))
            present.add(name)
            seen = self._seen.get(name)
            if seen is None or seen[1] != version:
                self._seen[name] = (holder, version, now)
        for name in set(self._seen) - present:
            del self._seen[name]
        return self._alive()

    def _alive(self) -> list[str]:
        """The live peers as of now (not as of the last listing: a peer's Lease that has just
        gone ``lease_duration`` without a change is dead for the rendezvous gate at once)."""
        now = self._clock.now()
        alive = {self.identity}
        for holder, _, changed_at in self._seen.values():
            if holder and now - changed_at < self.options.lease_duration:
                alive.add(holder)
        return sorted(alive)
