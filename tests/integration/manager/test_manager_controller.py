"""A ConfigMap -> owned Secret controller built with Builder and run by a Manager."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager
from kubectrl.runtime.controllerutil import set_controller_reference
from kubectrl.runtime.predicate import generation_changed

from .conftest import eventually, start_in_background, wait_synced

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")
WIDGET = ("test.kubectrl.dev/v1", "Widget")


async def secret_data(api: AsyncClient, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        secret = await api.get(SECRET, name, namespace=namespace)
    except NotFoundError:
        return None
    return dict(secret.get("stringData") or secret.get("data") or {})


async def test_configmap_to_owned_secret(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    manager = managers()
    client = manager.client
    seen: list[tuple[str, str]] = []

    async def reconcile(request: Request) -> None:
        try:
            cm = await client.get(CM, request.name, namespace=request.namespace)
        except NotFoundError:
            seen.append(("gone", request.name))
            # envtest runs no garbage collector, so the controller cleans up itself.
            with contextlib.suppress(NotFoundError):
                await client.delete(SECRET, f"{request.name}-copy", namespace=request.namespace)
            return
        seen.append(("cm", request.name))
        desired = dict(cm.get("data") or {})
        try:
            secret = await client.get(SECRET, f"{request.name}-copy", namespace=request.namespace)
        except NotFoundError:
            secret = {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": f"{request.name}-copy", "namespace": request.namespace},
            }
            set_controller_reference(cm, secret)
            secret["stringData"] = desired
            await client.create(secret)
            return
        current = {k: _b64decode(v) for k, v in (secret.get("data") or {}).items()}
        if current != desired:
            original = copy.deepcopy(secret)
            secret["data"] = {k: _b64encode(v) for k, v in desired.items()}
            await client.patch_merge_from(original, secret, optimistic_lock=True)

    controller = Builder(manager).for_(CM).owns(SECRET).complete(reconcile)
    assert controller.name == "configmap"
    task = start_in_background(manager)
    await wait_synced(manager, task)

    async def secret_is(expected: dict[str, str] | None) -> bool:
        try:
            secret = await api.get(SECRET, "app-copy", namespace=namespace)
        except NotFoundError:
            return expected is None
        data = {k: _b64decode(v) for k, v in (secret.get("data") or {}).items()}
        return data == expected

    # create
    cm = await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "app", "namespace": namespace},
            "data": {"mode": "fast"},
        }
    )
    await eventually(lambda: secret_is({"mode": "fast"}), what="secret created")
    secret = await api.get(SECRET, "app-copy", namespace=namespace)
    (ref,) = secret["metadata"]["ownerReferences"]
    assert ref["controller"] is True
    assert ref["uid"] == cm["metadata"]["uid"]

    # update
    cm["data"] = {"mode": "slow", "extra": "1"}
    await api.update(cm)
    await eventually(lambda: secret_is({"mode": "slow", "extra": "1"}), what="secret updated")

    # a change to the owned Secret enqueues its owner, which repairs it
    before = len([s for s in seen if s == ("cm", "app")])
    await api.patch(
        SECRET, "app-copy", {"data": {"mode": _b64encode("tampered")}}, namespace=namespace
    )
    await eventually(lambda: secret_is({"mode": "slow", "extra": "1"}), what="secret repaired")
    assert len([s for s in seen if s == ("cm", "app")]) > before

    # delete
    await api.delete(CM, "app", namespace=namespace)
    await eventually(lambda: secret_is(None), what="secret deleted")
    assert ("gone", "app") in seen


async def test_generation_changed_filter_suppresses_status_updates(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str, control_plane: Any
) -> None:
    control_plane.install_crds(["tests/data/crds/widgets.yaml"])
    manager = managers()
    generations: list[int] = []

    async def reconcile(request: Request) -> None:
        widget = await manager.client.get(WIDGET, request.name, namespace=request.namespace)
        generations.append(int(widget["metadata"]["generation"]))

    Builder(manager).for_(WIDGET).with_event_filter(generation_changed).complete(reconcile)
    task = start_in_background(manager)
    await wait_synced(manager, task)

    widget = await api.create(
        {
            "apiVersion": "test.kubectrl.dev/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": namespace},
            "spec": {"size": 1},
        }
    )
    await eventually(lambda: generations == [1], what="first reconcile")
    for ready in (True, False, True):
        widget["status"] = {"ready": ready}
        widget = await api.status().update(widget)
    status_rv = widget["metadata"]["resourceVersion"]

    async def cache_has_status() -> bool:
        cached = await manager.client.get(WIDGET, "w", namespace=namespace)
        return bool(cached["metadata"]["resourceVersion"] == status_rv)

    # The informer delivered every status update (the handler is in order with the cache).
    await eventually(cache_has_status, what="cache saw the status updates")
    widget["spec"] = {"size": 2}
    await api.update(widget)
    await eventually(lambda: generations[-1:] == [2], what="spec change reconciled")
    assert generations == [1, 2], "a status-only update reached the reconciler"


def _b64encode(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


def _b64decode(text: str) -> str:
    import base64

    return base64.b64decode(text).decode()
