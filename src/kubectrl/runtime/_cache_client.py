"""The client reconcilers use: reads from the shared cache, writes to the API server.

controller-runtime's default (delegating) client. Reads (:meth:`CachedClient.get`,
:meth:`CachedClient.list`) are served by the manager's shared informers: the first read of a
kind starts its informer and waits for it to sync, later reads cost no request. Writes go
straight to the server through :class:`~kubectrl.client.AsyncClient`.

Why: a controller reads far more than it writes, and a watch-fed cache is what makes N reconciles
per second cheap for the API server. The price is the cache lag (controller-runtime #1464):
right after a write, a read may still return the old object. Reconcilers must be idempotent
anyway; use :attr:`CachedClient.reader` when a read really must be live.

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
import threading
from collections.abc import Callable, Coroutine, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, overload

from kubectrl import kinds as _kinds
from kubectrl.cache import Informer, InformerFactory, describe_resource
from kubectrl.client import (
    APIResource,
    AsyncClient,
    Client,
    KindRef,
    ModelList,
    PatchType,
    ResourceRef,
)
from kubectrl.client._blocking import BlockingFacade, Portal, blocking
from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.objects import ObjectKey, api_version_of, gvk_of, key_of, metadata_of
from kubectrl.runtime._controllerutil import merge_patch_diff
from kubectrl.runtime._kind_source import normalize_resource
from kubectrl.runtime._typed import model_view, object_dict

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = ["BlockingCachedClient", "BlockingStatusWriter", "CachedClient", "StatusWriter"]

T = TypeVar("T")
#: A model class's instances.
M = TypeVar("M", bound="BaseModel")


class StatusWriter:
    """Writes the ``status`` subresource (``client.status()``).

    Example::

        foo["status"] = {"ready": True}
        await client.status().update(foo)
    """

    def __init__(self, client: CachedClient) -> None:
        self._client = client

    @overload
    async def update(self, /, obj: M, *, namespace: str | None = None) -> M: ...

    @overload
    async def update(
        self, /, obj: Mapping[str, Any], *, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def update(
        self, /, obj: Mapping[str, Any] | BaseModel, *, namespace: str | None = None
    ) -> Any:
        """PUT the status (optimistic lock on ``metadata.resourceVersion``); the stored object
        comes back typed like ``obj`` (a model instance for a model)."""
        self._client.check_fence("update status of", _describe(obj))
        return await self._client.reader.update(obj, subresource="status", namespace=namespace)

    @overload
    async def patch(
        self,
        /,
        resource: type[M],
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> M: ...

    @overload
    async def patch(
        self,
        /,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
    ) -> dict[str, Any]: ...

    async def patch(self, /, resource: KindRef, name: str, patch: Any, **kwargs: Any) -> Any:
        """Patch the status (merge patch unless ``patch_type=`` says otherwise); ``patch`` may be
        a model instance, and a model class as ``resource`` returns an instance of it."""
        self._client.check_fence("patch status of", _describe_ref(resource, name, kwargs))
        return await self._client.reader.patch(
            resource, name, patch, subresource="status", **kwargs
        )

    @overload
    async def patch_merge_from(
        self, original: M, modified: M, *, optimistic_lock: bool = False
    ) -> M: ...

    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
    ) -> dict[str, Any]: ...

    async def patch_merge_from(
        self, original: Any, modified: Any, *, optimistic_lock: bool = False
    ) -> Any:
        """:meth:`CachedClient.patch_merge_from` on the status subresource."""
        return await self._client.patch_merge_from(
            original, modified, optimistic_lock=optimistic_lock, subresource="status"
        )

    @overload
    async def apply(self, obj: M, *, field_manager: str, force: bool = False) -> M: ...

    @overload
    async def apply(
        self, obj: Mapping[str, Any], *, field_manager: str, force: bool = False
    ) -> dict[str, Any]: ...

    async def apply(
        self, obj: Mapping[str, Any] | BaseModel, *, field_manager: str, force: bool = False
    ) -> Any:
        """Server-side apply of the status subresource."""
        self._client.check_fence("apply status of", _describe(obj))
        return await self._client.reader.apply(
            obj, field_manager=field_manager, force=force, subresource="status"
        )


class CachedClient:
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

    Caveats: reads lag writes (read your writes with :attr:`reader`); a cache restricted to one
    namespace cannot answer for another (``ValueError``); field selectors are not served from
    the cache (``ValueError``; use :attr:`reader`). Writes sent through :attr:`reader` directly
    are not fenced.

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
    ) -> None:
        self._client = client
        self._factory = factory
        self._sync_timeout = sync_timeout
        self._fence = leader_fence

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

    @overload
    async def get(self, resource: type[M], name: str, *, namespace: str | None = None) -> M: ...

    @overload
    async def get(
        self, resource: ResourceRef, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def get(self, resource: KindRef, name: str, *, namespace: str | None = None) -> Any:
        """A deep copy of the cached object, or for a model class a new instance of it;
        :class:`~kubectrl.errors.NotFoundError` if absent,
        :class:`~kubectrl.errors.ModelValidationError` if it does not fit the class.

        Example::

            cm = await client.get(("v1", "ConfigMap"), "settings", namespace="ns")
            deployment = await client.get(V1Deployment, "web", namespace="ns")
        """
        res, informer = await self.informer_for(resource)
        if res.namespaced and not namespace:
            raise ValueError(f"{res.label} is namespaced: pass namespace=")
        self._check_namespace(res, namespace)
        lister = informer.lister
        obj = lister.namespace(str(namespace)).get(name) if res.namespaced else lister.get(name)
        if isinstance(resource, type):
            return model_view(resource, obj, res.api_version, res.kind)
        return _typed(res, copy.deepcopy(obj))

    @overload
    async def list(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | None = None,
    ) -> ModelList[M]: ...

    @overload
    async def list(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | None = None,
    ) -> dict[str, Any]: ...

    async def list(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: str | Mapping[str, str] | None = None,
        field_selector: str | None = None,
    ) -> Any:
        """Cached objects as a list object (``items`` deep-copied, sorted by key); for a model
        class a :class:`~kubectrl.client.ModelList` of new instances.

        ``namespace=None`` lists every namespace the cache holds. ``label_selector`` is a
        selector string (``"app=web,tier!=db"``) or a mapping of equalities. One item that does
        not fit the class fails the whole list with
        :class:`~kubectrl.errors.ModelValidationError` naming that item.

        Example::

            secrets = await client.list(("v1", "Secret"), namespace="ns", label_selector="app=web")
            pods = (await client.list(V1Pod, namespace="ns")).items
        """
        if field_selector:
            raise ValueError("field selectors are not served from the cache; use client.reader")
        res, informer = await self.informer_for(resource)
        self._check_namespace(res, namespace)
        lister = informer.lister
        if res.namespaced and namespace:
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

    # ------------------------------------------------------------------ writes (server)

    @overload
    async def create(self, /, obj: M, **kwargs: Any) -> M: ...

    @overload
    async def create(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...

    async def create(self, /, obj: Mapping[str, Any] | BaseModel, **kwargs: Any) -> Any:
        """:meth:`AsyncClient.create <kubectrl.client.AsyncClient.create>` (typed like ``obj``)."""
        self.check_fence("create", _describe(obj))
        return await self._client.create(obj, **kwargs)

    @overload
    async def update(self, /, obj: M, **kwargs: Any) -> M: ...

    @overload
    async def update(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...

    async def update(self, /, obj: Mapping[str, Any] | BaseModel, **kwargs: Any) -> Any:
        """:meth:`AsyncClient.update <kubectrl.client.AsyncClient.update>` (optimistic lock)."""
        self.check_fence("update", _describe(obj))
        return await self._client.update(obj, **kwargs)

    @overload
    async def update_status(self, /, obj: M, **kwargs: Any) -> M: ...

    @overload
    async def update_status(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...

    async def update_status(self, /, obj: Mapping[str, Any] | BaseModel, **kwargs: Any) -> Any:
        """``status().update(obj)``."""
        self.check_fence("update status of", _describe(obj))
        return await self._client.update_status(obj, **kwargs)

    @overload
    async def patch(self, /, resource: type[M], name: str, patch: Any, **kwargs: Any) -> M: ...

    @overload
    async def patch(
        self, /, resource: ResourceRef, name: str, patch: Any, **kwargs: Any
    ) -> dict[str, Any]: ...

    async def patch(self, /, resource: KindRef, name: str, patch: Any, **kwargs: Any) -> Any:
        """:meth:`AsyncClient.patch <kubectrl.client.AsyncClient.patch>`."""
        self.check_fence("patch", _describe_ref(resource, name, kwargs))
        return await self._client.patch(resource, name, patch, **kwargs)

    @overload
    async def apply(
        self, /, obj: M, *, field_manager: str, force: bool = False, **kwargs: Any
    ) -> M: ...

    @overload
    async def apply(
        self,
        /,
        obj: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]: ...

    async def apply(
        self,
        /,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        **kwargs: Any,
    ) -> Any:
        """Server-side apply (:meth:`AsyncClient.apply <kubectrl.client.AsyncClient.apply>`).

        Example::

            await client.apply(desired_secret, field_manager="my-controller", force=True)
        """
        self.check_fence("apply", _describe(obj))
        return await self._client.apply(obj, field_manager=field_manager, force=force, **kwargs)

    async def delete(self, /, resource: KindRef, name: str, **kwargs: Any) -> dict[str, Any]:
        """:meth:`AsyncClient.delete <kubectrl.client.AsyncClient.delete>`."""
        self.check_fence("delete", _describe_ref(resource, name, kwargs))
        return await self._client.delete(resource, name, **kwargs)

    async def resource(self, resource: KindRef) -> APIResource:
        """Discovery (so controllerutil helpers accept this client)."""
        return await self._client.resource(resource)

    def status(self) -> StatusWriter:
        """A writer for the ``status`` subresource.

        Example: ``await client.status().update(foo)``.
        """
        return StatusWriter(self)

    @overload
    async def patch_merge_from(
        self, original: M, modified: M, *, optimistic_lock: bool = False, subresource: str = ""
    ) -> M: ...

    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
    ) -> dict[str, Any]: ...

    async def patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
    ) -> Any:
        """Send the JSON merge patch that turns ``original`` into ``modified`` (``MergeFrom``).

        Both may be model instances (``original`` a copy taken before the change, e.g.
        ``foo.model_copy(deep=True)``); the result then is an instance of ``modified``'s class.

        With ``optimistic_lock`` the patch carries ``original``'s ``metadata.resourceVersion``,
        so the server refuses it with :class:`~kubectrl.errors.ConflictError` if the object
        changed since it was read (controller-runtime's ``MergeFromWithOptimisticLock``).
        Without it the patch always applies and only the changed fields are sent. An empty
        patch is still sent (it returns the current object).

        Example::

            original = copy.deepcopy(cm)
            cm["data"]["mode"] = "fast"
            cm = await client.patch_merge_from(original, cm, optimistic_lock=True)
        """
        model = type(modified) if _kinds.is_model_class(type(modified)) else None
        original_dict, modified_dict = object_dict(original), object_dict(modified)
        patch = merge_patch_diff(original_dict, modified_dict)
        meta = metadata_of(modified_dict)
        if optimistic_lock:
            version = metadata_of(original_dict).get("resourceVersion")
            if not version:
                raise ValueError("optimistic_lock needs original.metadata.resourceVersion")
            patch.setdefault("metadata", {})["resourceVersion"] = str(version)
        gvk = gvk_of(modified_dict)
        self.check_fence(
            f"patch{' ' + subresource + ' of' if subresource else ''}", _describe(modified_dict)
        )
        result = await self._client.patch(
            (gvk.api_version, gvk.kind),
            str(meta.get("name") or ""),
            patch,
            namespace=str(meta.get("namespace") or "") or None,
            subresource=subresource,
        )
        return _kinds.from_dict(model, result) if model is not None else result

    def __repr__(self) -> str:
        return f"<CachedClient informers={len(self._factory.informers)}>"


def _describe(obj: Any) -> str:
    """``ConfigMap (v1) ns/name``: the object a write is about, for errors."""
    if not isinstance(obj, Mapping):
        # A model: its class names the kind, its metadata the object (no serialization).
        meta = getattr(obj, "metadata", None)
        key = ObjectKey(
            str(getattr(meta, "namespace", None) or ""), str(getattr(meta, "name", None) or "")
        )
        try:
            return f"{describe_resource(type(obj))} {key}"
        except TypeError:
            obj = object_dict(obj)
    return f"{describe_resource((api_version_of(obj), str(obj.get('kind', ''))))} {key_of(obj)}"


def _describe_ref(resource: KindRef, name: str, kwargs: Mapping[str, Any]) -> str:
    return f"{describe_resource(resource)} {ObjectKey(str(kwargs.get('namespace') or ''), name)}"


def _typed(res: APIResource, obj: dict[str, Any]) -> dict[str, Any]:
    # Watch events carry apiVersion/kind but list items of built-in types may not: fill them in
    # so an object read from the cache can go straight back to update()/apply().
    obj.setdefault("apiVersion", res.api_version)
    obj.setdefault("kind", res.kind)
    return obj


class _LoopPortal(Portal):
    """A :class:`~kubectrl.client._blocking.Portal` onto an event loop someone else runs (the
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


class BlockingStatusWriter(BlockingFacade):
    """Blocking :class:`StatusWriter` (``blocking_client.status()``), fenced like it.

    Example::

        foo["status"] = {"ready": True}
        blocking_client.status().update(foo)
    """

    def __init__(self, portal: Portal, target: StatusWriter) -> None:
        self._portal = portal
        self._target = target

    # Derived from StatusWriter's methods at run time; ParamSpec cannot carry their overloads,
    # so the type checker sees them spelled out (model in -> model out, dict -> dict).
    if TYPE_CHECKING:

        @overload
        def update(self, /, obj: M, *, namespace: str | None = None) -> M: ...
        @overload
        def update(
            self, /, obj: Mapping[str, Any], *, namespace: str | None = None
        ) -> dict[str, Any]: ...
        def update(self, /, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def patch(self, /, resource: type[M], name: str, patch: Any, **kwargs: Any) -> M: ...
        @overload
        def patch(
            self, /, resource: ResourceRef, name: str, patch: Any, **kwargs: Any
        ) -> dict[str, Any]: ...
        def patch(self, /, resource: KindRef, name: str, patch: Any, **kwargs: Any) -> Any: ...
        @overload
        def patch_merge_from(
            self, original: M, modified: M, *, optimistic_lock: bool = False
        ) -> M: ...
        @overload
        def patch_merge_from(
            self,
            original: Mapping[str, Any],
            modified: Mapping[str, Any],
            *,
            optimistic_lock: bool = False,
        ) -> dict[str, Any]: ...
        def patch_merge_from(self, original: Any, modified: Any, **kwargs: Any) -> Any: ...
        @overload
        def apply(self, obj: M, *, field_manager: str, force: bool = False) -> M: ...
        @overload
        def apply(
            self, obj: Mapping[str, Any], *, field_manager: str, force: bool = False
        ) -> dict[str, Any]: ...
        def apply(self, obj: Any, **kwargs: Any) -> Any: ...
    else:
        update = blocking(StatusWriter.update)
        patch = blocking(StatusWriter.patch)
        patch_merge_from = blocking(StatusWriter.patch_merge_from)
        apply = blocking(StatusWriter.apply)


class _BoundClient(Client):
    """The blocking :class:`~kubectrl.client.Client` over an :class:`AsyncClient` that lives on a
    loop owned by someone else (the manager): ``close()`` leaves it open."""

    def __init__(self, portal: Portal, target: AsyncClient) -> None:  # no private loop
        self._portal = portal
        self._target = target
        self.config = target.config

    def close(self) -> None:
        """No-op: the manager owns the client and closes it on shutdown."""


class BlockingCachedClient(BlockingFacade):
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
    def reader(self) -> Client:
        """The uncached client, blocking (live reads, every verb; writes here are not fenced).

        Example: ``blocking_client.reader.get(("v1", "Secret"), "s", namespace="ns")``.
        """
        return _BoundClient(self._portal, self._target.reader)

    def status(self) -> BlockingStatusWriter:
        """A blocking writer for the ``status`` subresource.

        Example: ``blocking_client.status().update(foo)``.
        """
        return BlockingStatusWriter(self._portal, self._target.status())

    delete = blocking(CachedClient.delete)
    resource = blocking(CachedClient.resource)

    # The typed verbs are derived from CachedClient's at run time; ParamSpec cannot carry their
    # overloads, so the type checker sees them spelled out: a model class or instance in -> an
    # instance out, a tuple/GVK/GVR or a dict -> dicts (tests/typing checks real use).
    if TYPE_CHECKING:

        @overload
        def get(self, resource: type[M], name: str, *, namespace: str | None = None) -> M: ...
        @overload
        def get(
            self, resource: ResourceRef, name: str, *, namespace: str | None = None
        ) -> dict[str, Any]: ...
        def get(self, resource: KindRef, name: str, **kwargs: Any) -> Any: ...
        @overload
        def list(
            self,
            resource: type[M],
            *,
            namespace: str | None = None,
            label_selector: str | Mapping[str, str] | None = None,
            field_selector: str | None = None,
        ) -> ModelList[M]: ...
        @overload
        def list(
            self,
            resource: ResourceRef,
            *,
            namespace: str | None = None,
            label_selector: str | Mapping[str, str] | None = None,
            field_selector: str | None = None,
        ) -> dict[str, Any]: ...
        def list(self, resource: KindRef, **kwargs: Any) -> Any: ...
        @overload
        def create(self, /, obj: M, **kwargs: Any) -> M: ...
        @overload
        def create(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...
        def create(self, /, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def update(self, /, obj: M, **kwargs: Any) -> M: ...
        @overload
        def update(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...
        def update(self, /, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def update_status(self, /, obj: M, **kwargs: Any) -> M: ...
        @overload
        def update_status(self, /, obj: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]: ...
        def update_status(self, /, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def patch(self, /, resource: type[M], name: str, patch: Any, **kwargs: Any) -> M: ...
        @overload
        def patch(
            self, /, resource: ResourceRef, name: str, patch: Any, **kwargs: Any
        ) -> dict[str, Any]: ...
        def patch(self, /, resource: KindRef, name: str, patch: Any, **kwargs: Any) -> Any: ...
        @overload
        def apply(
            self, /, obj: M, *, field_manager: str, force: bool = False, **kwargs: Any
        ) -> M: ...
        @overload
        def apply(
            self,
            /,
            obj: Mapping[str, Any],
            *,
            field_manager: str,
            force: bool = False,
            **kwargs: Any,
        ) -> dict[str, Any]: ...
        def apply(self, /, obj: Any, **kwargs: Any) -> Any: ...
        @overload
        def patch_merge_from(
            self,
            original: M,
            modified: M,
            *,
            optimistic_lock: bool = False,
            subresource: str = "",
        ) -> M: ...
        @overload
        def patch_merge_from(
            self,
            original: Mapping[str, Any],
            modified: Mapping[str, Any],
            *,
            optimistic_lock: bool = False,
            subresource: str = "",
        ) -> dict[str, Any]: ...
        def patch_merge_from(self, original: Any, modified: Any, **kwargs: Any) -> Any: ...
    else:
        get = blocking(CachedClient.get)
        list = blocking(CachedClient.list)
        create = blocking(CachedClient.create)
        update = blocking(CachedClient.update)
        update_status = blocking(CachedClient.update_status)
        patch = blocking(CachedClient.patch)
        apply = blocking(CachedClient.apply)
        patch_merge_from = blocking(CachedClient.patch_merge_from)

    def __repr__(self) -> str:
        return f"<BlockingCachedClient of {self._target!r}>"
