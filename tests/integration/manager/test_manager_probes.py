"""/readyz is 503 until the caches sync, then 200; /healthz answers throughout."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.runtime import Request
from kubectrl.runtime._builder import Builder
from kubectrl.runtime._manager import Manager

from .conftest import eventually, http_get, start_in_background

pytestmark = pytest.mark.integration


async def test_readyz_503_until_caches_sync_then_200(
    managers: Callable[..., Manager], api: AsyncClient, namespace: str, control_plane: Any
) -> None:
    # A user who may not list ConfigMaps yet: the cache cannot sync until RBAC allows it.
    user = f"mgr-{uuid.uuid4().hex[:8]}"
    kubeconfig = control_plane.add_user(user)
    manager = managers(load_kubeconfig(kubeconfig.path).with_options(rate_limit=None))
    reconciled: list[Request] = []
    Builder(manager).for_(("v1", "ConfigMap")).complete(reconciled.append)
    task = start_in_background(manager)

    await eventually(lambda: manager.probe_port is not None, what="probe server listening")
    status, body = await http_get(manager.probe_port, "/readyz?verbose")
    assert status == 503, body
    assert "[-]informers failed" in body
    assert (await http_get(manager.probe_port, "/healthz"))[0] == 200
    assert not task.done()

    await api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "cm-reader", "namespace": namespace},
            "rules": [
                {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}
            ],
        }
    )
    await api.create(
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "cm-reader", "namespace": namespace},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "cm-reader",
            },
            "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}],
        }
    )

    async def ready() -> bool:
        return (await http_get(manager.probe_port, "/readyz"))[0] == 200

    await eventually(ready, timeout=120, what="/readyz 200 after RBAC granted")
    assert manager.caches_synced
