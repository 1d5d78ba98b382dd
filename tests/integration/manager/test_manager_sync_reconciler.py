"""A sync (``def``) reconciler reads through the blocking cached client and writes (issue 16,
defect 4): the same informer cache as the async client, writes to the real server."""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager
from kubectrl.runtime.controllerutil import set_controller_reference

from .conftest import eventually, start_in_background, wait_synced

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")
SECRET = ("v1", "Secret")


async def test_a_def_reconciler_reads_the_cache_and_writes_through_the_blocking_client(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str
) -> None:
    manager = managers()
    client = manager.blocking_client
    threads: set[str] = set()
    listed: list[int] = []

    def reconcile(request: Request) -> None:
        threads.add(threading.current_thread().name)
        try:
            cm = client.get(CM, request.name, namespace=request.namespace)
        except NotFoundError:
            return
        listed.append(len(client.list(CM, namespace=request.namespace)["items"]))
        secret: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{request.name}-copy", "namespace": request.namespace},
            "stringData": dict(cm.get("data") or {}),
        }
        set_controller_reference(cm, secret)
        client.apply(secret, field_manager="sync-copier", force=True)
        # A live read of the own write, blocking too.
        stored = client.reader.get(SECRET, f"{request.name}-copy", namespace=request.namespace)
        assert stored["metadata"]["ownerReferences"][0]["name"] == request.name

    Builder(manager).for_(CM).owns(SECRET).complete(reconcile)
    task = start_in_background(manager)
    await wait_synced(manager, task)
    await api.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": namespace},
            "data": {"mode": "fast"},
        }
    )

    async def copied() -> bool:
        try:
            secret = await api.get(SECRET, "settings-copy", namespace=namespace)
        except NotFoundError:
            return False
        return base64.b64decode(secret.get("data", {}).get("mode", "")) == b"fast"

    await eventually(copied, what="the sync reconciler wrote the Secret")
    assert listed
    assert listed[-1] >= 1
    assert threads
    assert threading.current_thread().name not in threads
    assert not task.done()
