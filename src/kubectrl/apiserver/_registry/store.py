"""The generic store: what a write does to an object before and after it reaches storage.

As the apiserver's generic registry store (``pkg/registry/generic/registry/store.go``) with
``pkg/registry/rest`` (``create.go`` ``BeforeCreate``, ``update.go`` ``BeforeUpdate``,
``delete.go`` ``BeforeDelete``): one store for every resource, calling the resource's strategy
(:mod:`kubectrl.apiserver._strategies`) in one fixed order, and its admission
(:class:`~kubectrl.apiserver._admission.admission.Admission`: the namespace lifecycle,
mutating admission after the defaults, then validating admission last, on the object as it
will be stored, as ``store.go`` calls ``createValidation`` after ``rest.BeforeCreate``).
Nothing here depends on which resource is written but through its strategy.

A create (:meth:`ObjectStore.create`):

1. the strategy's ``check_writable``; the body decoded as its Go type (built-ins);
2. the name (``generateName``) and its validation; the namespace: given for a namespaced
   kind, and admitted by the NamespaceLifecycle plugin (it exists, it is not terminating); no
   object of that name yet;
3. ``apiVersion``, ``kind``, namespace set, system metadata cleared; the status reset
   (``reset_status``, unless kept);
4. ``default`` (custom resources: pruned and defaulted by the schema of the version written,
   as the request's decoder does); mutating admission (MutatingAdmissionPolicies: the object
   they leave, the kind's defaults applied after each change); the ``uid``;
   ``prepare_for_create``;
5. ``validate_schema`` (custom resources: pruned, defaulted, validated by the CRD schema); the
   metadata's validation and the strategy's ``validate``; ``accept`` (a CRD: the resource it
   defines, its status set);
6. ``creationTimestamp``, ``generation`` 1, the field manager's ``managedFields``;
7. ``allocate`` (what the kind's mutating admission plugins and registries add: no manager
   owns it); encoded as its Go type and ``canonicalize``;
8. validating admission with the object as it will be stored;
9. (not on a dry run) the resource ``accept`` gave served; stored (its resourceVersion; a
   custom resource at the storage version, :func:`~kubectrl.apiserver._schema.served.to_storage`).

An update (:meth:`ObjectStore.update`):

1. ``check_writable``; the stored object (a custom resource as read at the version written);
   the body decoded; preconditions: a
   resourceVersion (unless ``allow_unconditional_update``) that matches, the uid;
2. the object written: the body's status (``status``), the strategy's ``merge_subresource``
   (its ``subresources``), or all but the stored status; the system metadata kept, the
   ``managedFields``; no finalizer added to an object being deleted;
3. (not a status write) ``default`` and ``allocate_update``; (any write) a custom resource
   pruned and defaulted by its schema; mutating admission;
4. ``validate_schema``; the metadata's validation and ``validate`` (after a subresource's
   ``validate_subresource``); encoded and ``canonicalize``;
5. (not a status write) ``prepare_for_update``; the generation bumped when ``spec_of``
   changed; the field manager's ``managedFields``;
6. validating admission with the object as it will be stored and the stored one;
7. nothing changed: the stored object; (not a status write) ``accept`` and (not on a dry run)
   the resource served; the last finalizer gone from an object being deleted: removed; else
   stored (a custom resource at the storage version).

A delete (:meth:`ObjectStore.delete`): the preconditions (uid, resourceVersion); validating
admission with the stored object; a strategy that ``terminates`` (namespaces) hands over to
the namespace lifecycle; finalizers (the propagation policy's among them) mark the object
deleted; a ``graceful_delete`` marks it before it goes; removed (what it ``defines`` no
longer served, its dependents to the garbage collector); answered with the object
(``return_deleted_object``) or a ``Status``.
"""

from __future__ import annotations

import copy
import json
import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._admission.admission import Admission, Attributes
from kubectrl.apiserver._admission.lifecycle import stored_namespaces
from kubectrl.apiserver._admission.policy import ValidatingPolicies
from kubectrl.apiserver._admission.policy_mutating import MutatingPolicies
from kubectrl.apiserver._patch import apply as _apply
from kubectrl.apiserver._registry.gc import GarbageCollector
from kubectrl.apiserver._resources import versions
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import (
    check,
    comparable,
    key_of,
    now_string,
    ordered,
)
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._schema import gotypes
from kubectrl.apiserver._schema.served import as_read, decoded, render, to_storage
from kubectrl.apiserver._status import (
    MODIFIED,
    already_exists,
    bad_request,
    conflict,
    invalid,
    not_found,
)
from kubectrl.apiserver._storage.memory import Storage
from kubectrl.apiserver._strategies import Cause, Strategy, for_resource
from kubectrl.apiserver._validation.objects import name_causes, validate_object_meta

