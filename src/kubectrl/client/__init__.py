"""The client layer: configuration, REST verbs over httpx, discovery, watch streams.

:class:`AsyncClient` is the asyncio API; :class:`BlockingClient` is a blocking facade with the
same methods and behaviour. Configuration comes from :func:`load_config` (kubeconfig or in-cluster)
as an immutable :class:`ClientConfig`. Objects in and out are plain dicts, or instances of a
model class when the kind is named by one (``await client.get(V1Deployment, "web",
namespace="a")``). Errors are the typed tree of :mod:`kubectrl.errors`. Code that works with
any client (these two, or the manager's cache-backed one) takes a protocol: :class:`Reader`,
:class:`Writer`, :class:`StatusClient` or :class:`KubeClient` (all of them), each with its
blocking twin (``Blocking<Name>``).

Example::

    from kubectrl.client import AsyncClient, load_config

    async with AsyncClient(load_config()) as client:
        cms = await client.list(("v1", "ConfigMap"), namespace="default")
"""

from __future__ import annotations

from kubectrl._exports import Deprecated as _Deprecated
from kubectrl._exports import module_getattr as _module_getattr
from kubectrl._exports import publish as _publish
from kubectrl.client._apply import extract
from kubectrl.client._async_client import AsyncClient
from kubectrl.client._config import (
    ClientConfig,
    RateLimit,
    load_config,
    load_incluster_config,
    load_kubeconfig,
)
from kubectrl.client._discovery import APIResource, RESTMapper
from kubectrl.client._interfaces import (
    KubeClient,
    Pager,
    Reader,
    StatusClient,
    StatusWriter,
    SubResourceClient,
    Writer,
)
from kubectrl.client._interfaces_blocking import (
    BlockingKubeClient,
    BlockingPager,
    BlockingReader,
    BlockingStatusClient,
    BlockingStatusWriter,
    BlockingSubResourceClient,
    BlockingWriter,
)
from kubectrl.client._merge import merge_patch_diff
from kubectrl.client._models import to_model
from kubectrl.client._options import (
    ApplyOptions,
    DeleteAllOptions,
    DeleteOptions,
    FieldValidation,
    GetOptions,
    ListOptions,
    MergeOptions,
    PageOptions,
    PatchOptions,
    WatchOptions,
    WriteOptions,
)
from kubectrl.client._pod_logs import LogOptions, LogStreamOptions
from kubectrl.client._pods import Pods
from kubectrl.client._pods_blocking import BlockingExecSession, BlockingPods, BlockingPortForward
from kubectrl.client._portforward import PortForward
from kubectrl.client._ratelimit import TokenBucketRateLimiter
from kubectrl.client._remotecommand import ExecResult, ExecSession, SessionOpener
from kubectrl.client._rest_extras import ServiceAccountToken
from kubectrl.client._retry import (
    DEFAULT_BACKOFF,
    DEFAULT_RETRY,
    Backoff,
    RetryPolicy,
    retry_on_conflict,
    retry_on_conflict_blocking,
)
from kubectrl.client._sync_client import BlockingClient, BlockingWatchStream
from kubectrl.client._types import KindRef, ModelList, PatchType, Preconditions, ResourceRef
from kubectrl.client._warnings import (
    DeduplicateWarnings,
    NoWarnings,
    WarningHandler,
    WarningLogger,
    WarningRecorder,
)
from kubectrl.client._watch import WatchStream
from kubectrl.client._watch_decoder import EventType, WatchEvent

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_RETRY",
    "APIResource",
    "ApplyOptions",
    "AsyncClient",
    "Backoff",
    "BlockingClient",
    "BlockingExecSession",
    "BlockingKubeClient",
    "BlockingPager",
    "BlockingPods",
    "BlockingPortForward",
    "BlockingReader",
    "BlockingStatusClient",
    "BlockingStatusWriter",
    "BlockingSubResourceClient",
    "BlockingWatchStream",
    "BlockingWriter",
    "ClientConfig",
    "DeduplicateWarnings",
    "DeleteAllOptions",
    "DeleteOptions",
    "EventType",
    "ExecResult",
    "ExecSession",
    "FieldValidation",
    "GetOptions",
    "KindRef",
    "KubeClient",
    "ListOptions",
    "LogOptions",
    "LogStreamOptions",
    "MergeOptions",
    "ModelList",
    "NoWarnings",
    "PageOptions",
    "Pager",
    "PatchOptions",
    "PatchType",
    "Pods",
    "PortForward",
    "Preconditions",
    "RESTMapper",
    "RateLimit",
    "Reader",
    "ResourceRef",
    "RetryPolicy",
    "ServiceAccountToken",
    "SessionOpener",
    "StatusClient",
    "StatusWriter",
    "SubResourceClient",
    "TokenBucketRateLimiter",
    "WarningHandler",
    "WarningLogger",
    "WarningRecorder",
    "WatchEvent",
    "WatchOptions",
    "WatchStream",
    "WriteOptions",
    "Writer",
    "extract",
    "load_config",
    "load_incluster_config",
    "load_kubeconfig",
    "merge_patch_diff",
    "retry_on_conflict",
    "retry_on_conflict_blocking",
    "to_model",
]

_publish(__name__, globals(), __all__)

# The names before the blocking twins were named Blocking<Name>.
__getattr__, __dir__ = _module_getattr(
    __name__,
    globals(),
    deprecated={
        "Client": _Deprecated(__name__, "BlockingClient", "kubectrl.client.BlockingClient"),
        "SyncWatchStream": _Deprecated(
            __name__, "BlockingWatchStream", "kubectrl.client.BlockingWatchStream"
        ),
    },
)
