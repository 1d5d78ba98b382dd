"""controllerutil: owner references, finalizers, create-or-update (controller-runtime's).

All helpers work on plain object dicts. The reference helpers and finalizer helpers mutate the
dict you pass (as the Go functions mutate the object) and write nothing; ``create_or_update`` and
``create_or_patch`` read and write through an :class:`ObjectClient` (an
:class:`~kubectrl.client.AsyncClient` or the manager's cache-backed client).
"""

from __future__ import annotations

import copy
import enum
import inspect
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, Protocol

from kubectrl.errors import KubectrlError, NotFoundError
from kubectrl.objects import gvk_of, metadata_of, split_api_version

if TYPE_CHECKING:
    from kubectrl.client import ResourceRef

__all__ = [
    "AlreadyOwnedError",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "has_controller_reference",
    "merge_patch_diff",
    "remove_finalizer",
    "set_controller_reference",
    "set_owner_reference",
]

Obj = MutableMapping[str, Any]
MutateFn = Callable[[Obj], "Awaitable[None] | None"]


class ObjectClient(Protocol):
    """What ``create_or_update`` / ``create_or_patch`` need of a client.

    Both :class:`~kubectrl.client.AsyncClient` and the manager's cache-backed
    :class:`~kubectrl.runtime.CachedClient` (reads from the cache) fit.
    """

    async def get(
        self, resource: ResourceRef, name: str, *, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def create(self, obj: Mapping[str, Any]) -> dict[str, Any]: ...

    async def update(self, obj: Mapping[str, Any]) -> dict[str, Any]: ...

    async def patch(
        self,
        resource: ResourceRef,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        subresource: str = "",
    ) -> dict[str, Any]: ...


class OperationResult(str, enum.Enum):
    """What ``create_or_update`` / ``create_or_patch`` did.

    Example::

        >>> OperationResult.CREATED.value
        'created'
    """

    UNCHANGED = "unchanged"
    CREATED = "created"
    UPDATED = "updated"
    #: ``create_or_patch`` only: spec/metadata and status both changed.
    UPDATED_STATUS = "updatedStatus"
    #: ``create_or_patch`` only: only the status changed.
    UPDATED_STATUS_ONLY = "updatedStatusOnly"


class AlreadyOwnedError(KubectrlError):
    """``set_controller_reference``: the object already has another controller owner.

    Not retryable: two controllers must not fight over one object.

    Example::

        try:
            set_controller_reference(foo, deployment)
        except AlreadyOwnedError as err:
            print(err.owner)
    """

    def __init__(self, message: str, *, owner: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.owner = dict(owner)


def _ensure_metadata(obj: Obj) -> MutableMapping[str, Any]:
    """``obj``'s metadata for writing, attached to ``obj`` when it had none.

    Unlike :func:`~kubectrl.objects.metadata_of` (read-only, returns a detached empty mapping),
    what is written here lands in ``obj``, as the Go helpers mutate the object they are given.
    """
    meta = obj.get("metadata")
    if not isinstance(meta, MutableMapping):
        meta = obj["metadata"] = {}
    return meta


def _owner_ref(owner: Mapping[str, Any]) -> dict[str, Any]:
    gvk = gvk_of(owner)
    metadata = metadata_of(owner)
    name, uid = metadata.get("name"), metadata.get("uid")
    if not name or not uid:
        raise ValueError(
            "owner needs metadata.name and metadata.uid (read it from the server before using it "
            "as an owner)"
        )
    return {"apiVersion": gvk.api_version, "kind": gvk.kind, "name": name, "uid": uid}


def _check_namespaces(owner: Mapping[str, Any], obj: Obj) -> None:
    owner_ns = str(metadata_of(owner).get("namespace") or "")
    obj_ns = str(metadata_of(obj).get("namespace") or "")
    if not owner_ns:
        return
    if not obj_ns:
        raise ValueError(
            "cluster-scoped resource must not have a namespace-scoped owner, owner's namespace "
            f"{owner_ns}"
        )
    if owner_ns != obj_ns:
        raise ValueError(
            f"cross-namespace owner references are disallowed, owner's namespace {owner_ns}, "
            f"obj's namespace {obj_ns}"
        )


def _same_object(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    # Group, kind and name: a version change of the owner is the same owner (controller-runtime).
    return (
        split_api_version(str(a.get("apiVersion") or ""))[0]
        == split_api_version(str(b.get("apiVersion") or ""))[0]
        and a.get("kind") == b.get("kind")
        and a.get("name") == b.get("name")
    )


def _upsert(obj: Obj, ref: dict[str, Any]) -> None:
    refs: list[dict[str, Any]] = list(metadata_of(obj).get("ownerReferences") or [])
    for i, existing in enumerate(refs):
        if _same_object(existing, ref):
            refs[i] = ref
            break
    else:
        refs.append(ref)
    _ensure_metadata(obj)["ownerReferences"] = refs


def set_controller_reference(
    owner: Mapping[str, Any], obj: Obj, *, block_owner_deletion: bool = True
) -> None:
    """Make ``owner`` the controller of ``obj`` (``controller: true``,
    ``blockOwnerDeletion: true``), so garbage collection deletes ``obj`` with its owner and
    ``enqueue_request_for_owner`` finds the owner.

    Raises :class:`AlreadyOwnedError` when another object already controls ``obj``, and
    :class:`ValueError` for a cross-namespace owner or a namespaced owner of a cluster-scoped
    object. Setting the same owner again is a no-op (idempotent).

    Example::

        >>> owner = {"apiVersion": "v1", "kind": "ConfigMap",
        ...          "metadata": {"name": "o", "namespace": "ns", "uid": "u1"}}
        >>> secret = {"metadata": {"name": "s", "namespace": "ns"}}
        >>> set_controller_reference(owner, secret)
        >>> secret["metadata"]["ownerReferences"][0]["controller"]
        True
    """
    ref = _owner_ref(owner)
    ref["blockOwnerDeletion"] = block_owner_deletion
    ref["controller"] = True
    _check_namespaces(owner, obj)
    meta = metadata_of(obj)
    for existing in meta.get("ownerReferences") or ():
        if existing.get("controller") and not _same_object(existing, ref):
            raise AlreadyOwnedError(
                f"Object {meta.get('namespace', '')}/{meta.get('name', '')} is "
                f"already owned by another {existing.get('kind')} controller "
                f"{existing.get('name')}",
                owner=existing,
            )
    _upsert(obj, ref)


def set_owner_reference(owner: Mapping[str, Any], obj: Obj) -> None:
    """Add (or refresh) a non-controller owner reference from ``obj`` to ``owner``.

    An existing reference to the same owner keeps its ``controller`` and
    ``blockOwnerDeletion`` flags. Same namespace rules as :func:`set_controller_reference`.

    Example::

        set_owner_reference(config_map, secret)
    """
    ref = _owner_ref(owner)
    _check_namespaces(owner, obj)
    for existing in metadata_of(obj).get("ownerReferences") or ():
        if _same_object(existing, ref):
            for flag in ("controller", "blockOwnerDeletion"):
                if flag in existing:
                    ref[flag] = existing[flag]
    _upsert(obj, ref)


def has_controller_reference(obj: Mapping[str, Any]) -> bool:
    """Whether any owner reference of ``obj`` is marked ``controller: true``."""
    refs = metadata_of(obj).get("ownerReferences") or ()
    return any(ref.get("controller") for ref in refs)


def contains_finalizer(obj: Mapping[str, Any], finalizer: str) -> bool:
    """Whether ``metadata.finalizers`` contains ``finalizer``.

    Example::

        >>> contains_finalizer({"metadata": {"finalizers": ["a/b"]}}, "a/b")
        True
    """
    return finalizer in (metadata_of(obj).get("finalizers") or ())


def add_finalizer(obj: Obj, finalizer: str) -> bool:
    """Add ``finalizer`` if missing; ``True`` when ``obj`` changed (then write it).

    Example::

        >>> o = {"metadata": {}}
        >>> add_finalizer(o, "example.com/cleanup"), add_finalizer(o, "example.com/cleanup")
        (True, False)
    """
    finalizers = list(metadata_of(obj).get("finalizers") or [])
    if finalizer in finalizers:
        return False
    finalizers.append(finalizer)
    _ensure_metadata(obj)["finalizers"] = finalizers
    return True


def remove_finalizer(obj: Obj, finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer``; ``True`` when ``obj`` changed.

    Example::

        >>> o = {"metadata": {"finalizers": ["x"]}}
        >>> remove_finalizer(o, "x"), o["metadata"]["finalizers"]
        (True, [])
    """
    finalizers = list(metadata_of(obj).get("finalizers") or [])
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    _ensure_metadata(obj)["finalizers"] = kept
    return True


def merge_patch_diff(original: Mapping[str, Any], modified: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON merge patch (RFC 7386) that turns ``original`` into ``modified``.

    Removed keys become ``None`` (JSON ``null``); lists are replaced whole.

    Example::

        >>> merge_patch_diff({"a": 1, "b": {"c": 1, "d": 2}}, {"a": 1, "b": {"c": 2}})
        {'b': {'c': 2, 'd': None}}
    """
    patch: dict[str, Any] = {}
    for key, value in modified.items():
        if key not in original:
            patch[key] = copy.deepcopy(value)
            continue
        old = original[key]
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            sub = merge_patch_diff(old, value)
            if sub:
                patch[key] = sub
        elif old != value:
            patch[key] = copy.deepcopy(value)
    for key in original:
        if key not in modified:
            patch[key] = None
    return patch


async def _mutate(mutate: MutateFn, obj: Obj) -> None:
    key = _name_of(obj)
    result = mutate(obj)
    if inspect.isawaitable(result):
        await result
    if _name_of(obj) != key:
        raise ValueError("MutateFn cannot mutate object name and/or object namespace")


def _name_of(obj: Mapping[str, Any]) -> tuple[Any, Any]:
    meta = metadata_of(obj)
    return meta.get("namespace"), meta.get("name")


def _replace(target: Obj, source: Mapping[str, Any]) -> None:
    target.clear()
    target.update(source)


async def _get_existing(client: ObjectClient, obj: Obj) -> dict[str, Any] | None:
    namespace, name = _name_of(obj)
    try:
        return await client.get(gvk_of(obj), str(name), namespace=namespace or None)
    except NotFoundError:
        return None


async def _create_or_mutate(
    client: ObjectClient, obj: Obj, mutate: MutateFn
) -> dict[str, Any] | None:
    """The shared first half of create_or_update / create_or_patch.

    Reads the live object; if it is missing, mutates and creates ``obj`` and returns ``None``.
    Otherwise replaces ``obj`` by the live object, mutates it and returns a copy of the live
    object from before the mutation.
    """
    existing = await _get_existing(client, obj)
    if existing is None:
        await _mutate(mutate, obj)
        _replace(obj, await client.create(obj))
        return None
    before = copy.deepcopy(existing)
    _replace(obj, existing)
    await _mutate(mutate, obj)
    return before


async def create_or_update(client: ObjectClient, obj: Obj, mutate: MutateFn) -> OperationResult:
    """Get ``obj`` (by apiVersion, kind, namespace, name); create it after ``mutate`` if missing,
    else apply ``mutate`` to the live object and update it only if something changed.

    ``obj`` is replaced in place by what the server returned (or the live object when
    unchanged), as controller-runtime does. ``mutate(obj)`` (sync or async) must only set the
    desired fields, never name or namespace (:class:`ValueError`). The update carries the
    ``resourceVersion`` read, so a concurrent change raises
    :class:`~kubectrl.errors.ConflictError` (wrap in ``retry_on_conflict``).

    Example::

        secret = {"apiVersion": "v1", "kind": "Secret",
                  "metadata": {"name": "creds", "namespace": "ns"}}
        def mutate(s):
            s["stringData"] = {"password": "..."}
            set_controller_reference(owner, s)
        result = await create_or_update(client, secret, mutate)
    """
    before = await _create_or_mutate(client, obj, mutate)
    if before is None:
        return OperationResult.CREATED
    if obj == before:
        return OperationResult.UNCHANGED
    _replace(obj, await client.update(obj))
    return OperationResult.UPDATED


async def create_or_patch(client: ObjectClient, obj: Obj, mutate: MutateFn) -> OperationResult:
    """Like :func:`create_or_update`, but writes merge patches: one of the object without its
    status, then one of the ``status`` subresource if the status changed.

    Returns ``UPDATED``, ``UPDATED_STATUS`` (both changed), ``UPDATED_STATUS_ONLY``,
    ``CREATED`` or ``UNCHANGED``. A created object's status is not written (the server ignores
    it on create when the status subresource is on). Patches carry no ``resourceVersion``, so
    they never conflict; only the changed fields are sent.

    Example::

        result = await create_or_patch(client, deployment, lambda d: d["spec"].update(replicas=3))
    """
    before = await _create_or_mutate(client, obj, mutate)
    if before is None:
        return OperationResult.CREATED
    after = copy.deepcopy(dict(obj))
    old_status, new_status = before.pop("status", None), after.pop("status", None)
    ns, obj_name = _name_of(obj)
    ref, name, namespace = gvk_of(obj), str(obj_name), ns or None
    spec_patch = merge_patch_diff(before, after)
    changed = bool(spec_patch)
    status_changed = old_status != new_status
    current: dict[str, Any] = dict(obj)
    if changed:
        current = await client.patch(ref, name, spec_patch, namespace=namespace)
    if status_changed:
        status_patch = merge_patch_diff({"status": old_status or {}}, {"status": new_status or {}})
        current = await client.patch(
            ref, name, status_patch, namespace=namespace, subresource="status"
        )
    if changed or status_changed:
        _replace(obj, current)
    if changed and status_changed:
        return OperationResult.UPDATED_STATUS
    if changed:
        return OperationResult.UPDATED
    if status_changed:
        return OperationResult.UPDATED_STATUS_ONLY
    return OperationResult.UNCHANGED
