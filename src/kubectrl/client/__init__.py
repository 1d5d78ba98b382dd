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

from kubectrl._internal.exports import Deprecated as _Deprecated
from kubectrl._internal.exports import module_getattr as _module_getattr
from kubectrl._internal.exports import publish as _publish
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
from kubectrl.client._interfaces import KubeClient
from kubectrl.client._interfaces_blocking import BlockingKubeClient
from kubectrl.client._merge import merge_patch_diff
from kubectrl.client._models import to_model
from kubectrl.client._pipeline import CredentialSource
from kubectrl.client._ratelimit import TokenBucketRateLimiter
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
    "AsyncClient",
    "Backoff",
    "BlockingClient",
    "BlockingKubeClient",
    "BlockingWatchStream",
    "ClientConfig",
    "CredentialSource",
    "DeduplicateWarnings",
    "EventType",
    "KindRef",
    "KubeClient",
    "ModelList",
    "NoWarnings",
    "PatchType",
    "Preconditions",
    "RESTMapper",
    "RateLimit",
    "ResourceRef",
    "RetryPolicy",
    "ServiceAccountToken",
    "TokenBucketRateLimiter",
    "WarningHandler",
    "WarningLogger",
    "WarningRecorder",
    "WatchEvent",
    "WatchStream",
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
        "ApplyOptions": _Deprecated(
            "kubectrl.client._options", "ApplyOptions", "kubectrl.client.options.ApplyOptions"
        ),
        "BlockingExecSession": _Deprecated(
            "kubectrl.client._pods_blocking",
            "BlockingExecSession",
            "kubectrl.client.pods.BlockingExecSession",
        ),
        "BlockingPager": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingPager",
            "kubectrl.client.interfaces.BlockingPager",
        ),
        "BlockingPods": _Deprecated(
            "kubectrl.client._pods_blocking", "BlockingPods", "kubectrl.client.pods.BlockingPods"
        ),
        "BlockingPortForward": _Deprecated(
            "kubectrl.client._pods_blocking",
            "BlockingPortForward",
            "kubectrl.client.pods.BlockingPortForward",
        ),
        "BlockingReader": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingReader",
            "kubectrl.client.interfaces.BlockingReader",
        ),
        "BlockingStatusClient": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingStatusClient",
            "kubectrl.client.interfaces.BlockingStatusClient",
        ),
        "BlockingStatusWriter": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingStatusWriter",
            "kubectrl.client.interfaces.BlockingStatusWriter",
        ),
        "BlockingSubResourceClient": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingSubResourceClient",
            "kubectrl.client.interfaces.BlockingSubResourceClient",
        ),
        "BlockingWriter": _Deprecated(
            "kubectrl.client._interfaces_blocking",
            "BlockingWriter",
            "kubectrl.client.interfaces.BlockingWriter",
        ),
        "DeleteAllOptions": _Deprecated(
            "kubectrl.client._options",
            "DeleteAllOptions",
            "kubectrl.client.options.DeleteAllOptions",
        ),
        "DeleteOptions": _Deprecated(
            "kubectrl.client._options", "DeleteOptions", "kubectrl.client.options.DeleteOptions"
        ),
        "ExecResult": _Deprecated(
            "kubectrl.client._remotecommand", "ExecResult", "kubectrl.client.pods.ExecResult"
        ),
        "ExecSession": _Deprecated(
            "kubectrl.client._remotecommand", "ExecSession", "kubectrl.client.pods.ExecSession"
        ),
        "FieldValidation": _Deprecated(
            "kubectrl.client._options", "FieldValidation", "kubectrl.client.options.FieldValidation"
        ),
        "GetOptions": _Deprecated(
            "kubectrl.client._options", "GetOptions", "kubectrl.client.options.GetOptions"
        ),
        "ListOptions": _Deprecated(
            "kubectrl.client._options", "ListOptions", "kubectrl.client.options.ListOptions"
        ),
        "LogOptions": _Deprecated(
            "kubectrl.client._pod_logs", "LogOptions", "kubectrl.client.options.LogOptions"
        ),
        "LogStreamOptions": _Deprecated(
            "kubectrl.client._pod_logs",
            "LogStreamOptions",
            "kubectrl.client.options.LogStreamOptions",
        ),
        "MergeOptions": _Deprecated(
            "kubectrl.client._options", "MergeOptions", "kubectrl.client.options.MergeOptions"
        ),
        "PageOptions": _Deprecated(
            "kubectrl.client._options", "PageOptions", "kubectrl.client.options.PageOptions"
        ),
        "Pager": _Deprecated(
            "kubectrl.client._interfaces", "Pager", "kubectrl.client.interfaces.Pager"
        ),
        "PatchOptions": _Deprecated(
            "kubectrl.client._options", "PatchOptions", "kubectrl.client.options.PatchOptions"
        ),
        "Pods": _Deprecated("kubectrl.client._pods", "Pods", "kubectrl.client.pods.Pods"),
        "PortForward": _Deprecated(
            "kubectrl.client._portforward", "PortForward", "kubectrl.client.pods.PortForward"
        ),
        "Reader": _Deprecated(
            "kubectrl.client._interfaces", "Reader", "kubectrl.client.interfaces.Reader"
        ),
        "SessionOpener": _Deprecated(
            "kubectrl.client._remotecommand", "SessionOpener", "kubectrl.client.pods.SessionOpener"
        ),
        "StatusClient": _Deprecated(
            "kubectrl.client._interfaces", "StatusClient", "kubectrl.client.interfaces.StatusClient"
        ),
        "StatusWriter": _Deprecated(
            "kubectrl.client._interfaces", "StatusWriter", "kubectrl.client.interfaces.StatusWriter"
        ),
        "SubResourceClient": _Deprecated(
            "kubectrl.client._interfaces",
            "SubResourceClient",
            "kubectrl.client.interfaces.SubResourceClient",
        ),
        "WatchOptions": _Deprecated(
            "kubectrl.client._options", "WatchOptions", "kubectrl.client.options.WatchOptions"
        ),
        "WriteOptions": _Deprecated(
            "kubectrl.client._options", "WriteOptions", "kubectrl.client.options.WriteOptions"
        ),
        "Writer": _Deprecated(
            "kubectrl.client._interfaces", "Writer", "kubectrl.client.interfaces.Writer"
        ),
        "Client": _Deprecated(__name__, "BlockingClient", "kubectrl.client.BlockingClient"),
        "SyncWatchStream": _Deprecated(
            __name__, "BlockingWatchStream", "kubectrl.client.BlockingWatchStream"
        ),
    },
)
