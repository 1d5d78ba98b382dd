"""Informers: a local, indexed, always-converging copy of cluster state (client-go ``tools/cache``).

The stages, each in its own module:

- :class:`ListWatch` binds list and watch calls to one resource, namespace and selector set.
- :class:`Reflector` lists, then watches, forever: a thin async loop around a pure decision
  function (relist vs re-watch vs back off), so every rule is unit-tested.
- :class:`Indexer` is the thread-safe store with named indexes; :class:`Lister` reads it.
- :class:`Informer` is the store's single writer and fans every change out, in order, to
  handlers, each with its own buffer.
- :class:`InformerFactory` shares one informer per (resolved resource, namespace, selectors).

Guarantees, caveats and memory use are documented on each class; ``docs/cache.md`` explains the
design. Example::

    from kubectrl.cache import InformerFactory

    factory = InformerFactory(client)
    informer = factory.informer(("v1", "ConfigMap"), namespace="default")
    informer.add_handler(on_add=lambda obj, initial: print(obj["metadata"]["name"]))
    factory.start()
    await factory.wait_for_cache_sync(timeout=30)
"""

from __future__ import annotations

from kubectrl._internal.exports import publish as _publish
from kubectrl.cache._decisions import BackoffPolicy, ReflectorOptions
from kubectrl.cache._factory import InformerFactory, InformerKey
from kubectrl.cache._handlers import (
    DeletedFinalStateUnknown,
    HandlerRegistration,
    Notification,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
)
from kubectrl.cache._informer import CacheSyncError, Informer, Transform, strip_managed_fields
from kubectrl.cache._lister import Lister, NamespaceLister
from kubectrl.cache._listwatch import ListerWatcher, ListOptions, ListWatch, resource_ref
from kubectrl.cache._reflector import Reflector, ReflectorSink, WatchErrorHandler
from kubectrl.cache._resource_version import (
    compare_resource_versions,
    is_comparable_resource_version,
)
from kubectrl.cache._shard import ShardField, ShardRange, ShardSelector, shard_index
from kubectrl.cache._store import (
    NAMESPACE_INDEX,
    CacheMutationError,
    Indexer,
    IndexFunc,
    KeyFunc,
    namespace_index_func,
)

__all__ = [
    "NAMESPACE_INDEX",
    "BackoffPolicy",
    "CacheMutationError",
    "CacheSyncError",
    "DeletedFinalStateUnknown",
    "HandlerRegistration",
    "IndexFunc",
    "Indexer",
    "Informer",
    "InformerFactory",
    "InformerKey",
    "KeyFunc",
    "ListOptions",
    "ListWatch",
    "Lister",
    "ListerWatcher",
    "NamespaceLister",
    "Notification",
    "Reflector",
    "ReflectorOptions",
    "ReflectorSink",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "ShardField",
    "ShardRange",
    "ShardSelector",
    "Transform",
    "WatchErrorHandler",
    "compare_resource_versions",
    "is_comparable_resource_version",
    "namespace_index_func",
    "resource_ref",
    "shard_index",
    "strip_managed_fields",
]

_publish(__name__, globals(), __all__)
