"""``predicate.NewPredicateFuncs(filter)`` and the plain-function trap.

controller-runtime pkg/predicate/predicate.go: ``NewPredicateFuncs(filter func(client.Object)
bool)`` applies the filter to ``e.Object`` for create, delete and generic events and to
``e.ObjectNew`` for updates. kubectrl's plain-function predicate takes the *event* (kept for
compatibility), so a Go porter who wrote the filter of an object as a plain function got a
TypeError/AttributeError on every event, logged and dropped. :func:`new_predicate_funcs` is the
Go function; an event used as an object says so, naming the event and the fix.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kubectrl.runtime._source import dispatch
from kubectrl.runtime.handler import (
    CreateEvent,
    DeleteEvent,
    GenericEvent,
    UpdateEvent,
    enqueue_request_for_object,
)
from kubectrl.runtime.predicate import new_predicate_funcs


def obj(name: str, app: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": {"app": app}}}


def is_web(o: Any) -> bool:
    return bool(o["metadata"]["labels"].get("app") == "web")


def test_the_filter_gets_the_object_and_the_new_object_of_an_update() -> None:
    p = new_predicate_funcs(is_web)
    assert p.create(CreateEvent(obj("a", "web")))
    assert not p.create(CreateEvent(obj("a", "db")))
    assert p.update(UpdateEvent(obj("a", "db"), obj("a", "web")))
    assert not p.update(UpdateEvent(obj("a", "web"), obj("a", "db")))
    assert p.delete(DeleteEvent(obj("a", "web")))
    assert not p.generic(GenericEvent(obj("a", "db")))


def test_new_predicate_funcs_refuses_what_is_not_callable() -> None:
    with pytest.raises(TypeError, match="new_predicate_funcs"):
        new_predicate_funcs("app=web")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "event",
    [CreateEvent(obj("a", "web")), UpdateEvent(obj("a", "db"), obj("a", "web"))],
)
def test_an_event_used_as_an_object_names_the_event_and_the_fix(event: Any) -> None:
    with pytest.raises(TypeError) as caught:
        event["metadata"]
    message = str(caught.value)
    assert type(event).__name__ in message, message
    assert "new_predicate_funcs" in message, message
    with pytest.raises(AttributeError) as missing:
        event.get("metadata")
    assert "new_predicate_funcs" in str(missing.value)
    with pytest.raises(AttributeError, match="new_predicate_funcs"):
        _ = event.metadata


def test_the_logged_error_of_an_object_filter_used_as_a_plain_function_says_what_to_do(
    caplog: pytest.LogCaptureFixture,
) -> None:
    enqueued: list[Any] = []
    with caplog.at_level(logging.ERROR):
        dispatch(
            UpdateEvent(obj("a", "db"), obj("a", "web")),
            enqueue_request_for_object(),
            [is_web],
            enqueued.append,
        )
    assert enqueued == []
    [record] = [r for r in caplog.records if "event dropped" in r.getMessage()]
    assert "new_predicate_funcs" in record.getMessage()
    enqueued.clear()
    dispatch(
        UpdateEvent(obj("a", "db"), obj("a", "web")),
        enqueue_request_for_object(),
        [new_predicate_funcs(is_web)],
        enqueued.append,
    )
    assert len(enqueued) == 1
