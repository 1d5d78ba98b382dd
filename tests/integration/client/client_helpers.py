"""Shared helpers for the client integration tests (real etcd + kube-apiserver)."""

from __future__ import annotations

import asyncio
import base64
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import yaml

T = TypeVar("T")


def configmap(
    name: str,
    namespace: str,
    data: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {}}


async def eventually(
    check: Callable[[], Awaitable[T | None]], *, timeout: float = 20.0, what: str = "condition"
) -> T:
    """Poll ``check`` until it returns a truthy value, failing after ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        result = await check()
        if result:
            return result
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.05)


def etcd_compact(etcd_endpoint: str) -> int:
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


def write_widget_crd(tmp_path: Path) -> tuple[Path, str]:
    """A namespaced CRD with status and scale subresources, in a group unique to this call."""
    group = f"t{secrets.token_hex(4)}.kubectrl.test"
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
                "shortNames": ["wd"],
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
                                        },
                                        "color": {"type": "string"},
                                        "size": {"type": "string"},
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
    path = tmp_path / "widget-crd.yaml"
    path.write_text(yaml.safe_dump(crd))
    return path, group
