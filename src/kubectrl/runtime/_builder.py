"""The Builder: wire a reconciler to the kinds it watches, in one chain (``builder.Builder``).

::

    Builder(manager).for_(("v1", "ConfigMap")).owns(("v1", "Secret")).complete(reconcile)

makes a :class:`~kubectrl.runtime.Controller` named after the ``for_`` kind, with one
:class:`KindSource` per watched kind on the manager's shared informers, and adds it to the
manager (which starts it, on the leader, after the caches synced).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, cast

from kubectrl.client import KindRef
from kubectrl.runtime._controller import Controller, ControllerOptions
from kubectrl.runtime._handler import (
    EventHandlerLike,
    enqueue_request_for_object,
    enqueue_request_for_owner,
)
from kubectrl.runtime._kind_source import KindSource, group_kind, normalize_resource
from kubectrl.runtime._predicate import PredicateLike
from kubectrl.runtime._reconcile import ReconcileLike
from kubectrl.runtime._source import Source

if TYPE_CHECKING:
    from kubectrl.runtime._manager import Manager

__all__ = ["Builder"]


@dataclasses.dataclass
class _Watch:
    kind: KindRef | None
    handler: EventHandlerLike | None
    predicates: list[PredicateLike]
    source: Source | None = None
    owned: bool = False
    controller_only: bool = True
    metadata_only: bool = False


class Builder:
    """Builds a controller from the kind it reconciles, the kinds it owns and other watches.

    - ``for_(kind)``: events on ``kind`` enqueue the object itself (exactly one ``for_``).
    - ``owns(kind)``: events on ``kind`` enqueue its *controlling* owner when the owner's group
      and kind are the ``for_`` kind's (any version); ``controller_only=False`` for every owner.
      A cluster-scoped ``for_`` kind (looked up through discovery on start) is enqueued as
      ``("", name)`` whatever the owned object's namespace.
    - ``owns(kind, only_metadata=True)`` (and ``watches(kind, handler, only_metadata=True)``):
      the kind is cached as ``PartialObjectMetadata`` only (controller-runtime's
      ``builder.OnlyMetadata``): a fraction of the memory for a kind whose spec and status the
      controller never reads (handlers and predicates see ``metadata`` only; a reconciler that
      reads the kind through ``manager.client`` starts a second, whole-object informer).
    - ``watches(kind, handler)``: events on ``kind`` go through ``handler`` (an
      :class:`~kubectrl.runtime.EventHandler` or a plain ``obj -> Iterable[Request]``); a
      ready-made :class:`~kubectrl.runtime.Source` may be passed instead of a kind.
    - ``with_event_filter(predicate)``: applies to every watch (plain ``event -> bool`` too);
      per-watch ``predicates=`` apply to one.
    - ``with_options(max_concurrent_reconciles=4, ...)``: :class:`ControllerOptions` fields,
      or an options object.
    - ``named(name)``: the controller's name (default: the ``for_`` kind, lower-cased).

    A kind is an ``(apiVersion, kind)`` tuple, a GVK, or a model class (``V1ConfigMap``, a
    custom resource class); a class names the same informer as its tuple. Events carry the
    cache's dicts either way; the reconciler reads typed objects with
    ``manager.client.get(Widget, ...)``.

    ``complete(reconciler)`` builds the controller, adds it to the manager and returns it.
    ``reconciler`` may be a :class:`~kubectrl.runtime.Reconciler`, an object with ``reconcile``
    or a plain (async) function of a :class:`~kubectrl.runtime.Request`.

    Example::

        controller = (
            Builder(manager)
            .for_(("test.kubectrl.dev/v1", "Widget"))
            .owns(("v1", "ConfigMap"))
            .with_event_filter(generation_changed)
            .with_options(max_concurrent_reconciles=2)
            .complete(reconcile)
        )
        Builder(manager).for_(Foo).owns(V1Deployment).complete(FooReconciler())
    """

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._filters: list[PredicateLike] = []
        self._options: ControllerOptions | None = None
        self._option_changes: dict[str, Any] = {}
        self._name = ""
        self._built = False

    def for_(self, kind: KindRef, *, predicates: Iterable[PredicateLike] = ()) -> Builder:
        """Reconcile ``kind``: its events enqueue the object itself."""
        if self._for is not None:
            raise ValueError("for_() may only be called once (one controller reconciles one kind)")
        self._for = _Watch(kind, enqueue_request_for_object(), list(predicates))
        return self

    def owns(
        self,
        kind: KindRef,
        *,
        predicates: Iterable[PredicateLike] = (),
        controller_only: bool = True,
        only_metadata: bool = False,
    ) -> Builder:
        """Watch ``kind`` and enqueue its controlling owner of the ``for_`` kind
        (``only_metadata=True``: cache its metadata only)."""
        self._watches.append(
            _Watch(
                kind,
                None,
                list(predicates),
                owned=True,
                controller_only=controller_only,
                metadata_only=only_metadata,
            )
        )
        return self

    def watches(
        self,
        kind_or_source: KindRef | Source,
        handler: EventHandlerLike | None = None,
        *,
        predicates: Iterable[PredicateLike] = (),
        only_metadata: bool = False,
    ) -> Builder:
        """Watch a kind (events through ``handler``; ``only_metadata=True``: cache its metadata
        only) or add a ready-made source as is."""
        if isinstance(kind_or_source, Source) and not isinstance(kind_or_source, (tuple, type)):
            if handler is not None or predicates or only_metadata:
                raise ValueError(
                    "a ready-made source carries its own handler, predicates and cache: "
                    "handler, predicates and only_metadata are for a kind"
                )
            self._watches.append(_Watch(None, None, [], source=kind_or_source))
            return self
        if handler is None:
            raise ValueError("watches(kind, handler) needs a handler")
        kind = cast("KindRef", kind_or_source)
        self._watches.append(_Watch(kind, handler, list(predicates), metadata_only=only_metadata))
        return self

    def with_event_filter(self, predicate: PredicateLike) -> Builder:
        """Add a predicate every watch must pass."""
        self._filters.append(predicate)
        return self

    def with_options(self, options: ControllerOptions | None = None, **changes: Any) -> Builder:
        """Set the controller options (an object, and/or :class:`ControllerOptions` fields)."""
        if options is not None:
            self._options = options
        self._option_changes.update(changes)
        return self

    def named(self, name: str) -> Builder:
        """Name the controller (logs, metrics, the queue); names are unique per manager."""
        self._name = name
        return self

    def complete(self, reconciler: ReconcileLike) -> Controller:
        """Build the controller, add it to the manager and return it."""
        if self._built:
            raise RuntimeError("this Builder already built its controller")
        if self._for is None or self._for.kind is None:
            raise ValueError("Builder needs for_(kind) before complete()")
        owner_group, owner_kind = group_kind(self._for.kind)
        # The owner handler looks up the for_ kind's scope through discovery, which needs a
        # version: the one the for_ kind was given with.
        for_kind = normalize_resource(self._for.kind)
        owner_api_version = (
            str(for_kind[0])
            if isinstance(for_kind, tuple)
            else str(getattr(for_kind, "api_version", owner_group))
        )
        name = self._name or owner_kind.lower()
        options = self._options or ControllerOptions()
        if self._option_changes:
            options = dataclasses.replace(options, **self._option_changes)
        factory = self._manager.informer_factory
        sources: list[Source] = []
        for watch in [self._for, *self._watches]:
            if watch.source is not None:
                sources.append(watch.source)
                continue
            if watch.kind is None:  # _Watch holds a kind or a source; never neither
                raise ValueError(f"Builder {name}: a watch with neither a kind nor a source")
            handler = watch.handler
            if watch.owned:
                handler = enqueue_request_for_owner(
                    owner_api_version, owner_kind, controller_only=watch.controller_only
                )
            sources.append(
                KindSource(
                    factory,
                    watch.kind,
                    handler=handler,
                    predicates=[*self._filters, *watch.predicates],
                    metadata_only=watch.metadata_only,
                )
            )
        controller = Controller(
            name,
            reconciler,
            options=options,
            sources=sources,
            clock=self._manager.clock,
            registry=self._manager.registry,
        )
        # controller-runtime's reconcile logger carries controllerGroup and controllerKind.
        controller._for_group_kind = (owner_group, owner_kind)
        self._manager.add(controller)
        self._built = True
        return controller

    build = complete

    def __repr__(self) -> str:
        return f"<Builder for={self._for.kind if self._for else None} watches={len(self._watches)}>"
