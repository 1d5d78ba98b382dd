"""The shared, indexed informer: one list+watch, one store, many handlers.

The reflector reports changes in server order; the informer (the store's only writer) applies
each one to the store and, in the same synchronous step, appends a notification to every
handler's buffer. Nothing awaits between the store write and the fan-out, so every handler sees
changes in exactly the order the store went through them (client-go's in-order ``RealFIFO``
delivery). A relist replaces the store atomically, then emits deletes (with
:class:`DeletedFinalStateUnknown` tombstones) for vanished keys, then adds or updates in listing
order.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.cache._decisions import ReflectorOptions
from kubectrl.cache._handlers import (
    _SYNCED,
    DeletedFinalStateUnknown,
    HandlerLike,
    HandlerRegistration,
    Notification,
    ResourceEventHandlerFuncs,
)
from kubectrl.cache._lister import Lister
from kubectrl.cache._listwatch import ListerWatcher, describe_resource
from kubectrl.cache._reflector import Reflector, WatchErrorHandler
from kubectrl.cache._resource_version import (
    compare_resource_versions,
    is_comparable_resource_version,
)
from kubectrl.cache._store import Indexer, IndexFunc
from kubectrl.client import EventType
from kubectrl.errors import KubectrlError

__all__ = ["CacheSyncError", "Informer", "Transform", "strip_managed_fields"]

log = logging.getLogger("kubectrl.cache")

Object = dict[str, Any]
#: Applied to every object before it is stored (must return a dict; may return the same one).
Transform = Callable[[Object], Object]

#: Resync periods below this are raised to it (client-go's minimum).
MIN_RESYNC_PERIOD = 1.0


def strip_managed_fields(obj: Object) -> Object:
    """A :data:`Transform` that drops ``metadata.managedFields`` (often half an object's size).

    Informers do this by default (``keep_managed_fields=False``); as an explicit transform it
    serves code that builds its own store.

    Example::

        >>> strip_managed_fields({"metadata": {"name": "a", "managedFields": [{}]}})
        {'metadata': {'name': 'a'}}
    """
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta.pop("managedFields", None)
    return obj


class CacheSyncError(KubectrlError):
    """An informer did not sync within its deadline.

    The message names the informer (resource, namespace, selectors) and the last list/watch error
    (e.g. ``Forbidden (403): configmaps is forbidden: User "bob" cannot list ...`` or a missing
    resource). ``errors`` maps each unsynced informer's description to that error (or ``None``).
    """

    def __init__(self, message: str, errors: Mapping[str, BaseException | None]) -> None:
        super().__init__(message)
        self.errors = dict(errors)


class _Sink:
    """The reflector's view of the informer (keeps the write methods off the public API)."""

    def __init__(self, informer: Informer) -> None:
        self._informer = informer

    def replace(self, items: list[Object], resource_version: str) -> None:
        self._informer._replace(items, resource_version)

    def apply(self, event_type: EventType, obj: Object) -> None:
        self._informer._apply(event_type, obj)


class Informer:
    """A shared, indexed informer (client-go's ``SharedIndexInformer``).

    Guarantees:

    - One list+watch feeds one :class:`~kubectrl.cache.Indexer` and any number of handlers.
    - In-order delivery: each handler sees every change in the order the store applied it.
    - Each handler has its own unbounded buffer and task: a slow handler delays only itself;
      calls to one handler never overlap; an exception is logged and delivery goes on.
    - A relist replaces the store atomically, then delivers deletes (tombstones carrying the last
      known object) for vanished keys, then adds/updates in listing order.
    - A handler added after sync first receives every cached object as an add with
      ``is_in_initial_list=True`` (before any later change), and has its own ``has_synced``.
    - ``wait_for_cache_sync`` fails with :class:`CacheSyncError` naming the resource and the last
      list/watch error.

    Caveats: ``start``, ``add_handler`` and ``stop`` belong to the event loop thread; store and
    lister reads are safe from any thread. Handlers defined with plain ``def`` run on the event
    loop and must not block. Cached objects are shared: never mutate them.

    Memory use: one dict per object (after ``transform``), plus index sets; handler buffers hold
    references only. ``metadata.managedFields`` is dropped before an object is stored (it is
    often half of a small object, and controllers rarely read it; client-go users get the same
    with ``TransformStripManagedFields``); pass ``keep_managed_fields=True`` to keep it. A
    relist keeps the cached object of every object whose resourceVersion did not change (its
    listed copy is dropped, not transformed again), so the cache never holds two copies.

    Example::

        informer = Informer(ListWatch(client, ("v1", "ConfigMap"), namespace="ns"))
        informer.add_handler(on_add=lambda obj, initial: print("add", obj["metadata"]["name"]))
        informer.start()
        await informer.wait_for_cache_sync(timeout=30)
        print(informer.lister.namespace("ns").get("settings"))
        await informer.stop()
    """

    def __init__(
        self,
        list_watch: ListerWatcher,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
        transform: Transform | None = None,
        resync_period: float | None = None,
        reflector_options: ReflectorOptions | None = None,
        clock: Clock | None = None,
        on_watch_error: WatchErrorHandler | None = None,
        name: str | None = None,
        rng: random.Random | None = None,
        keep_managed_fields: bool = False,
    ) -> None:
        self.list_watch = list_watch
        self.keep_managed_fields = keep_managed_fields
        self.name = name or list_watch.description
        self.clock = clock or RealClock()
        self.indexer = Indexer(indexers)
        self.transform = transform
        self.resync_period = _resync(resync_period)
        self.reflector = Reflector(
            list_watch,
            _Sink(self),
            options=reflector_options,
            clock=self.clock,
            rng=rng,
            on_watch_error=on_watch_error,
            name=self.name,
        )
        self.reflector.on_progress = self._progressed
        # Who waits for the store to reach a resourceVersion: (version, future), woken by
        # _progressed as the reflector moves on.
        self._version_waiters: list[tuple[str, asyncio.Future[None]]] = []
        self._handlers: list[HandlerRegistration] = []
        self._synced = False
        self._synced_event: asyncio.Event | None = None
        self._reflector_task: asyncio.Task[None] | None = None
        self._resync_task: asyncio.Task[None] | None = None
        self._resync_wake: asyncio.Event | None = None
        self._started = False
        self._stopped = False
        self._handler_count = 0

    # ------------------------------------------------------------------ reads

    @property
    def lister(self) -> Lister:
        """A :class:`~kubectrl.cache.Lister` over this informer's store."""
        return Lister(self.indexer, resource=_resource_label(self.list_watch))

    def has_synced(self) -> bool:
        """True once the first list (or streaming list) was applied to the store."""
        return self._synced

    @property
    def last_error(self) -> BaseException | None:
        """The last list/watch error (kept after recovery; ``None`` if none happened)."""
        return self.reflector.last_error

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the store reflects."""
        return self.reflector.last_sync_resource_version

    @property
    def handlers(self) -> list[HandlerRegistration]:
        """The current registrations."""
        return list(self._handlers)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes to the store (backfilled; duplicate names raise ``ValueError``)."""
        self.indexer.add_indexers(indexers)

    # ------------------------------------------------------------------ handlers

    def add_handler(
        self,
        handler: HandlerLike | None = None,
        *,
        on_add: Callable[[Object, bool], Any] | None = None,
        on_update: Callable[[Object, Object], Any] | None = None,
        on_delete: Callable[[Any], Any] | None = None,
        resync_period: float | None = None,
        name: str | None = None,
    ) -> HandlerRegistration:
        """Register a handler: an object with ``on_add``/``on_update``/``on_delete`` methods
        (:class:`~kubectrl.cache.ResourceEventHandler`, some may be missing), a plain callable
        taking a :class:`~kubectrl.cache.Notification`, or the keyword functions.

        A handler added after sync first receives every cached object as an initial add.
        ``resync_period`` (seconds, at least 1) re-delivers every cached object as an update with
        ``old is new`` that often (default: the informer's, or never).

        Example::

            reg = informer.add_handler(on_add=lambda obj, initial: queue.add(key(obj)))
            reg.has_synced()
        """
        if handler is None:
            handler = ResourceEventHandlerFuncs(on_add, on_update, on_delete)
        elif on_add or on_update or on_delete:
            raise TypeError("pass either a handler or on_add/on_update/on_delete, not both")
        if self._stopped:
            raise RuntimeError(f"informer {self.name} is stopped")
        self._handler_count += 1
        period = _resync(resync_period) if resync_period is not None else self.resync_period
        registration = HandlerRegistration(
            handler,
            name=name or f"{self.name}#{self._handler_count}",
            resync_period=period,
            remover=self.remove_handler,
        )
        if self._synced:
            # A late handler: replay the cache as initial adds, synchronously, so no later change
            # can slip in before them.
            for obj in self.indexer.list():
                registration._push(Notification("add", obj, is_in_initial_list=True))
            registration._push(_SYNCED)
        if period is not None:
            registration.next_resync = self.clock.now() + period
        self._handlers.append(registration)
        if self._started:
            registration._start()
            self._ensure_resync_task()
        return registration

    def remove_handler(self, registration: HandlerRegistration) -> None:
        """Stop delivering to ``registration`` (no-op if already removed)."""
        if registration in self._handlers:
            self._handlers.remove(registration)
        registration._stop()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start listing and watching (in tasks on the running loop). Idempotent.

        Example: ``informer.start(); await informer.wait_for_cache_sync(timeout=30)``.
        """
        if self._stopped:
            raise RuntimeError(f"informer {self.name} was stopped; create a new one")
        if self._started:
            return
        self._started = True
        loop = asyncio.get_running_loop()
        self._synced_event = asyncio.Event()
        if self._synced:
            self._synced_event.set()
        for registration in self._handlers:
            registration._start()
        self._reflector_task = loop.create_task(
            self.reflector.run(), name=f"kubectrl-reflector-{self.name}"
        )
        self._ensure_resync_task()

    async def stop(self) -> None:
        """Stop the watch, the resync timer and every handler task. Idempotent."""
        self._stopped = True
        tasks = [t for t in (self._reflector_task, self._resync_task) if t is not None]
        for registration in list(self._handlers):
            if registration._task is not None:
                tasks.append(registration._task)
            registration._stop()
        for task in tasks:
            task.cancel()
        for task in tasks:
            try:
                await task
            except asyncio.CancelledError:
                if task is asyncio.current_task():  # pragma: no cover - defensive
                    raise
            except Exception:  # pragma: no cover - tasks log their own failures
                log.exception("informer task failed", extra={"informer": self.name})

    async def __aenter__(self) -> Informer:
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def wait_for_cache_sync(self, timeout: float | None = None) -> None:
        """Wait until the first sync; raise :class:`CacheSyncError` after ``timeout`` seconds.

        The error names this informer and its last list/watch error, e.g. ``informer for
        ConfigMap (v1) in namespace ns did not sync within 5 s: last error: list configmaps in
        namespace ns: Forbidden (403): ...``. A stopped reflector (it crashed) fails at once.
        """
        if self._synced:
            return
        if not self._started or self._synced_event is None:
            raise CacheSyncError(f"informer for {self.name} was not started", {self.name: None})
        waiters: set[asyncio.Task[Any]] = {asyncio.ensure_future(self._synced_event.wait())}
        if timeout is not None:
            waiters.add(asyncio.ensure_future(self.clock.sleep(timeout)))
        if self._reflector_task is not None:
            waiters.add(asyncio.ensure_future(asyncio.shield(self._reflector_task)))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        if self.has_synced():
            return
        raise CacheSyncError(self.sync_failure_message(timeout), {self.name: self.last_error})

    def has_seen(self, resource_version: str) -> bool:
        """Whether the store has applied every change up to ``resource_version``.

        That is, :attr:`last_sync_resource_version` is at least ``resource_version``
        (client-go's ``LastStoreSyncResourceVersion``, ordered with
        :func:`~kubectrl.cache.compare_resource_versions`; ``False`` before the first sync). A
        version that cannot be ordered raises ``ValueError`` naming it.

        Example::

            created = await client.create(pod)
            informer.has_seen(created["metadata"]["resourceVersion"])   # often False yet
        """
        current = self.reflector.last_sync_resource_version
        if not current:
            # Nothing applied yet; the version given must still be one that can be ordered.
            compare_resource_versions(resource_version, "1")
            return False
        return compare_resource_versions(current, resource_version) >= 0

    async def wait_for_resource_version(
        self, resource_version: str, timeout: float | None = None
    ) -> bool:
        """Wait until the store has applied every change up to ``resource_version``.

        Returns ``True`` once :meth:`has_seen` holds (at once if it already does), ``False``
        after ``timeout`` seconds of this informer's clock, or at once when the informer is
        not running (not started, stopped, or its reflector ended): nothing would move it.
        Woken by the reflector as it applies events, lists and bookmarks, never by polling. A
        version that cannot be ordered raises ``ValueError`` naming it.

        The store reaches a version only through this informer's watch: a write its selectors
        filter out moves it only with a later event or a bookmark (the apiserver sends one
        about once a minute).

        Example::

            pod = await client.create(pod)
            if await informer.wait_for_resource_version(pod["metadata"]["resourceVersion"], 5):
                pods = informer.lister.namespace("ns").list()   # includes the new Pod
        """
        if self.has_seen(resource_version):
            return True
        task = self._reflector_task
        if not self._started or self._stopped or task is None or task.done():
            return False
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter = (resource_version, future)
        self._version_waiters.append(waiter)
        waiters: set[asyncio.Future[Any]] = {future, asyncio.ensure_future(asyncio.shield(task))}
        if timeout is not None:
            waiters.add(asyncio.ensure_future(self.clock.sleep(timeout)))
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for other in waiters:
                if other is not future:
                    other.cancel()
            if waiter in self._version_waiters:
                self._version_waiters.remove(waiter)
        return self.has_seen(resource_version)

    def _progressed(self, resource_version: str) -> None:
        if not self._version_waiters or not is_comparable_resource_version(resource_version):
            return
        for wanted, future in self._version_waiters:
            if not future.done() and compare_resource_versions(resource_version, wanted) >= 0:
                future.set_result(None)

    def sync_failure_message(self, timeout: float | None) -> str:
        """The message :meth:`wait_for_cache_sync` raises with."""
        within = f" within {timeout:g} s" if timeout is not None else ""
        error = self.last_error
        why = f"last error: {error}" if error is not None else "no list/watch error was reported"
        return f"informer for {self.name} did not sync{within}: {why}"

    # ------------------------------------------------------------------ the writer

    def _transform(self, obj: Object) -> Object:
        if not self.keep_managed_fields:
            meta = obj.get("metadata")
            if meta.__class__ is dict and "managedFields" in meta:
                del meta["managedFields"]
        if self.transform is None:
            return obj
        try:
            return self.transform(obj)
        except Exception:
            log.exception("informer transform raised; storing the object as is")
            return obj

    def _fan_out(self, notification: Notification) -> None:
        for registration in self._handlers:
            registration._push(notification)

    def _replace(self, items: list[Object], resource_version: str) -> None:
        key_of = self.indexer.key_of
        transform = self._transform
        # Each key computed once, here; the store takes the keyed objects as they are.
        keyed: dict[str, Object] = {}
        if len(self.indexer) == 0:
            for obj in items:
                obj = transform(obj)
                keyed[key_of(obj)] = obj
        else:
            # A relist: an object whose resourceVersion did not change is kept as cached and
            # the listed copy dropped at once. Without this the cache held two copies at the
            # relist's end and the process kept that high-water mark (1.7x a ConfigMap cache's
            # resident set after 3 relists, 1.8x a Pod cache's: benchmarks/bench_sharding.py).
            cached = self.indexer.get_by_key
            for obj in items:
                key = key_of(obj)
                old = cached(key)
                version = _resource_version(obj)
                if old is not None and version and _resource_version(old) == version:
                    keyed[key] = old
                    continue
                obj = transform(obj)
                keyed[key_of(obj)] = obj
            items.clear()  # the listed copies of unchanged objects are freed now
        previous = self.indexer._replace_keyed(keyed)
        for key, last in previous.items():
            if key not in keyed:
                self._fan_out(Notification("delete", DeletedFinalStateUnknown(key, last)))
        initial = not self._synced
        get_previous = previous.get
        for key, obj in keyed.items():
            old = get_previous(key)
            if old is None:
                self._fan_out(Notification("add", obj, is_in_initial_list=initial))
            else:
                self._fan_out(Notification("update", obj, old=old))
        if not self._synced:
            self._synced = True
            for registration in self._handlers:
                registration._push(_SYNCED)
            if self._synced_event is not None:
                self._synced_event.set()
        log.debug(
            "informer replaced",
            extra={"informer": self.name, "items": len(keyed), "rv": resource_version},
        )

    def _apply(self, event_type: EventType, obj: Object) -> None:
        obj = self._transform(obj)
        key = self.indexer.key_of(obj)
        if event_type is EventType.DELETED:
            # Delivered even when the key was not cached (client-go does the same).
            self.indexer.delete_key(key)
            self._fan_out(Notification("delete", obj))
            return
        old = self.indexer._put_keyed(key, obj)
        if old is None:
            self._fan_out(Notification("add", obj))
        else:
            self._fan_out(Notification("update", obj, old=old))

    # ------------------------------------------------------------------ resync

    def _ensure_resync_task(self) -> None:
        if self._resync_task is not None or not self._started:
            return
        if not any(r.resync_period for r in self._handlers):
            return
        self._resync_task = asyncio.get_running_loop().create_task(
            self._resync_loop(), name=f"kubectrl-resync-{self.name}"
        )

    async def _resync_loop(self) -> None:
        while True:
            due = [r.next_resync for r in self._handlers if r.next_resync is not None]
            if not due:
                return
            delay = max(min(due) - self.clock.now(), 0.0)
            await self.clock.sleep(delay)
            now = self.clock.now()
            if not self._synced:
                continue
            objects = self.indexer.list()
            for registration in self._handlers:
                if (
                    registration.next_resync is not None
                    and registration.resync_period
                    and registration.next_resync <= now
                ):
                    for obj in objects:
                        registration._push(Notification("update", obj, old=obj))
                    registration.next_resync = now + registration.resync_period

    def __repr__(self) -> str:
        return (
            f"<Informer {self.name} synced={self._synced} objects={len(self.indexer)} "
            f"handlers={len(self._handlers)}>"
        )


def _resync(period: float | None) -> float | None:
    if period is None or period <= 0:
        return None
    return max(period, MIN_RESYNC_PERIOD)


def _resource_label(list_watch: ListerWatcher) -> str:
    # A ListerWatcher need not say which resource it serves (test fakes, custom sources).
    resource = getattr(list_watch, "resource", None)
    return describe_resource(resource) if resource is not None else ""


def _resource_version(obj: Object) -> str:
    meta = obj.get("metadata")
    if meta.__class__ is not dict:
        return ""
    version = meta.get("resourceVersion")
    return version if isinstance(version, str) else ""
