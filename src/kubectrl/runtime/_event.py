"""The events sources deliver to handlers and predicates (controller-runtime's ``event``).

Objects are plain dicts as the API server sent them; treat them as read-only (they may be shared
with a cache).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeAlias

__all__ = ["CreateEvent", "DeleteEvent", "Event", "GenericEvent", "Object", "UpdateEvent"]

Object: TypeAlias = Mapping[str, Any]

_NOT_AN_OBJECT = (
    "{event} is an event, not an object: a plain-function predicate receives the event (its "
    "object is event.{attribute}); for a function of the object, as Go's "
    "predicate.NewPredicateFuncs(f), use kubectrl.runtime.predicate.new_predicate_funcs(f)"
)


class _NotAnObject:
    """Errors that say so when an event is read as the object it carries (``event["metadata"]``,
    ``event.get(...)``, ``event.metadata``): the mistake of a predicate written for objects."""

    __slots__ = ()

    def _hint(self) -> str:
        attribute = "object_new" if isinstance(self, UpdateEvent) else "object"
        return _NOT_AN_OBJECT.format(event=type(self).__name__, attribute=attribute)

    def __getitem__(self, key: object) -> Any:
        raise TypeError(f"{self._hint()} (reading [{key!r}])")

    if not TYPE_CHECKING:  # a __getattr__ would hide misspelt attributes from mypy

        def __getattr__(self, name: str) -> Any:
            # Only called for attributes the event does not have; dunders stay plain.
            if name.startswith("__"):
                raise AttributeError(name)
            raise AttributeError(f"{self._hint()} (reading .{name})")


@dataclasses.dataclass(frozen=True)
class CreateEvent(_NotAnObject):
    """An object appeared (or was listed at start-up).

    Example: ``CreateEvent({"metadata": {"name": "a"}})``.
    """

    object: Object
    is_in_initial_list: bool = False


@dataclasses.dataclass(frozen=True)
class UpdateEvent(_NotAnObject):
    """An object changed from ``object_old`` to ``object_new``.

    Example: ``UpdateEvent(old, new)``.
    """

    object_old: Object
    object_new: Object


@dataclasses.dataclass(frozen=True)
class DeleteEvent(_NotAnObject):
    """An object was deleted; ``delete_state_unknown`` when only its last cached state is known
    (the informer inferred the delete from a relist).

    Example: ``DeleteEvent(obj)``.
    """

    object: Object
    delete_state_unknown: bool = False


@dataclasses.dataclass(frozen=True)
class GenericEvent(_NotAnObject):
    """Anything else that should trigger a reconcile (an external system, a timer).

    Example: ``GenericEvent({"metadata": {"name": "a", "namespace": "ns"}})``.
    """

    object: Object


Event: TypeAlias = CreateEvent | UpdateEvent | DeleteEvent | GenericEvent
