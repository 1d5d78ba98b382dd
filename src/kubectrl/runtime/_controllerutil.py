"""controllerutil: owner references, finalizers, create-or-update (controller-runtime's).

All helpers work on plain object dicts and on model instances (``V1ConfigMap``, a custom
resource). The reference helpers and finalizer helpers mutate the object you pass (as the Go
functions mutate the object) and write nothing; ``create_or_update`` and ``create_or_patch`` read
and write through any :class:`~kubectrl.client.KubeClient` (an
:class:`~kubectrl.client.AsyncClient` or the manager's cache-backed
:class:`~kubectrl.runtime.CachedClient`).

Models and mutation: a model instance is changed in place too. The reference and finalizer
helpers set ``metadata.owner_references`` / ``metadata.finalizers`` on it (creating
``metadata`` when it is ``None``). ``create_or_update(client, obj, mutate)`` with a model reads
the live object as ``obj``'s class, copies its fields into ``obj`` and calls ``mutate(obj)`` on
that same instance, so a mutate function may change its argument or close over ``obj``, as Go
closures do; afterwards ``obj`` holds what the server returned. Fields the model does not know
(a newer server or CRD version) are carried from the live object into the write, so they are
never dropped.
"""

from __future__ import annotations

import copy
import enum
import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from kubectrl import kinds as _kinds
from kubectrl._internal.merge import merge_patch_diff
from kubectrl.client import KubeClient
from kubectrl.errors import KubectrlError, NotFoundError
from kubectrl.objects import gvk_of, metadata_of, split_api_version
from kubectrl.runtime._typed import json_copy, object_dict

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
#: What the helpers change: an object dict or a model instance (``V1ConfigMap``, a custom
#: resource); typed ``Any`` so a mutate function may take either.
Object = Any
MutateFn = Callable[[Any], "Awaitable[None] | None"]


def _is_model(obj: Any) -> bool:
    return not isinstance(obj, Mapping) and _kinds.is_model_class(type(obj))


def _meta_view(obj: Any) -> dict[str, Any]:
    """``{"metadata": ...}`` of a model instance as a dict, for the dict helpers to work on."""
    meta = getattr(obj, "metadata", None)
    return {"metadata": _kinds.to_dict(meta) if meta is not None else {}}


def _metadata_model(cls: type[Any]) -> type[Any]:
    field = cls.model_fields.get("metadata")
    annotation = field.annotation if field is not None else None
    for candidate in (annotation, *typing.get_args(annotation)):
        if _kinds.is_model_class(candidate):
            return typing.cast("type[Any]", candidate)
    raise TypeError(f"{cls.__name__} has no metadata model field")


