"""The asyncio client: REST verbs on any resource.

Every request goes through the same path: resolve the resource (RESTMapper), then the request
pipeline (:mod:`kubectrl.client._pipeline`): take a rate-limit token, set the credentials, send
through the transport seam, turn a failure ``Status`` into a typed error, retry when
:class:`RetryPolicy` allows (docs/architecture.md draws it, module by module).
Objects are plain dicts in and out when a kind is named by a tuple, a GVK or a GVR; when it is
named by a model class (``V1Deployment``, a custom resource class), results are instances of that
class, built by :func:`kubectrl.kinds.from_dict`. Model instances are accepted as bodies
everywhere and serialized by :func:`kubectrl.kinds.to_dict` (unknown server fields kept).

Ordinary requests share one connection pool (``ClientConfig.max_connections``); watches and
followed logs use a second, unbounded pool, so any number of long-lived watches never starves
ordinary requests of connections.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from typing_extensions import Unpack

from kubectrl import kinds as _kinds
from kubectrl._internal.clock import Clock, RealClock
from kubectrl.client._apply import apply_body
from kubectrl.client._config import ClientConfig, load_config
from kubectrl.client._discovery import APIResource, RESTMapper, describe
from kubectrl.client._documented import documented_by
from kubectrl.client._interfaces import Body, KubeClient, Pager, Reader, Writer
from kubectrl.client._merge import send_merge_from
from kubectrl.client._models import to_dict
from kubectrl.client._options import (
    ApplyOptions,
    DeleteAllOptions,
    DeleteOptions,
    GetOptions,
    ListOptions,
    MergeOptions,
    PageOptions,
    PatchOptions,
    WatchOptions,
    WriteOptions,
    check_matching_fields,
    check_options,
    delete_body,
    fields_selector,
    query_params,
)
from kubectrl.client._paths import check_request
from kubectrl.client._pipeline import Pipeline, json_body
from kubectrl.client._pods import MovedPodVerbs, Pods
from kubectrl.client._refresh import names_answer_kind, refresh_in_place
from kubectrl.client._rest_extras import RestExtras
from kubectrl.client._retry import DEFAULT_RETRY, Backoff, retry_on_conflict
from kubectrl.client._subresource import ClientStatusWriter, ClientSubResourceClient
from kubectrl.client._types import (
    KindRef,
    M,
    ModelList,
    PatchType,
    Preconditions,
    ResourceRef,
    WriteGuard,
    WriteObserver,
)
from kubectrl.client._watch import DEFAULT_STALL_TIMEOUT, WatchStream
from kubectrl.objects import GroupVersionKind, GroupVersionResource, ObjectKey, gvk_of, metadata_of

if TYPE_CHECKING:
    from kubectrl.client._transport import Transport

__all__ = [
    "AsyncClient",
    "KindRef",
    "ModelList",
    "PatchType",
    "Preconditions",
    "ResourceRef",
    "check_matching_fields",
    "fields_selector",
]

log = logging.getLogger("kubectrl.client")

T = TypeVar("T")


def _model_of(resource: Any) -> type[Any] | None:
    # A kind named by a class (tuples, GVKs, GVRs and APIResources are instances).
    return resource if isinstance(resource, type) else None


def _typed(model: type[M], data: dict[str, Any]) -> M:
    return _kinds.from_dict(model, data)


def _typed_list(model: type[M], page: dict[str, Any]) -> ModelList[M]:
    return ModelList(
        items=[_kinds.from_dict(model, item) for item in page.get("items") or ()],
        metadata=dict(page.get("metadata") or {}),
        api_version=str(page.get("apiVersion") or ""),
        kind=str(page.get("kind") or ""),
    )


def _no_metadata_only(model: type[Any] | None, options: Mapping[str, Any]) -> None:
    if model is not None and options.get("metadata_only"):
        raise ValueError(
            f"metadata_only=True returns PartialObjectMetadata, not {model.__name__}: name the "
            "kind by a tuple or GVK instead"
        )


class _Default:
    # A sentinel that reads well in signatures (help(), IDEs): "stall_timeout=<default>".
    def __repr__(self) -> str:
        return "<default>"


_UNSET: Any = _Default()


#: Parsed request URLs kept per client (a controller's paths and queries repeat).
_URL_CACHE_SIZE = 4096


def _clean(params: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, bool):
            out[key] = "true" if value else "false"
        else:
            out[key] = str(value)
    return out


def _dumps(body: Any) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


#: Ask the server for PartialObjectMetadata instead of whole objects (metadata-only informers).
METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
METADATA_WATCH_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


#: ``(apiVersion, kind)`` to its GroupVersionKind, remembered: a controller names the same few
#: kinds thousands of times a second, and the parse is pure.
_tuple_gvk = functools.lru_cache(maxsize=1024)(GroupVersionKind.from_api_version)


class AsyncClient(KubeClient, Pager, RestExtras, MovedPodVerbs):
    """Asyncio Kubernetes client for any resource, built on httpx.

    Resources are named by ``(apiVersion, kind)`` tuples, a
    :class:`~kubectrl.objects.GroupVersionKind`, a :class:`~kubectrl.objects.GroupVersionResource`
    or an :class:`APIResource`; objects are dicts.
    Single-object verbs need a namespace for namespaced resources (``namespace=`` or the object's
    ``metadata.namespace``); ``list``/``watch`` without one cover all namespaces.

    Guarantees: errors are typed (:mod:`kubectrl.errors`); requests are rate limited (20 QPS,
    burst 30 by default) and retried per :class:`RetryPolicy`; credentials never appear in logs
    or reprs. Caveats: one client belongs to one event loop; ``aclose()`` it (or use
    ``async with``).

    Example::

        async with AsyncClient(load_kubeconfig()) as client:
            cm = await client.create({"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "demo", "namespace": "default"},
                                      "data": {"a": "1"}})
            await client.delete(("v1", "ConfigMap"), "demo", namespace="default")
    """

    #: Called before every write (:meth:`with_write_hooks`); ``None`` on a plain client.
    _write_guard: WriteGuard | None = None
    #: Awaited with the answer of every write (:meth:`with_write_hooks`).
    _write_observer: WriteObserver | None = None

    def __init__(self, config: ClientConfig | None = None, *, clock: Clock | None = None) -> None:
        self.config = config if config is not None else load_config()
        self._clock = clock or RealClock()
        # Every request's steps (throttle, credentials, retries, warnings, errors) and the
        # transport under them: kubectrl.client._pipeline.
        self._pipeline = Pipeline(self.config, clock=self._clock)
        self._limiter = self._pipeline.limiter
        self.mapper = RESTMapper(self._discovery_get)
        self._base = self.config.server.rstrip("/")
        self._urls: dict[tuple[str, tuple[tuple[str, str], ...]], httpx.URL] = {}

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close both connection pools (an open watch ends with an error)."""
        await self._pipeline.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient(server={self.config.server!r}, source={self.config.source!r})"

    @property
    def pods(self) -> Pods:
        """The pod verbs (:class:`~kubectrl.client.Pods`): ``log``, ``log_stream``, ``exec``,
        ``open_exec``, ``attach``, ``port_forward``, ``evict``, ``add_ephemeral_container``
        and ``proxy``.

        Example::

            text = await client.pods.log("web-0", namespace="ns", tail_lines=100)
        """
        return Pods(self)

    def with_write_hooks(
        self, *, before: WriteGuard | None = None, after: WriteObserver | None = None
    ) -> AsyncClient:
        """A view of this client that calls ``before(verb, what)`` before every write, before
        anything is sent (discovery included), and awaits ``after(answer)`` with the server's
        answer to every write that succeeded (the object as a dict).

        An exception from ``before`` refuses the write. ``verb`` reads ``create``, ``update``,
        ``patch``, ``apply``, ``delete``, ``delete collection of`` or, for a subresource,
        ``update status of``; ``what`` names the object (``ConfigMap (v1) ns/settings``). Reads,
        watches and the pod verbs are not hooked; ``after`` sees no ``delete_collection`` answer.
        The view shares this client's connections, rate limit and discovery: closing one closes
        both. The manager's client fences its writes on leader election with ``before`` and
        notes them for read-your-writes with ``after``.

        Example::

            >>> from kubectrl.client import ClientConfig
            >>> def read_only(verb: str, what: str) -> None:
            ...     raise PermissionError(f"this tool does not {verb} {what}")
            >>> client = AsyncClient(ClientConfig(server="https://127.0.0.1:9"))
            >>> guarded = client.with_write_hooks(before=read_only)
            >>> import asyncio
            >>> asyncio.run(guarded.delete(("v1", "ConfigMap"), "settings", namespace="ns"))
            Traceback (most recent call last):
            ...
            PermissionError: this tool does not delete ConfigMap (v1) ns/settings
        """
        view = copy.copy(self)
        view._write_guard, view._write_observer = before, after
        return view

    async def _written(self, response: httpx.Response) -> dict[str, Any]:
        # A write's answer, shown to the observer of a view (with_write_hooks) first.
        data = await self._json(response)
        if self._write_observer is not None:
            await self._write_observer(data)
        return data

    def _check_write(
        self,
        verb: str,
        resource: object,
        name: str | None,
        namespace: str | None,
        subresource: str = "",
    ) -> None:
        guard = self._write_guard
        if guard is not None:
            what = f"{describe(resource)} {ObjectKey(namespace or '', name or '')}"
            guard(f"{verb} {subresource} of" if subresource else verb, what)

    # ------------------------------------------------------------------ plumbing

    async def _throttle(self) -> None:
        await self._pipeline.throttle()

    def _watch_pool(self) -> Transport:
        """The transport of watches and followed logs (unbounded connections)."""
        return self._pipeline.streams()

    def _url(self, path: str, query: dict[str, str]) -> httpx.URL:
        # The absolute URL of a request, parsed by httpx (kept for the requests built outside
        # the pipeline); a controller asks for the same few URLs over and over, so each is
        # parsed once.
        key = (path, tuple(query.items()))
        url = self._urls.get(key)
        if url is None:
            text = self._base + path
            if query:
                text += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
            url = httpx.URL(text)
            if len(self._urls) >= _URL_CACHE_SIZE:
                self._urls.clear()
            self._urls[key] = url
        return url

    async def _send(
        self,
        method: str,
        path: str,
        *,
        verb: str,
        label: str = "",
        namespace: str | None = None,
        name: str | None = None,
        params: Mapping[str, Any] | None = None,
        body: Any = _UNSET,
        content_type: str = "application/json",
        idempotent: bool | None = None,
        accept: str | None = None,
        raw_content: bytes | None = None,
        extra_headers: Mapping[str, str] | None = None,
        retry: bool = True,
        check_status: bool = True,
    ) -> httpx.Response:
        """One request through the pipeline (kubectrl.client._pipeline: the client's rate
        limit, credentials, bounds and typed errors); retried per :class:`RetryPolicy` unless
        ``retry=False``; a status of 400 or more raises its
        :class:`~kubectrl.errors.APIError` unless ``check_status=False``. ``body`` is sent as
        JSON, ``raw_content`` as it is (with ``extra_headers``)."""
        headers: dict[str, str] = dict(extra_headers) if extra_headers else {}
        content: bytes | None = raw_content
        if body is not _UNSET:
            content = _dumps(body)
            headers["Content-Type"] = content_type
        if accept:
            headers["Accept"] = accept
        return await self._pipeline.send(
            method,
            path,
            _clean(params) if params else {},
            headers=headers,
            content=content,
            verb=verb,
            label=label,
            namespace=namespace,
            name=name,
            idempotent=method == "GET" if idempotent is None else idempotent,
            retry=retry,
            check_status=check_status,
        )

    async def _discovery_get(self, path: str) -> Mapping[str, Any]:
        response = await self._send("GET", path, verb="discover", label=path)
        body = json_body(response, verb="discover", resource=path)
        return body if isinstance(body, dict) else {}

    async def _json(self, response: httpx.Response) -> dict[str, Any]:
        data = json_body(response)
        return data if isinstance(data, dict) else {"value": data}

    async def resource(self, resource: KindRef) -> APIResource:
        """Resolve ``resource`` through discovery (cached; refreshed once on a miss).

        A model class is resolved through its :func:`kubectrl.kinds.kind_info`, then discovery
        like a GVK (so a CRD installed after the client started is found, and a kind the server
        does not serve raises :class:`~kubectrl.errors.ResourceNotFoundError`, never a 404 that
        would read as a missing object).

        Raises :class:`~kubectrl.errors.ResourceNotFoundError` if the server serves no such kind.

        Example::

            deployments = await client.resource(("apps/v1", "Deployment"))
            assert deployments.namespaced
        """
        if isinstance(resource, APIResource):
            return resource
        if isinstance(resource, type):
            return await self.mapper.for_kind(_kinds.kind_info(resource).gvk)
        if isinstance(resource, GroupVersionKind):
            return await self.mapper.for_kind(resource)
        if isinstance(resource, GroupVersionResource):
            return await self.mapper.for_resource(resource)
        if isinstance(resource, tuple) and len(resource) == 2:
            return await self.mapper.for_kind(_tuple_gvk(*resource))
        raise TypeError(
            "resource must be a model class, an APIResource, GroupVersionKind, "
            f"GroupVersionResource or (apiVersion, kind) tuple, got {resource!r}"
        )

    @staticmethod
    def _namespace(
        res: APIResource, namespace: str | None, obj: Mapping[str, Any] | None = None
    ) -> str | None:
        if not res.namespaced:
            return None
        if namespace:
            return namespace
        if obj is not None and metadata_of(obj).get("namespace"):
            return str(metadata_of(obj)["namespace"])
        raise ValueError(f"{res.label} is namespaced: pass namespace= (or set metadata.namespace)")

    def _fill_type(self, res: APIResource, item: dict[str, Any]) -> dict[str, Any]:
        # List items come without apiVersion/kind for built-in types; set them so an item can be
        # passed straight back to update/apply.
        item.setdefault("apiVersion", res.api_version)
        item.setdefault("kind", res.kind)
        return item

    # ------------------------------------------------------------------ reads

    @documented_by(Reader.get)
    async def _get(self, resource: KindRef, name: str, **options: Unpack[GetOptions]) -> Any:
        check_options("get", options, GetOptions)
        namespace, subresource = options.get("namespace"), options.get("subresource") or ""
        model = _model_of(resource)
        if model is not None and subresource not in ("", "status"):
            raise ValueError(
                f"subresource {subresource!r} is not a {model.__name__}: read it with a tuple kind"
            )
        check_request("get", resource, name=name, namespace=namespace, subresource=subresource)
        res = await self.resource(resource)
        ns = self._namespace(res, namespace)
        response = await self._send(
            "GET",
            res.object_path(name, namespace=ns, subresource=subresource, verb="get"),
            verb="get",
            label=res.label + (f"/{subresource}" if subresource else ""),
            namespace=ns,
            name=name,
            params=query_params(options),
        )
        data = await self._json(response)
        return _typed(model, data) if model is not None else data

    @documented_by(Pager.list_pages)
    def _list_pages(self, resource: KindRef, **options: Unpack[PageOptions]) -> AsyncIterator[Any]:
        check_options("list_pages", options, PageOptions)
        model = _model_of(resource)
        _no_metadata_only(model, options)
        pages = self._raw_pages(resource, options)
        if model is None:
            return pages
        return self._typed_pages(model, pages)

    @staticmethod
    async def _typed_pages(
        model: type[M], pages: AsyncIterator[dict[str, Any]]
    ) -> AsyncIterator[ModelList[M]]:
        try:
            async for page in pages:
                yield _typed_list(model, page)
        finally:
            await pages.aclose()  # type: ignore[attr-defined]

    async def _raw_pages(
        self, resource: KindRef, options: Mapping[str, Any]
    ) -> AsyncIterator[dict[str, Any]]:
        # list_pages as dicts (an async generator: nothing is sent before the first page is asked).
        namespace = options.get("namespace")
        check_request("list", resource, namespace=namespace)
        res = await self.resource(resource)
        ns = self._namespace(res, namespace) if namespace else None
        metadata_only = bool(options.get("metadata_only"))
        params = query_params(options)
        while True:
            response = await self._send(
                "GET",
                res.path(namespace=ns, verb="list"),
                verb="list",
                label=res.label,
                namespace=ns,
                params=params,
                accept=METADATA_LIST_ACCEPT if metadata_only else None,
            )
            page = await self._json(response)
            if page.get("items") is None:
                # An empty list of PartialObjectMetadata comes as `"items": null` (a nil Go
                # slice); a list page always has a list.
                page["items"] = []
            for item in page["items"]:
                if metadata_only:
                    item.setdefault("apiVersion", "meta.k8s.io/v1")
                    item.setdefault("kind", "PartialObjectMetadata")
                else:
                    self._fill_type(res, item)
            yield page
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return
            # the next page: the same snapshot, named by the token alone
            params = {**params, "continue": token}
            params.pop("resourceVersion", None)
            params.pop("resourceVersionMatch", None)

    @documented_by(Reader.list)
    async def _list(self, resource: KindRef, **options: Unpack[ListOptions]) -> Any:
        check_options("list", options, ListOptions)
        query_params(options)  # a bad option fails here, before discovery
        model = _model_of(resource)
        _no_metadata_only(model, options)
        check_request("list", resource, namespace=options.get("namespace"))
        res = await self.resource(resource)
        items: list[dict[str, Any]] = []
        metadata: dict[str, Any] = {}
        async for page in self._raw_pages(res, options):
            items.extend(page.get("items") or ())
            if not metadata:
                metadata = {
                    k: v for k, v in (page.get("metadata") or {}).items() if k != "continue"
                }
        whole = {
            "apiVersion": res.api_version,
            "kind": f"{res.kind}List",
            "metadata": metadata,
            "items": items,
        }
        return _typed_list(model, whole) if model is not None else whole

    @documented_by(Pager.list_items)
    async def _list_items(
        self, resource: KindRef, **options: Unpack[ListOptions]
    ) -> AsyncIterator[Any]:
        check_options("list_items", options, ListOptions)
        model = _model_of(resource)
        _no_metadata_only(model, options)
        pages = self._raw_pages(resource, {"limit": 500, **options})  # client-go's pager size
        try:
            async for page in pages:
                for item in page.get("items") or ():
                    yield _typed(model, item) if model is not None else item
        finally:
            await pages.aclose()  # type: ignore[attr-defined]

    def watch(self, resource: KindRef, **options: Unpack[WatchOptions]) -> WatchStream:
        """Watch changes; returns a :class:`WatchStream` (async iterator and context manager).

        Start from a list's ``metadata.resourceVersion`` to see exactly the later changes.
        ``stall_timeout`` (seconds without a byte before
        :class:`~kubectrl.errors.WatchStalledError`) defaults to 90 s with bookmarks on (they
        arrive about every minute), to ``timeout_seconds + 30`` without bookmarks, else off.
        ``send_initial_events=True`` (streaming list) needs ``resource_version_match=
        "NotOlderThan"`` and bookmarks; its end is the bookmark with
        :attr:`WatchEvent.is_initial_events_end`. ``metadata_only=True`` streams
        ``PartialObjectMetadata`` objects. ``shard_selector`` is the ``shardSelector``
        parameter, as for :meth:`~kubectrl.client.Pager.list_pages` (a server without the
        ``ShardedListAndWatch`` gate ignores it and sends every event).

        A model class names the kind like a tuple does; event objects stay dicts (the cache and
        the reflector work on dicts); :meth:`WatchEvent.as_model` builds the typed object.

        Opening the stream (connect and response headers) must finish within
        ``config.watch_open_timeout`` (45 s) or raises
        :class:`~kubectrl.errors.RequestTimeoutError`; a failed open is never retried here, so
        each failure reaches the caller (the reflector backs off and logs it).

        Example::

            async with client.watch(("v1", "Pod"), namespace="ns", resource_version=rv) as events:
                async for event in events:
                    ...
        """
        check_options("watch", options, WatchOptions)
        bookmarks = options.get("allow_watch_bookmarks", True)
        timeout_seconds = options.get("timeout_seconds")
        if "stall_timeout" in options:
            stall_timeout = options["stall_timeout"]
        elif bookmarks:
            stall_timeout = DEFAULT_STALL_TIMEOUT
        elif timeout_seconds:
            stall_timeout = timeout_seconds + 30.0
        else:
            stall_timeout = None
        namespace = options.get("namespace")
        # a malformed selector or option fails here, not later; so does a malformed namespace
        params = _clean(
            {"watch": True, **query_params({**options, "allow_watch_bookmarks": bookmarks})}
        )
        check_request("watch", resource, namespace=namespace)

        async def opener(read_timeout: float | None) -> tuple[httpx.Response, str, str | None]:
            res = await self.resource(resource)
            ns = self._namespace(res, namespace) if namespace else None
            response = await self._open_stream(
                res.path(namespace=ns, verb="watch"),
                params,
                verb="watch",
                label=res.label,
                namespace=ns,
                read_timeout=read_timeout,
                accept=METADATA_WATCH_ACCEPT if options.get("metadata_only") else None,
            )
            return response, res.label, ns

        stream = WatchStream(
            opener,
            resource_version=options.get("resource_version") or "",
            stall_timeout=stall_timeout,
        )
        self._pipeline.open_streams.add(stream)
        return stream

    async def _open_stream(
        self,
        path: str,
        params: Mapping[str, str],
        *,
        verb: str,
        label: str,
        namespace: str | None,
        name: str | None = None,
        read_timeout: float | None,
        accept: str | None = None,
    ) -> httpx.Response:
        # One attempt only: the caller (the reflector) backs off, logs and decides whether to
        # list again, as client-go's reflector does; retrying here would hide a dead connection
        # from it. The open (connect + response headers) has its own bound, separate from the
        # stream's read (stall) bound, so a silent connection fails in watch_open_timeout.
        return await self._pipeline.open_stream(
            path,
            params,
            verb=verb,
            label=label,
            namespace=namespace,
            name=name,
            read_timeout=read_timeout,
            accept=accept,
        )

    # ------------------------------------------------------------------ writes

    @documented_by(Writer.create)
    async def _create(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        check_options("create", options, WriteOptions)
        body = to_dict(obj)
        namespace = options.get("namespace")
        check_request(
            "create", gvk_of(body), namespace=namespace or metadata_of(body).get("namespace")
        )
        self._check_write(
            "create",
            gvk_of(body),
            metadata_of(body).get("name") or metadata_of(body).get("generateName"),
            namespace or metadata_of(body).get("namespace"),
        )
        res = await self.resource(gvk_of(body))
        ns = self._namespace(res, namespace, body)
        response = await self._send(
            "POST",
            res.path(namespace=ns, verb="create"),
            verb="create",
            label=res.label,
            namespace=ns,
            name=metadata_of(body).get("name") or metadata_of(body).get("generateName"),
            params=self._write_params(options),
            body=body,
        )
        return self._result(obj, await self._written(response))

    def _write_params(self, options: Mapping[str, Any]) -> dict[str, Any]:
        # a write's query: its options, the manager defaulting to the client's field owner
        return query_params(options, field_manager=self.config.field_owner)

    @staticmethod
    def _result(obj: Any, data: dict[str, Any]) -> Any:
        # The answer to a body has the body's type: a model for a model, a dict for a mapping.
        # ``obj`` is refreshed in place too, as controller-runtime decodes the answer into the
        # object it was given (``Do(ctx).Into(obj)``); the answer returned is another object.
        refresh_in_place(obj, data)
        if isinstance(obj, Mapping) or not _kinds.is_model_class(type(obj)):
            return data
        return _kinds.from_dict(type(obj), data)

    @documented_by(Writer.update)
    async def _update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        check_options("update", options, WriteOptions)
        return await self._put(obj, options)

    async def _put(
        self,
        obj: Body,
        options: Mapping[str, Any],
        *,
        subresource: str = "",
        resource: KindRef | None = None,
    ) -> Any:
        # update, of the object or of one of its subresources (the status writer's and the
        # subresource client's way in; ``resource`` names the parent of a subresource body)
        body = to_dict(obj)
        name = str(metadata_of(body).get("name") or "")
        if not name:
            raise ValueError("update needs metadata.name")
        namespace = options.get("namespace")
        kind = resource if resource is not None else gvk_of(body)
        check_request(
            "update",
            kind,
            name=name,
            namespace=namespace or metadata_of(body).get("namespace"),
            subresource=subresource,
        )
        self._check_write(
            "update", kind, name, namespace or metadata_of(body).get("namespace"), subresource
        )
        res = await self.resource(kind)
        ns = self._namespace(res, namespace, body)
        response = await self._send(
            "PUT",
            res.object_path(name, namespace=ns, subresource=subresource, verb="update"),
            verb="update",
            label=res.label + (f"/{subresource}" if subresource else ""),
            namespace=ns,
            name=name,
            params=self._write_params(options),
            body=body,
        )
        data = await self._written(response)
        return data if subresource not in ("", "status") else self._result(obj, data)

    @documented_by(Writer.patch_merge_from)
    async def _patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        check_options("patch_merge_from", options, MergeOptions)
        return await send_merge_from(self._patch_at, original, modified, options)

    def status(self) -> ClientStatusWriter:
        """The writer of the ``status`` subresource: ``update``, ``patch``, ``apply``,
        ``patch_merge_from``.

        Example::

            foo.status = FooStatus(ready=True)
            foo = await client.status().update(foo)
        """
        return ClientStatusWriter(self)

    def subresource(self, subresource: str) -> ClientSubResourceClient:
        """A client of the ``subresource`` of objects (``"scale"``, ...): ``get``, ``update``,
        ``patch``, on dicts.

        Example::

            await client.subresource("scale").patch(("apps/v1", "Deployment"), "web",
                                                    {"spec": {"replicas": 3}}, namespace="ns")
        """
        return ClientSubResourceClient(self, self, subresource)

    @documented_by(Writer.patch)
    async def _patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        check_options("patch", options, PatchOptions)
        return await self._patch_at(resource, name, patch, options)

    async def _patch_at(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        options: Mapping[str, Any],
        *,
        subresource: str = "",
        guarded: bool = False,
    ) -> Any:
        # patch, of the object or of one of its subresources
        kind = PatchType.parse(options.get("patch_type", PatchType.MERGE))
        verb = "patch" if kind is not PatchType.APPLY else "apply"
        if options.get("force") and kind is not PatchType.APPLY:
            raise ValueError(f"force=True is for server-side apply, not a {kind.name} patch")
        namespace = options.get("namespace")
        check_request(verb, resource, name=name, namespace=namespace, subresource=subresource)
        if not guarded:  # an apply was guarded by _apply_at, before its discovery
            self._check_write(verb, resource, name, namespace, subresource)
        res = await self.resource(resource)
        ns = self._namespace(res, namespace)
        body = patch if isinstance(patch, list) else to_dict(patch)
        response = await self._send(
            "PATCH",
            res.object_path(name, namespace=ns, subresource=subresource, verb=verb),
            verb=verb,
            label=res.label + (f"/{subresource}" if subresource else ""),
            namespace=ns,
            name=name,
            params=self._write_params(options),
            body=body,
            content_type=kind.value,
            idempotent=kind is PatchType.APPLY,
        )
        data = await self._written(response)
        if subresource in ("", "status") and names_answer_kind(body, data):
            # A body that is an object of the kind (a model instance, an apply body) is the
            # object patched: refreshed in place, as controller-runtime's Patch does.
            refresh_in_place(patch, data)
        model = _model_of(resource)
        if model is None or subresource not in ("", "status"):
            return data
        return _kinds.from_dict(model, data)

    @documented_by(Writer.apply)
    async def _apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        check_options("apply", options, ApplyOptions)
        return await self._apply_at(obj, options)

    async def _apply_at(
        self, obj: Body, options: Mapping[str, Any], *, subresource: str = ""
    ) -> Any:
        # server-side apply, of the object or of its status
        body = apply_body(obj)
        name = str(metadata_of(body).get("name") or "")
        if not name:
            raise ValueError("apply needs metadata.name")
        if not (options.get("field_manager") or self.config.field_owner):
            raise ValueError(
                f"apply of {gvk_of(body).kind} {name!r} needs a field manager: pass "
                "field_manager= or set ClientConfig.field_owner"
            )
        namespace = options.get("namespace")
        check_request(
            "apply",
            gvk_of(body),
            name=name,
            namespace=namespace or metadata_of(body).get("namespace"),
            subresource=subresource,
        )
        self._check_write(
            "apply",
            gvk_of(body),
            name,
            namespace or metadata_of(body).get("namespace"),
            subresource,
        )
        res = await self.resource(gvk_of(body))
        applied = await self._patch_at(
            res,
            name,
            body,
            {
                **options,
                "namespace": self._namespace(res, namespace, body),
                "patch_type": PatchType.APPLY,
            },
            subresource=subresource,
            guarded=True,
        )
        return applied if subresource not in ("", "status") else self._result(obj, applied)

    async def scale(
        self, resource: KindRef, name: str, replicas: int, **options: Unpack[WriteOptions]
    ) -> dict[str, Any]:
        """Set ``spec.replicas`` through the ``scale`` subresource of any scalable resource (a
        Deployment, StatefulSet, ReplicaSet, a custom resource declaring ``scale``); returns the
        Scale. ``dry_run`` answers the Scale that would be stored, storing nothing.

        Example: ``await client.scale(("apps/v1", "Deployment"), "web", 3, namespace="ns")``.
        """
        check_options("scale", options, WriteOptions)
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise ValueError(f"replicas must be a non-negative integer, got {replicas!r}")
        namespace = options.get("namespace")
        check_request("patch", resource, name=name, namespace=namespace, subresource="scale")
        patch = {"spec": {"replicas": replicas}}
        return await self._patch_at(resource, name, patch, options, subresource="scale")  # type: ignore[no-any-return]

    @documented_by(Writer.delete)
    async def delete(
        self, resource: KindRef, name: str, **options: Unpack[DeleteOptions]
    ) -> dict[str, Any]:
        check_options("delete", options, DeleteOptions)
        namespace = options.get("namespace")
        check_request("delete", resource, name=name, namespace=namespace)
        self._check_write("delete", resource, name, namespace)
        res = await self.resource(resource)
        ns = self._namespace(res, namespace)
        response = await self._send(
            "DELETE",
            res.object_path(name, namespace=ns, verb="delete"),
            verb="delete",
            label=res.label,
            namespace=ns,
            name=name,
            body=delete_body(options),
        )
        return await self._written(response)

    @documented_by(Writer.delete_collection)
    async def delete_collection(
        self, resource: KindRef, **options: Unpack[DeleteAllOptions]
    ) -> dict[str, Any]:
        check_options("delete_collection", options, DeleteAllOptions)
        namespace = options.get("namespace")
        check_request("deletecollection", resource, namespace=namespace)
        self._check_write("delete collection of", resource, "", namespace)
        res = await self.resource(resource)
        ns = self._namespace(res, namespace)
        response = await self._send(
            "DELETE",
            res.path(namespace=ns, verb="deletecollection"),
            verb="deletecollection",
            label=res.label,
            namespace=ns,
            params={k: v for k, v in query_params(options).items() if k != "dryRun"},
            body=delete_body(options),  # dryRun travels in the body, as client-go sends it
        )
        return await self._json(response)

    # ------------------------------------------------------------------ helpers

    async def retry_on_conflict(
        self, fn: Callable[[], Awaitable[T]], *, backoff: Backoff = DEFAULT_RETRY
    ) -> T:
        """:func:`retry_on_conflict` on this client's clock.

        Example::

            await client.retry_on_conflict(bump_counter)
        """
        return await retry_on_conflict(fn, backoff=backoff, clock=self._clock)

    async def server_version(self) -> dict[str, Any]:
        """``GET /version``. Example: ``(await client.server_version())["gitVersion"]``."""
        return await self._json(await self._send("GET", "/version", verb="get", label="version"))

    # The verbs' public signatures are the interfaces' overloads (declared once, in
    # kubectrl.client._interfaces); the implementations above are bound to those names at run
    # time, and mypy checks each against its protocol (_AsyncClientConforms below).
    if TYPE_CHECKING:
        get = KubeClient.get
        list = KubeClient.list
        list_pages = Pager.list_pages
        list_items = Pager.list_items
        create = KubeClient.create
        update = KubeClient.update
        patch = KubeClient.patch
        apply = KubeClient.apply
        patch_merge_from = KubeClient.patch_merge_from
    else:
        get = _get
        list = _list
        list_pages = _list_pages
        list_items = _list_items
        create = _create
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from


if TYPE_CHECKING:
    # Each implementation must fit its protocol's overloads (a wrong parameter, default or result
    # type is a mypy error here).

    class _AsyncClientConforms(KubeClient, Pager):
        get = AsyncClient._get
        list = AsyncClient._list
        list_pages = AsyncClient._list_pages
        list_items = AsyncClient._list_items
        create = AsyncClient._create
        update = AsyncClient._update
        patch = AsyncClient._patch
        apply = AsyncClient._apply
        patch_merge_from = AsyncClient._patch_merge_from
