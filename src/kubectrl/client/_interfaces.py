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

from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, overload

from kubectrl.client._types import KindRef, M, ModelList, PatchType, Preconditions, ResourceRef
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
]

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
    @overload
    async def list(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
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
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]: ...


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
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[dict[str, Any]]: ...
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


class Writer(Protocol):
    """Writes (controller-runtime's ``client.Writer``); each answers in the body's type (a
    model instance for a model, a dict for a mapping), ``patch`` in the kind's.

    ``update_status(obj)`` is ``status().update(obj)``; ``patch_merge_from(original,
    modified)`` sends the merge patch between two versions of an object (``client.MergeFrom``).
    """

    @overload
    async def create(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> M: ...
    @overload
    async def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    @overload
    async def update_status(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> M: ...
    @overload
    async def update_status(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    @overload
    async def patch_merge_from(
        self,
        original: M,
        modified: M,
        *,
        optimistic_lock: bool = False,
        subresource: str = "",
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...


class StatusWriter(Protocol):
    """Writes of the ``status`` subresource (``client.status()``, controller-runtime's
    ``SubResourceWriter`` from ``Status()``); results are the whole object, typed like the
    body (``update``, ``apply``, ``patch_merge_from``) or the kind (``patch``).

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
    ) -> M: ...
    @overload
    async def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    @overload
    async def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    async def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        resource: KindRef,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
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
    ) -> dict[str, Any]: ...


class StatusClient(Protocol):
    """The subresource clients: ``status()`` and ``subresource(name)``
    (controller-runtime's ``StatusClient`` and ``SubResourceClientConstructor``)."""

    def status(self) -> StatusWriter: ...
    def subresource(self, subresource: str) -> SubResourceClient: ...


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
    @overload
    def list(
        self,
        resource: type[M],
        *,
        namespace: str | None = None,
        label_selector: LabelSelectorLike = None,
        field_selector: str | None = None,
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
        limit: int | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> dict[str, Any]: ...


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
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout_seconds: int | None = None,
        metadata_only: bool = False,
    ) -> Iterator[dict[str, Any]]: ...
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
    ) -> M: ...
    @overload
    def create(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    @overload
    def update_status(
        self,
        obj: M,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> M: ...
    @overload
    def update_status(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...


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
    ) -> M: ...
    @overload
    def update(
        self,
        obj: Mapping[str, Any],
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]: ...
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
    ) -> dict[str, Any]: ...
    @overload
    def apply(
        self,
        obj: M,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
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
    ) -> dict[str, Any]: ...
    @overload
    def patch_merge_from(self, original: M, modified: M, *, optimistic_lock: bool = False) -> M: ...
    @overload
    def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        *,
        optimistic_lock: bool = False,
    ) -> dict[str, Any]: ...


class BlockingSubResourceClient(Protocol):
    """Blocking :class:`SubResourceClient` (``blocking_client.subresource("scale")``)."""

    def get(
        self, resource: KindRef, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]: ...
    def update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        resource: KindRef,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
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
    ) -> dict[str, Any]: ...


class BlockingStatusClient(Protocol):
    """Blocking :class:`StatusClient`."""

    def status(self) -> BlockingStatusWriter: ...
    def subresource(self, subresource: str) -> BlockingSubResourceClient: ...


class BlockingKubeClient(BlockingReader, BlockingWriter, BlockingStatusClient, Protocol):
    """Blocking :class:`KubeClient`: :class:`~kubectrl.client.BlockingClient` and the
    manager's :class:`~kubectrl.runtime.BlockingCachedClient` are ones.

    Example::

        def reconcile_with(client: BlockingKubeClient, request: Request) -> None:
            foo = client.get(Foo, request.name, namespace=request.namespace)
            client.status().patch(Foo, foo.metadata.name, {"status": {"ready": True}},
                                  namespace=request.namespace)
    """
