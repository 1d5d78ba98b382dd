"""kubectrl: Kubernetes controllers in Python with client-go and controller-runtime semantics.

The public API is what this module re-exports; everything in a module whose name starts with an
underscore is private.
"""

from __future__ import annotations

from kubectrl._clock import Clock, FakeClock, RealClock
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
    reconcile_func,
)
from kubectrl.workqueue import (
    QueueShutDown,
    RateLimiter,
    RateLimitingQueue,
    default_controller_rate_limiter,
)

__version__ = "0.1.0.dev0"

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
    "DeletedFinalStateUnknown",
    "EventBroadcaster",
    "EventRecorder",
    "EventType",
    "FakeClock",
    "GroupVersionKind",
    "GroupVersionResource",
    "Indexer",
    "Informer",
    "InformerFactory",
    "LeaderElectionConfig",
    "LeaderElector",
    "LeaseLock",
    "ListWatch",
    "Lister",
    "Manager",
    "ManagerOptions",
    "ObjectKey",
    "QueueShutDown",
    "RateLimiter",
    "RateLimitingQueue",
    "RealClock",
    "Reconciler",
    "Reflector",
    "Request",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "Result",
    "TerminalError",
    "WatchEvent",
    "default_controller_rate_limiter",
    "load_config",
    "load_kubeconfig",
    "reconcile_func",
    "retry_on_conflict",
]
