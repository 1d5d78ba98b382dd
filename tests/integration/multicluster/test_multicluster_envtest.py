"""The multicluster ConfigMap copier on three real control planes, one of them killed mid-run.

The management cluster is the session's control plane; three more ControlPlanes (each its own
etcd and kube-apiserver on free ports) are the fleet, engaged through kubeconfig Secrets in the
management cluster as multicluster-runtime's kubeconfig provider reads them
(``providers/kubeconfig/provider.go``: label ``sigs.k8s.io/multicluster-runtime-kubeconfig``,
key ``kubeconfig``, the cluster named after the Secret). One cluster's kube-apiserver is killed
while the others keep reconciling, then started again: it rejoins (its informers relist) and
catches up. Latencies are printed (``-s``) for docs/multicluster.md, never asserted.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import importlib.util
import os
import signal
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import AlreadyExistsError, NotFoundError
from kubectrl.multicluster import MultiClusterManager, MultiClusterOptions, SecretProvider
from kubectrl.testing import eventually

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "multicluster_configmap"
CM = ("v1", "ConfigMap")
NAMES = ("east", "west", "north")


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "configmap_copier", EXAMPLE / "configmap_copier.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["configmap_copier"] = module
    spec.loader.exec_module(module)
    return module


copier = _load()


@pytest.fixture(scope="module")
def fleet_planes(
    kubectrl_control_planes: Callable[..., dict[str, ControlPlane]],
) -> dict[str, ControlPlane]:
    """Three more control planes, started side by side (kubectrl.envtest's session fixture)."""
    return kubectrl_control_planes(*NAMES, start_timeout=180)


async def data_of(client: AsyncClient, name: str, namespace: str) -> dict[str, str] | None:
    try:
        got = await client.get(CM, name, namespace=namespace)
    except NotFoundError:
        return None
    return dict(got.get("data") or {})


async def ensure_namespace(client: AsyncClient, namespace: str) -> None:
    with contextlib.suppress(AlreadyExistsError):
        await client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        )


@pytest.mark.asyncio
async def test_copier_on_three_planes_survives_one_apiserver_killed(
    control_plane: ControlPlane, fleet_planes: dict[str, ControlPlane], namespace: str
) -> None:
    management = AsyncClient(load_kubeconfig(control_plane.kubeconfig.path))
    targets = {
        n: AsyncClient(load_kubeconfig(cp.kubeconfig.path)) for n, cp in fleet_planes.items()
    }
    for client in targets.values():
        await ensure_namespace(client, namespace)
    for name, cp in fleet_planes.items():
        text = cp.kubeconfig.path.read_bytes()
        await management.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": name,
                    "namespace": namespace,
                    "labels": {"sigs.k8s.io/multicluster-runtime-kubeconfig": "true"},
                },
                "data": {"kubeconfig": base64.b64encode(text).decode()},
            }
        )
    await management.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "settings",
                "namespace": namespace,
                "labels": {copier.COPY_LABEL: "true"},
            },
            "data": {"rev": "0"},
        }
    )
    provider = SecretProvider(
        AsyncClient(load_kubeconfig(control_plane.kubeconfig.path)), namespace
    )
    manager = MultiClusterManager(
        provider,
        local=load_kubeconfig(control_plane.kubeconfig.path),
        options=MultiClusterOptions(cache_sync_timeout=20, engage_backoff=0.5),
    )
    copier.build(manager)

    async def rev(name: str) -> str | None:
        data = await data_of(targets[name], "settings", namespace)
        return None if data is None else data.get("rev")

    async def bump(value: str, clusters: tuple[str, ...]) -> list[float]:
        started = time.monotonic()
        await management.patch(CM, "settings", {"data": {"rev": value}}, namespace=namespace)
        took = []
        for name in clusters:
            await eventually(lambda n=name: _equals(rev(n), value), timeout=120)
            took.append(time.monotonic() - started)
        return took

    try:
        async with manager:
            for name in NAMES:
                assert await eventually(lambda n=name: _equals(rev(n), "0"), timeout=180)
            status = await eventually(
                lambda: data_of(management, "settings-copy-status", namespace)
            )
            assert status is not None
            assert await eventually(
                lambda: _has_keys(management, namespace, set(NAMES)), timeout=60
            )
            healthy = [t for i in range(1, 6) for t in await bump(str(i), NAMES)]

            # Kill west's kube-apiserver: east and north go on.
            west = fleet_planes["west"]
            os.kill(west.pids["kube-apiserver"], signal.SIGKILL)
            degraded = [t for i in range(6, 11) for t in await bump(str(i), ("east", "north"))]
            assert await rev("east") == "10"

            # West comes back: its informers relist and its copy catches up.
            await asyncio.to_thread(west.restart_apiserver)
            targets["west"] = AsyncClient(load_kubeconfig(west.kubeconfig.path))
            assert await eventually(lambda: _equals(rev("west"), "10"), timeout=180)
            assert manager.ready_clusters == set(NAMES)

            # West's apiserver frozen (SIGSTOP: connections open, no answers), the worst case
            # for shared workers: east and north go on; west catches up once thawed.
            apiserver = west.pids["kube-apiserver"]
            os.kill(apiserver, signal.SIGSTOP)
            try:
                frozen = [t for i in range(11, 16) for t in await bump(str(i), ("east", "north"))]
            finally:
                os.kill(apiserver, signal.SIGCONT)
            thawed_at = time.monotonic()
            assert await eventually(lambda: _equals(rev("west"), "15"), timeout=180)
            caught_up = time.monotonic() - thawed_at
            print(
                f"\nload {os.getloadavg()[0]:.1f}; west's apiserver frozen, east+north: median "
                f"{statistics.median(frozen):.2f} s max {max(frozen):.2f} s; west caught up "
                f"{caught_up:.2f} s after it was thawed"
            )
            print(
                f"\nload {os.getloadavg()[0]:.1f}; reconcile latency (patch to copy), healthy: "
                f"median {statistics.median(healthy):.2f} s max {max(healthy):.2f} s; "
                f"with west's apiserver killed, east+north: median "
                f"{statistics.median(degraded):.2f} s max {max(degraded):.2f} s"
            )
    finally:
        for client in (management, *targets.values()):
            await client.aclose()


async def _equals(awaitable: Any, value: str) -> bool:
    return (await awaitable) == value


async def _has_keys(client: AsyncClient, namespace: str, keys: set[str]) -> bool:
    data = await data_of(client, "settings-copy-status", namespace)
    return set(data or {}) == keys
