"""Objects and the Target wrapper shared by the contract cases (imported by conftest.py)."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import yaml

from kubectrl.client import AsyncClient
from kubectrl.errors import NotFoundError
from kubectrl.testing import eventually

if TYPE_CHECKING:
    from kubectrl.envtest import ControlPlane

NS = ("v1", "Namespace")
CM = ("v1", "ConfigMap")
#: How long a case waits for the garbage collector, seconds. kube-controller-manager's collector
#: learns of a CRD installed after it started at its next discovery resync (every 30 s).
GC_TIMEOUT = 90.0
DEPLOY = ("apps/v1", "Deployment")


def kubernetes_minor() -> str:
    """The Kubernetes minor the suite runs on: the control plane's (``KUBECTRL_ENVTEST_K8S_VERSION``
    or envtest's default), which every FakeAPI of the suite imitates (``FakeAPI(version=...)``)."""
    from kubectrl.envtest._binaries import normalize_version

    return normalize_version(None)


def kubernetes_at_least(minor: str) -> bool:
    """Whether the suite runs on Kubernetes ``minor`` or newer (a behaviour that changed)."""

    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    return key(kubernetes_minor()) >= key(minor)


def unique(prefix: str) -> str:
    """A DNS-1123 name unique across the session (the real namespace is shared)."""
    return f"{prefix}-{secrets.token_hex(3)}"


def configmap(
    name: str,
    namespace: str,
    data: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(data or {})}


def deployment(
    name: str, namespace: str, containers: list[dict[str, Any]] | None = None, replicas: int = 1
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": containers or [{"name": "app", "image": "nginx:1"}]},
            },
        },
    }


def widget_crd(group: str, plural: str = "widgets", kind: str = "Widget") -> dict[str, Any]:
    """A namespaced CRD with status and scale subresources, defaults and validation."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": plural,
                "singular": kind.lower(),
                "kind": kind,
                "listKind": f"{kind}List",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                        },
                    },
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {
                                            "type": "integer",
                                            "minimum": 0,
                                            "maximum": 10,
                                            "default": 1,
                                        },
                                        "color": {"type": "string"},
                                        "size": {"type": "string", "default": "M"},
                                        "options": {
                                            "type": "object",
                                            "default": {},
                                            "properties": {
                                                "mode": {"type": "string", "default": "auto"},
                                            },
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer"},
                                        "phase": {"type": "string"},
                                    },
                                },
                            },
                        }
                    },
                }
            ],
        },
    }


class Target:
    """One API server under contract: its client, a namespace, and what differs in setup."""

    def __init__(
        self,
        name: str,
        client: AsyncClient,
        namespace: str,
        *,
        api: Any = None,
        control_plane: ControlPlane | None = None,
        tmp_path: Path,
        crd_cache: dict[str, str],
    ) -> None:
        self.name = name
        self.client = client
        self.config = client.config
        self.namespace = namespace
        self.api = api
        self.control_plane = control_plane
        self._tmp_path = tmp_path
        self._crd_cache = crd_cache
        self._namespaces: list[str] = []

    @property
    def is_real(self) -> bool:
        return self.name == "real"

    def __repr__(self) -> str:
        return f"Target({self.name})"

    async def install_crd(self, crd: Mapping[str, Any]) -> None:
        """Install a CRD and wait until the kind is served."""
        if self.api is not None:
            self.api.install_crd(copy.deepcopy(dict(crd)))
            return
        assert self.control_plane is not None
        path = self._tmp_path / f"{crd['metadata']['name']}.yaml"
        path.write_text(yaml.safe_dump(dict(crd)))
        await asyncio.to_thread(self.control_plane.install_crds, [path])

    async def widget(self) -> tuple[str, str]:
        """The Widget kind (installed once per session on the real server, per case on the fake)."""
        group = self._crd_cache.get("widget")
        if group is None or self.api is not None:
            group = f"w{secrets.token_hex(4)}.contract.kubectrl.test"
            await self.install_crd(widget_crd(group))
            if self.api is None:
                self._crd_cache["widget"] = group
        return (f"{group}/v1", "Widget")

    async def new_namespace(self) -> str:
        """A namespace of this case alone (deleted afterwards on the real server)."""
        name = unique("ctr")
        await self.client.create(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
        self._namespaces.append(name)
        return name

    def delete_namespace_after(self, name: str) -> None:
        """Delete namespace ``name`` when the case ends (real server)."""
        self._namespaces.append(name)

    async def gone(self, kind: tuple[str, str], name: str, namespace: str) -> None:
        """Wait until ``kind`` ``namespace/name`` is not found (a controller deletes it)."""

        async def absent() -> bool:
            try:
                await self.client.get(kind, name, namespace=namespace)
            except NotFoundError:
                return True
            return False

        await eventually(absent, GC_TIMEOUT, describe=f"{kind[1]} {namespace}/{name} is gone")

    async def in_watch_cache(self, kind: tuple[str, str], namespace: str, *names: str) -> None:
        """Wait until a ``resourceVersion="0"`` list of ``kind`` in ``namespace`` holds ``names``.

        That list (an informer's first, as client-go's reflector makes it: tools/cache
        reflector.go relistResourceVersion) is served from the apiserver's watch cache at *any*
        version it holds ("Semantics for get and list" in the API concepts; apiserver
        pkg/storage/cacher/watch_cache.go WaitUntilFreshAndGetList waits only until the cache
        holds the version asked for, which for "0" is at once), so an object created a moment
        ago may be missing from it (seen here: a list at 342 right after a create at 344). A
        case that needs the object in an informer's *initial* list waits for this first. The
        fake's lists are always fresh.
        """

        async def listed() -> bool:
            page = await self.client.list(kind, namespace=namespace, resource_version="0")
            return set(names) <= {item["metadata"]["name"] for item in page["items"]}

        await eventually(listed, describe=f"{kind[1]} {', '.join(names)} in the watch cache")

    async def compact(self) -> None:
        """Forget the history before now: watches from older resourceVersions get 410.

        On the real server: compact etcd at its current revision and restart kube-apiserver.
        """
        if self.api is not None:
            self.api.compact()
            return
        assert self.control_plane is not None
        await asyncio.to_thread(_etcd_compact, self.control_plane.etcd_endpoint)
        # The watch cache serves every event since its last relist when none was evicted
        # (apiserver pkg/storage/cacher/watch_cache.go getAllEventsSinceLocked: oldest is
        # listResourceVersion + 1) and does not notice an external compaction; after a restart,
        # as after any apiserver roll, it starts from now and older versions are 410.
        await asyncio.to_thread(self.control_plane.restart_apiserver)

    async def cleanup(self) -> None:
        if self.is_real:
            for ns in self._namespaces:
                with contextlib.suppress(Exception):
                    await self.client.delete(NS, ns)


def _etcd_compact(etcd_endpoint: str) -> int:
    """Compact etcd at its current revision (v3 JSON gateway); returns that revision."""
    with httpx.Client(base_url=etcd_endpoint, timeout=30) as http:
        key = base64.b64encode(b"/").decode()
        revision = int(
            http.post("/v3/kv/range", json={"key": key, "limit": 1}).json()["header"]["revision"]
        )
        response = http.post(
            "/v3/kv/compaction", json={"revision": str(revision), "physical": True}
        )
        response.raise_for_status()
    return revision
