"""``Builder.owns(kind, only_metadata=True)``: the owned kind is cached as PartialObjectMetadata.

controller-runtime's ``builder.OnlyMetadata`` (pkg/builder/options.go, used by
pkg/builder/controller.go's ``project``): the watch and the cache of that kind hold
``metav1.PartialObjectMetadata``, so a controller that reads nothing of its owned objects but
their metadata does not keep their spec and status in memory.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl.client import AsyncClient
from kubectrl.runtime import Builder, Manager, Request
from kubectrl.runtime.source import ChannelSource
from kubectrl.testing import FakeAPI, eventually, run_manager

OWNER = ("v1", "ConfigMap")
OWNED = ("v1", "Secret")


def owned_secret(owner: dict[str, Any]) -> dict[str, Any]:
    meta = owner["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "owned",
            "namespace": meta["namespace"],
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                }
            ],
        },
        "stringData": {"password": "a value the cache must not hold"},
    }


async def test_an_owned_kind_cached_as_metadata_still_enqueues_its_owner() -> None:
    api = FakeAPI()
    manager = Manager(api.config())
    requests: list[Request] = []

    async def reconcile(request: Request) -> None:
        requests.append(request)

    controller = Builder(manager).for_(OWNER).owns(OWNED, only_metadata=True).complete(reconcile)
    (owned_source,) = [s for s in controller.sources if getattr(s, "kind", None) == OWNED]
    assert owned_source.metadata_only  # type: ignore[attr-defined]
    async with run_manager(manager), AsyncClient(api.config()) as client:
        owner = await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "o", "namespace": "default"},
            }
        )
        await eventually(lambda: len(requests) == 1)
        await client.create(owned_secret(owner))
        informer = owned_source.informer  # type: ignore[attr-defined]
        await eventually(lambda: len(informer.indexer.list()) == 1)
        await eventually(lambda: len(requests) == 2)
        (cached,) = informer.indexer.list()
    assert requests[1] == Request("default", "o")
    assert cached["apiVersion"] == "meta.k8s.io/v1"
    assert cached["kind"] == "PartialObjectMetadata"
    assert cached["metadata"]["ownerReferences"][0]["name"] == "o"
    assert "data" not in cached
    assert "stringData" not in cached


def test_without_the_option_the_owned_kind_is_cached_whole() -> None:
    manager = Manager(FakeAPI().config())
    controller = Builder(manager).for_(OWNER).owns(OWNED).complete(lambda r: None)
    (owned_source,) = [s for s in controller.sources if getattr(s, "kind", None) == OWNED]
    assert not owned_source.metadata_only  # type: ignore[attr-defined]


def test_only_metadata_with_a_ready_made_source_is_refused() -> None:
    manager = Manager(FakeAPI().config())
    with pytest.raises(ValueError, match="only_metadata are for a kind"):
        Builder(manager).for_(OWNER).watches(ChannelSource("external"), only_metadata=True)
