"""The client interfaces: every client's verbs, declared once (controller-runtime's
``client.Reader``, ``Writer``, ``StatusClient`` and ``SubResourceClient``).

Four clients implement them: :class:`~kubectrl.client.AsyncClient` (the API server),
:class:`~kubectrl.client.BlockingClient` (the same, blocking), the manager's cache-backed
:class:`~kubectrl.runtime.CachedClient` (reads from the informer cache, writes to the server,
fenced under leader election) and :class:`~kubectrl.runtime.BlockingCachedClient`. Code that
works with "a client" takes one of these protocols, so it accepts any of them:

- :class:`Reader`: ``get`` and ``list``;
- :class:`Writer`: ``create``, ``update``, ``update_status``, ``patch``, ``apply``,
  ``patch_merge_from``, ``delete``, ``delete_collection``;
- :class:`StatusClient`: ``status()`` (a :class:`StatusWriter` for the ``status``
  subresource) and ``subresource(name)`` (a :class:`SubResourceClient` for any other, e.g.
  ``"scale"``);
- :class:`KubeClient`: all of the above, "a client";
- :class:`Pager`: ``list_pages`` and ``list_items`` (the API server's paged lists;
  :class:`~kubectrl.client.AsyncClient` and :class:`~kubectrl.client.BlockingClient` only).

The typed verbs are overloaded: a model class in (``V1Deployment``, a custom resource class)
gives instances of it out, a tuple kind / GVK / GVR / :class:`~kubectrl.client.APIResource`
gives dicts; a body is answered in its own type. Every option is a keyword spelled out here, so
a type checker refuses a misspelled one on any client.

Each protocol has a blocking twin, ``Blocking<Name>``, with the same parameters, defaults and
overloads, returning the result instead of an awaitable (and ``Iterator`` for
``AsyncIterator``). Python's type system cannot derive an overloaded blocking signature from an
``async def`` one, so the twins are the one written copy; a test compares the two declarations
parameter by parameter.

Example::

    async def ensure_labels(client: KubeClient, name: str) -> None:
        cm = await client.get(V1ConfigMap, name, namespace="ns")      # a V1ConfigMap
        await client.patch(V1ConfigMap, name, {"metadata": {"labels": {"a": "b"}}},
                           namespace="ns")

    def ensure_labels_blocking(client: BlockingKubeClient, name: str) -> None:
        client.patch(("v1", "ConfigMap"), name, {"metadata": {"labels": {"a": "b"}}},
                     namespace="ns")
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, overload

from kubectrl.client._types import KindRef, M, ModelList, PatchType, Preconditions, ResourceRef
from kubectrl.client._write_options import FieldValidation
from kubectrl.labels import LabelSelectorLike

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "BlockingKubeClient",
    "BlockingPager",
    "BlockingReader",
    "BlockingStatusClient",
    "BlockingStatusWriter",
    "BlockingSubResourceClient",
    "BlockingWriter",
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
        'Read one object (or one of its subresources, e.g. ``"scale"`` or ``"status"``).'
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


# ---------------------------------------------------------------------------------- asyncio


class Reader(Protocol):
    """Reads: ``get`` one object, ``list`` many (controller-runtime's ``client.Reader``).

    On :class:`~kubectrl.client.AsyncClient` both ask the server; on the cache-backed client
    they read the informer cache, which refuses the options a cache cannot answer
    (``subresource``, ``resource_version``, ``field_selector``, ``limit``, ...) with a
    ``ValueError`` naming the option.
    """

    @overload
    async def get(
        self,
        resource: type[M],
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> M: ...
    @overload
    async def get(
        self,
        resource: ResourceRef,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> dict[str, Any]: ...
    async def get(
        self,
        resource: KindRef,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> Any:
        """Read one object (or one of its subresources, e.g. ``"scale"`` or ``"status"``).

        With a model class, returns an instance of it (only the ``"status"`` subresource has the
        object's shape; read others with a tuple kind); with a tuple kind, GVK, GVR or
        :class:`~kubectrl.client.APIResource`, a dict. Raises
        :class:`~kubectrl.errors.NotFoundError` when it does not exist and
        :class:`~kubectrl.errors.ModelValidationError` when the object does not fit the model.
        ``resource_version`` reads at that version (``"0"``: any version the server has).

        The cache-backed client reads its informer cache and refuses ``subresource`` and
        ``resource_version`` (``ValueError``; read those with ``client.reader``).

        Example::

            cm = await client.get(("v1", "ConfigMap"), "settings", namespace="default")
            deployment = await client.get(V1Deployment, "web", namespace="default")
        """

    @overload
    async def list(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> ModelList[M]: ...
    @overload
    async def list(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]: ...
    async def list(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Any:
        """List objects into one list object: ``{"apiVersion", "kind": "<Kind>List",
        "metadata": {"resourceVersion"}, "items": [...]}`` for a tuple kind, a
        :class:`~kubectrl.client.ModelList` of instances for a model class. Items carry
        ``apiVersion`` and ``kind``; watch from ``metadata.resourceVersion`` to see later changes.

        ``namespace=None`` lists every namespace. ``label_selector`` here and in every other
        method takes any :data:`~kubectrl.labels.LabelSelectorLike`: a string
        (``"app=web,tier in (a,b)"``), a ``{label: value}`` mapping, a ``metav1.LabelSelector``
        dict with ``matchLabels`` / ``matchExpressions``, or a
        :class:`~kubectrl.labels.LabelSelector`.

        ``matching_fields`` selects by fields with exact values (controller-runtime's
        ``client.MatchingFields``): on the API server's clients it is sent as the field selector
        ``k=v,k2=v2`` (values escaped), so it takes the fields the server supports for the kind
        (``metadata.name``, ``status.phase`` for pods, ...); on the cache-backed client it is served
        by a field index registered with ``manager.field_indexer.index_field(kind, field, fn)``,
        exactly one field. ``matching_fields`` and ``field_selector`` together are a ``ValueError``.

        On the API server's clients the list follows pages of ``limit`` items to the end (every
        page of one snapshot); ``metadata_only=True`` asks for ``PartialObjectMetadata`` items
        (tuple kinds only). The cache-backed client refuses ``field_selector``, ``limit``,
        ``resource_version``, ``resource_version_match``, ``timeout_seconds`` and
        ``metadata_only`` (``ValueError``).

        Example::

            cms = await client.list(("v1", "ConfigMap"), namespace="ns", label_selector="app=web")
            names = [cm["metadata"]["name"] for cm in cms["items"]]
            typed = await client.list(V1ConfigMap, namespace="ns")
            names = [cm.metadata.name for cm in typed.items]
            jobs = await client.list(V1Job, namespace="ns", matching_fields={"metadata.name": "x"})
        """


class Pager(Protocol):
    """Paged reads from the server: ``list_pages`` (one page at a time) and ``list_items`` (one
    object at a time)."""

    @overload
    def list_pages(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[ModelList[M]]: ...
    @overload
    def list_pages(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[dict[str, Any]]: ...
    def list_pages(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[Any]:
        """Yield list pages (``limit`` items each) following ``metadata.continue`` to the end.

        Every page of one listing comes from the same snapshot (the first page's resourceVersion). A
        continue token older than etcd's compaction raises :class:`~kubectrl.errors.ExpiredError`:
        start again with a full list. Items carry ``apiVersion`` and ``kind``.
        ``metadata_only=True`` asks for ``PartialObjectMetadata`` items (``meta.k8s.io/v1``): names,
        labels, owners, but no spec or status. With a model class, each page is a
        :class:`~kubectrl.client.ModelList` of instances of it (``metadata_only`` is then refused:
        the items would not be that class).

        ``shard_selector`` is sent as the ``shardSelector`` parameter (a
        :class:`kubectrl.cache.ShardSelector` as text: ``shardRange(object.metadata.uid, '0x...',
        '0x...')``); a kube-apiserver with the ``ShardedListAndWatch`` gate returns only that
        shard and echoes it in ``metadata.shardInfo``, any other server ignores it and returns
        everything (the informers check the echo and filter by themselves).

        Example::

            async for page in client.list_pages(("v1", "ConfigMap"), namespace="ns", limit=500):
                handle(page["items"])
        """

    @overload
    def list_items(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[M]: ...
    @overload
    def list_items(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[dict[str, Any]]: ...
    def list_items(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> AsyncIterator[Any]:
        """Yield objects one by one, fetching pages of ``limit`` (500, as client-go's pager).

        With a model class, yields instances of it.

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
    ``obj`` of ``create``, ``update`` (no subresource or ``"status"``), ``update_status``,
    ``apply``; ``modified`` of ``patch_merge_from``; ``patch``'s body when it is an object of
    the kind (it names the answer's ``apiVersion`` and ``kind``; a partial patch or a JSON
    patch is left alone). Left as is: a read-only ``Mapping`` and an instance of a frozen model.

    ``update_status(obj)`` is ``status().update(obj)``; ``patch_merge_from(original,
    modified)`` sends the merge patch between two versions of an object (``client.MergeFrom``).

    Every write takes ``dry_run=True`` (``dryRun=All``: validated, defaulted and admitted, not
    stored) and, but the deletes, ``field_validation=`` ``"Strict"``, ``"Warn"`` or
    ``"Ignore"`` (the API's ``fieldValidation`` for fields the kind does not declare; ``None``
    leaves the server's default, ``Warn``).
    """

    @overload
    async def create(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def create(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Create ``obj`` (its ``apiVersion``/``kind`` pick the resource); return what the
        server stored, as a dict for a dict and as an instance of ``obj``'s class for a model.
        Raises :class:`~kubectrl.errors.AlreadyExistsError` if the name is taken and
        :class:`~kubectrl.errors.InvalidError` (with ``causes``) if validation fails.

        Example::

            await client.create({"apiVersion": "v1", "kind": "Namespace",
                                 "metadata": {"name": "demo"}})
        """

    @overload
    async def update(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Replace ``obj`` (PUT); returns the stored object, typed like ``obj``.

        A model instance built by a typed read keeps the fields its class does not know, so the
        update does not drop them (:func:`kubectrl.kinds.to_dict`). With
        ``metadata.resourceVersion`` set, a concurrent change makes it fail with
        :class:`~kubectrl.errors.ConflictError` (optimistic locking).

        ``subresource="status"`` writes only the status. For ``"scale"`` pass the parent's
        ``resource=`` (the body is an ``autoscaling/v1`` Scale).

        Example::

            cm["data"]["a"] = "2"
            cm = await client.update(cm)
        """

    @overload
    async def update_status(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def update_status(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def update_status(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """``status().update(obj)``: PUT the status, typed like ``obj``.

        Example: ``foo = await client.update_status(foo)``.
        """

    @overload
    async def patch(
        self,
        resource: type[M],
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Patch an object: JSON patch (a list of operations), merge patch (default),
        strategic merge patch (built-in types only) or server-side apply (prefer :meth:`apply`).

        ``patch`` may be a model instance (serialized by :func:`kubectrl.kinds.to_dict`). With a
        model class as ``resource`` the result is an instance of it (``"status"`` or no
        subresource; other subresources come back as dicts).

        Example::

            await client.patch(("apps/v1", "Deployment"), "web", {"spec": {"replicas": 3}},
                               namespace="ns")
            await client.patch(("v1", "ConfigMap"), "x",
                               [{"op": "add", "path": "/data/b", "value": "2"}],
                               namespace="ns", patch_type="json")
        """

    @overload
    async def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def apply(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Server-side apply ``obj`` as ``field_manager``; creates it if missing. Returns
        the object typed like ``obj`` (a model instance for a model).

        Fields owned by another manager with a different value raise
        :class:`~kubectrl.errors.ConflictError` unless ``force=True`` takes them over. ``obj``
        should hold only the fields this manager cares about (and no ``resourceVersion``); it is
        refreshed with the whole stored object, so build the body afresh for the next apply.

        Example::

            await client.apply({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": "x", "namespace": "ns"},
                                "data": {"owner": "me"}}, field_manager="my-controller")
        """

    @overload
    async def patch_merge_from(
        self,
        original: M,
        modified: M,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Send the JSON merge patch that turns ``original`` into ``modified``
        (controller-runtime's ``client.MergeFrom``); the result is typed like ``modified``.

        Both may be model instances (``original`` a copy taken before the change, e.g.
        ``foo.model_copy(deep=True)``). With ``optimistic_lock`` the patch carries ``original``'s
        ``metadata.resourceVersion``, so the server refuses it with
        :class:`~kubectrl.errors.ConflictError` if the object changed since it was read
        (``MergeFromWithOptimisticLock``). Without it only the changed fields are sent and the patch
        always applies. An empty patch is still sent (it returns the current object).

        Example::

            original = copy.deepcopy(cm)
            cm["data"]["mode"] = "fast"
            cm = await client.patch_merge_from(original, cm, optimistic_lock=True)
        """

    async def delete(
        self,
        resource: KindRef,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete one object. Returns the object (when finalizers or graceful deletion keep
        it around for now) or a success ``Status``.

        ``propagation_policy``: ``"Foreground"``, ``"Background"`` or ``"Orphan"``.
        ``preconditions`` (uid and/or resourceVersion) make a stale delete fail with
        :class:`~kubectrl.errors.ConflictError`.

        Example::

            await client.delete(("apps/v1", "Deployment"), "web", namespace="ns",
                                propagation_policy="Foreground")
        """

    async def delete_collection(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete every object matching the selectors (in one namespace for
        namespaced types).

        Example::

            await client.delete_collection(("v1", "ConfigMap"), namespace="ns",
                                           label_selector="app=demo")
        """


class StatusWriter(Protocol):
    """Writes of the ``status`` subresource (``client.status()``, controller-runtime's
    ``SubResourceWriter`` from ``Status()``); results are the whole object, typed like the
    body (``update``, ``apply``, ``patch_merge_from``) or the kind (``patch``). The object
    passed in is refreshed with it too, as :class:`Writer`'s writes do.

    Example::

        foo.status = FooStatus(ready=True)
        foo = await client.status().update(foo)
    """

    @overload
    async def update(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """PUT the status (optimistic lock on ``metadata.resourceVersion``); the
        stored object comes back typed like ``obj``.

        Example: ``foo = await client.status().update(foo)``.
        """

    @overload
    async def patch(
        self,
        resource: type[M],
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Patch the status (merge patch by default, any :class:`~kubectrl.client.PatchType`);
        the object comes back typed like ``resource``.

        Example::

            await client.status().patch(Foo, "a", {"status": {"ready": True}}, namespace="ns")
        """

    @overload
    async def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def apply(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Server-side apply of the status as ``field_manager``; typed like ``obj``.

        Example: ``await client.status().apply(foo_status_only, field_manager="foo-controller")``.
        """

    @overload
    async def patch_merge_from(
        self,
        original: M,
        modified: M,
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    async def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    async def patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
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

    async def get(
        self, resource: KindRef, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]:
        """Read the subresource of the object ``name`` of kind ``resource`` (a dict).

        Example::

            scale = await client.subresource("scale").get(V1Deployment, "web", namespace="ns")
        """

    async def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        resource: KindRef,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]:
        """PUT the subresource body ``obj`` of an object of kind ``resource``
        (the object's name and namespace come from ``obj``'s metadata); returns the stored body.

        Example: ``await client.subresource("scale").update(scale, resource=V1Deployment)``.
        """

    async def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
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


# ---------------------------------------------------------------------------------- blocking
# The blocking twins: the same declarations without async (tests/unit/client checks that).


class BlockingReader(Protocol):
    """Blocking :class:`Reader`."""

    @overload
    def get(
        self,
        resource: type[M],
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> M: ...
    @overload
    def get(
        self,
        resource: ResourceRef,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> dict[str, Any]: ...
    def get(
        self,
        resource: KindRef,
        name: str,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource_version: str | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Reader.get`."""

    @overload
    def list(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> ModelList[M]: ...
    @overload
    def list(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]: ...
    def list(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        matching_fields: Mapping[str, str] | None = None,
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Reader.list`."""


class BlockingPager(Protocol):
    """Blocking :class:`Pager`: plain iterators."""

    @overload
    def list_pages(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Iterator[ModelList[M]]: ...
    @overload
    def list_pages(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Iterator[dict[str, Any]]: ...
    def list_pages(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        shard_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Iterator[Any]:
        """Blocking :meth:`~kubectrl.client.Pager.list_pages`."""

    @overload
    def list_items(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> Iterator[M]: ...
    @overload
    def list_items(
        self,
        resource: ResourceRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> Iterator[dict[str, Any]]: ...
    def list_items(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        limit: int | None = 500,
    ) -> Iterator[Any]:
        """Blocking :meth:`~kubectrl.client.Pager.list_items`."""


class BlockingWriter(Protocol):
    """Blocking :class:`Writer`."""

    @overload
    def create(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def create(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.create`."""

    @overload
    def update(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        subresource: str = "",
        resource: KindRef | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.update`."""

    @overload
    def update_status(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def update_status(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def update_status(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.update_status`."""

    @overload
    def patch(
        self,
        resource: type[M],
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        subresource: str = "",
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.patch`."""

    @overload
    def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def apply(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.apply`."""

    @overload
    def patch_merge_from(
        self,
        original: M,
        modified: M,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.Writer.patch_merge_from`."""

    def delete(
        self,
        resource: KindRef,
        name: str,
        *,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Preconditions | Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Blocking :meth:`~kubectrl.client.Writer.delete`."""

    def delete_collection(
        self,
        resource: KindRef,
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Blocking :meth:`~kubectrl.client.Writer.delete_collection`."""


class BlockingStatusWriter(Protocol):
    """Blocking :class:`StatusWriter` (``blocking_client.status()``)."""

    @overload
    def update(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.StatusWriter.update`."""

    @overload
    def patch(
        self,
        resource: type[M],
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.StatusWriter.patch`."""

    @overload
    def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def apply(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.StatusWriter.apply`."""

    @overload
    def patch_merge_from(
        self,
        original: M,
        modified: M,
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> M: ...
    @overload
    def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]: ...
    def patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Blocking :meth:`~kubectrl.client.StatusWriter.patch_merge_from`."""


class BlockingSubResourceClient(Protocol):
    """Blocking :class:`SubResourceClient` (``blocking_client.subresource("scale")``)."""

    def get(self, resource: KindRef, name: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Blocking :meth:`~kubectrl.client.SubResourceClient.get`."""

    def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        resource: KindRef,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]:
        """Blocking :meth:`~kubectrl.client.SubResourceClient.update`."""

    def patch(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType | str = PatchType.MERGE,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> dict[str, Any]:
        """Blocking :meth:`~kubectrl.client.SubResourceClient.patch`."""


class BlockingStatusClient(Protocol):
    """Blocking :class:`StatusClient`."""

    def status(self) -> BlockingStatusWriter:
        """Blocking :meth:`~kubectrl.client.StatusClient.status`."""

    def subresource(self, subresource: str) -> BlockingSubResourceClient:
        """Blocking :meth:`~kubectrl.client.StatusClient.subresource`."""


class BlockingKubeClient(BlockingReader, BlockingWriter, BlockingStatusClient, Protocol):
    """Blocking :class:`KubeClient`: :class:`~kubectrl.client.BlockingClient` and the
    manager's :class:`~kubectrl.runtime.BlockingCachedClient` are ones.

    Example::

        def reconcile_with(client: BlockingKubeClient, request: Request) -> None:
            foo = client.get(Foo, request.name, namespace=request.namespace)
            client.status().patch(Foo, foo.metadata.name, {"status": {"ready": True}},
                                  namespace=request.namespace)
    """
