"""FakeAPI objects the client's unit tests share: a fake with namespace ``ns``, a Deployment."""

from __future__ import annotations

from typing import Any

from kubectrl.testing import FakeAPI

__all__ = ["deployment", "fake_api"]


def fake_api() -> FakeAPI:
    """A FakeAPI with the namespace ``ns``."""
    api = FakeAPI()
    api.seed({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    return api


def deployment(name: str) -> dict[str, Any]:
    """A one-replica nginx Deployment ``name`` in ``ns``."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
