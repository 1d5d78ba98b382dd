"""Predicates: which events are worth a reconcile (controller-runtime's ``predicate``).

A predicate answers, per event, "should this reach the handler?". The built-ins filter updates
only (creates, deletes and generic events pass), as controller-runtime's do:

- :data:`generation_changed`: ``metadata.generation`` changed, so status-only updates (which do
  not bump the generation when the status subresource is on) are skipped.
- :data:`labels_changed`, :data:`annotations_changed`: the labels / annotations changed.
- :data:`resource_version_changed`: anything changed (skips informer resyncs).
- :func:`label_selector`: the object's labels match a selector in any form
  :mod:`kubectrl.labels` accepts (all event types).

Any ``Callable[[Event], bool]`` is a predicate too (it receives the event); combine them with
:func:`and_`, :func:`or_` and :func:`not_`. :func:`new_predicate_funcs` makes one from a function
of the object, as Go's ``predicate.NewPredicateFuncs``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeAlias, runtime_checkable

from kubectrl.labels import LabelSelectorLike, parse
from kubectrl.objects import metadata_of
from kubectrl.runtime._event import (
    CreateEvent,
    DeleteEvent,
    Event,
    GenericEvent,
    Object,
    UpdateEvent,
)

__all__ = [
    "Predicate",
    "PredicateFuncs",
    "PredicateLike",
    "and_",
    "annotations_changed",
    "as_predicate",
    "generation_changed",
    "label_selector",
    "labels_changed",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
]


@runtime_checkable
class Predicate(Protocol):
    """Filters events per type; each method returns ``True`` to let the event through."""

    def create(self, event: CreateEvent) -> bool:
        """Whether a create event passes."""
        ...

    def update(self, event: UpdateEvent) -> bool:
        """Whether an update event passes."""
        ...

    def delete(self, event: DeleteEvent) -> bool:
        """Whether a delete event passes."""
        ...

    def generic(self, event: GenericEvent) -> bool:
        """Whether a generic event passes."""
        ...


PredicateLike: TypeAlias = "Predicate | Callable[[Event], bool]"


def _true(_: Any) -> bool:
    return True


@dataclasses.dataclass(frozen=True)
class PredicateFuncs:
    """A :class:`Predicate` from one function per event type (missing ones let events through).

    controller-runtime's ``predicate.Funcs``.

    Example::

        only_updates = PredicateFuncs(create=lambda e: False, delete=lambda e: False)
    """

    create_func: Callable[[CreateEvent], bool] = _true
    update_func: Callable[[UpdateEvent], bool] = _true
    delete_func: Callable[[DeleteEvent], bool] = _true
    generic_func: Callable[[GenericEvent], bool] = _true

    def __init__(
        self,
        *,
        create: Callable[[CreateEvent], bool] = _true,
        update: Callable[[UpdateEvent], bool] = _true,
        delete: Callable[[DeleteEvent], bool] = _true,
        generic: Callable[[GenericEvent], bool] = _true,
    ) -> None:
        object.__setattr__(self, "create_func", create)
        object.__setattr__(self, "update_func", update)
        object.__setattr__(self, "delete_func", delete)
        object.__setattr__(self, "generic_func", generic)

    def create(self, event: CreateEvent) -> bool:
        """Apply ``create``."""
        return bool(self.create_func(event))

    def update(self, event: UpdateEvent) -> bool:
        """Apply ``update``."""
        return bool(self.update_func(event))

    def delete(self, event: DeleteEvent) -> bool:
        """Apply ``delete``."""
        return bool(self.delete_func(event))

    def generic(self, event: GenericEvent) -> bool:
        """Apply ``generic``."""
        return bool(self.generic_func(event))


def new_predicate_funcs(accepts: Callable[[Object], bool]) -> PredicateFuncs:
    """A predicate that passes the events whose object ``accepts`` accepts.

    controller-runtime's ``predicate.NewPredicateFuncs(filter)``: ``accepts`` receives the
    object of a create, delete or generic event and the *new* object of an update. (A plain
    function given as a predicate receives the event itself.)

    Example::

        >>> from kubectrl.runtime.handler import UpdateEvent
        >>> web = new_predicate_funcs(lambda obj: obj["metadata"].get("labels") == {"app": "web"})
        >>> web.update(UpdateEvent({"metadata": {}}, {"metadata": {"labels": {"app": "web"}}}))
        True
    """
    if not callable(accepts):
        raise TypeError(f"new_predicate_funcs: give a function of the object, not {accepts!r}")
    return PredicateFuncs(
        create=lambda e: accepts(e.object),
        update=lambda e: accepts(e.object_new),
        delete=lambda e: accepts(e.object),
        generic=lambda e: accepts(e.object),
    )


class _FromFunction:
    def __init__(self, func: Callable[[Event], bool]) -> None:
        self._func = func

    def create(self, event: CreateEvent) -> bool:
        return bool(self._func(event))

    def update(self, event: UpdateEvent) -> bool:
        return bool(self._func(event))

    def delete(self, event: DeleteEvent) -> bool:
        return bool(self._func(event))

    def generic(self, event: GenericEvent) -> bool:
        return bool(self._func(event))

    def __repr__(self) -> str:
        return f"as_predicate({self._func!r})"


def as_predicate(predicate: PredicateLike) -> Predicate:
    """A :class:`Predicate` from a predicate or a plain ``Callable[[Event], bool]``.

    Example::

        >>> p = as_predicate(lambda e: True)
        >>> p.create(CreateEvent({}))
        True
    """
    if isinstance(predicate, Predicate):
        return predicate
    if callable(predicate):
        return _FromFunction(predicate)
    raise TypeError(f"not a predicate: {predicate!r}")


def matches(predicate: Predicate, event: Event) -> bool:
    """Dispatch ``event`` to the predicate method for its type."""
    if isinstance(event, CreateEvent):
        return predicate.create(event)
    if isinstance(event, UpdateEvent):
        return predicate.update(event)
    if isinstance(event, DeleteEvent):
        return predicate.delete(event)
    return predicate.generic(event)


def _metadata_changed(field: str, *, mapping: bool = False) -> Predicate:
    """Updates pass when ``metadata.<field>`` differs (a missing mapping equals an empty one)."""

    def update(event: UpdateEvent) -> bool:
        old = metadata_of(event.object_old).get(field)
        new = metadata_of(event.object_new).get(field)
        if mapping:
            old, new = old or {}, new or {}
        return bool(old != new)

    update.__name__ = f"{field}_changed"
    return PredicateFuncs(update=update)


#: Updates pass only when ``metadata.generation`` changed (spec changes, not status).
generation_changed: Predicate = _metadata_changed("generation")
#: Updates pass only when ``metadata.labels`` changed.
labels_changed: Predicate = _metadata_changed("labels", mapping=True)
#: Updates pass only when ``metadata.annotations`` changed.
annotations_changed: Predicate = _metadata_changed("annotations", mapping=True)
#: Updates pass only when ``metadata.resourceVersion`` changed (resyncs are skipped).
resource_version_changed: Predicate = _metadata_changed("resourceVersion")


def label_selector(selector: LabelSelectorLike) -> Predicate:
    """Events pass when the object's labels match ``selector`` (for updates: the new object).

    ``selector`` is any form :func:`kubectrl.labels.parse` takes: a ``metav1.LabelSelector``
    dict (``matchLabels``, ``matchExpressions`` with ``In``/``NotIn``/``Exists``/
    ``DoesNotExist``), a plain ``{label: value}`` mapping, a selector string
    (``"app=web,!canary"``) or a :class:`~kubectrl.labels.LabelSelector`. An empty selector
    matches everything, as in Kubernetes; a malformed one raises ``ValueError`` here, not per
    event.

    Example::

        >>> from kubectrl.runtime.handler import CreateEvent
        >>> p = label_selector({"matchLabels": {"app": "web"}})
        >>> p.create(CreateEvent({"metadata": {"labels": {"app": "web"}}}))
        True
    """
    parsed = parse(selector)

    def match(obj: Object) -> bool:
        return parsed.matches_object(obj)

    return PredicateFuncs(
        create=lambda e: match(e.object),
        update=lambda e: match(e.object_new),
        delete=lambda e: match(e.object),
        generic=lambda e: match(e.object),
    )


def and_(*predicates: PredicateLike) -> Predicate:
    """Passes when every predicate passes (short-circuits; ``and_()`` passes everything)."""
    resolved = [as_predicate(p) for p in predicates]
    return _combine(resolved, all)


def or_(*predicates: PredicateLike) -> Predicate:
    """Passes when any predicate passes (short-circuits; ``or_()`` passes nothing)."""
    resolved = [as_predicate(p) for p in predicates]
    return _combine(resolved, any)


def not_(predicate: PredicateLike) -> Predicate:
    """Passes when ``predicate`` does not.

    Example::

        >>> from kubectrl.runtime.handler import GenericEvent
        >>> not_(lambda e: False).generic(GenericEvent({}))
        True
    """
    inner = as_predicate(predicate)
    return as_predicate(lambda event: not matches(inner, event))


def _combine(predicates: list[Predicate], how: Callable[[Iterable[bool]], bool]) -> Predicate:
    return as_predicate(lambda event: how(matches(p, event) for p in predicates))
