"""Sharded controllers: each replica runs the shards whose Lease it holds.

The key space (64-bit FNV-1a hashes of ``metadata.uid`` or ``metadata.namespace``) is split into
``shards`` equal ranges (:func:`kubectrl.cache._shard.split_ranges`). Shard ``i`` is owned through
the Lease ``<name>-shard-<i>``, exactly as leader election owns one Lease: one holder at a time,
renewed, fenced. A replica holding a shard runs that shard's informers (listing and watching
with the shard's selector, so the apiserver sends only its slice when the
``ShardedListAndWatch`` gate is on) and its controllers, fenced by the shard's elector.

Membership: every replica renews a Lease of its own, ``<name>-member-<n>`` (``n`` a hash of
its identity), every ``retry_period``, and deletes it on a graceful stop. A member counts as
alive until its Lease has not changed for ``lease_duration`` on this replica's clock (the
clock-skew-free rule leader election uses). With ``M`` live members sorted by identity, member
``k`` aims at ``shards // M`` shards, plus one if ``k < shards % M``.

Balancing, every ``retry_period``:

- holding more than its target, a replica gives up its highest shards: it stops the shard's
  controllers (waiting for in-flight reconciles) and informers, and only then releases the
  Lease (empty holder, 1 s), so the next holder never overlaps;
- holding fewer, it takes free shards: a Lease that is missing, released, or unchanged for its
  ``leaseDurationSeconds`` on this replica's clock (a dead or frozen holder), with an update
  that carries the Lease's resourceVersion (two replicas can never both win), then hands it to a
  :class:`~kubectrl.leaderelection.LeaderElector` that renews it.

Losing a shard's Lease (renewals failing past ``renew_deadline``, or the fence finding the last
renewal too old after a pause) stops that shard's work at once and never releases it (a
successor may hold it). Takeover of a killed replica's shards takes about ``lease_duration``
(its shard Leases and its member Lease stop changing at the same time) plus a retry period.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import datetime
import hashlib
import inspect
import logging
import random
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from kubectrl._internal.clock import Clock, RealClock
from kubectrl._internal.defaults import DEFAULT, Default
from kubectrl._internal.lease import (
    LeaderElectionRecord,
    Observation,
    lease_valid,
    observe,
    plan_acquire_or_renew,
)
from kubectrl.cache import Informer, InformerFactory, ShardField, ShardSelector
from kubectrl.client import AsyncClient, KindRef
from kubectrl.errors import AlreadyExistsError, ConflictError, NotFoundError
from kubectrl.leaderelection import (
    LeaderElectionConfig,
    LeaderElectionLostError,
    LeaderElector,
    LeaseLock,
    default_identity,
)
from kubectrl.runtime._controller import Controller
from kubectrl.runtime._event import Event, UpdateEvent
from kubectrl.runtime._handler import OwnerHandler
from kubectrl.runtime._kind_source import KindSource, normalize_resource
from kubectrl.runtime._reconcile import Request, low_priority

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = [
    "ShardContext",
    "ShardSetup",
    "ShardedRunner",
    "ShardingOptions",
    "current_shard",
    "owner_in_shard",
    "shard_controllers",
]

log = logging.getLogger("kubectrl.runtime.sharding")

LEASE = ("coordination.k8s.io/v1", "Lease")


@dataclasses.dataclass(frozen=True)
class ShardingOptions:
    """How a controller's key space is sharded between replicas.

    ``name`` prefixes the Leases (``<name>-shard-<i>``, ``<name>-member-<n>``) in
    ``namespace``; ``shards`` is fixed per deployment (twice the replicas is a good start: a
    joining or leaving replica moves few shards); ``field`` is what the shard hashes (``"uid"``
    spreads evenly; ``"namespace"`` keeps each namespace in one shard, see docs/scaling.md).
    Timings are leader election's (:class:`~kubectrl.leaderelection.LeaderElectionConfig`).

    Example::

        >>> ShardingOptions(name="cm-controller", namespace="default", shards=6).shards
        6
    """

    name: str
    namespace: str
    shards: int
    field: ShardField = "uid"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    identity: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("ShardingOptions: name (the Leases' prefix) must not be empty")
        if not self.namespace:
            raise ValueError("ShardingOptions: namespace (where the Leases live) is required")
        if isinstance(self.shards, bool) or not isinstance(self.shards, int) or self.shards < 1:
            raise ValueError(f"ShardingOptions: shards must be an int >= 1, not {self.shards!r}")
        self.election_config()  # validates the timings
        ShardSelector.of(0, 1, self.field)  # validates the field

    def election_config(self, shard: int | None = None) -> LeaderElectionConfig:
        """The timing of one shard's elector (validated as leader election's)."""
        return LeaderElectionConfig(
            lease_duration=self.lease_duration,
            renew_deadline=self.renew_deadline,
            retry_period=self.retry_period,
            release_on_cancel=True,
            name=self.lease_name(shard) if shard is not None else self.name,
        )

    def lease_name(self, shard: int) -> str:
        """The Lease of shard ``shard``: ``<name>-shard-<i>``."""
        return f"{self.name}-shard-{shard}"

    def selector(self, shard: int) -> ShardSelector:
        """The hash range of shard ``shard``."""
        return ShardSelector.of(shard, self.shards, self.field)


@dataclasses.dataclass(frozen=True)
class ShardContext:
    """What a shard's setup gets: which shard, its selector, an informer factory listing and
    watching only that shard, and the fence its controllers must ask before each step.

    While a shard's controllers run, :func:`current_shard` returns their shard's context (in
    their reconciles too); a manager's client then reads the kinds in ``kinds`` from
    ``factory`` (the shard's cache) and fences writes with ``fence``.
    """

    index: int
    count: int
    selector: ShardSelector
    factory: InformerFactory
    fence: Callable[[], bool]
    #: The kinds (``(apiVersion, kind)``) a manager's client reads from the shard's cache.
    kinds: frozenset[Any] = frozenset()


_current_shard: contextvars.ContextVar[ShardContext | None] = contextvars.ContextVar(
    "kubectrl_shard", default=None
)


def current_shard() -> ShardContext | None:
    """The shard whose controllers run the calling task or reconcile (``None`` outside one).

    Example::

        shard = current_shard()
        log.info("reconciling in shard %s", shard.index if shard else "-")
    """
    return _current_shard.get()


def _owner_uid(obj: Any) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return None
    uids = [r.get("uid") for r in refs if isinstance(r, dict) and r.get("controller")]
    return str(uids[0]) if uids and uids[0] else None


def owner_in_shard(selector: ShardSelector) -> Callable[[Event], bool]:
    """A predicate passing events on owned objects whose owner is in ``selector``'s shard.

    For an owned kind watched unsharded (every replica sees every owned object): with a
    ``"uid"`` selector an event passes iff the object's controlling owner's uid hashes into the
    shard (objects without a controller owner never pass); with a ``"namespace"`` selector iff
    the object's namespace does (owner and owned share it). The apiserver cannot filter by an
    owner's hash, so this costs one unsharded (ideally metadata-only) cache of the owned kind
    per replica; see docs/scaling.md.

    Example::

        >>> from kubectrl.cache._shard import ShardSelector
        >>> from kubectrl.runtime.handler import CreateEvent
        >>> pred = owner_in_shard(ShardSelector.of(0, 1))
        >>> pred(CreateEvent({"metadata": {"ownerReferences": [
        ...     {"uid": "u", "controller": True}]}}))
        True
        >>> pred(CreateEvent({"metadata": {}}))
        False
    """

    def passes(event: Event) -> bool:
        obj = event.object_new if isinstance(event, UpdateEvent) else event.object
        if selector.field == "namespace":
            return selector.matches(obj)
        uid = _owner_uid(obj)
        return uid is not None and selector.matches({"metadata": {"uid": uid}})

    return passes


class _RoutingInformerFactory(InformerFactory):
    """A manager's cache when it shards: inside a shard's controllers (:func:`current_shard`),
    informers of the shard's kinds come from the shard's factory; elsewhere from this one."""

    def informer(self, resource: KindRef, **kwargs: Any) -> Informer:
        context = _current_shard.get()
        if (
            context is not None
            and isinstance(kwargs.get("shard", DEFAULT), Default)
            and _kind_key(resource) in context.kinds
        ):
            return context.factory.informer(resource, **kwargs)
        return super().informer(resource, **kwargs)

    def discard(self, informer: Informer) -> None:
        """Forget an informer (a sharded controller's template's, before the cache starts)."""
        for key, value in list(self._informers.items()):
            if value is informer:
                del self._informers[key]


class _InShardSource:
    """A source whose requests pass only when their object is in the shard's cache of the
    controlled kind (for watches whose handler maps events to arbitrary objects)."""

    def __init__(self, inner: KindSource, shard_cache: Informer) -> None:
        self._inner = inner
        self._cache = shard_cache

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def last_sync_error(self) -> BaseException | None:
        return self._inner.last_sync_error

    async def start(self, enqueue: Callable[[Request], None]) -> None:
        indexer = self._cache.indexer

        def ours(request: Request) -> bool:
            key = f"{request.namespace}/{request.name}" if request.namespace else request.name
            return key in indexer

        def add(request: Request) -> None:
            if ours(request):
                enqueue(request)

        low = low_priority(enqueue)

        def add_low(request: Request) -> None:
            if ours(request):
                low(request)

        add.low_priority = add_low  # type: ignore[attr-defined]
        await self._inner.start(add)

    async def wait_for_sync(self, timeout: float) -> None:
        await self._inner.wait_for_sync(timeout)

    async def stop(self) -> None:
        await self._inner.stop()


def shard_controllers(
    templates: Iterable[Controller], context: ShardContext, unsharded: InformerFactory
) -> list[Controller]:
    """One shard's copies of ``templates`` (controllers built by a sharding manager's Builder).

    Each template's first source (the controlled kind) is rebuilt on the shard's factory. With
    ``"namespace"`` sharding so are the others (owner and owned share a namespace). With
    ``"uid"`` sharding the others watch ``unsharded`` (one cache per replica, shared by its
    shards): an owned kind's events pass only when their controlling owner hashes into the
    shard (:func:`owner_in_shard`), other watches' requests only for objects in the shard's
    cache. Raises ``ValueError`` naming a template whose sources are not kind sources.
    """
    built: list[Controller] = []
    for template in templates:
        sources = template.sources
        if not sources or not all(isinstance(s, KindSource) for s in sources):
            names = ", ".join(getattr(s, "name", repr(s)) for s in sources) or "none"
            raise ValueError(
                f"sharded controller {template.name}: every source must be a KindSource built "
                f"on the manager's cache (a shard rebuilds them on its own), got: {names}"
            )
        kinds = [s for s in sources if isinstance(s, KindSource)]
        primary = kinds[0].rebind(context.factory)
        copies: list[Any] = [primary]
        for source in kinds[1:]:
            if context.selector.field == "namespace":
                copies.append(source.rebind(context.factory))
            elif isinstance(source.handler, OwnerHandler):
                copies.append(
                    source.rebind(unsharded, extra_predicates=[owner_in_shard(context.selector)])
                )
            else:
                copies.append(_InShardSource(source.rebind(unsharded), primary.informer))
        built.append(template.copy(f"{template.name}-shard-{context.index}", copies))
    return built


def _kind_key(resource: Any) -> Any:
    gvk = getattr(resource, "gvk", None)  # an APIResource (what a cached client resolved)
    if gvk is not None:
        return (gvk.api_version, gvk.kind)
    try:
        return normalize_resource(resource)
    except Exception:
        return resource


#: Builds a shard's controllers (sources on ``context.factory``); sync or async.
ShardSetup = Callable[[ShardContext], "Iterable[Controller] | Awaitable[Iterable[Controller]]"]


class _Shard:
    """One shard this replica holds or is taking: its elector and the task running it."""

    def __init__(self, index: int, elector: LeaderElector) -> None:
        self.index = index
        self.elector = elector
        self.task: asyncio.Task[None] | None = None
        self.running = False
        self.factory: InformerFactory | None = None


class ShardedRunner:
    """Holds a fair share of a controller's shards and runs each held shard's controllers.

    A :class:`~kubectrl.runtime.Runnable` for a :class:`~kubectrl.runtime.Manager`, on every
    replica (``need_leader_election = False``: the shard Leases are the election)::

        runner = ShardedRunner(manager.api_reader, options, setup)
        manager.add(runner)

    ``setup(context)`` returns the shard's controllers, their sources built on
    ``context.factory`` (sharded informers); the runner fences them with the shard's elector and
    starts them once the shard's Lease is held. ``kinds`` are the kinds a
    :class:`~kubectrl.runtime.Manager`'s client reads from the shard's cache inside its
    controllers (:attr:`ShardContext.kinds`). A manager with ``ManagerOptions(sharding=...)``
    builds this runner itself; add one by hand for controllers built without the Builder.

    Guarantees: a shard's controllers run only while this replica holds the shard's Lease and
    its last renewal is younger than ``renew_deadline`` (the fence); a shard given up is
    released only after its controllers stopped; :meth:`stop` releases every held Lease and
    deletes the member Lease. Caveats: a sync reconcile that outlives the controller's stop
    timeout cannot be interrupted (as leader election).
    """

    need_leader_election = False

    def __init__(
        self,
        client: AsyncClient,
        options: ShardingOptions,
        setup: ShardSetup,
        *,
        clock: Clock | None = None,
        registry: CollectorRegistry | None = None,
        factory_options: dict[str, Any] | None = None,
        stop_timeout: float = 30.0,
        kinds: Iterable[KindRef] = (),
    ) -> None:
        self._client = client
        self._options = options
        self._setup = setup
        self._clock: Clock = clock or RealClock()
        self._registry = registry
        self._factory_options = dict(factory_options or {})
        self._stop_timeout = stop_timeout
        self._kinds = kinds
        self._identity = options.identity or default_identity()
        self._member_name = (
            f"{options.name}-member-{hashlib.sha256(self._identity.encode()).hexdigest()[:16]}"
        )
        self._shards: dict[int, _Shard] = {}
        self._observed: dict[str, Observation] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._passes = 0
        self._rng = random.Random()  # noqa: S311 - jitter, not cryptography
        #: Every (shard, event) this replica went through, for tests and logs.
        self.history: list[tuple[int, str]] = []

    # ------------------------------------------------------------------ state

    @property
    def identity(self) -> str:
        """This replica's identity (the holder it writes in Leases)."""
        return self._identity

    @property
    def held(self) -> frozenset[int]:
        """The shards whose controllers run here now."""
        return frozenset(i for i, s in self._shards.items() if s.running and s.elector.fence())

    @property
    def caches(self) -> dict[int, InformerFactory]:
        """The informer factories (caches) of the shards running here now, by shard; e.g. to
        count what this replica caches::

            cached = sum(len(i.indexer) for f in runner.caches.values()
                         for i in f.informers.values())
        """
        return {
            i: s.factory for i, s in self._shards.items() if s.running and s.factory is not None
        }

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start balancing (returns at once)."""
        if self._task is not None:
            raise RuntimeError("ShardedRunner.start: already started")
        self._task = asyncio.ensure_future(self._balance_loop())

    async def stop(self, timeout: float | None = 30.0) -> None:
        """Stop every held shard's controllers, release their Leases, delete the member Lease."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        await asyncio.gather(*(self._give_up(i) for i in list(self._shards)))
        with contextlib.suppress(NotFoundError, Exception):
            await self._client.delete(LEASE, self._member_name, namespace=self._options.namespace)

    # ------------------------------------------------------------------ balancing

    async def _balance_loop(self) -> None:
        while not self._stopping:
            try:
                await self._balance_once()
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.warning("shard balancing failed: %s", err, extra={"identity": self._identity})
            await self._clock.sleep(self._options.retry_period * (1 + 0.2 * self._rng.random()))

    async def _balance_once(self) -> None:
        opts = self._options
        await self._renew_member()
        leases = await self._client.list(LEASE, namespace=opts.namespace)
        now = self._clock.now()
        members: set[str] = {self._identity}
        shard_records: dict[int, tuple[Observation, dict[str, Any]]] = {}
        member_prefix = f"{opts.name}-member-"
        shard_names = {opts.lease_name(i): i for i in range(opts.shards)}
        for lease in leases["items"]:
            name = lease["metadata"]["name"]
            record = LeaderElectionRecord.from_lease_spec(lease.get("spec") or {})
            observation = observe(self._observed.get(name), record, now)
            self._observed[name] = observation
            if name.startswith(member_prefix):
                if record.holder_identity and lease_valid(observation, now):
                    members.add(record.holder_identity)
            elif name in shard_names:
                shard_records[shard_names[name]] = (observation, lease)
        self._passes += 1
        if self._passes < 2:
            # Register first and look again one retry period later: replicas started together
            # then see each other before taking shards, instead of one taking all and handing
            # most of them over at once.
            return
        ranked = sorted(members)
        rank = ranked.index(self._identity)
        target = opts.shards // len(ranked) + (1 if rank < opts.shards % len(ranked) else 0)
        # Forget shards whose elector ended (lost or never won).
        for index, shard in list(self._shards.items()):
            if shard.task is not None and shard.task.done():
                del self._shards[index]
        if len(self._shards) > target:
            extra = sorted(self._shards, reverse=True)[: len(self._shards) - target]
            for index in extra:
                log.info(
                    "giving up shard %d (%d members, target %d)",
                    index,
                    len(ranked),
                    target,
                    extra={"identity": self._identity, "shard": index},
                )
                await self._give_up(index)
            return
        wanted = target - len(self._shards)
        if wanted <= 0:
            return
        for index in self._free_shards(shard_records, now):
            if wanted <= 0:
                break
            if await self._take(index, shard_records.get(index)):
                wanted -= 1

    def _free_shards(
        self, records: dict[int, tuple[Observation, dict[str, Any]]], now: float
    ) -> list[int]:
        free: list[int] = []
        for index in range(self._options.shards):
            if index in self._shards:
                continue
            found = records.get(index)
            if found is None:
                free.append(index)
                continue
            observation, _ = found
            holder = observation.record.holder_identity
            if not holder or holder == self._identity or not lease_valid(observation, now):
                free.append(index)
        # Spread replicas over different shards when several start at once.
        offset = int(hashlib.sha256(self._identity.encode()).hexdigest(), 16)
        return sorted(free, key=lambda i: (i - offset) % self._options.shards)

    async def _take(self, index: int, found: tuple[Observation, dict[str, Any]] | None) -> bool:
        opts = self._options
        wall = datetime.datetime.now(datetime.timezone.utc)
        lease_seconds = max(1, round(opts.lease_duration))
        try:
            if found is None:
                record = LeaderElectionRecord(self._identity, lease_seconds, wall, wall, 0)
                await self._client.create(
                    {
                        "apiVersion": LEASE[0],
                        "kind": LEASE[1],
                        "metadata": {"name": opts.lease_name(index), "namespace": opts.namespace},
                        "spec": record.to_lease_spec(),
                    }
                )
            else:
                observation, lease = found
                planned = plan_acquire_or_renew(
                    observation,
                    identity=self._identity,
                    lease_duration_seconds=lease_seconds,
                    now=self._clock.now(),
                    wall=wall,
                )
                if planned is None:
                    return False
                body = {**lease, "spec": {**(lease.get("spec") or {}), **planned.to_lease_spec()}}
                await self._client.update(body)
        except (ConflictError, AlreadyExistsError):
            return False  # someone else wrote first (their resourceVersion won)
        self._start_shard(index)
        return True

    def _start_shard(self, index: int) -> None:
        opts = self._options
        lock = LeaseLock(
            self._client,
            namespace=opts.namespace,
            name=opts.lease_name(index),
            identity=self._identity,
        )
        holder: dict[str, _Shard] = {}

        async def lead() -> None:
            await self._run_shard(holder["shard"])

        elector = LeaderElector(
            lock,
            opts.election_config(index),
            on_started_leading=lead,
            clock=self._clock,
            registry=self._registry,
        )
        shard = _Shard(index, elector)
        holder["shard"] = shard
        self._shards[index] = shard
        shard.task = asyncio.ensure_future(self._elect(shard))

    async def _elect(self, shard: _Shard) -> None:
        try:
            await shard.elector.run()
        except LeaderElectionLostError as err:
            self.history.append((shard.index, "lost"))
            log.warning("lost shard %d: %s", shard.index, err, extra={"shard": shard.index})

    async def _run_shard(self, shard: _Shard) -> None:
        opts = self._options
        factory = InformerFactory(
            self._client,
            shard=opts.selector(shard.index),
            clock=self._clock,
            **self._factory_options,
        )
        context = ShardContext(
            shard.index,
            opts.shards,
            opts.selector(shard.index),
            factory,
            shard.elector.fence,
            frozenset(_kind_key(k) for k in self._kinds),
        )
        # This task's context, copied into the tasks the controllers start: their reconciles
        # see their shard (current_shard) and a manager's client reads from its cache.
        _current_shard.set(context)
        built = self._setup(context)
        if inspect.isawaitable(built):
            built = await built
        controllers = list(built)
        for controller in controllers:
            controller.set_leader_fence(shard.elector.fence)
        started: list[Controller] = []
        try:
            for controller in controllers:
                await controller.start()
                started.append(controller)
            shard.factory = factory
            shard.running = True
            self.history.append((shard.index, "started"))
            log.info("running shard %d", shard.index, extra={"shard": shard.index})
            await asyncio.Event().wait()  # until the elector cancels (stop, give up, lost)
        finally:
            shard.running = False
            shard.factory = None
            # The Lease is released (if at all) only after this returns: stop the work first.
            await asyncio.shield(self._stop_work(started, factory))
            self.history.append((shard.index, "stopped"))

    async def _stop_work(self, controllers: list[Controller], factory: InformerFactory) -> None:
        await asyncio.gather(
            *(c.stop(self._stop_timeout) for c in controllers), return_exceptions=True
        )
        await factory.shutdown()

    async def _give_up(self, index: int) -> None:
        shard = self._shards.pop(index, None)
        if shard is None:
            return
        shard.elector.stop()
        if shard.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(shard.task)
        self.history.append((index, "released"))

    async def _renew_member(self) -> None:
        opts = self._options
        wall = datetime.datetime.now(datetime.timezone.utc)
        record = LeaderElectionRecord(
            self._identity, max(1, round(opts.lease_duration)), wall, wall, 0
        )
        try:
            lease = await self._client.get(LEASE, self._member_name, namespace=opts.namespace)
        except NotFoundError:
            await self._client.create(
                {
                    "apiVersion": LEASE[0],
                    "kind": LEASE[1],
                    "metadata": {"name": self._member_name, "namespace": opts.namespace},
                    "spec": record.to_lease_spec(),
                }
            )
            return
        lease["spec"] = record.to_lease_spec()
        await self._client.update(lease)

    def __repr__(self) -> str:
        return (
            f"<ShardedRunner {self._options.name} identity={self._identity!r} "
            f"held={sorted(self.held)}>"
        )
