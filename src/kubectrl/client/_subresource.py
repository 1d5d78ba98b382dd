"""The subresource clients every client hands out: ``status()`` and ``subresource(name)``.

One implementation for all four clients: :class:`ClientStatusWriter` and
:class:`ClientSubResourceClient` write through the client that made them (its
:class:`SubresourceWrites`: update, patch and apply of a subresource), so what that client does
to a write (the cached client's leader fence, its errors) applies to them too. They are the only
way to write a subresource: the client's own verbs write the object. The blocking ones are
derived from them (:mod:`kubectrl._internal.blocking`) and run on the blocking client's loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from typing_extensions import Unpack

from kubectrl import kinds as _kinds
from kubectrl._internal.blocking import BlockingFacade, Portal, blocking
from kubectrl.client._documented import documented_by
from kubectrl.client._interfaces import (
    Body,
    Reader,
    StatusWriter,
    SubResourceClient,
)
from kubectrl.client._interfaces_blocking import BlockingStatusWriter, BlockingSubResourceClient
from kubectrl.client._merge import send_merge_from
from kubectrl.client._models import to_dict
from kubectrl.client._options import (
    ApplyOptions,
    MergeOptions,
    PatchOptions,
    WriteOptions,
    _Scope,
    check_options,
)
from kubectrl.client._paths import segment_problems
from kubectrl.client._types import KindRef, ResourceRef
from kubectrl.errors import InvalidPathSegmentError

__all__ = [
    "BlockingClientStatusWriter",
    "BlockingClientSubResourceClient",
    "ClientStatusWriter",
    "ClientSubResourceClient",
    "SubresourceWrites",
]

STATUS = "status"


class SubresourceWrites(Protocol):
    """The writes of a subresource that a client gives its status writer and subresource
    clients (:class:`~kubectrl.client.AsyncClient` and the cache-backed client, which fences
    them): options already checked, ``subresource`` named."""

    async def _put(
        self,
        obj: Body,
        options: Mapping[str, Any],
        *,
        subresource: str = "",
        resource: KindRef | None = None,
    ) -> Any: ...

    async def _patch_at(
        self,
        resource: KindRef,
        name: str,
        patch: Any,
        options: Mapping[str, Any],
        *,
        subresource: str = "",
    ) -> Any: ...

    async def _apply_at(
        self, obj: Body, options: Mapping[str, Any], *, subresource: str = ""
    ) -> Any: ...


class ClientStatusWriter(StatusWriter):
    """The :class:`~kubectrl.client.StatusWriter` of a client (``client.status()``).

    Example::

        foo.status = FooStatus(ready=True)
        foo = await client.status().update(foo)
    """

    def __init__(self, writer: SubresourceWrites) -> None:
        self._writer = writer

    @documented_by(StatusWriter.update)
    async def _update(self, obj: Body, **options: Unpack[WriteOptions]) -> Any:
        check_options("status().update", options, WriteOptions)
        return await self._writer._put(obj, options, subresource=STATUS)

    @documented_by(StatusWriter.patch)
    async def _patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> Any:
        check_options("status().patch", options, PatchOptions)
        return await self._writer._patch_at(resource, name, patch, options, subresource=STATUS)

    @documented_by(StatusWriter.apply)
    async def _apply(self, obj: Body, **options: Unpack[ApplyOptions]) -> Any:
        check_options("status().apply", options, ApplyOptions)
        return await self._writer._apply_at(obj, options, subresource=STATUS)

    @documented_by(StatusWriter.patch_merge_from)
    async def _patch_merge_from(
        self, original: Any, modified: Any, **options: Unpack[MergeOptions]
    ) -> Any:
        check_options("status().patch_merge_from", options, MergeOptions)
        return await send_merge_from(
            self._writer._patch_at, original, modified, options, subresource=STATUS
        )

    # The protocol's overloads are the public signatures (mypy); the implementations above are
    # bound to them at run time, and checked against them below (_ClientStatusWriterConforms).
    if TYPE_CHECKING:
        update = StatusWriter.update
        patch = StatusWriter.patch
        apply = StatusWriter.apply
        patch_merge_from = StatusWriter.patch_merge_from
    else:
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from

    def __repr__(self) -> str:
        return f"<status writer of {self._writer!r}>"


def _parent(resource: KindRef) -> ResourceRef:
    # A subresource is not the parent's model: name the parent by its GVK, so results are dicts.
    if isinstance(resource, type):
        return _kinds.kind_info(resource).gvk
    return resource


class ClientSubResourceClient(SubResourceClient):
    """The :class:`~kubectrl.client.SubResourceClient` of a client
    (``client.subresource("scale")``): reads through ``reader``, writes through ``writer``;
    bodies and results are dicts.

    Example::

        scales = client.subresource("scale")
        scale = await scales.get(("apps/v1", "Deployment"), "web", namespace="ns")
    """

    def __init__(self, reader: Reader, writer: SubresourceWrites, subresource: str) -> None:
        problems = (
            segment_problems(subresource)
            if isinstance(subresource, str) and subresource
            else ["may not be empty"]
        )
        if problems:
            raise InvalidPathSegmentError(
                "subresource",
                subresource,
                [*problems, "a subresource name is one path segment"],
                verb="subresource",
            )
        self._reader = reader
        self._writer = writer
        self.subresource = subresource

    async def get(self, resource: KindRef, name: str, **options: Unpack[_Scope]) -> dict[str, Any]:
        """Read the subresource of ``name`` (an object of kind ``resource``).

        Example: ``await client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """
        check_options(f"subresource({self.subresource!r}).get", options, _Scope)
        return await self._reader.get(
            _parent(resource), name, subresource=self.subresource, **options
        )

    async def update(
        self, obj: Body, *, resource: KindRef, **options: Unpack[WriteOptions]
    ) -> dict[str, Any]:
        """PUT ``obj`` (the subresource's body, e.g. a ``Scale`` named like its parent) to the
        subresource of the ``resource`` object named in ``obj``'s metadata.

        Example::

            scale["spec"]["replicas"] = 3
            await client.subresource("scale").update(scale, resource=V1Deployment)
        """
        check_options(f"subresource({self.subresource!r}).update", options, WriteOptions)
        answer: dict[str, Any] = await self._writer._put(
            to_dict(obj), options, subresource=self.subresource, resource=_parent(resource)
        )
        return answer

    async def patch(
        self, resource: KindRef, name: str, patch: Any, **options: Unpack[PatchOptions]
    ) -> dict[str, Any]:
        """Patch the subresource of ``name`` (a merge patch unless ``patch_type=`` says
        otherwise).

        Example::

            await client.subresource("scale").patch(("apps/v1", "Deployment"), "web",
                                                    {"spec": {"replicas": 3}}, namespace="ns")
        """
        check_options(f"subresource({self.subresource!r}).patch", options, PatchOptions)
        answer: dict[str, Any] = await self._writer._patch_at(
            _parent(resource), name, patch, options, subresource=self.subresource
        )
        return answer

    def __repr__(self) -> str:
        return f"<{self.subresource} subresource client of {self._writer!r}>"


class BlockingClientStatusWriter(BlockingFacade, BlockingStatusWriter):
    """Blocking :class:`ClientStatusWriter` (``blocking_client.status()``).

    Example::

        foo = blocking_client.status().update(foo)
    """

    def __init__(self, portal: Portal, target: ClientStatusWriter) -> None:
        self._portal = portal
        self._target = target

    _update = blocking(ClientStatusWriter._update)
    _patch = blocking(ClientStatusWriter._patch)
    _apply = blocking(ClientStatusWriter._apply)
    _patch_merge_from = blocking(ClientStatusWriter._patch_merge_from)

    if TYPE_CHECKING:
        update = BlockingStatusWriter.update
        patch = BlockingStatusWriter.patch
        apply = BlockingStatusWriter.apply
        patch_merge_from = BlockingStatusWriter.patch_merge_from
    else:
        update = _update
        patch = _patch
        apply = _apply
        patch_merge_from = _patch_merge_from


class BlockingClientSubResourceClient(BlockingFacade, BlockingSubResourceClient):
    """Blocking :class:`ClientSubResourceClient` (``blocking_client.subresource("scale")``).

    Example::

        scale = blocking_client.subresource("scale").get(V1Deployment, "web", namespace="ns")
    """

    def __init__(self, portal: Portal, target: ClientSubResourceClient) -> None:
        self._portal = portal
        self._target = target

    get = blocking(ClientSubResourceClient.get)
    update = blocking(ClientSubResourceClient.update)
    patch = blocking(ClientSubResourceClient.patch)


if TYPE_CHECKING:
    # mypy checks each implementation against the protocol's overloads here: the classes above
    # show the protocol's declarations, these assignments must fit them.

    class _ClientStatusWriterConforms(StatusWriter):
        update = ClientStatusWriter._update
        patch = ClientStatusWriter._patch
        apply = ClientStatusWriter._apply
        patch_merge_from = ClientStatusWriter._patch_merge_from

    class _BlockingClientStatusWriterConforms(BlockingStatusWriter):
        update = BlockingClientStatusWriter._update
        patch = BlockingClientStatusWriter._patch
        apply = BlockingClientStatusWriter._apply
        patch_merge_from = BlockingClientStatusWriter._patch_merge_from
