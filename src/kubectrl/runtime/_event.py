"""The events sources deliver to handlers and predicates (controller-runtime's ``event``).

Objects are plain dicts as the API server sent them; treat them as read-only (they may be shared
with a cache).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeAlias

__all__ = ["CreateEvent", "DeleteEvent", "Event", "GenericEvent", "Object", "UpdateEvent"]

Object: TypeAlias = Mapping[str, Any]


@dataclasses.dataclass(frozen=True)
class CreateEvent:
    """An object appeared (or was listed at start-up).

    Example: ``CreateEvent({"metadata": {"name": "a"}})``.
    """

    object: Object
    is_in_initial_list: bool = False


@dataclasses.dataclass(frozen=True)
class UpdateEvent:
    """An object changed from ``object_old`` to ``object_new``.

    Example: ``UpdateEvent(old, new)``.
    """

    object_old: Object
    object_new: Object


@dataclasses.dataclass(frozen=True)
class DeleteEvent:
    """An object was deleted; ``delete_state_unknown`` when only its last cached state is known
    (the informer inferred the delete from a relist).

    Example: ``DeleteEvent(obj)``.
    """

    object: Object
    delete_state_unknown: bool = False


@dataclasses.dataclass(frozen=True)
class GenericEvent:
    """Anything else that should trigger a reconcile (an external system, a timer).

    Example: ``GenericEvent({"metadata": {"name": "a", "namespace": "ns"}})``.
    """

    object: Object


Event: TypeAlias = CreateEvent | UpdateEvent | DeleteEvent | GenericEvent
