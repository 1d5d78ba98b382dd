"""Garbage collection and namespace termination, done at once where a cluster does it later.

What kube-controller-manager's garbage collector and namespace controller do, run synchronously
after the write that calls for it (when garbage collection is on):

- an owner deleted in the background: its dependents are deleted, or just lose the owner
  reference when another owner of theirs still exists;
- ``orphan``: the dependents lose the owner reference, then the finalizer goes;
- ``foregroundDeletion``: the dependents are deleted (in the foreground too) and the owner goes
  when none is left;
- a terminating namespace: its objects are deleted and it goes when none is left (finalizers
  and all, even without garbage collection, as the namespace controller runs in the apiserver's
  place here).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Protocol

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._resources.objects import key_of, now_string
from kubectrl.apiserver._resources.registry import Registry
from kubectrl.apiserver._storage.memory import Storage
from kubectrl.apiserver._strategies import for_resource

__all__ = ["GarbageCollector", "Writer"]


class Writer(Protocol):
    """The writes the collector makes (the core's object store implements them)."""

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
        """Update an object as a PUT would."""

    def delete(
        self,
        info: ResourceInfo,
        version: str,
        ns: str | None,
        name: str,
        options: Mapping[str, Any],
        dry_run: bool,
    ) -> tuple[int, Any]:
        """Delete an object as a DELETE would."""

    def remove(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        """Remove a stored object now (no finalizers left)."""


class GarbageCollector:
    """Owner references and terminating namespaces, over a storage and a writer."""

    def __init__(
        self,
        storage: Storage,
        registry: Registry,
        writer: Writer,
        clock: Clock,
        *,
        enabled: bool = True,
    ) -> None:
        self.storage = storage
        self.registry = registry
        self.writer = writer
        self.clock = clock
        self.enabled = enabled

    def __repr__(self) -> str:
        return f"GarbageCollector(enabled={self.enabled})"

    def _rewrite(self, info: ResourceInfo, new: dict[str, Any]) -> None:
        meta = new["metadata"]
        self.writer.update(
            info,
            info.versions[0],
            meta.get("namespace"),
            meta["name"],
            new,
            sub="",
            manager=None,
            dry_run=False,
            precondition_rv=False,
        )

    def run_finalizers(self, info: ResourceInfo, obj: dict[str, Any]) -> None:
        """Act on the ``orphan`` or ``foregroundDeletion`` finalizer of an object being deleted."""
        meta = obj["metadata"]
        uid = meta["uid"]
        if "orphan" in meta.get("finalizers", ()):
            self.orphan(uid)
            current = copy.deepcopy(obj)
            current["metadata"]["finalizers"] = [f for f in meta["finalizers"] if f != "orphan"]
            self._rewrite(info, current)
        elif "foregroundDeletion" in meta.get("finalizers", ()):
            for dep_info, dep in self.dependents(uid):
                dm = dep["metadata"]
                if dm.get("deletionTimestamp"):
                    continue
                self.writer.delete(
                    dep_info,
                    dep_info.versions[0],
                    dm.get("namespace"),
                    dm["name"],
                    {"propagationPolicy": "Foreground"},
                    False,
                )
            self.sweep()

    def dependents(self, uid: str) -> list[tuple[ResourceInfo, dict[str, Any]]]:
        """The stored objects with an owner reference to ``uid``."""
        out = []
        for info in self.registry.infos():
            for obj in self.storage.range(info.key).values():
                refs = obj["metadata"].get("ownerReferences") or ()
                if any(r.get("uid") == uid for r in refs):
                    out.append((info, obj))
        return out

    def _exists_uid(self, uid: str) -> bool:
        return any(
            o["metadata"].get("uid") == uid
            for info in self.registry.infos()
            for o in self.storage.range(info.key).values()
        )

    def orphan(self, uid: str) -> None:
        """Remove the owner references to ``uid`` from its dependents."""
        for info, dep in self.dependents(uid):
            new = copy.deepcopy(dep)
            refs = [r for r in new["metadata"].get("ownerReferences") or () if r.get("uid") != uid]
            if refs:
                new["metadata"]["ownerReferences"] = refs
            else:
                new["metadata"].pop("ownerReferences", None)
            self._rewrite(info, new)

    def collect(self, uid: str) -> None:
        """Background garbage collection of the dependents of a deleted owner."""
        if not self.enabled:
            return
        for info, dep in self.dependents(uid):
            meta = dep["metadata"]
            current = self.storage.get(info.key, key_of(dep))
            if current is None:
                continue
            refs = current["metadata"].get("ownerReferences") or ()
            if any(r.get("uid") != uid and self._exists_uid(str(r.get("uid"))) for r in refs):
                new = copy.deepcopy(current)
                new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
                self._rewrite(info, new)
            elif not current["metadata"].get("deletionTimestamp"):
                self.writer.delete(
                    info, info.versions[0], meta.get("namespace"), meta["name"], {}, False
                )

    def sweep(self) -> None:
        """Finish foreground deletions and terminating namespaces whose dependents are gone."""
        for info in self.registry.infos():
            for obj in list(self.storage.range(info.key).values()):
                meta = obj["metadata"]
                if not meta.get("deletionTimestamp"):
                    continue
                if (
                    self.enabled
                    and "foregroundDeletion" in (meta.get("finalizers") or ())
                    and not self.dependents(meta["uid"])
                ):
                    new = copy.deepcopy(obj)
                    new["metadata"]["finalizers"] = [
                        f for f in meta["finalizers"] if f != "foregroundDeletion"
                    ]
                    self._rewrite(info, new)
                elif (
                    for_resource(info).terminates
                    and not meta.get("finalizers")
                    and not self._in_namespace(meta["name"])
                ):
                    self.writer.remove(info, obj)

    def _in_namespace(self, ns: str) -> bool:
        return any(
            info.namespaced and any(k[0] == ns for k in self.storage.range(info.key))
            for info in self.registry.infos()
        )

    def terminate_namespace(self, info: ResourceInfo, obj: dict[str, Any]) -> dict[str, Any]:
        """Mark a namespace Terminating and delete what is in it; returns it as stored now."""
        name = obj["metadata"]["name"]
        if not obj["metadata"].get("deletionTimestamp"):
            new = copy.deepcopy(obj)
            new["metadata"]["deletionTimestamp"] = now_string(self.clock)
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            new.setdefault("status", {})["phase"] = "Terminating"
            self.storage.update(info.key, ("", name), new, obj["metadata"]["resourceVersion"])
            for res in self.registry.infos():
                if not res.namespaced:
                    continue
                stored = self.storage.range(res.key)
                for child in [o for k, o in stored.items() if k[0] == name]:
                    if child["metadata"].get("deletionTimestamp"):
                        continue
                    self.writer.delete(
                        res, res.versions[0], name, child["metadata"]["name"], {}, False
                    )
            self.sweep()
        return self.storage.get(info.key, ("", name)) or obj
