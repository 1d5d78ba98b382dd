"""The multicluster ConfigMap copier (examples/multicluster_configmap) on FakeAPI clusters.

A management FakeAPI and three cluster FakeAPIs in one test; a StaticProvider engages and
disengages them while the manager runs, as multicluster-runtime's providers do
(``pkg/multicluster/multicluster.go``: clusters come and go at runtime). The real-apiserver
version is tests/integration/multicluster/test_multicluster_envtest.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.multicluster import MultiClusterManager, StaticProvider
from kubectrl.testing import FakeAPI, eventually

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "multicluster_configmap"
CM = ("v1", "ConfigMap")


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


def source(name: str, data: dict[str, str], *, copy: bool = True) -> dict[str, Any]:
    labels = {copier.COPY_LABEL: "true"} if copy else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "data": data,
    }


async def data_of(api: FakeAPI, name: str) -> dict[str, str] | None:
    async with AsyncClient(api.config()) as client:
        try:
            got = await client.get(CM, name, namespace="default")
        except NotFoundError:
            return None
    return dict(got.get("data") or {})


@pytest.mark.asyncio
async def test_copies_into_clusters_that_appear_and_stops_for_those_that_go() -> None:
    management = FakeAPI()
    clusters = {name: FakeAPI() for name in ("east", "west", "north")}
    management.seed(source("settings", {"color": "blue"}), source("private", {}, copy=False))
    provider = StaticProvider({"east": clusters["east"].config()})
    manager = MultiClusterManager(provider, local=management.config())
    copier.build(manager)

    async with manager:
        assert await eventually(lambda: data_of(clusters["east"], "settings")) == {"color": "blue"}
        # Two more clusters appear while the manager runs: each gets the copy.
        provider.add("west", clusters["west"].config())
        provider.add("north", clusters["north"].config())
        for name in ("west", "north"):
            assert await eventually(lambda n=name: data_of(clusters[n], "settings")) == {
                "color": "blue"
            }
        # Per-cluster status in the management cluster.
        status = await eventually(
            lambda: _status_for(management, {"east", "west", "north"}), timeout=30
        )
        version = management.objects("ConfigMap", "default")
        source_rv = next(o for o in version if o["metadata"]["name"] == "settings")["metadata"][
            "resourceVersion"
        ]
        assert set(status.values()) == {f"copied {source_rv}"}
        # A change of the source reaches every engaged cluster.
        async with AsyncClient(management.config()) as client:
            await client.patch(CM, "settings", {"data": {"color": "red"}}, namespace="default")
        for name in ("east", "west", "north"):
            assert await eventually(lambda n=name: data_of(clusters[n], "settings")) == {
                "color": "red"
            }
        # West disappears: it is disengaged, and no longer updated.
        provider.remove("west")
        await eventually(lambda: "west" not in manager.clusters)
        async with AsyncClient(management.config()) as client:
            await client.patch(CM, "settings", {"data": {"color": "green"}}, namespace="default")
        for name in ("east", "north"):
            assert await eventually(lambda n=name: data_of(clusters[n], "settings")) == {
                "color": "green"
            }
        assert await data_of(clusters["west"], "settings") == {"color": "red"}
        # An unlabelled ConfigMap is never copied; a copy deleted by hand comes back.
        assert await data_of(clusters["east"], "private") is None
        async with AsyncClient(clusters["east"].config()) as client:
            await client.delete(CM, "settings", namespace="default")
        assert await eventually(lambda: data_of(clusters["east"], "settings")) == {"color": "green"}
        # Deleting the source deletes the copies.
        async with AsyncClient(management.config()) as client:
            await client.delete(CM, "settings", namespace="default")
        for name in ("east", "north"):
            assert await eventually(
                lambda n=name: _gone(clusters[n], "settings"), describe=f"{name} copy deleted"
            )
    assert manager.clusters == frozenset()


async def _gone(api: FakeAPI, name: str) -> bool:
    return await data_of(api, name) is None


async def _status_for(api: FakeAPI, clusters: set[str]) -> dict[str, str] | None:
    data = await data_of(api, "settings-copy-status")
    return data if data is not None and set(data) == clusters else None
