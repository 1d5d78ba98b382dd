"""The informer-backed source: events on one kind, from the manager's shared cache.

controller-runtime's ``source.Kind``. The source asks the shared
:class:`~kubectrl.cache.InformerFactory` for the informer of its kind when it is *built* (so a
manager can start and sync every cache before any controller runs), registers a handler on
:meth:`KindSource.start` and turns each notification into a :class:`CreateEvent`,
:class:`UpdateEvent` or :class:`DeleteEvent` that goes through the predicates and the event
handler into the controller's queue (:func:`~kubectrl.runtime.dispatch`).

Why a handler per source and not per controller: two controllers watching one kind share the
informer (one list+watch) but each has its own buffer, so a slow controller delays only itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.cache import (
    DeletedFinalStateUnknown,
    HandlerRegistration,
    Informer,
    InformerFactory,
    resource_ref,
)
from kubectrl.client import KindRef, ResourceRef
from kubectrl.objects import GroupVersionKind, split_api_version
from kubectrl.runtime._event import CreateEvent, DeleteEvent, UpdateEvent
from kubectrl.runtime._handler import (
    EventHandlerLike,
    enqueue_request_for_object,
    resolve_handler_scope,
)
from kubectrl.runtime._predicate import PredicateLike
from kubectrl.runtime._reconcile import low_priority
from kubectrl.runtime._source import Enqueue, dispatch

__all__ = ["KindSource", "group_kind", "normalize_resource"]


def normalize_resource(resource: KindRef) -> ResourceRef:
    """``(apiVersion, kind)`` for a GroupVersionKind or a model class, so every spelling of a
    kind shares one informer.

    Example::

        >>> normalize_resource(GroupVersionKind("apps", "v1", "Deployment"))
        ('apps/v1', 'Deployment')
        >>> from kubernetes.client.models import V1Deployment
        >>> normalize_resource(V1Deployment)
        ('apps/v1', 'Deployment')
    """
    resource = resource_ref(resource)
    if isinstance(resource, GroupVersionKind):
        return (resource.api_version, resource.kind)
    return resource


def group_kind(resource: KindRef) -> tuple[str, str]:
    """The ``(group, kind)`` of an ``(apiVersion, kind)`` tuple, a GroupVersionKind or a model
    class.

    Example::

        >>> group_kind(("apps/v1", "Deployment"))
        ('apps', 'Deployment')
    """
    resource = normalize_resource(resource)
    if isinstance(resource, tuple) and len(resource) == 2:
        return split_api_version(str(resource[0]))[0], str(resource[1])
    kind = getattr(resource, "kind", None)
    group = getattr(resource, "group", None)
    if isinstance(kind, str) and isinstance(group, str):
        return group, kind
    raise TypeError(f"cannot tell the group and kind of {resource!r}; use (apiVersion, kind)")


class KindSource:
    """Enqueues requests for events on one kind, via the shared informer (``source.Kind``).

    ``handler`` defaults to enqueueing the object itself; ``predicates`` filter adds, updates
    and deletes (all must pass). Deletes the informer inferred from a relist arrive as a
    :class:`DeleteEvent` with ``delete_state_unknown=True`` and the last known object (the
    tombstone is unwrapped).

    Guarantees: the informer is the factory's shared one for (kind, namespace, selector), so a
    cache-backed client reading the same kind reads the same store; ``wait_for_sync`` returns
    only after this source's own handler has seen the initial list, so a controller's first
    reconcile sees a synced cache, and its deadline runs on the factory's clock; on
    :meth:`start` an owner handler learns its owner kind's scope through the factory client's
    discovery (a cluster-scoped owner is enqueued without namespace). Caveats: events before
    :meth:`start` are not replayed as such; the handler receives the cached objects as initial
    adds instead.

    ``kind`` may be a model class (``V1ConfigMap``, a custom resource class): events still carry
    the cache's dicts (handlers and predicates run on every event, so no model is built for
    them); the reconciler reads a typed object through the cache-backed client.

    ``metadata_only=True`` uses the factory's metadata-only informer of the kind (controller-
    runtime's ``OnlyMetadata``): events carry ``PartialObjectMetadata`` dicts (``apiVersion``
    ``meta.k8s.io/v1``, ``metadata`` only), and the cache holds no spec or status.

    Example::

        source = KindSource(factory, ("v1", "ConfigMap"), predicates=[generation_changed])
        controller = Controller("configmaps", reconcile, sources=[source])
    """

    def __init__(
        self,
        factory: InformerFactory,
        kind: KindRef,
        *,
        handler: EventHandlerLike | None = None,
        predicates: Iterable[PredicateLike] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
        metadata_only: bool = False,
    ) -> None:
        self._kind = normalize_resource(kind)
        self._clock: Clock = getattr(factory, "clock", None) or RealClock()
        self._client = getattr(factory, "client", None)
        self._handler = handler if handler is not None else enqueue_request_for_object()
        self._predicates = list(predicates)
        self._namespace = namespace
        self._label_selector = label_selector
        self._metadata_only = metadata_only
        self._informer: Informer = factory.informer(
            self._kind,
            namespace=namespace,
            label_selector=label_selector,
            metadata_only=metadata_only,
        )
        self._registration: HandlerRegistration | None = None

    @property
    def name(self) -> str:
        """``kind source: <resource>`` (names the source in sync errors)."""
        return f"kind source: {_describe(self._kind)}"

    @property
    def kind(self) -> ResourceRef:
        """The watched kind, as ``(apiVersion, kind)`` (or the resource it was given as)."""
        return self._kind

    @property
    def handler(self) -> EventHandlerLike:
        """The event handler turning events into requests."""
        return self._handler

    def rebind(
        self, factory: InformerFactory, *, extra_predicates: Iterable[PredicateLike] = ()
    ) -> KindSource:
        """The same source (kind, handler, predicates, namespace, label selector, metadata only)
        on the informers of ``factory`` (say, a shard's), unstarted; ``extra_predicates`` are
        added after this source's own.

        Example::

            shard_source = source.rebind(shard_factory)
        """
        return KindSource(
            factory,
            self._kind,
            handler=self._handler,
            predicates=[*self._predicates, *extra_predicates],
            namespace=self._namespace,
            label_selector=self._label_selector,
            metadata_only=self._metadata_only,
        )

    @property
    def metadata_only(self) -> bool:
        """Whether the source's informer caches ``PartialObjectMetadata`` only."""
        return self._metadata_only

    @property
    def informer(self) -> Informer:
        """The shared informer this source listens to."""
        return self._informer

    @property
    def last_sync_error(self) -> BaseException | None:
        """The informer's last list/watch error (shown when the sync times out)."""
        return self._informer.last_error

    async def start(self, enqueue: Enqueue) -> None:
        """Register the handler on the informer and start it (idempotent for the informer)."""
        if self._registration is not None:
            raise RuntimeError(f"{self.name} was already started")
        resolve = getattr(self._client, "resource", None)
        await resolve_handler_scope(self._handler, resolve)

        unchanged = low_priority(enqueue)  # initial list and resyncs: the back of the queue

        def on_add(obj: Any, is_in_initial_list: bool) -> None:
            target = unchanged if is_in_initial_list else enqueue
            dispatch(CreateEvent(obj, is_in_initial_list), self._handler, self._predicates, target)

        def on_update(old: Any, new: Any) -> None:
            same = _resource_version(old) == _resource_version(new) != ""
            target = unchanged if same else enqueue
            dispatch(UpdateEvent(old, new), self._handler, self._predicates, target)

        def on_delete(obj: Any) -> None:
            if isinstance(obj, DeletedFinalStateUnknown):
                event = DeleteEvent(obj.obj, delete_state_unknown=True)
            else:
                event = DeleteEvent(obj)
            dispatch(event, self._handler, self._predicates, enqueue)

        self._registration = self._informer.add_handler(
            on_add=on_add, on_update=on_update, on_delete=on_delete, name=self.name
        )
        self._informer.start()

    async def wait_for_sync(self, timeout: float) -> None:
        """Wait for the informer's first list and for this handler to have received it.

        One deadline of ``timeout`` seconds on the factory's clock for both. Raises
        :class:`~kubectrl.cache.CacheSyncError` (naming the informer and its last error) or
        :class:`TimeoutError` (the handler is still behind) when it passes.
        """
        registration = self._registration
        if registration is None:
            raise RuntimeError(f"{self.name}: wait_for_sync() before start()")
        deadline = self._clock.now() + timeout
        await self._informer.wait_for_cache_sync(timeout)
        if registration.has_synced():
            return
        # The informer queued its "synced" marker behind the initial list in this handler's
        # buffer, so the handler is synced once it has drained that buffer: wait for idle, not
        # a polling loop.
        idle = asyncio.ensure_future(registration.wait_idle())
        timer = asyncio.ensure_future(self._clock.sleep(max(0.0, deadline - self._clock.now())))
        try:
            await asyncio.wait({idle, timer}, return_when=asyncio.FIRST_COMPLETED)
            if not registration.has_synced() and not timer.done():
                await timer  # idle but not synced: the handler was removed; wait out the deadline
        finally:
            idle.cancel()
            timer.cancel()
        if not registration.has_synced():
            raise TimeoutError(
                f"{self.name}: handler did not receive the initial list within {timeout:g} s"
            )

    async def stop(self) -> None:
        """Remove the handler (the shared informer keeps running for other users)."""
        if self._registration is not None:
            self._registration.remove()

    def __repr__(self) -> str:
        return f"KindSource({_describe(self._kind)})"


def _resource_version(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    return str(meta.get("resourceVersion") or "") if isinstance(meta, dict) else ""


def _describe(resource: ResourceRef) -> str:
    # GroupVersionKind's own spelling ("apps/v1, Kind=Deployment"), as controller-runtime prints
    # a source's kind.
    if isinstance(resource, tuple) and len(resource) == 2:
        return str(GroupVersionKind.from_api_version(str(resource[0]), str(resource[1])))
    return str(resource)