__all__ = ["ObjectStore", "Watchers"]

_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
_SYSTEM_FIELDS = (
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "generation",
)
_KEPT_ON_UPDATE = (
    "name",
    "namespace",
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
)


class Watchers(Protocol):
    """The open watches, which the store ends when a resource is no longer served."""

    def drop(self, which: Callable[[Any], bool]) -> int:
        """End the watches ``which`` selects; how many."""


class ObjectStore:
    """Create, update, delete and read objects of the served resources."""

    def __init__(
        self,
        storage: Storage,
        registry: Registry,
        hub: Watchers,
        clock: Clock,
        *,
        garbage_collection: bool = True,
        admission: Admission | None = None,
    ) -> None:
        self.storage = storage
        self.registry = registry
        self.hub = hub
        self.clock = clock
        #: The admission plugins (the namespaces in ``storage``; the ValidatingAdmissionPolicies
        #: in it by default).
        self.admission = admission or Admission(
            stored_namespaces(storage),
            [ValidatingPolicies(storage, registry, lambda text: self.admission.warn(text))],
            [MutatingPolicies(storage, registry)],
        )
        self.gc = GarbageCollector(storage, registry, self, clock, enabled=garbage_collection)

    def __repr__(self) -> str:
        return f"ObjectStore({self.storage!r})"

    # ------------------------------------------------------------------ reads

    def get(self, info: ResourceInfo, ns: str | None, name: str) -> dict[str, Any]:
        """The stored object, or 404."""
        obj = self.storage.get(info.key, (ns or "", name))
        if obj is None:
            raise not_found(info.plural, info.group, name)
        return obj

    def _admit(
        self,
        operation: str,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        obj: Mapping[str, Any] | None,
        old: Mapping[str, Any] | None,
        dry_run: bool,
        sub: str = "",
    ) -> None:
        """Validating admission of a write, with the object as it will be stored (``None``
        for a delete) and as it is stored (``None`` for a create)."""
        self.admission.validate(
            Attributes(operation, info, version, ns, name, obj, old, dry_run, sub)
        )

    def _mutate(
        self,
        strategy: Strategy,
        operation: str,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        obj: dict[str, Any],
        old: Mapping[str, Any] | None,
        dry_run: bool,
        sub: str = "",
    ) -> dict[str, Any]:
        """Mutating admission of a write, after the kind's defaults: the object it leaves."""
        attributes = Attributes(operation, info, version, ns, name, obj, old, dry_run, sub)
        mutated = self.admission.mutate(attributes, strategy.default)
        return obj if mutated is None else mutated

    # ------------------------------------------------------------------ create

    def _check_namespace(self, info: ResourceInfo, ns: str | None, name: str) -> None:
        if not info.namespaced:
            return
        if not ns:
            raise bad_request(
                "the server could not find the requested resource: a namespace is required"
            )
        self.admission.check_namespace(info, ns, name)

    def create(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        body: dict[str, Any],
        *,
        manager: str | None,
        keep_status: bool = False,
        dry_run: bool = False,
        managed_fields: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """Create an object as a POST would; returns it as stored (or as it would be).

        ``managed_fields``: set as they are (server-side apply computed them), for no manager.
        """
        strategy = for_resource(info)
        strategy.check_writable(info)
        obj = gotypes.decode(info, version, copy.deepcopy(body))
        meta = obj.setdefault("metadata", {})
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = str(meta["generateName"]) + "".join(
                random.choice(_NAME_CHARS)  # noqa: S311 (names, not secrets)
                for _ in range(5)
            )
        name = str(meta.get("name") or "")
        _check_name(info, strategy, name, obj)
        self._check_namespace(info, ns, name)
        if self.storage.get(info.key, (ns or "", name)) is not None:
            raise already_exists(info.plural, info.group, name)
        obj["apiVersion"], obj["kind"] = info.api_version(version), info.kind
        for key in _SYSTEM_FIELDS:
            meta.pop(key, None)
        if ns is not None:
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not keep_status and info.status:
            strategy.reset_status(info, obj)
        strategy.default(obj)
        obj = decoded(info, version, obj)
        obj = self._mutate(strategy, "CREATE", info, version, ns, name, obj, None, dry_run)
        meta = obj.setdefault("metadata", {})
        meta["uid"] = str(uuid.uuid4())
        strategy.prepare_for_create(obj)
        strategy.validate_schema(info, version, obj, name, None)
        check(info, name, _validate(strategy, obj, None))
        served = strategy.accept(obj, self.clock)
        meta["creationTimestamp"] = now_string(self.clock)
        if info.generation:
            meta["generation"] = 1
        if manager is not None:
            _apply.record_update(
                None,
                obj,
                manager=manager,
                api_version=info.api_version(version),
                time=now_string(self.clock),
                has_status=info.status,
                unstructured=info.crd,
            )
        if managed_fields:
            meta["managedFields"] = managed_fields
        strategy.allocate(obj)  # after the field manager: admission and registry, not the writer
        gotypes.encode(info, version, obj)
        strategy.canonicalize(obj)
        self._admit("CREATE", info, version, ns, name, obj, None, dry_run)
        if dry_run:  # through the storage codec and back, as a real write's answer
            return to_storage(info, version, obj)
        meta["resourceVersion"] = ""  # set by the storage, here for the key order
        obj = ordered(obj)
        if served is not None:
            self.registry.register(served)
        obj = to_storage(info, version, obj)
        self.storage.create(info.key, (ns or "", name), obj)
        return obj

    # ------------------------------------------------------------------ update

    def update(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        body: dict[str, Any],
        *,
        sub: str,
        manager: str | None,
        dry_run: bool,
        precondition_rv: bool = True,
        applied: bool = False,
    ) -> dict[str, Any]:
        """Update an object as a PUT would (``applied``: by server-side apply)."""
        strategy = for_resource(info)
        strategy.check_writable(info)
        old = self.get(info, ns, name)
        old = as_read(info, version, old)
        body = gotypes.decode(info, version, body)
        meta_in = body.get("metadata") or {}
        rv = meta_in.get("resourceVersion")
        if precondition_rv and not rv and not strategy.allow_unconditional_update:
            raise invalid(
                info.kind,
                info.group,
                name,
                [
                    (
                        "FieldValueInvalid",
                        "metadata.resourceVersion",
                        "Invalid value: 0x0: must be specified for an update",
                    )
                ],
            )
        if precondition_rv and rv and str(rv) != old["metadata"]["resourceVersion"]:
            raise conflict(info.plural, info.group, name, MODIFIED)
        uid = meta_in.get("uid")
        if uid and uid != old["metadata"]["uid"]:
            raise conflict(
                info.plural,
                info.group,
                name,
                (
                    f"Precondition failed: UID in precondition: {uid}, "
                    f"UID in object meta: {old['metadata']['uid']}"
                ),
            )
        new = self._merged(info, strategy, version, old, body, sub)
        meta = new.setdefault("metadata", {})
        old_meta = old["metadata"]
        for key in _KEPT_ON_UPDATE:
            if key in old_meta:
                meta[key] = old_meta[key]
            else:
                meta.pop(key, None)
        meta.pop("resourceVersion", None)
        meta.pop("selfLink", None)
        if applied:
            managed = (body.get("metadata") or {}).get("managedFields")
            if managed:
                meta["managedFields"] = copy.deepcopy(managed)
        elif "managedFields" in old_meta and not meta.get("managedFields"):
            meta["managedFields"] = copy.deepcopy(old_meta["managedFields"])
        if old_meta.get("deletionTimestamp"):
            _no_new_finalizers(info, name, meta, old_meta)
        if sub != "status":
            strategy.default(new)
            strategy.allocate_update(new, old)
        new = decoded(info, version, new)
        new = self._mutate(strategy, "UPDATE", info, version, ns, name, new, old, dry_run, sub)
        meta = new.setdefault("metadata", {})
        strategy.validate_schema(info, version, new, name, old)
        if sub in strategy.subresources:
            causes, whole = strategy.validate_subresource(sub, new, old)
            check(info, name, causes)
            check(info, name, _validate(strategy, whole, old))
        else:
            check(info, name, _validate(strategy, new, old))
        gotypes.encode(info, version, new)
        strategy.canonicalize(new)
        if sub != "status":
            strategy.prepare_for_update(new, old)
        if info.generation and strategy.spec_of(info, new) != strategy.spec_of(info, old):
            meta["generation"] = int(old_meta.get("generation") or 0) + 1
        if manager is not None and not applied:
            _apply.record_update(
                old,
                new,
                manager=manager,
                api_version=info.api_version(version),
                time=now_string(self.clock),
                subresource=sub,
                has_status=info.status,
                unstructured=info.crd,
            )
        self._admit("UPDATE", info, version, ns, name, new, old, dry_run, sub)
        if comparable(new) == comparable(old):
            return old
        served = strategy.accept(new, self.clock) if sub != "status" else None
        if served is not None and not dry_run:
            self.registry.register(served)
        if dry_run:
            new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
            return to_storage(info, version, new)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            # The last finalizer is gone: the object goes; watchers get DELETED with the
            # state it was stored in (finalizers included), as from the apiserver.
            gone = self.remove(info, old)
            meta["resourceVersion"] = gone["metadata"]["resourceVersion"]
            return ordered(new)
        meta["resourceVersion"] = ""  # set by the storage, here for the key order
        new = to_storage(info, version, ordered(new))
        self.storage.update(info.key, (ns or "", name), new, old_meta["resourceVersion"])
        return new

    @staticmethod
    def _merged(
        info: ResourceInfo,
        strategy: Strategy,
        version: str,
        old: dict[str, Any],
        body: dict[str, Any],
        sub: str,
    ) -> dict[str, Any]:
        """The written object: the status of ``body`` (status writes), what the strategy makes
        of a write to another subresource, or all of ``body`` but the status."""
        if sub == "status":
            new = copy.deepcopy(old)
            if "status" in body:
                new["status"] = copy.deepcopy(body["status"])
            else:
                new.pop("status", None)
            return new
        if sub in strategy.subresources:
            return strategy.merge_subresource(sub, old, body)
        new = copy.deepcopy(body)
        new["apiVersion"], new["kind"] = info.api_version(version), info.kind
        if info.status:
            if "status" in old:
                new["status"] = copy.deepcopy(old["status"])
            else:
                new.pop("status", None)
        return new

    # ------------------------------------------------------------------ delete

    def delete(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        options: Mapping[str, Any],
        dry_run: bool,
    ) -> tuple[int, Any]:
        """Delete an object as a DELETE would; returns the answer's code and body."""
        obj = self.get(info, ns, name)
        meta = obj["metadata"]
        _check_preconditions(info, name, meta, options.get("preconditions") or {})
        self._admit("DELETE", info, version, ns, name, None, obj, dry_run)
        if dry_run:
            return 200, render(info, version, obj, shared=True)
        policy = options.get("propagationPolicy")
        if options.get("orphanDependents") is True:
            policy = "Orphan"
        finalizers = list(meta.get("finalizers") or ())
        strategy = for_resource(info)
        if strategy.terminates:
            return 200, render(info, version, self.gc.terminate_namespace(info, obj), shared=True)
        # registry/store.go: the apiserver itself adds the garbage collector's finalizer; the
        # collector (here: at once, when garbage_collection is on) does the rest.
        # An explicit policy replaces the other one's finalizer (also on an object already
        # being deleted); without one the finalizers stay as they are.
        if policy in ("Foreground", "Orphan", "Background"):
            wanted = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(policy)
            finalizers = [f for f in finalizers if f not in ("foregroundDeletion", "orphan")]
            if wanted:
                finalizers.append(wanted)
        if finalizers:
            if not meta.get("deletionTimestamp") or finalizers != list(
                meta.get("finalizers") or ()
            ):
                new = copy.deepcopy(obj)
                new["metadata"]["finalizers"] = finalizers
                obj = self._mark_deleted(info, obj, new)
                if self.gc.enabled:
                    self.gc.run_finalizers(info, obj)
            return 200, render(info, version, obj, shared=True)
        if strategy.graceful_delete:
            # Graceful deletion with grace period 0 (an unscheduled pod): the object is marked
            # (generation bumped, a MODIFIED event) and then removed.
            obj = self._mark_deleted(info, obj, copy.deepcopy(obj))
        removed = self.remove(info, obj)
        if strategy.return_deleted_object:
            return 200, render(info, version, removed, shared=True)
        details = {"name": name, "group": info.group, "kind": info.plural, "uid": meta["uid"]}
        return 200, {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": {k: v for k, v in details.items() if v},
        }

    def _mark_deleted(
        self, info: ResourceInfo, old: dict[str, Any], new: dict[str, Any]
    ) -> dict[str, Any]:
        """Store ``new`` (a copy of ``old``) with a deletionTimestamp, unless it has one."""
        new_meta = new["metadata"]
        if not new_meta.get("deletionTimestamp"):
            new_meta["deletionTimestamp"] = now_string(self.clock)
            new_meta["deletionGracePeriodSeconds"] = 0
            if new_meta.get("generation"):
                new_meta["generation"] = int(new_meta["generation"]) + 1
        new = ordered(new)
        self.storage.update(info.key, key_of(old), new, old["metadata"]["resourceVersion"])
        return new

    def remove(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        """Remove a stored object now; returns its last state (DELETED's resourceVersion)."""
        meta = obj["metadata"]
        old = self.storage.get(info.key, key_of(obj))
        if old is None:
            return obj
        gone = self.storage.delete(info.key, key_of(obj), old["metadata"]["resourceVersion"])
        defined = for_resource(info).defines(gone.object)
        if defined is not None:
            self._unserve(defined)
        self.gc.collect(meta["uid"])
        self.gc.sweep()
        return gone.object

    def _unserve(self, crd_info: ResourceInfo) -> None:
        """Stop serving a resource whose definition is gone, and remove its objects."""
        served = self.registry.get(crd_info.key)
        if served is not None:
            for obj in list(self.storage.range(crd_info.key).values()):
                self.remove(served, obj)
        self.registry.unregister(crd_info.key)
        self.hub.drop(lambda w: w.info.key == crd_info.key)


def _validate(
    strategy: Strategy, obj: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[Cause]:
    """The causes of a write: its metadata's, then the strategy's.

    From Kubernetes 1.37 on, a built-in kind's causes are each reported once: its strategy
    embeds ``rest.DeclarativeValidation`` (``pkg/registry/*/strategy.go``, v1.36.3 -> v1.37.2),
    so ``rest.ValidateUpdate``/``BeforeCreate`` pass the handwritten causes through
    ``ValidateDeclarativelyWithMigrationChecks`` (``staging/src/k8s.io/apiserver/pkg/registry/
    rest/validate.go``), whose ``validate.FilterCoveredHandwrittenErrors`` filters them with
    ``ErrorList.Filter``: it goes through ``ToAggregate``, which keeps the first of equal errors
    (``staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go``). Before 1.37 each
    validation pass reports its causes again.
    """
    causes = validate_object_meta(
        obj,
        old,
        kube_finalizers=strategy.kube_finalizers,
        update_passes=strategy.update_metadata_passes,
    )
    causes.extend(strategy.validate(obj, old))
    if strategy.declarative_validation and versions.at_least("1.37"):
        return list(dict.fromkeys(causes))
    return causes


def _check_name(info: ResourceInfo, strategy: Strategy, name: str, obj: dict[str, Any]) -> None:
    """Raise 422 Invalid for a missing or malformed name (with the object's other errors)."""
    causes = name_causes(name, label=strategy.name_is_label)
    if not causes:
        return
    if not name:
        raise invalid(info.kind, info.group, "", causes)
    probe = copy.deepcopy(obj)  # the other metadata errors come in the same answer
    strategy.default(probe)
    raise invalid(info.kind, info.group, name, [*causes, *_validate(strategy, probe, None)])


def _no_new_finalizers(
    info: ResourceInfo, name: str, meta: Mapping[str, Any], old_meta: Mapping[str, Any]
) -> None:
    added = [f for f in meta.get("finalizers") or () if f not in (old_meta.get("finalizers") or ())]
    if added:
        raise invalid(
            info.kind,
            info.group,
            name,
            [
                (
                    "FieldValueForbidden",
                    "metadata.finalizers",
                    (
                        "Forbidden: no new finalizers can be "
                        "added if the object is being deleted, "
                        "found new finalizers "
                        f"[]string{{{', '.join(json.dumps(f) for f in added)}}}"
                    ),
                )
            ],
        )


def _check_preconditions(
    info: ResourceInfo, name: str, meta: Mapping[str, Any], pre: Mapping[str, Any]
) -> None:
    if pre.get("uid") and pre["uid"] != meta["uid"]:
        # rest/delete.go BeforeDelete: the group-resource it names is the Kind.
        raise conflict(
            info.kind,
            info.group,
            name,
            f"the UID in the precondition ({pre['uid']}) does not match the UID in record "
            f"({meta['uid']}). The object might have been deleted and then recreated",
        )
    if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
        raise conflict(
            info.kind,
            info.group,
            name,
            f"the ResourceVersion in the precondition ({pre['resourceVersion']}) does not "
            f"match the ResourceVersion in record ({meta['resourceVersion']}). The object "
            "might have been modified",
        )
