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

from kubectrl._exports import publish as _publish
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._cache_client import BlockingCachedClient, CachedClient
from kubectrl.runtime._controller import (
    Controller,
    ControllerOptions,
    ReconcileInfo,
    ReconcileTimeoutError,
    SourceSyncError,
    current_reconcile,
)
from kubectrl.runtime._controllerutil import (
    AlreadyOwnedError,
    OperationResult,
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    has_controller_reference,
    merge_patch_diff,
    remove_finalizer,
    set_controller_reference,
    set_owner_reference,
)
from kubectrl.runtime._event import CreateEvent, DeleteEvent, Event, GenericEvent, UpdateEvent
from kubectrl.runtime._field_index import FieldIndexer, FieldIndexError
from kubectrl.runtime._handler import (
    EventHandler,
    MapHandler,
    OwnerHandler,
    enqueue_request_for_object,
    enqueue_request_for_owner,
    enqueue_requests_from_map_func,
)
from kubectrl.runtime._kind_source import KindSource
from kubectrl.runtime._manager import Manager, ManagerError, ManagerOptions, Runnable
from kubectrl.runtime._predicate import (
    Predicate,
    PredicateFuncs,
    and_,
    annotations_changed,
    generation_changed,
    label_selector,
    labels_changed,
    not_,
    or_,
    resource_version_changed,
)
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
from kubectrl.runtime._sharding import (
    ShardContext,
    ShardedRunner,
    ShardingOptions,
    ShardSetup,
    current_shard,
    owner_in_shard,
)
from kubectrl.runtime._source import ChannelSource, Source
from kubectrl.runtime._webhook_builder import WebhookBuilder

__all__ = [
    "MAX_REQUEUE_AFTER",
    "AlreadyOwnedError",
    "BlockingCachedClient",
    "Builder",
    "CachedClient",
    "ChannelSource",
    "Controller",
    "ControllerOptions",
    "CreateEvent",
    "DeleteEvent",
    "Event",
    "EventHandler",
    "FieldIndexError",
    "FieldIndexer",
    "GenericEvent",
    "KindSource",
    "Manager",
    "ManagerError",
    "ManagerOptions",
    "MapHandler",
    "OperationResult",
    "OwnerHandler",
    "Predicate",
    "PredicateFuncs",
    "ReconcileInfo",
    "ReconcileTimeoutError",
    "Reconciler",
    "ReconcilerProtocol",
    "Request",
    "Result",
    "Runnable",
    "ShardContext",
    "ShardSetup",
    "ShardedRunner",
    "ShardingOptions",
    "Source",
    "SourceSyncError",
    "TerminalError",
    "UpdateEvent",
    "WebhookBuilder",
    "add_finalizer",
    "and_",
    "annotations_changed",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "current_reconcile",
    "current_shard",
    "enqueue_request_for_object",
    "enqueue_request_for_owner",
    "enqueue_requests_from_map_func",
    "generation_changed",
    "has_controller_reference",
    "label_selector",
    "labels_changed",
    "low_priority",
    "merge_patch_diff",
    "not_",
    "or_",
    "owner_in_shard",
    "ping",
    "reconcile_func",
    "remove_finalizer",
    "resource_version_changed",
    "set_controller_reference",
    "set_owner_reference",
]

_publish(__name__, globals(), __all__)
