"""ListWatch: the list and watch calls for one resource, namespace and selector set.

A reflector only needs two operations: "give me one page of the list" and "open a watch". This
module binds them to an :class:`~kubectrl.client.AsyncClient`, one resource, a namespace (or
all), label/field selectors and an optional hook that adjusts the options of every request
(client-go's ``TweakListOptionsFunc``). Metadata-only list-watches ask the server for
``PartialObjectMetadata`` so large objects (Secrets, ConfigMaps full of data) cost only their
metadata in memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any, Protocol

from kubectrl import kinds as _kinds
from kubectrl.cache._shard import ShardSelector
from kubectrl.client import (
    APIResource,
    AsyncClient,
    KindRef,
    ResourceRef,
    WatchEvent,
    WatchStream,
)
from kubectrl.labels import LabelSelectorLike, selector_string
from kubectrl.objects import GroupVersionKind, GroupVersionResource

if TYPE_CHECKING:
    from types import TracebackType

__all__ = [
    "ListOptions",
    "ListWatch",
    "ListerWatcher",
    "WatchHandle",
    "describe_resource",
    "resource_ref",
]


def resource_ref(kind: KindRef) -> ResourceRef:
    """The :data:`~kubectrl.client.ResourceRef` of ``kind``: a model class becomes its
    :class:`~kubectrl.objects.GroupVersionKind` (:func:`kubectrl.kinds.kind_info`), anything
    else is returned as is.

    The cache keeps raw dicts whatever names the kind, so it works on the kind's plain spelling;
    typed views are built on read by the cache-backed client.

    Example::

        >>> from kubernetes.client.models import V1Deployment
        >>> resource_ref(V1Deployment)
        GroupVersionKind(group='apps', version='v1', kind='Deployment')
        >>> resource_ref(("v1", "ConfigMap"))
        ('v1', 'ConfigMap')
    """
    if isinstance(kind, type):
        return _kinds.kind_info(kind).gvk
    return kind


def describe_resource(resource: KindRef) -> str:
    """How logs and errors name a resource, whatever way it was spelled.

    A kind reads ``Kind (apiVersion)``; a resource given by its plural only (a
    :class:`~kubectrl.objects.GroupVersionResource`) reads ``plural (apiVersion)``.

    Example::

        >>> describe_resource(("apps/v1", "Deployment"))
        'Deployment (apps/v1)'
        >>> from kubectrl.objects import GroupVersionResource
        >>> describe_resource(GroupVersionResource("apps", "v1", "deployments"))
        'deployments (apps/v1)'
    """
    resource = resource_ref(resource)
    if isinstance(resource, (APIResource, GroupVersionKind)):
        return f"{resource.kind} ({resource.api_version})"
    if isinstance(resource, GroupVersionResource):
        return f"{resource.resource} ({resource.api_version})"
    api_version, kind = resource
    return f"{kind} ({api_version})"


@dataclasses.dataclass(frozen=True)
class ListOptions:
    """Options of one list or watch request (client-go's ``metav1.ListOptions``).

    ``None`` leaves a parameter out. The same type serves lists and watches, so one tweak hook
    adjusts both.

    Example::

        ListOptions(label_selector="app=web", limit=500, resource_version="0")
    """

    label_selector: str | None = None
    field_selector: str | None = None
    resource_version: str | None = None
    resource_version_match: str | None = None
    limit: int | None = None
    continue_: str | None = None
    timeout_seconds: int | None = None
    allow_watch_bookmarks: bool = False
    send_initial_events: bool | None = None
    shard_selector: str | None = None


class WatchHandle(Protocol):
    """What :meth:`ListerWatcher.watch` returns: an async context manager yielding an async
    iterator of :class:`~kubectrl.client.WatchEvent` (a :class:`~kubectrl.client.WatchStream`
    is one)."""

    async def __aenter__(self) -> AsyncIterator[WatchEvent]: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Any: ...


class ListerWatcher(Protocol):
    """The two calls a reflector makes. :class:`ListWatch` is the real one; tests pass fakes.

    ``list_page`` returns one list page (``{"metadata": {"resourceVersion", "continue"},
    "items": [...]}``); ``watch`` opens a watch.
    """

    @property
    def description(self) -> str:
        """Names the resource, namespace and selectors in logs and errors."""
        ...

    async def list_page(self, options: ListOptions) -> dict[str, Any]:
        """One list page."""
        ...

    def watch(self, options: ListOptions) -> WatchHandle:
        """Open a watch."""
        ...


class ListWatch:
    """List and watch one resource in one namespace (or all) with fixed selectors.

    ``label_selector`` takes every form of :data:`kubectrl.labels.LabelSelectorLike` (a string,
    ``{label: value}``, a ``metav1.LabelSelector`` with ``matchExpressions``) and is sent as the
    server's string form.

    Guarantees: every request carries this list-watch's namespace and selectors; ``tweak`` (if
    given) sees and may replace the options of every list and watch request just before it is
    sent (it must keep the selectors consistent between the two). With ``metadata_only=True``
    items are ``PartialObjectMetadata`` objects (``apiVersion: meta.k8s.io/v1``, only
    ``metadata``).

    ``shard`` (a :class:`~kubectrl.cache.ShardSelector`) asks the server for one shard only
    (the ``shardSelector`` parameter); a server that does not apply it sends everything, and the
    reflector filters by itself (it checks the list's ``metadata.shardInfo``).

    Caveats: the selectors are fixed for its lifetime (one informer per selector set).

    The kind may be named by a model class (``V1ConfigMap``); the items are dicts all the same.

    Example::

        lw = ListWatch(client, ("v1", "ConfigMap"), namespace="ns", label_selector="app=web")
        page = await lw.list_page(ListOptions(resource_version="0", limit=500))
    """

    def __init__(
        self,
        client: AsyncClient,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        tweak: Callable[[ListOptions], ListOptions] | None = None,
        metadata_only: bool = False,
        shard: ShardSelector | None = None,
    ) -> None:
        self.client = client
        # A model class is listed and watched by its GVK: the store keeps the server's dicts.
        self.resource: ResourceRef = resource_ref(resource)
        self.namespace = namespace or None
        #: The selector as the server takes it (``None``: everything).
        self.label_selector = selector_string(label_selector)
        self.field_selector = field_selector or None
        self.tweak = tweak
        self.metadata_only = metadata_only
        if shard is not None and not isinstance(shard, ShardSelector):
            raise TypeError(f"shard must be a kubectrl.cache.ShardSelector, not {shard!r}")
        #: The shard to list and watch (``None``: the whole collection).
        self.shard = shard

    @property
    def description(self) -> str:
        """E.g. ``ConfigMap (v1) in namespace ns, labels app=web``."""
        parts = [
            describe_resource(self.resource),
            f"in namespace {self.namespace}" if self.namespace else "in all namespaces",
        ]
        if self.label_selector:
            parts.append(f"labels {self.label_selector}")
        if self.field_selector:
            parts.append(f"fields {self.field_selector}")
        if self.metadata_only:
            parts.append("metadata only")
        if self.shard is not None:
            parts.append(f"shard {self.shard}")
        return ", ".join(parts)

    def _query(self, options: ListOptions) -> tuple[ListOptions, dict[str, Any]]:
        # What lists and watches share: this list-watch's scope and selectors, then the tweak.
        options = dataclasses.replace(
            options,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            shard_selector=str(self.shard) if self.shard is not None else None,
        )
        if self.tweak is not None:
            options = self.tweak(options)
        common: dict[str, Any] = {
            "namespace": self.namespace,
            "label_selector": options.label_selector,
            "field_selector": options.field_selector,
            "shard_selector": options.shard_selector,
            "resource_version": options.resource_version,
            "resource_version_match": options.resource_version_match,
            "timeout_seconds": options.timeout_seconds,
            "metadata_only": self.metadata_only,
        }
        return options, common

    async def list_page(self, options: ListOptions) -> dict[str, Any]:
        """Fetch one list page with ``options`` (plus this list-watch's namespace and selectors).

        Raises the client's typed errors (:class:`~kubectrl.errors.ExpiredError` for an expired
        continue token or a compacted resourceVersion).
        """
        options, common = self._query(options)
        pages = self.client.list_pages(
            self.resource, limit=options.limit, continue_=options.continue_, **common
        )
        try:
            return await pages.__anext__()
        finally:
            await pages.aclose()  # type: ignore[attr-defined]

    def watch(self, options: ListOptions) -> WatchStream:
        """Open a watch with ``options``: the client's :class:`~kubectrl.client.WatchStream`."""
        options, common = self._query(options)
        return self.client.watch(
            self.resource,
            allow_watch_bookmarks=options.allow_watch_bookmarks,
            send_initial_events=options.send_initial_events,
            **common,
        )

    def __repr__(self) -> str:
        return f"<ListWatch {self.description}>"
