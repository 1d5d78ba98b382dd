"""The subresource clients every client hands out: ``status()`` and ``subresource(name)``.

One implementation for all four clients: :class:`ClientStatusWriter` and
:class:`ClientSubResourceClient` send through the client that made them (its ``update``,
``patch``, ``apply`` with ``subresource=``), so what that client does to a write (the cached
client's leader fence, its errors) applies to them too. The blocking ones are derived from them
(:mod:`kubectrl.client._blocking`) and run on the blocking client's loop.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from kubectrl import kinds as _kinds
from kubectrl.client._blocking import BlockingFacade, Portal, blocking
from kubectrl.client._interfaces import (
    BlockingStatusWriter,
    BlockingSubResourceClient,
    Reader,
    StatusWriter,
    SubResourceClient,
    Writer,
)
from kubectrl.client._merge import send_merge_from
from kubectrl.client._models import to_dict
from kubectrl.client._paths import segment_problems
from kubectrl.client._types import KindRef, PatchType, ResourceRef
from kubectrl.client._write_options import FieldValidation
from kubectrl.errors import InvalidPathSegmentError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "BlockingClientStatusWriter",
    "BlockingClientSubResourceClient",
    "ClientStatusWriter",
    "ClientSubResourceClient",
]


class ClientStatusWriter(StatusWriter):
    """The :class:`~kubectrl.client.StatusWriter` of a client (``client.status()``): its
    ``update``/``patch``/``apply`` with ``subresource="status"``.

    Example::

        foo.status = FooStatus(ready=True)
        foo = await client.status().update(foo)
    """

    def __init__(self, writer: Writer) -> None:
        self._writer = writer

    async def _update(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        namespace: str | None = None,
        field_manager: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """PUT the status (optimistic lock on ``metadata.resourceVersion``); the stored object
        comes back typed like ``obj``.

        Example: ``foo = await client.status().update(foo)``.
        """
        return await self._writer.update(
            obj,
            namespace=namespace,
            subresource="status",
            field_manager=field_manager,
            dry_run=dry_run,
            field_validation=field_validation,
        )

    async def _patch(
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
        """Patch the status (a merge patch unless ``patch_type=`` says otherwise); a model
        class as ``resource`` returns an instance of it.

        Example::

            await client.status().patch(("v1", "Pod"), "web-0", {"status": {"phase": "Ready"}},
                                        namespace="ns")
        """
        return await self._writer.patch(
            resource,
            name,
            patch,
            namespace=namespace,
            patch_type=patch_type,
            subresource="status",
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            field_validation=field_validation,
        )

    async def _apply(
        self,
        obj: Mapping[str, Any] | BaseModel,
        *,
        field_manager: str,
        force: bool = False,
        namespace: str | None = None,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """Server-side apply of the status, as ``field_manager``.

        Example: ``await client.status().apply(foo_status_only, field_manager="foo-ctl")``.
        """
        return await self._writer.apply(
            obj,
            field_manager=field_manager,
            force=force,
            namespace=namespace,
            subresource="status",
            dry_run=dry_run,
            field_validation=field_validation,
        )

    async def _patch_merge_from(
        self,
        original: Any,
        modified: Any,
        *,
        optimistic_lock: bool = False,
        dry_run: bool = False,
        field_validation: FieldValidation | None = None,
    ) -> Any:
        """The client's ``patch_merge_from`` on the status subresource.

        Example::

            original = foo.model_copy(deep=True)
            foo.status = FooStatus(ready=True)
            foo = await client.status().patch_merge_from(original, foo)
        """
        return await send_merge_from(
            self._writer.patch,
            original,
            modified,
            optimistic_lock=optimistic_lock,
            subresource="status",
            dry_run=dry_run,
            field_validation=field_validation,
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
    (``client.subresource("scale")``): reads through ``reader``, writes through ``writer``, with
    ``subresource=`` set; bodies and results are dicts.

    Example::

        scales = client.subresource("scale")
        scale = await scales.get(("apps/v1", "Deployment"), "web", namespace="ns")
    """

    def __init__(self, reader: Reader, writer: Writer, subresource: str) -> None:
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

    async def get(
        self, resource: KindRef, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]:
        """Read the subresource of ``name`` (an object of kind ``resource``).

        Example: ``await client.subresource("scale").get(V1Deployment, "web", namespace="ns")``.
        """
        return await self._reader.get(
            _parent(resource), name, namespace=namespace, subresource=self.subresource
        )

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
        """PUT ``obj`` (the subresource's body, e.g. a ``Scale`` named like its parent) to the
        subresource of the ``resource`` object named in ``obj``'s metadata.

        Example::

            scale["spec"]["replicas"] = 3
            await client.subresource("scale").update(scale, resource=V1Deployment)
        """
        return await self._writer.update(
            to_dict(obj),
            namespace=namespace,
            subresource=self.subresource,
            resource=_parent(resource),
            field_manager=field_manager,
            dry_run=dry_run,
            field_validation=field_validation,
        )

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
        """Patch the subresource of ``name`` (a merge patch unless ``patch_type=`` says
        otherwise).

        Example::

            await client.subresource("scale").patch(("apps/v1", "Deployment"), "web",
                                                    {"spec": {"replicas": 3}}, namespace="ns")
        """
        return await self._writer.patch(
            _parent(resource),
            name,
            patch,
            namespace=namespace,
            patch_type=patch_type,
            subresource=self.subresource,
            field_manager=field_manager,
            force=force,
            dry_run=dry_run,
            field_validation=field_validation,
        )

    def __repr__(self) -> str:
        return f"<{self.subresource} subresource client of {self._writer!r}>"


class BlockingClientStatusWriter(BlockingFacade, BlockingStatusWriter):
    """Blocking :class:`ClientStatusWriter` (``blocking_client.status()``), on the blocking
    client's loop.

    Example::

        foo.status = FooStatus(ready=True)
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
