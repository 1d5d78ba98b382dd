"""The controller runtime: reconcilers, controllers, handlers, predicates, controllerutil, probes.

What users write is a reconciler: a function (or :class:`Reconciler` subclass) that takes a
:class:`Request` (namespace and name) and makes the world match the object's desired state. A
:class:`Controller` runs it from a rate-limited workqueue with N workers; sources feed the queue
through predicates (which events matter) and event handlers (which keys an event enqueues).

Semantics are controller-runtime's, so its users feel at home:

- raise to retry with growing backoff; raise :class:`TerminalError` to give up on this change;
  return :class:`Result` with ``requeue_after`` to come back later;
- one key is never reconciled by two workers at once;
- metrics carry controller-runtime's names (``controller_runtime_reconcile_total`` ...).

Example::

    from kubectrl.runtime import Controller, Request, Result

    async def reconcile(request: Request) -> Result | None:
        ...

    controller = Controller("configmaps", reconcile, sources=[source])
    await controller.run()

See ``docs/runtime.md``.
"""

from __future__ import annotations

from kubectrl._internal.exports import Deprecated as _Deprecated
from kubectrl._internal.exports import module_getattr as _module_getattr
from kubectrl._internal.exports import publish as _publish
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._cache_client import BlockingCachedClient, CachedClient
from kubectrl.runtime._controller import (
    Controller,
    ControllerOptions,
    ReconcileInfo,
    ReconcileTimeoutError,
    current_reconcile,
)
from kubectrl.runtime._field_index import FieldIndexer, FieldIndexError
from kubectrl.runtime._manager import Manager, ManagerError, ManagerOptions, Runnable
from kubectrl.runtime._reconcile import (
    MAX_REQUEUE_AFTER,
    Reconciler,
    ReconcilerProtocol,
    Request,
    Result,
    TerminalError,
    low_priority,
    reconcile_func,
)
from kubectrl.runtime._server import ping
from kubectrl.runtime._webhook_builder import WebhookBuilder

__all__ = [
    "MAX_REQUEUE_AFTER",
    "BlockingCachedClient",
    "Builder",
    "CachedClient",
    "Controller",
    "ControllerOptions",
    "FieldIndexError",
    "FieldIndexer",
    "Manager",
    "ManagerError",
    "ManagerOptions",
    "ReconcileInfo",
    "ReconcileTimeoutError",
    "Reconciler",
    "ReconcilerProtocol",
    "Request",
    "Result",
    "Runnable",
    "TerminalError",
    "WebhookBuilder",
    "current_reconcile",
    "low_priority",
    "ping",
    "reconcile_func",
]

_publish(__name__, globals(), __all__)