def _set_metadata_field(obj: Any, key: str, value: Any) -> None:
    """Set ``metadata.<key>`` (a JSON key such as ``ownerReferences``) on a model instance."""
    meta = getattr(obj, "metadata", None)
    if meta is None:
        meta = _kinds.from_dict(_metadata_model(type(obj)), {})
        obj.metadata = meta
    # Validated through the metadata class, so the value takes its field's type (a list of
    # V1OwnerReference for the kubernetes models, plain dicts for a custom resource's).
    partial = _kinds.from_dict(type(meta), {key: value})
    for name, info in type(meta).model_fields.items():
        if key in (info.alias, info.serialization_alias, name):
            setattr(meta, name, getattr(partial, name))
            return
    raise TypeError(f"{type(meta).__name__} has no field {key!r}")


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
    owner: Object, obj: Object, *, block_owner_deletion: bool = True
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

    Models work the same way (owner and/or object)::

        >>> from kubernetes.client.models import V1ConfigMap, V1ObjectMeta, V1Secret
        >>> typed = V1Secret(metadata=V1ObjectMeta(name="s", namespace="ns"))
        >>> set_controller_reference(owner, typed)
        >>> typed.metadata.owner_references[0].kind, typed.metadata.owner_references[0].controller
        ('ConfigMap', True)
    """
    owner = object_dict(owner)
    if _is_model(obj):
        view = _meta_view(obj)
        set_controller_reference(owner, view, block_owner_deletion=block_owner_deletion)
        _set_metadata_field(obj, "ownerReferences", view["metadata"]["ownerReferences"])
        return
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


def set_owner_reference(owner: Object, obj: Object) -> None:
    """Add (or refresh) a non-controller owner reference from ``obj`` to ``owner``.

    An existing reference to the same owner keeps its ``controller`` and
    ``blockOwnerDeletion`` flags. Same namespace rules as :func:`set_controller_reference`.

    Example::

        set_owner_reference(config_map, secret)
    """
    owner = object_dict(owner)
    if _is_model(obj):
        view = _meta_view(obj)
        set_owner_reference(owner, view)
        _set_metadata_field(obj, "ownerReferences", view["metadata"]["ownerReferences"])
        return
    ref = _owner_ref(owner)
    _check_namespaces(owner, obj)
    for existing in metadata_of(obj).get("ownerReferences") or ():
        if _same_object(existing, ref):
            for flag in ("controller", "blockOwnerDeletion"):
                if flag in existing:
                    ref[flag] = existing[flag]
    _upsert(obj, ref)


def has_controller_reference(obj: Object) -> bool:
    """Whether any owner reference of ``obj`` is marked ``controller: true``."""
    if _is_model(obj):
        obj = _meta_view(obj)
    refs = metadata_of(obj).get("ownerReferences") or ()
    return any(ref.get("controller") for ref in refs)


def contains_finalizer(obj: Object, finalizer: str) -> bool:
    """Whether ``metadata.finalizers`` contains ``finalizer``.

    Example::

        >>> contains_finalizer({"metadata": {"finalizers": ["a/b"]}}, "a/b")
        True
    """
    if _is_model(obj):
        obj = _meta_view(obj)
    return finalizer in (metadata_of(obj).get("finalizers") or ())


def add_finalizer(obj: Object, finalizer: str) -> bool:
    """Add ``finalizer`` if missing; ``True`` when ``obj`` changed (then write it).

    Example::

        >>> o = {"metadata": {}}
        >>> add_finalizer(o, "example.com/cleanup"), add_finalizer(o, "example.com/cleanup")
        (True, False)
        >>> from kubernetes.client.models import V1ConfigMap
        >>> cm = V1ConfigMap()
        >>> add_finalizer(cm, "example.com/cleanup"), cm.metadata.finalizers
        (True, ['example.com/cleanup'])
    """
    if _is_model(obj):
        view = _meta_view(obj)
        changed = add_finalizer(view, finalizer)
        if changed:
            _set_metadata_field(obj, "finalizers", view["metadata"]["finalizers"])
        return changed
    finalizers = list(metadata_of(obj).get("finalizers") or [])
    if finalizer in finalizers:
        return False
    finalizers.append(finalizer)
    _ensure_metadata(obj)["finalizers"] = finalizers
    return True


def remove_finalizer(obj: Object, finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer``; ``True`` when ``obj`` changed.

    Example::

        >>> o = {"metadata": {"finalizers": ["x"]}}
        >>> remove_finalizer(o, "x"), o["metadata"]["finalizers"]
        (True, [])
    """
    if _is_model(obj):
        view = _meta_view(obj)
        changed = remove_finalizer(view, finalizer)
        if changed:
            _set_metadata_field(obj, "finalizers", view["metadata"]["finalizers"])
        return changed
    finalizers = list(metadata_of(obj).get("finalizers") or [])
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    _ensure_metadata(obj)["finalizers"] = kept
    return True


async def _mutate(mutate: MutateFn, obj: Object) -> None:
    key = _name_of(obj)
    result = mutate(obj)
    if inspect.isawaitable(result):
        await result
    if _name_of(obj) != key:
        raise ValueError("MutateFn cannot mutate object name and/or object namespace")


def _name_of(obj: Object) -> tuple[Any, Any]:
    if _is_model(obj):
        meta_model = getattr(obj, "metadata", None)
        return getattr(meta_model, "namespace", None), getattr(meta_model, "name", None)
    meta = metadata_of(obj)
    return meta.get("namespace"), meta.get("name")


def _replace(target: Obj, source: Mapping[str, Any]) -> None:
    target.clear()
    target.update(source)


def _assign(target: Any, source: Any) -> None:
    # Make the model instance ``target`` hold ``source``'s fields (the caller keeps its object,
    # as the Go helpers fill in the object they are given).
    target.__dict__.update(source.__dict__)
    object.__setattr__(target, "__pydantic_fields_set__", set(source.model_fields_set))
    extra = getattr(source, "__pydantic_extra__", None)
    object.__setattr__(target, "__pydantic_extra__", dict(extra) if extra is not None else None)
    _kinds.adopt_unknown_fields(target, source)


