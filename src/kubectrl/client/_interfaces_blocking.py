"""The blocking client interfaces, generated from :mod:`kubectrl.client._interfaces` by
``scripts/unasync.py``: do not edit (``nox -s lint`` fails when the two drift).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
    "BlockingKubeClient",
    "BlockingPager",
    "BlockingReader",
    "BlockingStatusClient",
    "BlockingStatusWriter",
    "BlockingSubResourceClient",
    "BlockingWriter",
]

Body: TypeAlias = "Mapping[str, Any] | BaseModel"


class BlockingReader(Protocol):
    """Reads: ``get`` one object, ``list`` many (controller-runtime's ``client.Reader``); the
    cache-backed client reads its informers and refuses by name (``ValueError``) the options a
    cache cannot answer (``subresource``, ``resource_version``, ``limit``, ...).

    The blocking twin of :class:`Reader`, documented there.
    """

    @overload
    def get(self, resource: type[M], name: str, **options: Unpack[GetOptions]) -> M: ...
    @overload
    def get(
        self, resource: ResourceRef, name: str, **options: Unpack[GetOptions]
    ) -> dict[str, Any]: ...
    def get(self, resource: KindRef, name: str, **options: Unpack[GetOptions]) -> Any:
        """Read one object (or one of its subresources, e.g. ``"scale"``: a dict).

        The blocking twin of :meth:`Reader.get`, documented there.
        """

    @overload
    def list(self, resource: type[M], **options: Unpack[ListOptions]) -> ModelList[M]: ...
    @overload
    def list(self, resource: ResourceRef, **options: Unpack[ListOptions]) -> dict[str, Any]: ...
    def list(self, resource: KindRef, **options: Unpack[ListOptions]) -> Any:
        """List objects into one list object: ``{"apiVersion", "kind": "<Kind>List",
        "metadata": {"resourceVersion"}, "items": [...]}`` for a tuple kind, a
        :class:`~kubectrl.client.ModelList` of instances for a model class. Items carry
        ``apiVersion`` and ``kind``; watch from ``metadata.resourceVersion`` to see later changes.

        The blocking twin of :meth:`Reader.list`, documented there.
        """


class BlockingPager(Protocol):
    """Paged reads from the server: ``list_pages`` (one page at a time) and ``list_items`` (one
    object at a time).

    The blocking twin of :class:`Pager`, documented there.
    """

    @overload
    def list_pages(
        self, resource: type[M], **options: Unpack[PageOptions]
    ) -> Iterator[ModelList[M]]: ...
    @overload
    def list_pages(
        self, resource: ResourceRef, **options: Unpack[PageOptions]
    ) -> Iterator[dict[str, Any]]: ...
    def list_pages(self, resource: KindRef, **options: Unpack[PageOptions]) -> Iterator[Any]:
        """Yield list pages (``limit`` items each) following ``metadata.continue`` to the end.

        The blocking twin of :meth:`Pager.list_pages`, documented there.
        """

    @overload
    def list_items(self, resource: type[M], **options: Unpack[ListOptions]) -> Iterator[M]: ...
    @overload
    def list_items(
        self, resource: ResourceRef, **options: Unpack[ListOptions]
    ) -> Iterator[dict[str, Any]]: ...
    def list_items(self, resource: KindRef, **options: Unpack[ListOptions]) -> Iterator[Any]:
        """Yield objects one by one, fetching pages of ``limit`` (500, as client-go's pager).

        The blocking twin of :meth:`Pager.list_items`, documented there.
        """


class BlockingWriter(Protocol):
    """Writes (controller-runtime's ``client.Writer``); each answers in the body's type (a
    model instance for a model, a dict for a mapping), ``patch`` in the kind's.

    The blocking twin of :class:`Writer`, documented there.
    """

    @overload
    def create(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    def create(self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]) -> dict[str, Any]: ...
    def create(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """Create ``obj`` (its ``apiVersion``/``kind`` pick the resource); return what the
        server stored, as a dict for a dict and as an instance of ``obj``'s class for a model.
        Raises :class:`~kubectrl.errors.AlreadyExistsError` if the name is taken and
        :class:`~kubectrl.errors.InvalidError` (with ``causes``) if validation fails.

        The blocking twin of :meth:`Writer.create`, documented there.
        """

    @overload
    def update(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    def update(self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]) -> dict[str, Any]: ...
    def update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """Replace ``obj`` (PUT); returns the stored object, typed like ``obj``.

        The blocking twin of :meth:`Writer.update`, documented there.
        """

    @overload
    def patch(
        self, resource: type[M], name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> M: ...
    @overload
    def patch(
        self, resource: ResourceRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]: ...
    def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        """Patch an object: JSON patch (a list of operations), merge patch (default),
        strategic merge patch (built-in types only) or server-side apply (prefer :meth:`apply`).

        The blocking twin of :meth:`Writer.patch`, documented there.
        """

    @overload
    def apply(self, obj: M, **options: Unpack[ApplyOptions]) -> M: ...
    @overload
    def apply(self, obj: Mapping[str, Any], **options: Unpack[ApplyOptions]) -> dict[str, Any]: ...
    def apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        """Server-side apply ``obj`` as ``field_manager`` (or the client's
        ``ClientConfig.field_owner``); creates it if missing; typed like ``obj``.

        The blocking twin of :meth:`Writer.apply`, documented there.
        """

    @overload
    def patch_merge_from(self, original: M, modified: M, **options: Unpack[MergeOptions]) -> M: ...
    @overload
    def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        **options: Unpack[MergeOptions],
    ) -> dict[str, Any]: ...
    def patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        """Send the JSON merge patch that turns ``original`` into ``modified``
        (controller-runtime's ``client.MergeFrom``); the result is typed like ``modified``.

        The blocking twin of :meth:`Writer.patch_merge_from`, documented there.
        """

    def delete(
        self, resource: KindRef, name: str, **options: Unpack[DeleteOptions]
    ) -> dict[str, Any]:
        """Delete one object. Returns the object (when finalizers or graceful deletion keep
        it around for now) or a success ``Status``. ``preconditions`` (uid and/or
        resourceVersion) make a stale delete fail with :class:`~kubectrl.errors.ConflictError`.
        Options: :class:`~kubectrl.client.DeleteOptions`.

        The blocking twin of :meth:`Writer.delete`, documented there.
        """

    def delete_collection(
        self, resource: KindRef, **options: Unpack[DeleteAllOptions]
    ) -> dict[str, Any]:
        """Delete every object matching the selectors (in one namespace for namespaced
        types). Options: :class:`~kubectrl.client.DeleteAllOptions`.

        The blocking twin of :meth:`Writer.delete_collection`, documented there.
        """


class BlockingStatusWriter(Protocol):
    """Writes of the ``status`` subresource (``client.status()``, controller-runtime's
    ``Status()``), the one way to write a status: the whole object comes back, typed like the
    body (the kind for ``patch``), and refreshes the object passed in.

    The blocking twin of :class:`StatusWriter`, documented there.
    """

    @overload
    def update(self, obj: M, **options: Unpack[WriteOptions]) -> M: ...
    @overload
    def update(self, obj: Mapping[str, Any], **options: Unpack[WriteOptions]) -> dict[str, Any]: ...
    def update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        """PUT the status (optimistic lock on ``metadata.resourceVersion``); the
        stored object comes back typed like ``obj``.

        The blocking twin of :meth:`StatusWriter.update`, documented there.
        """

    @overload
    def patch(
        self, resource: type[M], name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> M: ...
    @overload
    def patch(
        self, resource: ResourceRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]: ...
    def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        """Patch the status (merge patch by default, any :class:`~kubectrl.client.PatchType`);
        the object comes back typed like ``resource``.

        The blocking twin of :meth:`StatusWriter.patch`, documented there.
        """

    @overload
    def apply(self, obj: M, **options: Unpack[ApplyOptions]) -> M: ...
    @overload
    def apply(self, obj: Mapping[str, Any], **options: Unpack[ApplyOptions]) -> dict[str, Any]: ...
    def apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        """Server-side apply of the status (only the fields set, as :meth:`BlockingWriter.apply`);
        typed like ``obj``.

        The blocking twin of :meth:`StatusWriter.apply`, documented there.
        """

    @overload
    def patch_merge_from(self, original: M, modified: M, **options: Unpack[MergeOptions]) -> M: ...
    @overload
    def patch_merge_from(
        self,
        original: Mapping[str, Any],
        modified: Mapping[str, Any],
        **options: Unpack[MergeOptions],
    ) -> dict[str, Any]: ...
    def patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        """The merge patch from ``original`` to ``modified``, sent to the
        status (``MergeFrom`` on ``Status()``); typed like ``modified``.

        The blocking twin of :meth:`StatusWriter.patch_merge_from`, documented there.
        """


class BlockingSubResourceClient(Protocol):
    """Reads and writes of one subresource (``client.subresource("scale")``,
    controller-runtime's ``SubResource(name)``) on dicts (a ``Scale`` is not a ``Deployment``);
    ``resource`` names the parent kind (a model class too) and ``name`` the parent object.

    The blocking twin of :class:`SubResourceClient`, documented there.
    """

    def get(self, resource: KindRef, name: str, **options: Unpack[_Scope]) -> dict[str, Any]:
        """Read the subresource of the object ``name`` of kind ``resource`` (a dict).

        The blocking twin of :meth:`SubResourceClient.get`, documented there.
        """

    def update(
        self, obj: Body, *, resource: KindRef, **options: Unpack[WriteOptions]
    ) -> dict[str, Any]:
        """PUT the subresource body ``obj`` of an object of kind ``resource``
        (the object's name and namespace come from ``obj``'s metadata); returns the stored body.

        The blocking twin of :meth:`SubResourceClient.update`, documented there.
        """

    def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]:
        """Patch the subresource of the object ``name`` of kind ``resource``; returns the
        stored body.

        The blocking twin of :meth:`SubResourceClient.patch`, documented there.
        """


class BlockingStatusClient(Protocol):
    """The subresource clients: ``status()`` and ``subresource(name)``
    (controller-runtime's ``BlockingStatusClient`` and ``SubResourceClientConstructor``).

    The blocking twin of :class:`StatusClient`, documented there.
    """

    def status(self) -> BlockingStatusWriter:
        """The :class:`BlockingStatusWriter` of the ``status`` subresource (controller-runtime's
        ``Status()``): writes go through this client (with its leader fence, for the cached one).

        The blocking twin of :meth:`StatusClient.status`, documented there.
        """

    def subresource(self, subresource: str) -> BlockingSubResourceClient:
        """A :class:`BlockingSubResourceClient` of ``subresource`` (``"scale"``, ...;
        controller-runtime's ``SubResource(name)``). Reads are live on every client.

        The blocking twin of :meth:`StatusClient.subresource`, documented there.
        """


class BlockingKubeClient(BlockingReader, BlockingWriter, BlockingStatusClient, Protocol):
    """A client: :class:`BlockingReader`, :class:`BlockingWriter` and :class:`BlockingStatusClient`
    (controller-runtime's
    ``client.Client``). :class:`~kubectrl.client.AsyncClient` and the manager's
    :class:`~kubectrl.runtime.CachedClient` are ones; take this type to accept either.

    The blocking twin of :class:`KubeClient`, documented there.
    """
