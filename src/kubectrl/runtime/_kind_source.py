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
import time
from collections.abc import Iterable
from typing import Any

from kubectrl.cache import (
    DeletedFinalStateUnknown,
    HandlerRegistration,
    Informer,
    InformerFactory,
)
from kubectrl.client import ResourceRef
from kubectrl.objects import GroupVersionKind, split_api_version
from kubectrl.runtime._event import CreateEvent, DeleteEvent, UpdateEvent
from kubectrl.runtime._handler import EventHandlerLike, enqueue_request_for_object
from kubectrl.runtime._predicate import PredicateLike
from kubectrl.runtime._source import Enqueue, dispatch

__all__ = ["KindSource", "group_kind", "normalize_resource"]

# How often wait_for_sync looks at the handler's own has_synced (client-go polls every 100 ms).
_POLL = 0.05


def normalize_resource(resource: ResourceRef) -> ResourceRef:
    """``(apiVersion, kind)`` for a GroupVersionKind, so both spellings share one informer.

    Example::

        >>> normalize_resource(GroupVersionKind("apps", "v1", "Deployment"))
        ('apps/v1', 'Deployment')
    """
    if isinstance(resource, GroupVersionKind):
        return (resource.api_version, resource.kind)
    return resource


def group_kind(resource: ResourceRef) -> tuple[str, str]:
    """The ``(group, kind)`` of an ``(apiVersion, kind)`` tuple or a GroupVersionKind.

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
    reconcile sees a synced cache. Caveats: events before :meth:`start` are not replayed as
    such; the handler receives the cached objects as initial adds instead.

    Example::

        source = KindSource(factory, ("v1", "ConfigMap"), predicates=[generation_changed])
        controller = Controller("configmaps", reconcile, sources=[source])
    """

    def __init__(
        self,
        factory: InformerFactory,
        kind: ResourceRef,
        *,
        handler: EventHandlerLike | None = None,
        predicates: Iterable[PredicateLike] = (),
        namespace: str | None = None,
        label_selector: str | None = None,
    ) -> None:
        self._kind = normalize_resource(kind)
        self._handler = handler if handler is not None else enqueue_request_for_object()
        self._predicates = list(predicates)
        self._informer: Informer = factory.informer(
            self._kind, namespace=namespace, label_selector=label_selector
        )
        self._registration: HandlerRegistration | None = None

    @property
    def name(self) -> str:
        """``kind source: <resource>`` (names the source in sync errors)."""
        return f"kind source: {_describe(self._kind)}"

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

        def on_add(obj: Any, is_in_initial_list: bool) -> None:
            dispatch(CreateEvent(obj, is_in_initial_list), self._handler, self._predicates, enqueue)

        def on_update(old: Any, new: Any) -> None:
            dispatch(UpdateEvent(old, new), self._handler, self._predicates, enqueue)

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

        Raises :class:`~kubectrl.cache.CacheSyncError` (naming the informer and its last error)
        after ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        await self._informer.wait_for_cache_sync(timeout)
        registration = self._registration
        if registration is None:
            raise RuntimeError(f"{self.name}: wait_for_sync() before start()")
        while not registration.has_synced():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: handler did not receive the initial list")
            await asyncio.sleep(_POLL)

    async def stop(self) -> None:
        """Remove the handler (the shared informer keeps running for other users)."""
        if self._registration is not None:
            self._registration.remove()

    def __repr__(self) -> str:
        return f"KindSource({_describe(self._kind)})"


def _describe(resource: ResourceRef) -> str:
    if isinstance(resource, tuple) and len(resource) == 2:
        return str(GroupVersionKind.from_api_version(str(resource[0]), str(resource[1])))
    return str(resource)
