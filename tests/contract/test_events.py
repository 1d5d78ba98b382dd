"""What the API server accepts as an Event, through core/v1 and through events.k8s.io/v1.

Upstream: pkg/apis/core/validation/events.go (``ValidateEventCreate``). A core/v1 Event without
an ``eventTime`` (what client-go's ``tools/record`` writes) passes the legacy checks only: its
``type`` is not checked, so ``SomeType`` and ``Error`` are stored. An events.k8s.io/v1 Event
(client-go's ``tools/events``) is checked strictly: ``type`` Normal or Warning, ``eventTime``,
``action``, ``reason``, ``reportingController`` and ``reportingInstance`` required, ``action``
and ``reason`` at most 128 characters, the note at most 1024, a ``series`` count of 2 or more.
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_helpers import Target, unique

from kubectrl.errors import InvalidError

CORE_EVENT = ("v1", "Event")
EVENT = ("events.k8s.io/v1", "Event")


def core_event(name: str, namespace: str, event_type: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "subject",
            "namespace": namespace,
        },
        "reason": "Tested",
        "message": "a message",
        "type": event_type,
        "source": {"component": "kubectrl-contract"},
        "firstTimestamp": "2026-01-01T00:00:00Z",
        "lastTimestamp": "2026-01-01T00:00:00Z",
        "count": 1,
    }


def event(name: str, namespace: str, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "regarding": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "subject",
            "namespace": namespace,
        },
        "reportingController": "example.com/kubectrl-contract",
        "reportingInstance": "kubectrl-contract-host",
        "action": "Testing",
        "reason": "Tested",
        "note": "a note",
        "type": "Normal",
    }
    for key, value in fields.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


@pytest.mark.parametrize("event_type", ["SomeType", "Error", "Normal", "Warning"])
async def test_core_v1_stores_an_event_of_any_type(target: Target, event_type: str) -> None:
    c, ns, name = target.client, target.namespace, unique("ev")
    created = await c.create(core_event(name, ns, event_type))
    assert created["type"] == event_type
    assert (await c.get(CORE_EVENT, name, namespace=ns))["type"] == event_type


async def test_events_v1_stores_a_full_event(target: Target) -> None:
    c, ns, name = target.client, target.namespace, unique("ev")
    related = {"apiVersion": "v1", "kind": "Pod", "name": "p", "namespace": ns}
    created = await c.create(event(name, ns, related=related, type="Warning"))
    assert created["related"] == related
    assert created["action"] == "Testing"
    assert created["reportingController"] == "example.com/kubectrl-contract"
    assert created["type"] == "Warning"
    series = {"count": 2, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}
    patched = await c.patch(EVENT, name, {"series": series}, namespace=ns)
    assert patched["series"] == series


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"type": "SomeType"}, ["type"]),
        ({"type": "Error"}, ["type"]),
        ({"type": None}, ["type"]),
        ({"action": None}, ["action"]),
        ({"action": "A" * 129}, ["action"]),
        ({"reason": None}, ["reason"]),
        ({"reason": "R" * 129}, ["reason"]),
        ({"note": "n" * 1025}, ["message"]),
        ({"reportingInstance": None}, ["reportingInstance"]),
        ({"reportingInstance": "i" * 129}, ["reportingInstance"]),
        ({"reportingController": "not a qualified name"}, ["reportingController"]),
        ({"eventTime": None}, ["eventTime"]),
        (
            {"series": {"count": 1, "lastObservedTime": "2026-01-01T00:00:05.000000Z"}},
            ["series.count"],
        ),
    ],
    ids=[
        "type-SomeType",
        "type-Error",
        "type-missing",
        "action-missing",
        "action-129",
        "reason-missing",
        "reason-129",
        "note-1025",
        "instance-missing",
        "instance-129",
        "controller-not-qualified",
        "eventTime-missing",
        "series-count-1",
    ],
)
async def test_events_v1_refuses(
    target: Target, fields: dict[str, Any], expected: list[str]
) -> None:
    c, ns, name = target.client, target.namespace, unique("ev")
    with pytest.raises(InvalidError) as info:
        await c.create(event(name, ns, **fields))
    assert sorted({cause.field for cause in info.value.causes}) == expected, info.value


async def test_events_v1_cluster_scoped_regarding_goes_to_default(target: Target) -> None:
    c, name = target.client, unique("ev")
    body = event(name, "default", regarding={"apiVersion": "v1", "kind": "Node", "name": "n"})
    created = await c.create(body)
    assert created["metadata"]["namespace"] == "default"


async def test_core_v1_refuses_an_event_in_another_namespace_than_its_object(
    target: Target,
) -> None:
    c, ns, name = target.client, target.namespace, unique("ev")
    body = core_event(name, ns, "Normal")
    body["involvedObject"]["namespace"] = "elsewhere"
    with pytest.raises(InvalidError) as info:
        await c.create(body)
    assert [cause.field for cause in info.value.causes] == ["involvedObject.namespace"]


@pytest.mark.fake_xfail(
    "Events of core v1 and events.k8s.io/v1 are one resource on the apiserver, two in the fake"
)
async def test_an_events_v1_event_is_read_through_core_v1(target: Target) -> None:
    """pkg/apis/events/v1 conversion: ``regarding`` is ``involvedObject``, ``note`` is
    ``message`` (pkg/registry/core/event: one storage for both groups)."""
    c, ns, name = target.client, target.namespace, unique("ev")
    await c.create(event(name, ns))
    core = await c.get(CORE_EVENT, name, namespace=ns)
    assert core["involvedObject"]["name"] == "subject"
    assert core["message"] == "a note"