def _unknown(raw: Mapping[str, Any], known: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of ``raw`` (the server's dict) that ``known`` (the model's dump) lacks, nested."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in known:
            out[key] = json_copy(value)
        elif isinstance(value, Mapping) and isinstance(known[key], Mapping):
            sub = _unknown(value, known[key])
            if sub:
                out[key] = sub
    return out


def _overlay(target: dict[str, Any], unknown: Mapping[str, Any]) -> dict[str, Any]:
    """Put the ``unknown`` keys back into ``target`` where their parent dict still is."""
    for key, value in unknown.items():
        if key not in target:
            target[key] = json_copy(value)
        elif isinstance(target[key], dict) and isinstance(value, Mapping):
            _overlay(target[key], value)
    return target


def _kind_ref(obj: Object) -> tuple[str, str]:
    if _is_model(obj):
        info = _kinds.kind_info(type(obj))
        return info.api_version, info.kind
    gvk = gvk_of(obj)
    return gvk.api_version, gvk.kind


async def _get_existing(client: KubeClient, obj: Object) -> dict[str, Any] | None:
    namespace, name = _name_of(obj)
    try:
        return await client.get(_kind_ref(obj), str(name), namespace=namespace or None)
    except NotFoundError:
        return None


async def _create_or_mutate(
    client: KubeClient, obj: Object, mutate: MutateFn
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The shared first half of create_or_update / create_or_patch.

    Reads the live object; if it is missing, mutates and creates ``obj`` and returns ``None``.
    Otherwise replaces ``obj`` by the live object, mutates it and returns the live object's dict
    from before the mutation and ``obj``'s dict after it (for a model: both as the model
    serializes them, plus the fields it does not know, so only real changes differ).
    """
    existing = await _get_existing(client, obj)
    if existing is None:
        await _mutate(mutate, obj)
        created = await client.create(object_dict(obj))
        if _is_model(obj):
            _assign(obj, _kinds.from_dict(type(obj), created))
        else:
            _replace(obj, created)
        return None
    if _is_model(obj):
        live = _kinds.from_dict(type(obj), existing)
        # A shallow copy is another instance: its dump has no unknown keys, which tells them.
        dumped = _kinds.to_dict(live.model_copy())
        unknown = _unknown(existing, dumped)
        before = _overlay(dumped, unknown)
        _assign(obj, live)
        await _mutate(mutate, obj)
        return before, _overlay(_kinds.to_dict(obj), unknown)
    before = copy.deepcopy(existing)
    _replace(obj, existing)
    await _mutate(mutate, obj)
    return before, obj


def _store(obj: Object, current: Mapping[str, Any]) -> None:
    if _is_model(obj):
        _assign(obj, _kinds.from_dict(type(obj), current))
    else:
        _replace(obj, current)


async def create_or_update(client: KubeClient, obj: Object, mutate: MutateFn) -> OperationResult:
    """Get ``obj`` (by apiVersion, kind, namespace, name); create it after ``mutate`` if missing,
    else apply ``mutate`` to the live object and update it only if something changed.

    ``obj`` is replaced in place by what the server returned (or the live object when
    unchanged), as controller-runtime does. ``mutate(obj)`` (sync or async) must only set the
    desired fields, never name or namespace (:class:`ValueError`). The update carries the
    ``resourceVersion`` read, so a concurrent change raises
    :class:`~kubectrl.errors.ConflictError` (wrap in ``retry_on_conflict``).

    ``obj`` may be a model instance: ``mutate`` then receives that instance, holding the live
    object's fields, and the update keeps the fields its class does not know.

    Example::

        secret = {"apiVersion": "v1", "kind": "Secret",
                  "metadata": {"name": "creds", "namespace": "ns"}}
        def mutate(s):
            s["stringData"] = {"password": "..."}
            set_controller_reference(owner, s)
        result = await create_or_update(client, secret, mutate)

        cm = V1ConfigMap(metadata=V1ObjectMeta(name="settings", namespace="ns"))
        def set_data(c: V1ConfigMap) -> None:
            c.data = {"mode": "fast"}
        result = await create_or_update(client, cm, set_data)
    """
    states = await _create_or_mutate(client, obj, mutate)
    if states is None:
        return OperationResult.CREATED
    before, after = states
    if after == before:
        return OperationResult.UNCHANGED
    _store(obj, await client.update(after))
    return OperationResult.UPDATED


async def create_or_patch(client: KubeClient, obj: Object, mutate: MutateFn) -> OperationResult:
    """Like :func:`create_or_update`, but writes merge patches: one of the object without its
    status, then one of the ``status`` subresource if the status changed.

    Returns ``UPDATED``, ``UPDATED_STATUS`` (both changed), ``UPDATED_STATUS_ONLY``,
    ``CREATED`` or ``UNCHANGED``. A created object's status is not written (the server ignores
    it on create when the status subresource is on). Patches carry no ``resourceVersion``, so
    they never conflict; only the changed fields are sent. ``obj`` may be a model instance, as
    for :func:`create_or_update`.

    Example::

        result = await create_or_patch(client, deployment, lambda d: d["spec"].update(replicas=3))
    """
    states = await _create_or_mutate(client, obj, mutate)
    if states is None:
        return OperationResult.CREATED
    before, after = states
    current: dict[str, Any] = dict(after)
    after = copy.deepcopy(dict(after))
    old_status, new_status = before.pop("status", None), after.pop("status", None)
    ns, obj_name = _name_of(obj)
    ref, name, namespace = _kind_ref(obj), str(obj_name), ns or None
    spec_patch = merge_patch_diff(before, after)
    changed = bool(spec_patch)
    status_changed = old_status != new_status
    if changed:
        current = await client.patch(ref, name, spec_patch, namespace=namespace)
    if status_changed:
        status_patch = merge_patch_diff({"status": old_status or {}}, {"status": new_status or {}})
        current = await client.status().patch(ref, name, status_patch, namespace=namespace)
    if changed or status_changed:
        _store(obj, current)
    if changed and status_changed:
        return OperationResult.UPDATED_STATUS
    if changed:
        return OperationResult.UPDATED
    if status_changed:
        return OperationResult.UPDATED_STATUS_ONLY
    return OperationResult.UNCHANGED