# Names that moved to a submodule (or to the package that owns them): still importable
# from here, with a DeprecationWarning naming the new place.
__getattr__, __dir__ = _module_getattr(
    __name__,
    globals(),
    deprecated={
        "AlreadyOwnedError": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "AlreadyOwnedError",
            "kubectrl.runtime.controllerutil.AlreadyOwnedError",
        ),
        "ChannelSource": _Deprecated(
            "kubectrl.runtime._source", "ChannelSource", "kubectrl.runtime.source.ChannelSource"
        ),
        "CreateEvent": _Deprecated(
            "kubectrl.runtime._event", "CreateEvent", "kubectrl.runtime.handler.CreateEvent"
        ),
        "DeleteEvent": _Deprecated(
            "kubectrl.runtime._event", "DeleteEvent", "kubectrl.runtime.handler.DeleteEvent"
        ),
        "Event": _Deprecated("kubectrl.runtime._event", "Event", "kubectrl.runtime.handler.Event"),
        "EventHandler": _Deprecated(
            "kubectrl.runtime._handler", "EventHandler", "kubectrl.runtime.handler.EventHandler"
        ),
        "GenericEvent": _Deprecated(
            "kubectrl.runtime._event", "GenericEvent", "kubectrl.runtime.handler.GenericEvent"
        ),
        "KindSource": _Deprecated(
            "kubectrl.runtime._kind_source", "KindSource", "kubectrl.runtime.source.KindSource"
        ),
        "MapHandler": _Deprecated(
            "kubectrl.runtime._handler", "MapHandler", "kubectrl.runtime.handler.MapHandler"
        ),
        "OperationResult": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "OperationResult",
            "kubectrl.runtime.controllerutil.OperationResult",
        ),
        "OwnerHandler": _Deprecated(
            "kubectrl.runtime._handler", "OwnerHandler", "kubectrl.runtime.handler.OwnerHandler"
        ),
        "Predicate": _Deprecated(
            "kubectrl.runtime._predicate", "Predicate", "kubectrl.runtime.predicate.Predicate"
        ),
        "PredicateFuncs": _Deprecated(
            "kubectrl.runtime._predicate",
            "PredicateFuncs",
            "kubectrl.runtime.predicate.PredicateFuncs",
        ),
        "ShardContext": _Deprecated(
            "kubectrl.runtime._sharding", "ShardContext", "kubectrl.runtime.sharding.ShardContext"
        ),
        "ShardSetup": _Deprecated(
            "kubectrl.runtime._sharding", "ShardSetup", "kubectrl.runtime.sharding.ShardSetup"
        ),
        "ShardedRunner": _Deprecated(
            "kubectrl.runtime._sharding", "ShardedRunner", "kubectrl.runtime.sharding.ShardedRunner"
        ),
        "ShardingOptions": _Deprecated(
            "kubectrl.runtime._sharding",
            "ShardingOptions",
            "kubectrl.runtime.sharding.ShardingOptions",
        ),
        "Source": _Deprecated(
            "kubectrl.runtime._source", "Source", "kubectrl.runtime.source.Source"
        ),
        "SourceSyncError": _Deprecated(
            "kubectrl.runtime._controller",
            "SourceSyncError",
            "kubectrl.runtime.source.SourceSyncError",
        ),
        "UpdateEvent": _Deprecated(
            "kubectrl.runtime._event", "UpdateEvent", "kubectrl.runtime.handler.UpdateEvent"
        ),
        "add_finalizer": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "add_finalizer",
            "kubectrl.runtime.controllerutil.add_finalizer",
        ),
        "and_": _Deprecated(
            "kubectrl.runtime._predicate", "and_", "kubectrl.runtime.predicate.and_"
        ),
        "annotations_changed": _Deprecated(
            "kubectrl.runtime._predicate",
            "annotations_changed",
            "kubectrl.runtime.predicate.annotations_changed",
        ),
        "contains_finalizer": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "contains_finalizer",
            "kubectrl.runtime.controllerutil.contains_finalizer",
        ),
        "create_or_patch": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "create_or_patch",
            "kubectrl.runtime.controllerutil.create_or_patch",
        ),
        "create_or_update": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "create_or_update",
            "kubectrl.runtime.controllerutil.create_or_update",
        ),
        "current_shard": _Deprecated(
            "kubectrl.runtime._sharding", "current_shard", "kubectrl.runtime.sharding.current_shard"
        ),
        "enqueue_request_for_object": _Deprecated(
            "kubectrl.runtime._handler",
            "enqueue_request_for_object",
            "kubectrl.runtime.handler.enqueue_request_for_object",
        ),
        "enqueue_request_for_owner": _Deprecated(
            "kubectrl.runtime._handler",
            "enqueue_request_for_owner",
            "kubectrl.runtime.handler.enqueue_request_for_owner",
        ),
        "enqueue_requests_from_map_func": _Deprecated(
            "kubectrl.runtime._handler",
            "enqueue_requests_from_map_func",
            "kubectrl.runtime.handler.enqueue_requests_from_map_func",
        ),
        "generation_changed": _Deprecated(
            "kubectrl.runtime._predicate",
            "generation_changed",
            "kubectrl.runtime.predicate.generation_changed",
        ),
        "has_controller_reference": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "has_controller_reference",
            "kubectrl.runtime.controllerutil.has_controller_reference",
        ),
        "label_selector": _Deprecated(
            "kubectrl.runtime._predicate",
            "label_selector",
            "kubectrl.runtime.predicate.label_selector",
        ),
        "labels_changed": _Deprecated(
            "kubectrl.runtime._predicate",
            "labels_changed",
            "kubectrl.runtime.predicate.labels_changed",
        ),
        "merge_patch_diff": _Deprecated(
            "kubectrl.client",
            "merge_patch_diff",
            "kubectrl.client.merge_patch_diff.merge_patch_diff",
        ),
        "not_": _Deprecated(
            "kubectrl.runtime._predicate", "not_", "kubectrl.runtime.predicate.not_"
        ),
        "or_": _Deprecated("kubectrl.runtime._predicate", "or_", "kubectrl.runtime.predicate.or_"),
        "owner_in_shard": _Deprecated(
            "kubectrl.runtime._sharding",
            "owner_in_shard",
            "kubectrl.runtime.sharding.owner_in_shard",
        ),
        "remove_finalizer": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "remove_finalizer",
            "kubectrl.runtime.controllerutil.remove_finalizer",
        ),
        "resource_version_changed": _Deprecated(
            "kubectrl.runtime._predicate",
            "resource_version_changed",
            "kubectrl.runtime.predicate.resource_version_changed",
        ),
        "set_controller_reference": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "set_controller_reference",
            "kubectrl.runtime.controllerutil.set_controller_reference",
        ),
        "set_owner_reference": _Deprecated(
            "kubectrl.runtime._controllerutil",
            "set_owner_reference",
            "kubectrl.runtime.controllerutil.set_owner_reference",
        ),
    },
)
