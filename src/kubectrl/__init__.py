"""kubectrl: Kubernetes controllers in Python with client-go and controller-runtime semantics.

The public API is what this module re-exports; everything in a module whose name starts with an
underscore is private.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from kubectrl._clock import Clock, FakeClock, RealClock
from kubectrl._version import __version__ as __version__
from kubectrl.cache import (
    CacheSyncError,
    DeletedFinalStateUnknown,
    Indexer,
    Informer,
    InformerFactory,
    Lister,
    ListWatch,
    Reflector,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from kubectrl.client import (
    AsyncClient,
    Client,
    ClientConfig,
    EventType,
    WatchEvent,
    load_config,
    load_kubeconfig,
    retry_on_conflict,
)
from kubectrl.events import EventBroadcaster, EventRecorder
from kubectrl.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock
from kubectrl.objects import GroupVersionKind, GroupVersionResource, ObjectKey
from kubectrl.runtime import (
    BlockingCachedClient,
    Builder,
    CachedClient,
    Controller,
    ControllerOptions,
    Manager,
    ManagerOptions,
    Reconciler,
    Request,
    Result,
    TerminalError,
    WebhookBuilder,
    reconcile_func,
)
from kubectrl.workqueue import (
    QueueShutDown,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

if TYPE_CHECKING:
    from kubectrl.resources import (
        CustomResource,
        EmbeddedResource,
        Format,
        Int32,
        Int64,
        IntOrString,
        ListType,
        MapType,
        Nullable,
        PreserveUnknownFields,
        PrinterColumn,
        ResourceModel,
        Rule,
        Scale,
        rules,
    )


# Custom resources are pydantic models: imported on first use, so `import kubectrl` does not pay
# for pydantic (~0.1 s) when a program uses dicts only.
_LAZY = {
    name: "kubectrl.resources"
    for name in (
        "CustomResource",
        "EmbeddedResource",
        "Format",
        "Int32",
        "Int64",
        "IntOrString",
        "ListType",
        "MapType",
        "Nullable",
        "PreserveUnknownFields",
        "PrinterColumn",
        "ResourceModel",
        "Rule",
        "Scale",
        "rules",
    )
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kubectrl' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AsyncClient",
    "BlockingCachedClient",
    "Builder",
    "CacheSyncError",
    "CachedClient",
    "Client",
    "ClientConfig",
    "Clock",
    "Controller",
    "ControllerOptions",
    "CustomResource",
    "DeletedFinalStateUnknown",
    "EmbeddedResource",
    "EventBroadcaster",
    "EventRecorder",
    "EventType",
    "FakeClock",
    "Format",
    "GroupVersionKind",
    "GroupVersionResource",
    "Indexer",
    "Informer",
    "InformerFactory",
    "Int32",
    "Int64",
    "IntOrString",
    "LeaderElectionConfig",
    "LeaderElector",
    "LeaseLock",
    "ListType",
    "ListWatch",
    "Lister",
    "Manager",
    "ManagerOptions",
    "MapType",
    "Nullable",
    "ObjectKey",
    "PreserveUnknownFields",
    "PrinterColumn",
    "QueueShutDown",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "Reconciler",
    "Reflector",
    "Request",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ResourceModel",
    "Result",
    "Rule",
    "Scale",
    "TerminalError",
    "WatchEvent",
    "WebhookBuilder",
    "default_controller_rate_limiter",
    "load_config",
    "load_kubeconfig",
    "reconcile_func",
    "retry_on_conflict",
    "rules",
]
