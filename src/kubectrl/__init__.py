"""kubectrl: Kubernetes controllers in Python with client-go and controller-runtime semantics.

The public API is what this module and its public subpackages export; everything in a module
whose name starts with an underscore is private. This package re-exports the names most programs
need (``from kubectrl import Builder, Manager, Reconciler``); each is imported on first use, so
``import kubectrl.client`` loads the client and its foundations only, not the controller
runtime, webhooks or pydantic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubectrl._internal.exports import Deprecated as _Deprecated
from kubectrl._internal.exports import module_getattr as _module_getattr
from kubectrl._version import __version__ as __version__

if TYPE_CHECKING:
    from kubectrl import cache as cache
    from kubectrl import client as client
    from kubectrl import crd as crd
    from kubectrl import envtest as envtest
    from kubectrl import errors as errors
    from kubectrl import events as events
    from kubectrl import kinds as kinds
    from kubectrl import labels as labels
    from kubectrl import leaderelection as leaderelection
    from kubectrl import objects as objects
    from kubectrl import rbac as rbac
    from kubectrl import resources as resources
    from kubectrl import runtime as runtime
    from kubectrl import testing as testing
    from kubectrl import webhook as webhook
    from kubectrl import workqueue as workqueue
    from kubectrl._internal.clock import Clock, FakeClock, RealClock
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
        BlockingClient,
        ClientConfig,
        EventType,
        WatchEvent,
        load_config,
        load_kubeconfig,
        retry_on_conflict,
        retry_on_conflict_blocking,
    )
    from kubectrl.events import EventBroadcaster, EventRecorder
    from kubectrl.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock
    from kubectrl.objects import GroupVersionKind, GroupVersionResource, ObjectKey
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
        Quantity,
        ResourceModel,
        Rule,
        Scale,
        rules,
    )
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

# Where each re-exported name lives; nothing is imported until a name is used.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("Clock", "FakeClock", "RealClock"), "kubectrl._internal.clock"),
    **dict.fromkeys(
        (
            "CacheSyncError",
            "DeletedFinalStateUnknown",
            "Indexer",
            "Informer",
            "InformerFactory",
            "ListWatch",
            "Lister",
            "Reflector",
            "ResourceEventHandler",
            "ResourceEventHandlerFuncs",
        ),
        "kubectrl.cache",
    ),
    **dict.fromkeys(
        (
            "AsyncClient",
            "BlockingClient",
            "ClientConfig",
            "EventType",
            "WatchEvent",
            "load_config",
            "load_kubeconfig",
            "retry_on_conflict",
            "retry_on_conflict_blocking",
        ),
        "kubectrl.client",
    ),
    **dict.fromkeys(("EventBroadcaster", "EventRecorder"), "kubectrl.events"),
    **dict.fromkeys(
        ("LeaderElectionConfig", "LeaderElector", "LeaseLock"), "kubectrl.leaderelection"
    ),
    **dict.fromkeys(("GroupVersionKind", "GroupVersionResource", "ObjectKey"), "kubectrl.objects"),
    # Custom resources are pydantic models: pydantic (~0.1 s) is paid for on first use only.
    **dict.fromkeys(
        (
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
            "Quantity",
            "ResourceModel",
            "Rule",
            "Scale",
            "rules",
        ),
        "kubectrl.resources",
    ),
    **dict.fromkeys(
        (
            "BlockingCachedClient",
            "Builder",
            "CachedClient",
            "Controller",
            "ControllerOptions",
            "Manager",
            "ManagerOptions",
            "Reconciler",
            "Request",
            "Result",
            "TerminalError",
            "WebhookBuilder",
            "reconcile_func",
        ),
        "kubectrl.runtime",
    ),
    **dict.fromkeys(
        ("QueueShutDown", "RateLimiter", "RateLimitingQueue", "default_controller_rate_limiter"),
        "kubectrl.workqueue",
    ),
    # The public subpackages, reachable as attributes (``kubectrl.runtime.Manager``).
    **dict.fromkeys(
        (
            "cache",
            "client",
            "crd",
            "envtest",
            "errors",
            "events",
            "kinds",
            "labels",
            "leaderelection",
            "objects",
            "rbac",
            "resources",
            "runtime",
            "testing",
            "webhook",
            "workqueue",
        ),
        "",
    ),
}

__getattr__, __dir__ = _module_getattr(
    __name__,
    globals(),
    lazy=_LAZY,
    deprecated={
        "Client": _Deprecated("kubectrl.client", "BlockingClient", "kubectrl.BlockingClient")
    },
)

__all__ = [
    "AsyncClient",
    "BlockingCachedClient",
    "BlockingClient",
    "Builder",
    "CacheSyncError",
    "CachedClient",
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
    "Quantity",
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
    "retry_on_conflict_blocking",
    "rules",
]
