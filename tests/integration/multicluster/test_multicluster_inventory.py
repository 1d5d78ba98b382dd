"""ClusterProfileProvider against a real kube-apiserver: the test CRD's shape is accepted, a
missing CRD is reported as such, and a healthy profile with its consumer Secret is engaged.

Upstream: multicluster-runtime ``providers/cluster-inventory-api/provider.go`` (``IsReady``:
the ``ControlPlaneHealthy`` condition; the cluster named ``<namespace>/<name>``) and
``kubeconfigstrategy/secret.go`` (labels ``x-k8s.io/cluster-inventory-consumer`` and
``x-k8s.io/cluster-profile``, key ``Config``). The same behaviour on FakeAPI is in
tests/unit/multicluster/test_providers.py; here the management cluster is a fresh fleet plane
(the session's one is shared: a CRD installed there would outlive the test).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import AlreadyExistsError, ConfigError
from kubectrl.multicluster import CLUSTER_PROFILE, ClusterProfileProvider
from kubectrl.testing import eventually

from .test_multicluster_envtest import fleet_planes  # noqa: F401 - the module fixture

pytestmark = pytest.mark.integration

CRD = Path(__file__).resolve().parents[2] / "unit" / "multicluster" / "clusterprofile-crd.yaml"


class Recorder:
    def __init__(self) -> None:
        self.engaged: dict[str, ClientConfig] = {}

    async def engage(self, name: str, config: ClientConfig) -> None:
        self.engaged[name] = config

    async def disengage(self, name: str) -> None:
        self.engaged.pop(name, None)


@pytest.mark.asyncio
async def test_cluster_profiles_on_a_real_apiserver(
    fleet_planes: dict[str, ControlPlane],  # noqa: F811 - the imported fixture
) -> None:
    plane = fleet_planes["north"]
    async with AsyncClient(load_kubeconfig(plane.kubeconfig.path)) as client:
        with contextlib.suppress(AlreadyExistsError):
            await client.create(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "inventory"}}
            )
        with pytest.raises(ConfigError, match="ClusterProfile CRD"):
            await ClusterProfileProvider(client, "inventory", consumer="copier").run(Recorder())

        await asyncio.to_thread(plane.install_crds, [CRD])
        created = await client.create(
            {
                "apiVersion": CLUSTER_PROFILE[0],
                "kind": CLUSTER_PROFILE[1],
                "metadata": {"name": "east", "namespace": "inventory"},
                "spec": {"displayName": "east"},
            }
        )
        created["status"] = {
            "conditions": [
                {
                    "type": "ControlPlaneHealthy",
                    "status": "True",
                    "reason": "Healthy",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        }
        await client.status().update(created)
        kubeconfig = plane.kubeconfig.path.read_bytes()
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": "east-kubeconfig",
                    "namespace": "inventory",
                    "labels": {
                        "x-k8s.io/cluster-inventory-consumer": "copier",
                        "x-k8s.io/cluster-profile": "east",
                    },
                },
                "data": {"Config": base64.b64encode(kubeconfig).decode()},
            }
        )
        aware = Recorder()
        provider = ClusterProfileProvider(client, "inventory", consumer="copier")
        task = asyncio.create_task(provider.run(aware))
        try:
            await eventually(lambda: set(aware.engaged) == {"inventory/east"}, timeout=60)
            assert aware.engaged["inventory/east"].server == plane.server
            assert provider.errors == {}
        finally:
            task.cancel()
            await asyncio.wait({task})
