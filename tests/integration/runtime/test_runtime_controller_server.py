"""A ConfigMap -> owned Secret controller against the real API server.

The informer cache is not part of this package yet, so the test feeds the controller from a
small list+watch source written here; the Builder will plug the informer-backed source into the
same ``Source`` protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Controller, Request, Result, TerminalError
from kubectrl.runtime._handler import EventHandlerLike, resolve_handler_scope
from kubectrl.runtime._predicate import PredicateLike
from kubectrl.runtime._source import dispatch
from kubectrl.runtime.controllerutil import (
    OperationResult,
    create_or_patch,
    create_or_update,
    set_controller_reference,
)
from kubectrl.runtime.handler import (
    CreateEvent,
    DeleteEvent,
    UpdateEvent,
    enqueue_request_for_object,
    enqueue_request_for_owner,
)

pytestmark = pytest.mark.integration
DEADLINE = 60.0
CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")


async def eventually(cond: Callable[[], bool], timeout: float = DEADLINE) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached before the deadline"
        await asyncio.sleep(0.05)


@pytest.fixture
async def client(kubeconfig: Path) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(load_kubeconfig(kubeconfig)) as c:
        yield c


class WatchSource:
    """List, then watch one namespace; turns changes into events for a handler."""

    def __init__(
        self,
        client: AsyncClient,
        resource: tuple[str, str],
        namespace: str,
        handler: EventHandlerLike,
        predicates: list[PredicateLike] | None = None,
    ) -> None:
        self.name = f"watch source: {resource[0]}, Kind={resource[1]}"
        self._client, self._resource, self._ns = client, resource, namespace
        self._handler, self._predicates = handler, predicates or []
        self._known: dict[str, dict[str, Any]] = {}
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self, enqueue: Callable[[Request], None]) -> None:
        # As KindSource does: an owner handler learns its owner kind's scope from discovery.
        await resolve_handler_scope(self._handler, self._client.resource)
        self._task = asyncio.create_task(self._run(enqueue))

    async def wait_for_sync(self, timeout: float) -> None:
        await asyncio.wait_for(self._synced.wait(), timeout)

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self, enqueue: Callable[[Request], None]) -> None:
        listed = await self._client.list(self._resource, namespace=self._ns)
        for item in listed["items"]:
            self._known[item["metadata"]["name"]] = item
            dispatch(CreateEvent(item, True), self._handler, self._predicates, enqueue)
        self._synced.set()
        rv = listed["metadata"]["resourceVersion"]
        async with self._client.watch(self._resource, namespace=self._ns, resource_version=rv) as s:
            async for ev in s:
                obj, kind = ev.object, ev.type.value
                name = obj["metadata"].get("name")
                if kind == "ADDED":
                    event: Any = CreateEvent(obj)
                elif kind == "MODIFIED":
                    event = UpdateEvent(self._known.get(name, obj), obj)
                elif kind == "DELETED":
                    event = DeleteEvent(obj)
                else:
                    continue
                if kind == "DELETED":
                    self._known.pop(name, None)
                else:
                    self._known[name] = obj
                dispatch(event, self._handler, self._predicates, enqueue)


class SecretFromConfigMap:
    """Keeps a Secret named like each ConfigMap with the same data, owned by it."""

    def __init__(self, client: AsyncClient) -> None:
        self.client = client
        self.log: list[tuple[str, str]] = []

    async def reconcile(self, request: Request) -> Result | None:
        try:
            cm = await self.client.get(CM, request.name, namespace=request.namespace)
        except NotFoundError:
            self.log.append((request.name, "gone"))
            return None
        secret: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": request.name, "namespace": request.namespace},
        }

        def mutate(s: dict[str, Any]) -> None:
            s["stringData"] = dict(cm.get("data") or {})
            s.pop("data", None) if s.get("data") is None else None
            set_controller_reference(cm, s)

        result = await create_or_update(self.client, secret, mutate)
        self.log.append((request.name, result.value))
        return None


async def secret_data(client: AsyncClient, ns: str, name: str) -> dict[str, str] | None:
    import base64

    try:
        s = await client.get(SECRET, name, namespace=ns)
    except NotFoundError:
        return None
    return {k: base64.b64decode(v).decode() for k, v in (s.get("data") or {}).items()}


async def wait_secret(client: AsyncClient, ns: str, name: str, data: dict[str, str]) -> None:
    end = time.monotonic() + DEADLINE
    while await secret_data(client, ns, name) != data:
        assert time.monotonic() < end, f"secret {name} never had {data}"
        await asyncio.sleep(0.1)


async def test_configmap_to_owned_secret_controller(client: AsyncClient, namespace: str) -> None:
    rec = SecretFromConfigMap(client)
    cms = WatchSource(client, CM, namespace, enqueue_request_for_object())
    secrets = WatchSource(client, SECRET, namespace, enqueue_request_for_owner("v1", "ConfigMap"))
    controller = Controller("cm-to-secret", rec, sources=[cms, secrets])
    await controller.start()
    try:
        cm = await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "app", "namespace": namespace},
                "data": {"k": "v1"},
            }
        )
        await wait_secret(client, namespace, "app", {"k": "v1"})
        secret = await client.get(SECRET, "app", namespace=namespace)
        (ref,) = secret["metadata"]["ownerReferences"]
        assert ref["uid"] == cm["metadata"]["uid"]
        assert ref["controller"] is True
        assert ref["blockOwnerDeletion"] is True

        cm["data"] = {"k": "v2"}
        await client.update(cm)
        await wait_secret(client, namespace, "app", {"k": "v2"})

        # Someone edits the owned Secret: its change enqueues the owner, which repairs it.
        secret = await client.get(SECRET, "app", namespace=namespace)
        secret["stringData"] = {"k": "tampered"}
        await client.update(secret)
        await wait_secret(client, namespace, "app", {"k": "v2"})

        await client.delete(CM, "app", namespace=namespace)
        await eventually(lambda: ("app", "gone") in rec.log)
        assert ("app", "created") in rec.log
        assert ("app", "updated") in rec.log
    finally:
        await controller.stop()
        await cms.stop()
        await secrets.stop()


async def test_error_backoff_terminal_and_requeue_after(
    client: AsyncClient, namespace: str
) -> None:
    calls: dict[str, int] = {}
    flaky_requeues: list[int] = []  # num_requeues seen at the start of each flaky reconcile

    async def reconcile(request: Request) -> Result | None:
        calls[request.name] = calls.get(request.name, 0) + 1
        if request.name == "flaky":
            flaky_requeues.append(controller.queue.num_requeues(request))
        if request.name == "flaky" and calls["flaky"] <= 3:
            raise RuntimeError("not yet")
        if request.name == "broken":
            raise TerminalError("cannot ever work")
        if request.name == "later" and calls["later"] == 1:
            return Result(requeue_after=0.5)
        await client.get(CM, request.name, namespace=namespace)
        return None

    for name in ("flaky", "broken", "later"):
        await client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}},
            namespace=namespace,
        )
    source = WatchSource(client, CM, namespace, enqueue_request_for_object())
    controller = Controller("errors", reconcile, sources=[source])
    await controller.start()
    try:
        flaky = Request(namespace, "flaky")
        await eventually(lambda: calls.get("flaky", 0) >= 4)
        # Each failure raised the key's backoff count; the success reset it.
        assert flaky_requeues[:4] == [0, 1, 2, 3]
        await eventually(lambda: calls.get("later", 0) >= 2)
        await eventually(lambda: calls.get("broken", 0) >= 1)
        await eventually(lambda: controller.queue.num_requeues(flaky) == 0)
        assert calls["broken"] == 1
        assert controller.queue.num_requeues(Request(namespace, "broken")) == 0
    finally:
        await controller.stop()
        await source.stop()


async def test_create_or_update_and_create_or_patch_report_what_they_did(
    client: AsyncClient, namespace: str
) -> None:
    def cm() -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": namespace},
        }

    def set_data(value: str) -> Callable[[dict[str, Any]], None]:
        def mutate(o: dict[str, Any]) -> None:
            o["data"] = {"a": value}

        return mutate

    obj = cm()
    assert await create_or_update(client, obj, set_data("1")) is OperationResult.CREATED
    assert obj["metadata"]["uid"]
    assert await create_or_update(client, cm(), set_data("1")) is OperationResult.UNCHANGED
    obj = cm()
    assert await create_or_update(client, obj, set_data("2")) is OperationResult.UPDATED
    assert obj["data"] == {"a": "2"}
    assert await create_or_patch(client, cm(), set_data("2")) is OperationResult.UNCHANGED
    obj = cm()
    assert await create_or_patch(client, obj, set_data("3")) is OperationResult.UPDATED
    assert (await client.get(CM, "x", namespace=namespace))["data"] == {"a": "3"}

    def rename(o: dict[str, Any]) -> None:
        o["metadata"]["name"] = "other"

    with pytest.raises(ValueError, match="name"):
        await create_or_update(client, cm(), rename)
