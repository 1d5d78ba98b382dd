"""The client reconcilers use: reads from the shared cache, writes to the API server.

controller-runtime's default (delegating) client. Reads (:meth:`CachedClient.get`,
:meth:`CachedClient.list`) are served by the manager's shared informers: the first read of a
kind starts its informer and waits for it to sync, later reads cost no request. Writes go
straight to the server through :class:`~kubectrl.client.AsyncClient`.

Why: a controller reads far more than it writes, and a watch-fed cache is what makes N reconciles
per second cheap for the API server. The price is the cache lag (controller-runtime #1464):
right after a write, a read may still return the old object. Reconcilers must be idempotent
anyway; use :attr:`CachedClient.reader` when a read really must be live. Across reconciles the
controller reads its own writes (Kubernetes 1.36's stale controller mitigation): each write made
here during a reconcile is noted with its resourceVersion, and the next reconcile of that key
waits until the informers of the written kind have seen it
(``ControllerOptions.read_your_writes``, docs/read-your-writes.md).

Kinds may be named by model classes (``V1Deployment``, a custom resource class): a read then
returns a fresh instance of the class built from the cached dict on every call (the cache keeps
the server's dicts; typed views are never shared, so mutating one changes neither the cache nor
another reader's view), and writes accept model instances and answer with the same class. A
cached object that does not validate as the class raises
:class:`~kubectrl.errors.ModelValidationError` naming it, its kind and the fields at fault, to
that read only: the informer, and other reads, go on.

Sync (``def``) reconcilers run in threads and cannot ``await``: they use
:class:`BlockingCachedClient` (``manager.blocking_client``), the same methods run on the
manager's event loop, each call waiting for its result.

Writes are fenced under leader election: the manager gives its client the elector's
:meth:`~kubectrl.leaderelection.LeaderElector.fence`, checked before every write is sent
(create, update, patch, apply, delete and the status writes), so a leader whose last renewal
is older than its renew deadline (say, a process resumed after SIGSTOP) cannot begin a write; it
gets :class:`~kubectrl.leaderelection.LeaderElectionLostError` instead. Reads are not fenced.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from typing_extensions import Unpack

from kubectrl._internal.blocking import BlockingFacade, Portal, blocking
from kubectrl._internal.checks import check_matching_fields, check_options, check_request
from kubectrl._internal.selector import parse_label_selector
from kubectrl.cache import Informer, InformerFactory
from kubectrl.client import (
    APIResource,
    AsyncClient,
    BlockingClient,
    BlockingKubeClient,
    KindRef,
    KubeClient,
    ModelList,
)
from kubectrl.client.interfaces import (
    BlockingStatusWriter,
    BlockingSubResourceClient,
    Body,
    StatusWriter,
    SubResourceClient,
)
from kubectrl.client.options import (
    ApplyOptions,
    DeleteAllOptions,
    DeleteOptions,
    GetOptions,
    ListOptions,
    MergeOptions,
    PatchOptions,
    WriteOptions,
)
from kubectrl.errors import KubectrlError
from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.objects import api_version_of, metadata_of
from kubectrl.runtime._field_index import (
    FieldIndexer,
    FieldIndexError,
    describe_kind,
    field_index_name,
    namespaced_index_key,
)
from kubectrl.runtime._kind_source import normalize_resource
from kubectrl.runtime._read_your_writes import current_tracker, note_write
from kubectrl.runtime._typed import model_view

if TYPE_CHECKING:
    pass

__all__ = ["BlockingCachedClient", "BlockingStatusWriter", "CachedClient", "StatusWriter"]

T = TypeVar("T")

log = logging.getLogger("kubectrl.runtime.client")

#: The options the cache serves (the rest are refused by name: use ``client.reader``).
CACHE_GET_OPTIONS = frozenset({"namespace"})
CACHE_LIST_OPTIONS = frozenset({"namespace", "label_selector", "matching_fields"})


class CachedClient(KubeClient):
    """Reads from the shared informer cache, writes to the server (controller-runtime's client).

    Guarantees: :meth:`get` and :meth:`list` never call the server once a kind's informer has
    synced; the first read of a kind starts that informer (shared with the controllers' sources
    through the :class:`~kubectrl.cache.InformerFactory`) and waits up to ``sync_timeout`` for
    it, raising :class:`~kubectrl.cache.CacheSyncError` naming the informer and the reason (RBAC,
    a missing CRD). Returned objects are deep copies: mutate them freely. Writes are the
    :class:`~kubectrl.client.AsyncClient` verbs, unchanged.

    With a leader fence (:meth:`set_leader_fence`; the manager sets the elector's under leader
    election), every write first asks the fence and raises
    :class:`~kubectrl.leaderelection.LeaderElectionLostError`, naming the write, without
    sending it when the fence is closed. Reads are never fenced.

    Writes made during a controller's reconcile are noted for it (kind and resourceVersion of
    the answer): the controller's next reconcile of that key waits until the cache has seen them
    (``ControllerOptions.read_your_writes``). Nothing is noted outside a reconcile.

    Caveats: within one reconcile reads lag its writes (read them with :attr:`reader`); a cache
    restricted to one namespace cannot answer for another (``ValueError``); field selectors are
    not served from the cache (``ValueError``; use :attr:`reader`), but a list by one field
    with ``matching_fields`` is, through a field index (:attr:`field_indexer`). Writes sent
    through :attr:`reader` directly are neither fenced nor noted.

    A model class as the kind makes reads typed: ``get`` returns an instance of the class and
    ``list`` a :class:`~kubectrl.client.ModelList` of them, each built afresh from the cached
    dict (:func:`kubectrl.kinds.from_dict`); an object that does not validate raises
    :class:`~kubectrl.errors.ModelValidationError` naming its namespace/name, kind and fields.
    Writes take model instances and return the same class.

    Example::

        client = manager.client
        cm = await client.get(("v1", "ConfigMap"), "settings", namespace="ns")   # cached
        original = copy.deepcopy(cm)
        cm["data"]["mode"] = "fast"
        await client.patch_merge_from(original, cm, optimistic_lock=True)        # server
        deployment = await client.get(V1Deployment, "web", namespace="ns")       # typed
    """

    def __init__(
        self,
        client: AsyncClient,
        factory: InformerFactory,
        *,
        sync_timeout: float = 120.0,
        leader_fence: Callable[[], bool] | None = None,
        field_indexer: FieldIndexer | None = None,
    ) -> None:
        self._client = client
        # Every write goes through this view of the client, which asks the fence first and
        # notes the answer for read-your-writes after.
        self._writer = client.with_write_hooks(before=self.check_fence, after=self._note)
        self._factory = factory
        self._sync_timeout = sync_timeout
        self._fence = leader_fence
        self._field_indexer = field_indexer if field_indexer is not None else FieldIndexer(factory)

    def set_leader_fence(self, fence: Callable[[], bool] | None) -> None:
        """Check ``fence()`` before every write from now on (``None``: writes are not fenced).

        Example::

            client.set_leader_fence(elector.fence)
        """
        self._fence = fence

    def check_fence(self, verb: str, what: str) -> None:
        """Raise :class:`~kubectrl.leaderelection.LeaderElectionLostError` if the fence is closed.

        ``verb`` and ``what`` name the write refused, for the message. Called by every write
        method before it sends anything; a no-op without a fence.

        Example::

            client.check_fence("create", "ConfigMap (v1) ns/settings")
        """
        fence = self._fence
        if fence is not None and not fence():
            raise LeaderElectionLostError(
                f"not sending {verb} {what}: this process is no longer the leader (its last "
                "lease renewal is older than the renew deadline, or leadership was lost)"
            )

    @property
    def reader(self) -> AsyncClient:
        """The uncached client (controller-runtime's ``APIReader``): live reads, and every verb."""
        return self._client

    @property
    def informer_factory(self) -> InformerFactory:
        """The shared informer factory reads are served from."""
        return self._factory

    @property
    def field_indexer(self) -> FieldIndexer:
        """The field indexes ``list(..., matching_fields=...)`` reads (``manager.field_indexer``).

        Example: ``client.field_indexer.index_field(V1Job, "metadata.controller", job_owner)``.
        """
        return self._field_indexer

    # ------------------------------------------------------------------ reads (cache)

    async def informer_for(self, resource: KindRef) -> tuple[APIResource, Informer]:
        """The shared informer for ``resource``, started and synced.

        Example: ``res, informer = await client.informer_for(("v1", "ConfigMap"))``.
        """
        res = await self._client.resource(normalize_resource(resource))
        informer = await self._factory.get_informer(res)
        informer.start()
        await informer.wait_for_cache_sync(self._sync_timeout)
        return res, informer

    def _check_namespace(self, res: APIResource, namespace: str | None) -> None:
        scope = self._factory.namespace
        if res.namespaced and scope and namespace and namespace != scope:
            raise ValueError(
                f"the cache holds {res.label} of namespace {scope!r} only; cannot read namespace "
                f"{namespace!r} (use client.reader)"
            )

    def _refuse(self, read: str, options: Mapping[str, Any], served: frozenset[str]) -> None:
        # Options a cache cannot answer are refused by name, never silently dropped.
        given = [name for name, value in options.items() if value and name not in served]
        if given:
            hint = (
                "; to select by a field, register a field index "
                "(manager.field_indexer.index_field) and pass matching_fields={field: value}"
                if "field_selector" in given
                else ""
            )
            raise ValueError(
                f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} not served from the "
                f"cache ({read}); use client.reader for a live read{hint}"
            )

    async def _get(self, resource: KindRef, name: str, **options: Unpack[GetOptions]) -> Any:
        """A deep copy of the cached object, or for a model class a new instance of it;
        :class:`~kubectrl.errors.NotFoundError` if absent,
        :class:`~kubectrl.errors.ModelValidationError` if it does not fit the class.

        ``subresource`` and ``resource_version`` are refused (``ValueError``): the cache holds
        the latest objects; read those live with :attr:`reader` (or ``subresource(name)``).

        Example::

            cm = await client.get(("v1", "ConfigMap"), "settings", namespace="ns")
            deployment = await client.get(V1Deployment, "web", namespace="ns")
        """
        check_options("get", options, GetOptions)
        self._refuse("get", options, CACHE_GET_OPTIONS)
        namespace = options.get("namespace")
        # As the live client does: a name that is not one path segment is a caller's bug even
        # when the cache answers (and nothing, not even the informer's list, is sent for it).
        check_request("get", resource, name=name, namespace=namespace)
        res, informer = await self.informer_for(resource)
        if res.namespaced and not namespace:
            raise ValueError(f"{res.label} is namespaced: pass namespace=")
        self._check_namespace(res, namespace)
        lister = informer.lister
        obj = lister.namespace(str(namespace)).get(name) if res.namespaced else lister.get(name)
        if isinstance(resource, type):
            return model_view(resource, obj, res.api_version, res.kind)
        return _typed(res, copy.deepcopy(obj))

    async def _list(self, resource: KindRef, **options: Unpack[ListOptions]) -> Any:
        """Cached objects as a list object (``items`` deep-copied, sorted by key); for a model
        class a :class:`~kubectrl.client.ModelList` of new instances.

        ``namespace=None`` lists every namespace the cache holds. ``label_selector`` is any
        :data:`~kubectrl.labels.LabelSelectorLike` (``"app=web,tier!=db"``, a mapping of
        equalities, a ``matchExpressions`` selector). One item that does not fit the class fails
        the whole list with :class:`~kubectrl.errors.ModelValidationError` naming that item.

        ``matching_fields={field: value}`` (exactly one field, exact match) reads the field
        index registered with ``manager.field_indexer.index_field`` (:class:`FieldIndexer`),
        scoped to ``namespace`` (every namespace
        without one), then filtered by ``label_selector``. An unindexed field is a
        ``ValueError`` naming the registration to add; an index whose function failed on some
        cached object raises :class:`~kubectrl.runtime.FieldIndexError`.

        ``field_selector``, ``limit``, ``resource_version``, ``resource_version_match``,
        ``timeout_seconds`` and ``metadata_only`` are refused (``ValueError``): use
        :attr:`reader`.

        Example::

            secrets = await client.list(("v1", "Secret"), namespace="ns", label_selector="app=web")
            pods = (await client.list(V1Pod, namespace="ns")).items
            jobs = await client.list(V1Job, namespace="ns",
                                     matching_fields={"metadata.controller": "backup"})
        """
        check_options("list", options, ListOptions)
        matching = options.get("matching_fields")
        fields = (
            check_matching_fields(matching, options.get("field_selector"))
            if matching is not None
            else {}
        )
        self._refuse("list", options, CACHE_LIST_OPTIONS)
        namespace, label_selector = options.get("namespace"), options.get("label_selector")
        if len(fields) > 1:
            raise ValueError(
                f"the cache serves one field requirement per list (an exact match on one field "
                f"index), got {len(fields)}: {', '.join(sorted(fields))}; list by one and filter, "
                "or use client.reader"
            )
        check_request("list", resource, namespace=namespace)
        res, informer = await self.informer_for(resource)
        self._check_namespace(res, namespace)
        lister = informer.lister
        if fields:
            ((field, value),) = fields.items()
            items = self._by_field(resource, res, informer, field, value, namespace)
            match = parse_label_selector(label_selector)
            items = [obj for obj in items if match(obj)]
        elif res.namespaced and namespace:
            items = lister.namespace(namespace).list(label_selector)
        else:
            items = lister.list(label_selector)
        if isinstance(resource, type):
            return ModelList(
                items=[model_view(resource, obj, res.api_version, res.kind) for obj in items],
                metadata={"resourceVersion": informer.last_sync_resource_version},
                api_version=res.api_version,
                kind=f"{res.kind}List",
            )
        return {
            "apiVersion": res.api_version,
            "kind": f"{res.kind}List",
            "metadata": {"resourceVersion": informer.last_sync_resource_version},
            "items": [_typed(res, copy.deepcopy(obj)) for obj in items],
        }

    def _by_field(
        self,
        resource: KindRef,
        res: APIResource,
        informer: Informer,
        field: str,
        value: str,
        namespace: str | None,
    ) -> list[dict[str, Any]]:
        # controller-runtime's cache reader: one exact field through its index, namespaced key.
        index = self._field_indexer.index_for(res, field)
        name = field_index_name(field)
        if index is None or name not in informer.indexer.index_names():
            indexed = self._field_indexer.fields(res)
            known = f" (indexed fields: {', '.join(indexed)})" if indexed else ""
            raise ValueError(
                f"{res.label}: no field index {field!r} in the cache{known}; register it with "
                f"manager.field_indexer.index_field({describe_kind(resource)}, {field!r}, fn) "
                "before listing by it, or use client.reader to ask the server"
            )
        failures = index.failures(informer)
        if failures:
            raise FieldIndexError(res.label, field, failures)
        scope = namespace if res.namespaced else None
        return informer.indexer.by_index(name, namespaced_index_key(scope, value))

    # ------------------------------------------------------------------ writes (server)

    async def _create(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """:meth:`AsyncClient.create <kubectrl.client.AsyncClient.create>` (typed like ``obj``),
        fenced."""
        return await self._writer.create(obj, **options)

    async def _update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """:meth:`AsyncClient.update <kubectrl.client.AsyncClient.update>` (optimistic lock),
        fenced."""
        return await self._writer.update(obj, **options)

    async def _patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        """:meth:`AsyncClient.patch <kubectrl.client.AsyncClient.patch>`, fenced."""
        return await self._writer.patch(resource, name, patch, **options)

    async def _apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        """Server-side apply (:meth:`AsyncClient.apply <kubectrl.client.AsyncClient.apply>`),
        fenced.

        Example::

            await client.apply(desired_secret, field_manager="my-controller", force=True)
        """
        return await self._writer.apply(obj, **options)

    async def _patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        """:meth:`AsyncClient.patch_merge_from <kubectrl.client.AsyncClient.patch_merge_from>`
        (``MergeFrom``), fenced.

        Example::

            original = copy.deepcopy(cm)
            cm["data"]["mode"] = "fast"
            cm = await client.patch_merge_from(original, cm, optimistic_lock=True)
        """
        return await self._writer.patch_merge_from(original, modified, **options)

    async def delete(
        self, resource: KindRef, name: str, **options: Unpack[DeleteOptions]
    ) -> dict[str, Any]:
        """:meth:`AsyncClient.delete <kubectrl.client.AsyncClient.delete>`, fenced."""
        return await self._writer.delete(resource, name, **options)

    async def delete_collection(
        self, resource: KindRef, **options: Unpack[DeleteAllOptions]
    ) -> dict[str, Any]:
        """:meth:`AsyncClient.delete_collection
        <kubectrl.client.AsyncClient.delete_collection>`, fenced."""
        return await self._writer.delete_collection(resource, **options)

    async def _note(self, written: dict[str, Any]) -> None:
        """``written`` (a write's answer), noted for read-your-writes when a controller's
        reconcile runs here: its next reconcile of the key waits until every informer of the
        written kind has seen the answer's resourceVersion."""
        if current_tracker() is None:
            return
        kind = str(written.get("kind") or "")
        resource_version = str(metadata_of(written).get("resourceVersion") or "")
        if not kind or kind == "Status" or not written.get("apiVersion") or not resource_version:
            return  # a Status (a delete that removed the object at once): no version
        try:
            res = await self._client.resource(normalize_resource((api_version_of(written), kind)))
        except (KubectrlError, TypeError, ValueError) as err:
            log.warning(
                "read-your-writes: cannot tell the kind of a write's answer (%s): the next "
                "reconcile does not wait for the cache to see it",
                err,
                extra={"resource_version": resource_version},
            )
            return
        names = {str(res.gvr), str(res.gvk)}
        informers = [i for key, i in self._factory.informers.items() if key.resource in names]
        if informers:
            note_write(informers, resource_version, what=res.label)

    async def resource(self, resource: KindRef) -> APIResource:
        """Discovery (so controllerutil helpers accept this client)."""
        return await self._client.resource(resource)

    def status(self) -> StatusWriter:
        """The writer of the ``status`` subresource (fenced like every write).

        Example: ``await client.status().update(foo)``.
        """
        return self._writer.status()

    def subresource(self, subresource: str) -> SubResourceClient:
        """A client of ``subresource`` (``"scale"``, ...): reads are live (the cache holds no
        subresources), writes fenced.

        Example: ``await client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """
        return self._writer.subresource(subresource)

    # The verbs' public signatures are the client interface's overloads; the implementations
    # above are bound to them at run time and checked against them (_CachedClientConforms).
    if TYPE_CHECKING:
        get = KubeClient.get
        list = KubeClient.list
        create = KubeClient.create
        update = KubeClient.update
        patch = KubeClient.patch
        apply = KubeClient.apply
        patch_merge_from = KubeClient.patch_merge_from
    else:
        get = _get
        list = _list
        create = _create
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from

    def __repr__(self) -> str:
        return f"<CachedClient informers={len(self._factory.informers)}>"


def _typed(res: APIResource, obj: dict[str, Any]) -> dict[str, Any]:
    # Watch events carry apiVersion/kind but list items of built-in types may not: fill them in
    # so an object read from the cache can go straight back to update()/apply().
    obj.setdefault("apiVersion", res.api_version)
    obj.setdefault("kind", res.kind)
    return obj


class _LoopPortal(Portal):
    """A :class:`~kubectrl._internal.blocking.Portal` onto an event loop someone else runs (the
    manager's), bound once that loop runs; it never owns or stops the loop."""

    def __init__(self) -> None:  # no super().__init__(): no private loop or thread
        self.loop: asyncio.AbstractEventLoop | None = None  # type: ignore[assignment]
        self.thread: threading.Thread | None = None  # type: ignore[assignment]
        self.closed = False

    def bind(self, loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
        self.loop, self.thread, self.closed = loop, thread, False

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        loop = self.loop
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError(
                "BlockingCachedClient called on the manager's event loop thread, where it would "
                "wait for itself forever; in async code (an async def reconciler) use "
                "manager.client and await its methods"
            )
        if loop is None or self.closed or loop.is_closed():
            coro.close()
            raise RuntimeError(
                "BlockingCachedClient: the manager's event loop is not running (call it from a "
                "sync reconciler or another thread while the manager runs)"
            )
        return super().call(coro)

    def stop(self) -> None:
        self.closed = True  # the loop is the manager's: never stopped from here


class _BoundClient(BlockingClient):
    """The :class:`~kubectrl.client.BlockingClient` over an :class:`AsyncClient` that lives on a
    loop owned by someone else (the manager): ``close()`` leaves it open."""

    def __init__(self, portal: Portal, target: AsyncClient) -> None:  # no private loop
        self._portal = portal
        self._target = target
        self.config = target.config

    def close(self) -> None:
        """No-op: the manager owns the client and closes it on shutdown."""


class BlockingCachedClient(BlockingFacade, BlockingKubeClient):
    """:class:`CachedClient` for sync (``def``) reconcilers: the same methods, blocking.

    Each call runs the :class:`CachedClient` method on the manager's event loop
    (``asyncio.run_coroutine_threadsafe``) and waits for it, so reads come from the same
    informer cache (deep copies), writes go to the server through the same client, with the
    same leader fence (:class:`~kubectrl.leaderelection.LeaderElectionLostError` when it is
    closed), and ``status()`` writes the status subresource. Safe from any number of threads.

    Caveats: calling it on the manager's loop thread (from ``async`` code) raises
    ``RuntimeError`` instead of deadlocking; so does calling it while the manager is not
    running. A call blocks its thread for as long as the async method takes.

    Example::

        client = manager.blocking_client

        def reconcile(request: Request) -> None:
            cm = client.get(("v1", "ConfigMap"), request.name, namespace=request.namespace)
            client.apply(desired(cm), field_manager="copier", force=True)
    """

    def __init__(self, client: CachedClient) -> None:
        self._portal: _LoopPortal = _LoopPortal()
        self._target: CachedClient = client

    def bind_loop(
        self, loop: asyncio.AbstractEventLoop, thread: threading.Thread | None = None
    ) -> None:
        """Run calls on ``loop``, which runs in ``thread`` (default: the calling thread).

        The manager calls this when it starts. Example::

            blocking.bind_loop(asyncio.get_running_loop())
        """
        self._portal.bind(loop, thread if thread is not None else threading.current_thread())

    def unbind_loop(self) -> None:
        """Refuse calls from now on (the manager's loop is stopping)."""
        self._portal.stop()

    @property
    def cached_client(self) -> CachedClient:
        """The async :class:`CachedClient` this wraps."""
        return self._target

    @property
    def reader(self) -> BlockingClient:
        """The uncached client, blocking (live reads, every verb; writes here are not fenced).

        Example: ``blocking_client.reader.get(("v1", "Secret"), "s", namespace="ns")``.
        """
        return _BoundClient(self._portal, self._target.reader)

    def status(self) -> BlockingStatusWriter:
        """A blocking writer of the ``status`` subresource, fenced like every write.

        Example: ``blocking_client.status().update(foo)``.
        """
        return _BoundClient(self._portal, self._target._writer).status()

    def subresource(self, subresource: str) -> BlockingSubResourceClient:
        """A blocking client of ``subresource`` (live reads, fenced writes).

        Example: ``blocking_client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """
        return _BoundClient(self._portal, self._target._writer).subresource(subresource)

    delete = blocking(CachedClient.delete)
    delete_collection = blocking(CachedClient.delete_collection)
    resource = blocking(CachedClient.resource)

    # Each verb is CachedClient's implementation run on the manager's loop; its public signature
    # is the blocking interface's overloads, which mypy checks it against
    # (_BlockingCachedClientConforms below).
    _get = blocking(CachedClient._get)
    _list = blocking(CachedClient._list)
    _create = blocking(CachedClient._create)
    _update = blocking(CachedClient._update)
    _patch = blocking(CachedClient._patch)
    _apply = blocking(CachedClient._apply)
    _patch_merge_from = blocking(CachedClient._patch_merge_from)

    if TYPE_CHECKING:
        get = BlockingKubeClient.get
        list = BlockingKubeClient.list
        create = BlockingKubeClient.create
        update = BlockingKubeClient.update
        patch = BlockingKubeClient.patch
        apply = BlockingKubeClient.apply
        patch_merge_from = BlockingKubeClient.patch_merge_from
    else:
        get = _get
        list = _list
        create = _create
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from

    def __repr__(self) -> str:
        return f"<BlockingCachedClient of {self._target!r}>"


if TYPE_CHECKING:
    # Each implementation must fit its interface's overloads (mypy checks the assignments).

    class _CachedClientConforms(KubeClient):
        get = CachedClient._get
        list = CachedClient._list
        create = CachedClient._create
        update = CachedClient._update
        patch = CachedClient._patch
        apply = CachedClient._apply
        patch_merge_from = CachedClient._patch_merge_from

    class _BlockingCachedClientConforms(BlockingKubeClient):
        get = BlockingCachedClient._get
        list = BlockingCachedClient._list
        create = BlockingCachedClient._create
        update = BlockingCachedClient._update
        patch = BlockingCachedClient._patch
        apply = BlockingCachedClient._apply
        patch_merge_from = BlockingCachedClient._patch_merge_from
