"""The client interfaces: every client's verbs, declared once (controller-runtime's
``client.Reader``, ``Writer``, ``StatusClient`` and ``SubResourceClient``).

Four clients implement them: :class:`~kubectrl.client.AsyncClient` (the API server),
:class:`~kubectrl.client.BlockingClient` (the same, blocking), the manager's cache-backed
:class:`~kubectrl.runtime.CachedClient` (reads from the informer cache, writes to the server,
fenced under leader election) and :class:`~kubectrl.runtime.BlockingCachedClient`. Code that
works with "a client" takes one of these protocols, so it accepts any of them:

- :class:`Reader`: ``get`` and ``list``;
- :class:`Writer`: ``create``, ``update``, ``patch``, ``apply``, ``patch_merge_from``,
  ``delete``, ``delete_collection``;
- :class:`StatusClient`: ``status()`` (a :class:`StatusWriter`, the one way to write the
  ``status`` subresource) and ``subresource(name)`` (a :class:`SubResourceClient` for any
  other, e.g. ``"scale"``);
- :class:`KubeClient`: all of the above, "a client";
- :class:`Pager`: ``list_pages`` and ``list_items`` (the API server's paged lists;
  :class:`~kubectrl.client.AsyncClient` and :class:`~kubectrl.client.BlockingClient` only).

A verb's options travel as one typed bundle (:mod:`kubectrl.client._options`: ``GetOptions``,
``ListOptions``, ``WriteOptions``, ``PatchOptions``, ...), so a type checker refuses a misspelt
option on any client. The typed verbs are overloaded: a model class in (``V1Deployment``, a
custom resource class) gives instances of it out; a tuple kind / GVK / GVR /
:class:`~kubectrl.client.APIResource` gives dicts; a body is answered in its own type.

Each protocol has a blocking twin, ``Blocking<Name>``, in
:mod:`kubectrl.client._interfaces_blocking`: generated from this file by
``scripts/unasync.py`` (``async def`` becomes ``def``, ``AsyncIterator`` ``Iterator``), and
``nox -s lint`` fails when the two drift (``scripts/unasync.py --check``).

Example::

    async def ensure_labels(client: KubeClient, name: str) -> None:
        cm = await client.get(V1ConfigMap, name, namespace="ns")      # a V1ConfigMap
        await client.patch(V1ConfigMap, name, {"metadata": {"labels": {"a": "b"}}},
                           namespace="ns")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, TypeVar, overload

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
    "documented_by",
]

F = TypeVar("F", bound=Callable[..., Any])
#: A body: a mapping or a model instance.
Body: TypeAlias = "Mapping[str, Any] | BaseModel"


def documented_by(declaration: Callable[..., Any]) -> Callable[[F], F]:
    """Give an implementation the docstring and public name of the protocol method it implements.

    A verb's documentation is written once, on its protocol declaration; a client's private
    implementation (``AsyncClient._get``, bound to the public ``get``) takes it from there, and
    is named after the verb (``AsyncClient.get``), so ``help(AsyncClient.get)`` and the blocking
    twins derived from it show the verb and its text.

    Example::

        >>> class Impl:
        ...     @documented_by(Reader.get)
        ...     async def _get(self, *args: Any, **kwargs: Any) -> Any: ...
        >>> Impl._get.__doc__.splitlines()[0]
        'Read one object (or one of its subresources, e.g. ``"scale"``: a dict).'
    """

    def decorate(implementation: F) -> F:
        doc = declaration.__doc__
        if not doc:
            raise TypeError(f"{declaration.__qualname__} has no docstring to document with")
        implementation.__doc__ = doc
        owner = implementation.__qualname__.rpartition(".")[0]
        implementation.__name__ = declaration.__name__
        implementation.__qualname__ = (
            f"{owner}.{declaration.__name__}" if owner else declaration.__name__
        )
        return implementation

    return decorate


# unasync: the protocols below are the source of kubectrl.client._interfaces_blocking.


class Reader(Protocol):
    """Reads: ``get`` one object, ``list`` many (controller-runtime's ``client.Reader``).

    On :class:`~kubectrl.client.AsyncClient` both ask the server; on the cache-backed client
    they read the informer cache, which refuses the options a cache cannot answer
    (``subresource``, ``resource_version``, ``field_selector``, ``limit``, ...) with a
    ``ValueError`` naming the option.
    """

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

        Options: :class:`~kubectrl.client.ListOptions` (no ``namespace``: every namespace).
        On the API server's clients the list follows pages of ``limit`` items to the end (every
        page of one snapshot) and ``matching_fields`` is sent as a field selector; the
        cache-backed client serves ``matching_fields`` from a field index registered with
        ``manager.field_indexer.index_field(kind, field, fn)`` (exactly one field) and refuses
        the options a cache cannot answer (``ValueError``).

        Example::

            cms = await client.list(("v1", "ConfigMap"), namespace="ns", label_selector="app=web")
            names = [cm["metadata"]["name"] for cm in cms["items"]]
            typed = await client.list(V1ConfigMap, namespace="ns")
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

        Every page of one listing comes from the same snapshot (the first page's resourceVersion). A
        continue token older than etcd's compaction raises :class:`~kubectrl.errors.ExpiredError`:
        start again with a full list. With a model class, each page is a
        :class:`~kubectrl.client.ModelList` (``metadata_only`` is then refused: the items would
        not be that class). A kube-apiserver with the ``ShardedListAndWatch`` gate returns only
        the ``shard_selector``'s shard and echoes it in ``metadata.shardInfo``; any other server
        returns everything (the informers check the echo and filter by themselves). Options:
        :class:`~kubectrl.client.PageOptions`.

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
    answer (metadata such as ``resourceVersion``, spec and status): a dict is cleared and
    refilled, a model instance gets the answer's fields, so the same variable can be written
    again without a conflict. The answer is still returned, as another object. Refreshed:
    ``obj`` of ``create``, ``update`` and ``apply``; ``modified`` of ``patch_merge_from``;
    ``patch``'s body when it is an object of the kind (it names the answer's ``apiVersion`` and
    ``kind``; a partial patch or a JSON patch is left alone). Left as is: a read-only
    ``Mapping`` and an instance of a frozen model.

    Writes take the objects themselves; the ``status`` subresource is written through
    ``status()`` (:class:`StatusWriter`), any other through ``subresource(name)``. Every write
    takes ``dry_run=True`` and names its field manager (``field_manager=``, default the
    client's ``ClientConfig.field_owner``); the options are
    :class:`~kubectrl.client.WriteOptions` and the bundles built on them.
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

        A model instance built by a typed read keeps the fields its class does not know, so the
        update does not drop them (:func:`kubectrl.kinds.to_dict`). With
        ``metadata.resourceVersion`` set, a concurrent change makes it fail with
        :class:`~kubectrl.errors.ConflictError` (optimistic locking). The server ignores a
        status in the body of a kind with a status subresource: write it with
        ``status().update(obj)``.

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
        """Server-side apply ``obj`` as ``field_manager`` (default: the client's
        ``ClientConfig.field_owner``; one of the two is required); creates it if missing.
        Returns the object typed like ``obj``.

        Only the fields the caller set are sent: a model instance sends the fields set on it
        (not its class's defaults), so the manager owns no field it did not mean to; a dict is
        sent as it is. Fields owned by another manager with a different value raise
        :class:`~kubectrl.errors.ConflictError` unless ``force=True`` takes them over. ``obj``
        is refreshed with the whole stored object, so build the body afresh (or
        :func:`~kubectrl.client.extract` this manager's fields) for the next apply.

        Example::

            await client.apply({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "x", "namespace": "ns"},
                                "data": {"owner": "me"}}, field_manager="my-controller")
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

        Both may be model instances (``original`` a copy taken before the change, e.g.
        ``foo.model_copy(deep=True)``). With ``optimistic_lock`` the patch carries ``original``'s
        ``metadata.resourceVersion``, so the server refuses it with
        :class:`~kubectrl.errors.ConflictError` if the object changed since it was read
        (``MergeFromWithOptimisticLock``). Without it only the changed fields are sent and the
        patch always applies. An empty patch is still sent (it returns the current object).

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
    ``SubResourceWriter`` from ``Status()``), the one way to write a status; results are the
    whole object, typed like the body (``update``, ``apply``, ``patch_merge_from``) or the
    kind (``patch``). The object passed in is refreshed with it too, as :class:`Writer`'s
    writes do.

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
    controller-runtime's ``SubResource(name)``). Subresources have their own shapes (a
    ``Scale``, an ``Eviction``), so bodies and results are dicts; ``resource`` names the parent
    kind (a model class too) and ``name`` the parent object.

    Example::

        scale = await client.subresource("scale").get(V1Deployment, "web", namespace="ns")
        scale["spec"]["replicas"] = 3
        await client.subresource("scale").update(scale, resource=V1Deployment)
    """

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

        async def reconcile_with(client: KubeClient, request: Request) -> None:
            foo = await client.get(Foo, request.name, namespace=request.namespace)
            await client.status().patch(Foo, foo.metadata.name, {"status": {"ready": True}},
                                        namespace=request.namespace)
    """
