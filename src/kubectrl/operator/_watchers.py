"""The seam between the operator's per-kind dispatcher and what follows objects' lives.

The dispatcher (``kubectrl.operator._operator``) runs one controller per kind registered with
an :class:`~kubectrl.operator.Operator`; the daemons and timers (``kubectrl.operator._daemons``)
are an :class:`ObjectWatcher` it drives. The dispatcher calls, for one kind, on its reconcile of
one key (one worker per key, so never concurrently for the same key):

- :meth:`ObjectWatcher.seen` with the object as the cache holds it, every time the key is
  reconciled while the object exists and is not being deleted (a change, a resync, a restart);
- :meth:`ObjectWatcher.gone` when the object is being deleted (``deletionTimestamp`` set) or is
  no longer found; the dispatcher keeps its finalizer (if any watcher asked for one through
  :meth:`ObjectWatcher.needs_finalizer`) until ``gone`` returns ``True``, and requeues the key
  after ``requeue_after`` seconds while it returns ``False``;
- :meth:`ObjectWatcher.stop` once, when the operator stops (manager shutdown or lost
  leadership); it must return only when nothing it started is still running.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from kubectrl.objects import ObjectKey

__all__ = ["KindKey", "ObjectWatcher"]

#: ``(apiVersion, kind)`` of a registered kind.
KindKey = tuple[str, str]


class ObjectWatcher(Protocol):
    """What the dispatcher drives for each object of the kinds it serves."""

    def kinds(self) -> set[KindKey]:
        """The kinds this watcher needs controllers for (registered before the operator starts)."""
        ...

    def needs_finalizer(self, kind: KindKey, obj: Mapping[str, Any]) -> bool:
        """Whether the dispatcher must hold a finalizer on ``obj`` so ``gone`` runs before the
        object disappears."""
        ...

    async def seen(self, kind: KindKey, obj: Mapping[str, Any]) -> None:
        """``obj`` exists (and is not being deleted): start or keep what follows it."""
        ...

    async def gone(self, kind: KindKey, key: ObjectKey, obj: Mapping[str, Any] | None) -> bool:
        """``key`` is being deleted (``obj`` as last seen, or ``None`` once it no longer
        exists): stop what follows it. ``True`` when everything has stopped."""
        ...

    async def stop(self) -> None:
        """Stop everything, for good (the operator stops)."""
        ...
