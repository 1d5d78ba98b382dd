"""The client interfaces: every client's verbs, declared once (controller-runtime's
``client.Reader``, ``Writer``, ``StatusClient`` and ``SubResourceClient``).

:class:`~kubectrl.client.AsyncClient`, :class:`~kubectrl.client.BlockingClient` and the
manager's cache-backed :class:`~kubectrl.runtime.CachedClient` and
:class:`~kubectrl.runtime.BlockingCachedClient` implement them; code that works with "a client"
takes :class:`KubeClient` (``get``, ``list``, the writes, ``status()``, ``subresource(name)``)
or a part of it (:class:`Reader`, :class:`Writer`, :class:`StatusClient`); :class:`Pager` is
the server's paged lists. A verb's options are one typed bundle (:mod:`kubectrl.client._options`),
so a type checker refuses a misspelt option; a model class in gives instances of it out, a tuple
kind, GVK, GVR or :class:`~kubectrl.client.APIResource` gives dicts.

The blocking twins (``Blocking<Name>``, :mod:`kubectrl.client._interfaces_blocking`) are
generated from this file by ``scripts/unasync.py``; ``nox -s lint`` fails when they drift.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, overload

from typing_extensions import Unpack

from kubectrl.client._options import (
    ApplyOptions,
    DeleteAllOptions,
    DeleteOptions,
    GetOptions,
    ListOptions,
    MergeOptions,
    PageOptions,
    PatchOptions,
    WriteOptions,
    _Scope,
)
from kubectrl.client._types import KindRef, M, ModelList, ResourceRef

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "KubeClient",
    "Pager",
    "Reader",
    "StatusClient",
    "StatusWriter",
    "SubResourceClient",
    "Writer",
]

#: A body: a mapping or a model instance.
Body: TypeAlias = "Mapping[str, Any] | BaseModel"


# unasync: the protocols below are the source of kubectrl.client._interfaces_blocking.


class Reader(Protocol):
    """Reads: ``get`` one object, ``list`` many (controller-runtime's ``client.Reader``); the
    cache-backed client reads its informers and refuses by name (``ValueError``) the options a
    cache cannot answer (``subresource``, ``resource_version``, ``limit``, ...)."""

    @overload
    async def get(self, resource: type[M], name: str, **options: Unpack[GetOptions]) -> M: ...
    @overload
    async def get(
        self, resource: ResourceRef, name: str, **options: Unpack[GetOptions]
    ) -> dict[str, Any]: ...
    async def get(self, resource: KindRef, name: str, **options: Unpack[GetOptions]) -> Any:
        """Read one object (or one of its subresources, e.g. ``"scale"``: a dict).

        With a model class, returns an instance of it; with a tuple kind, GVK, GVR or
        :class:`~kubectrl.client.APIResource`, a dict. Raises
        :class:`~kubectrl.errors.NotFoundError` when it does not exist and
        :class:`~kubectrl.errors.ModelValidationError` when the object does not fit the model.
        Options: :class:`~kubectrl.client.GetOptions`.

        Example::

            cm = await client.get(("v1", "ConfigMap"), "settings", namespace="default")
            deployment = await client.get(V1Deployment, "web", namespace="default")
        """

    @overload
    async def list(self, resource: type[M], **options: Unpack[ListOptions]) -> ModelList[M]: ...
    @overload
    async def list(
        self, resource: ResourceRef, **options: Unpack[ListOptions]
    ) -> dict[str, Any]: ...
    async def list(self, resource: KindRef, **options: Unpack[ListOptions]) -> Any:
        """List objects into one list object: ``{"apiVersion", "kind": "<Kind>List",
        "metadata": {"resourceVersion"}, "items": [...]}`` for a tuple kind, a
        :class:`~kubectrl.client.ModelList` of instances for a model class. Items carry
        ``apiVersion`` and ``kind``; watch from ``metadata.resourceVersion`` to see later changes.

        Options: :class:`~kubectrl.client.ListOptions` (no ``namespace``: every namespace). The
        server's clients follow pages of ``limit`` items to the end (one snapshot); the cached
        client serves ``matching_fields`` from a field index
        (``manager.field_indexer.index_field``).

        Example::

            cms = await client.list(("v1", "ConfigMap"), namespace="ns", label_selector="app=web")
            jobs = await client.list(V1Job, namespace="ns", matching_fields={"metadata.name": "x"})
        """


class Pager(Protocol):
    """Paged reads from the server: ``list_pages`` (one page at a time) and ``list_items`` (one
    object at a time)."""

    @overload
    def list_pages(
        self, resource: type[M], **options: Unpack[PageOptions]
    ) -> AsyncIterator[ModelList[M]]: ...
    @overload
    def list_pages(
        self, resource: ResourceRef, **options: Unpack[PageOptions]
    ) -> AsyncIterator[dict[str, Any]]: ...
    def list_pages(self, resource: KindRef, **options: Unpack[PageOptions]) -> AsyncIterator[Any]:
        """Yield list pages (``limit`` items each) following ``metadata.continue`` to the end.

        Every page comes from the first page's snapshot; a continue token older than etcd's
        compaction raises :class:`~kubectrl.errors.ExpiredError`. With a model class each page
        is a :class:`~kubectrl.client.ModelList`. Only a kube-apiserver with the
        ``ShardedListAndWatch`` gate honours ``shard_selector`` (it echoes it in
        ``metadata.shardInfo``). Options: :class:`~kubectrl.client.PageOptions`.

        Example::

            async for page in client.list_pages(("v1", "ConfigMap"), namespace="ns", limit=500):
                handle(page["items"])
        """

    @overload
    def list_items(self, resource: type[M], **options: Unpack[ListOptions]) -> AsyncIterator[M]: ...
    @overload
    def list_items(
        self, resource: ResourceRef, **options: Unpack[ListOptions]
    ) -> AsyncIterator[dict[str, Any]]: ...
    def list_items(self, resource: KindRef, **options: Unpack[ListOptions]) -> AsyncIterator[Any]:
        """Yield objects one by one, fetching pages of ``limit`` (500, as client-go's pager).

        With a model class, yields instances of it. Options: :class:`~kubectrl.client.ListOptions`.

        Example::

            async for pod in client.list_items(("v1", "Pod"), namespace="ns"):
                print(pod["metadata"]["name"])
        """


class Writer(Protocol):
    """Writes (controller-runtime's ``client.Writer``); each answers in the body's type (a
    model instance for a model, a dict for a mapping), ``patch`` in the kind's.

    As in controller-runtime, a write also refreshes the object passed in with the server's
    answer (``resourceVersion``, spec, status), so the same variable can be written again
    without a conflict: ``obj`` of ``create``, ``update``, ``apply``; ``modified`` of
    ``patch_merge_from``; ``patch``'s body when it is an object of the kind (not a partial or
    JSON patch); not a read-only ``Mapping`` or a frozen model. The answer is also returned.

    The ``status`` subresource is written through ``status()`` only, any other through
    ``subresource(name)``. The field manager is ``field_manager=`` or the client's
    ``ClientConfig.field_owner``; options: :class:`~kubectrl.client.WriteOptions` and the
    bundles built on it.
    """

    @overload
    async def create(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    async def create(
        self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]
    ) -> dict[str, Any]: ...
    async def create(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """Create ``obj`` (its ``apiVersion``/``kind`` pick the resource); return what the
        server stored, as a dict for a dict and as an instance of ``obj``'s class for a model.
        Raises :class:`~kubectrl.errors.AlreadyExistsError` if the name is taken and
        :class:`~kubectrl.errors.InvalidError` (with ``causes``) if validation fails.

        Example::

            await client.create({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "demo"}})
        """

    @overload
    async def update(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    async def update(
        self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]
    ) -> dict[str, Any]: ...
    async def update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """Replace ``obj`` (PUT); returns the stored object, typed like ``obj``.

        A model read by a typed read keeps the fields its class does not know. With
        ``metadata.resourceVersion`` set, a concurrent change raises
        :class:`~kubectrl.errors.ConflictError`. The server ignores the status of a kind with a
        status subresource: write it with ``status().update(obj)``.

        Example::

            cm["data"]["a"] = "2"
            cm = await client.update(cm)
        """

    @overload
    async def patch(
        self, resource: type[M], name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> M: ...
    @overload
    async def patch(
        self, resource: ResourceRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]: ...
    async def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        """Patch an object: JSON patch (a list of operations), merge patch (default),
        strategic merge patch (built-in types only) or server-side apply (prefer :meth:`apply`).

        ``patch`` may be a model instance (serialized by :func:`kubectrl.kinds.to_dict`). With a
        model class as ``resource`` the result is an instance of it.

        Example::

            await client.patch(("apps/v1", "Deployment"), "web", {"spec": {"replicas": 3}},
                               namespace="ns")
            await client.patch(("v1", "ConfigMap"), "x",
                               [{"op": "add", "path": "/data/b", "value": "2"}],
                               namespace="ns", patch_type="json")
        """

    @overload
    async def apply(self, obj: M, **options: Unpack[ApplyOptions]) -> M: ...
    @overload
    async def apply(
        self, obj: Mapping[str, Any], **options: Unpack[ApplyOptions]
    ) -> dict[str, Any]: ...
    async def apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        """Server-side apply ``obj`` as ``field_manager`` (or the client's
        ``ClientConfig.field_owner``); creates it if missing; typed like ``obj``.

        Only the fields set are sent: a model sends the fields set on it, not its class's
        defaults; a dict is sent as it is. Another manager's fields raise
        :class:`~kubectrl.errors.ConflictError` unless ``force=True``. ``obj`` is refreshed with
        the whole stored object: build the next apply afresh (or
        :func:`~kubectrl.client.extract` it).

        Example::

            await client.apply(desired_configmap, field_manager="my-controller")
        """

    @overload
    async def patch_merge_from(
        self, original: M, modified: M, **options: Unpack[MergeOptions]
    ) -> M: ...
    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        **options: Unpack[MergeOptions],
    ) -> dict[str, Any]: ...
    async def patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        """Send the JSON merge patch that turns ``original`` into ``modified``
        (controller-runtime's ``client.MergeFrom``); the result is typed like ``modified``.

        ``original`` is a copy taken before the change (``foo.model_copy(deep=True)``). With
        ``optimistic_lock`` the patch carries its ``resourceVersion``
        (``MergeFromWithOptimisticLock``: :class:`~kubectrl.errors.ConflictError` if the object
        changed since). An empty patch is still sent (it returns the current object).

        Example::

            original = copy.deepcopy(cm)
            cm["data"]["mode"] = "fast"
            cm = await client.patch_merge_from(original, cm, optimistic_lock=True)
        """

    async def delete(
        self, resource: KindRef, name: str, **options: Unpack[DeleteOptions]
    ) -> dict[str, Any]:
        """Delete one object. Returns the object (when finalizers or graceful deletion keep
        it around for now) or a success ``Status``. ``preconditions`` (uid and/or
        resourceVersion) make a stale delete fail with :class:`~kubectrl.errors.ConflictError`.
        Options: :class:`~kubectrl.client.DeleteOptions`.

        Example::

            await client.delete(("apps/v1", "Deployment"), "web", namespace="ns",
                                propagation_policy="Foreground")
        """

    async def delete_collection(
        self, resource: KindRef, **options: Unpack[DeleteAllOptions]
    ) -> dict[str, Any]:
        """Delete every object matching the selectors (in one namespace for namespaced
        types). Options: :class:`~kubectrl.client.DeleteAllOptions`.

        Example::

            await client.delete_collection(("v1", "ConfigMap"), namespace="ns",
                                           label_selector="app=demo")
        """


class StatusWriter(Protocol):
    """Writes of the ``status`` subresource (``client.status()``, controller-runtime's
    ``Status()``), the one way to write a status: the whole object comes back, typed like the
    body (the kind for ``patch``), and refreshes the object passed in.

    Example::

        foo.status = FooStatus(ready=True)
        await client.status().update(foo)        # foo now has the new resourceVersion
    """

    @overload
    async def update(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    async def update(
        self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]
    ) -> dict[str, Any]: ...
    async def update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """PUT the status (optimistic lock on ``metadata.resourceVersion``); the
        stored object comes back typed like ``obj``.

        Example: ``foo = await client.status().update(foo)``.
        """

    @overload
    async def patch(
        self, resource: type[M], name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> M: ...
    @overload
    async def patch(
        self, resource: ResourceRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]: ...
    async def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        """Patch the status (merge patch by default, any :class:`~kubectrl.client.PatchType`);
        the object comes back typed like ``resource``.

        Example::

            await client.status().patch(Foo, "a", {"status": {"ready": True}}, namespace="ns")
        """

    @overload
    async def apply(self, obj: M, **options: Unpack[ApplyOptions]) -> M: ...
    @overload
    async def apply(
        self, obj: Mapping[str, Any], **options: Unpack[ApplyOptions]
    ) -> dict[str, Any]: ...
    async def apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        """Server-side apply of the status (only the fields set, as :meth:`Writer.apply`);
        typed like ``obj``.

        Example: ``await client.status().apply(foo_status_only, field_manager="foo-controller")``.
        """

    @overload
    async def patch_merge_from(
        self, original: M, modified: M, **options: Unpack[MergeOptions]
    ) -> M: ...
    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        **options: Unpack[MergeOptions],
    ) -> dict[str, Any]: ...
    async def patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        """The merge patch from ``original`` to ``modified``, sent to the
        status (``MergeFrom`` on ``Status()``); typed like ``modified``.

        Example::

            original = foo.model_copy(deep=True)
            foo.status.ready = True
            foo = await client.status().patch_merge_from(original, foo)
        """


class SubResourceClient(Protocol):
    """Reads and writes of one subresource (``client.subresource("scale")``,
    controller-runtime's ``SubResource(name)``) on dicts (a ``Scale`` is not a ``Deployment``);
    ``resource`` names the parent kind (a model class too) and ``name`` the parent object."""

    async def get(self, resource: KindRef, name: str, **options: Unpack[_Scope]) -> dict[str, Any]:
        """Read the subresource of the object ``name`` of kind ``resource`` (a dict).

        Example::

            scale = await client.subresource("scale").get(V1Deployment, "web", namespace="ns")
        """

    async def update(
        self, obj: Body, *, resource: KindRef, **options: Unpack[WriteOptions]
    ) -> dict[str, Any]:
        """PUT the subresource body ``obj`` of an object of kind ``resource``
        (the object's name and namespace come from ``obj``'s metadata); returns the stored body.

        Example: ``await client.subresource("scale").update(scale, resource=V1Deployment)``.
        """

    async def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]:
        """Patch the subresource of the object ``name`` of kind ``resource``; returns the
        stored body.

        Example::

            await client.subresource("scale").patch(V1Deployment, "web", {"spec": {"replicas": 3}},
                                                    namespace="ns")
        """


class StatusClient(Protocol):
    """The subresource clients: ``status()`` and ``subresource(name)``
    (controller-runtime's ``StatusClient`` and ``SubResourceClientConstructor``)."""

    def status(self) -> StatusWriter:
        """The :class:`StatusWriter` of the ``status`` subresource (controller-runtime's
        ``Status()``): writes go through this client (with its leader fence, for the cached one).

        Example: ``foo = await client.status().update(foo)``.
        """

    def subresource(self, subresource: str) -> SubResourceClient:
        """A :class:`SubResourceClient` of ``subresource`` (``"scale"``, ...;
        controller-runtime's ``SubResource(name)``). Reads are live on every client.

        Example: ``await client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """


class KubeClient(Reader, Writer, StatusClient, Protocol):
    """A client: :class:`Reader`, :class:`Writer` and :class:`StatusClient` (controller-runtime's
    ``client.Client``). :class:`~kubectrl.client.AsyncClient` and the manager's
    :class:`~kubectrl.runtime.CachedClient` are ones; take this type to accept either.

    Example::

        async def mark_ready(client: KubeClient, foo: Foo) -> None:
            await client.status().patch(Foo, foo.metadata.name, {"status": {"ready": True}})
    """
