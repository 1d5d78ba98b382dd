"""The blocking ``Client`` (one AsyncClient on a private loop in a thread) works the same on both
targets: reads, writes, errors and watches."""

from __future__ import annotations

import asyncio

import pytest
from contract_helpers import CM, Target, configmap, unique

from kubectrl.client import BlockingClient, EventType
from kubectrl.errors import ConflictError, NotFoundError


def _crud(target: Target, ns: str, name: str) -> list[str]:
    seen: list[str] = []
    with BlockingClient(target.config) as client:
        created = client.create(configmap(name, ns, {"a": "1"}))
        seen.append(client.get(CM, name, namespace=ns)["data"]["a"])
        client.patch(CM, name, {"data": {"a": "2"}}, namespace=ns)
        created["data"]["a"] = "3"
        with pytest.raises(ConflictError):
            client.update(created)
        listed = client.list(CM, namespace=ns, field_selector=f"metadata.name={name}")
        seen.append(listed["items"][0]["data"]["a"])
        client.delete(CM, name, namespace=ns)
        with pytest.raises(NotFoundError):
            client.get(CM, name, namespace=ns)
    return seen


async def test_blocking_client_crud_and_errors(target: Target) -> None:
    seen = await asyncio.to_thread(_crud, target, target.namespace, unique("blocking"))
    assert seen == ["1", "2"]


def _watch(target: Target, ns: str, name: str) -> list[tuple[EventType, str]]:
    with BlockingClient(target.config) as client:
        rv = client.list(CM, namespace=ns)["metadata"]["resourceVersion"]
        client.create(configmap(name, ns))
        client.delete(CM, name, namespace=ns)
        events: list[tuple[EventType, str]] = []
        with client.watch(CM, namespace=ns, resource_version=rv, timeout_seconds=30) as stream:
            for event in stream:
                if event.type is EventType.BOOKMARK:
                    continue
                events.append((event.type, event.object["metadata"]["name"]))
                if event.type is EventType.DELETED:
                    break
        return events


async def test_blocking_client_watch(target: Target) -> None:
    ns = await target.new_namespace()
    events = await asyncio.wait_for(asyncio.to_thread(_watch, target, ns, "w"), 60)
    assert events == [(EventType.ADDED, "w"), (EventType.DELETED, "w")]
