"""The client layer: configuration, REST verbs over httpx, discovery, watch streams.

:class:`AsyncClient` is the asyncio API; :class:`Client` is a blocking facade with the same
methods and behaviour. Configuration comes from :func:`load_config` (kubeconfig or in-cluster)
as an immutable :class:`ClientConfig`. Objects in and out are plain dicts, or instances of a
model class when the kind is named by one (``await client.get(V1Deployment, "web",
namespace="a")``). Errors are the typed tree of :mod:`kubectrl.errors`.

Example::

    from kubectrl.client import AsyncClient, load_config

    async with AsyncClient(load_config()) as client:
        cms = await client.list(("v1", "ConfigMap"), namespace="default")
"""

from __future__ import annotations

from kubectrl._exports import publish as _publish
from kubectrl.client._async_client import (
    AsyncClient,
    KindRef,
    ModelList,
    PatchType,
    Preconditions,
    ResourceRef,
)
from kubectrl.client._auth import KubeAuth
from kubectrl.client._config import (
    ClientConfig,
    RateLimit,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from kubectrl.client._discovery import APIResource, RESTMapper
from kubectrl.client._models import to_dict, to_model
from kubectrl.client._ratelimit import TokenBucketRateLimiter
from kubectrl.client._retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    Backoff,
    RetryPolicy,
    retry_on_conflict,
    retry_on_conflict_blocking,
)
from kubectrl.client._sync_client import Client, SyncWatchStream
from kubectrl.client._watch import DEFAULT_STALL_TIMEOUT, WatchStream
from kubectrl.client._watch_decoder import EventType, WatchDecoder, WatchEvent

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "DEFAULT_STALL_TIMEOUT",
    "APIResource",
    "AsyncClient",
    "Backoff",
    "Client",
    "ClientConfig",
    "EventType",
    "KindRef",
    "KubeAuth",
    "ModelList",
    "PatchType",
    "Preconditions",
    "RESTMapper",
    "RateLimit",
    "ResourceRef",
    "RetryPolicy",
    "SyncWatchStream",
    "TokenBucketRateLimiter",
    "WatchDecoder",
    "WatchEvent",
    "WatchStream",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
    "retry_on_conflict",
    "retry_on_conflict_blocking",
    "to_dict",
    "to_model",
]

_publish(__name__, globals(), __all__)
