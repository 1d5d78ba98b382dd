"""Ordering resourceVersions, and an informer's wait for one.

Upstream: kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/resourceversion/
resourceversion.go (``CompareResourceVersion``, KEP-5504: well-formed versions are positive
decimal integers without leading zeros, ordered by length then digits; anything else is an
error) and client-go's ``Store.LastStoreSyncResourceVersion`` (1.36), which advances with every
event the informer applies.
"""

from __future__ import annotations

import asyncio

import pytest

from kubectrl.cache import (
    Informer,
    ListWatch,
    compare_resource_versions,
    is_comparable_resource_version,
)
from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("1", "1", 0),
        ("9", "10", -1),
        ("10", "9", 1),
        ("123", "124", -1),
        ("99999999999999999999999", "100000000000000000000000", -1),  # no 64-bit bound
    ],
)
def test_compare_orders_decimal_versions_as_numbers(a: str, b: str, expected: int) -> None:
    assert compare_resource_versions(a, b) == expected


@pytest.mark.parametrize("bad", ["", "0", "012", "12a", "-1", "1.0", "١٢"])
def test_compare_refuses_versions_it_cannot_order_naming_them(bad: str) -> None:
    assert not is_comparable_resource_version(bad)
    with pytest.raises(ValueError, match=f"resourceVersion {bad!r} cannot be ordered"):
        compare_resource_versions(bad, "5")
    with pytest.raises(ValueError, match=f"resourceVersion {bad!r} cannot be ordered"):
        compare_resource_versions("5", bad)


async def test_informer_wait_returns_when_the_store_reaches_the_version() -> None:
    api = FakeAPI()
    api.delay_next("watch", "configmaps", 0.3)
    async with AsyncClient(api.config()) as client:
        informer = Informer(ListWatch(client, CM, namespace="default"))
        async with informer:
            await informer.wait_for_cache_sync(10)
            created = await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "a", "namespace": "default"},
                }
            )
            version = created["metadata"]["resourceVersion"]
            assert not informer.has_seen(version), "the watch is held: the store lags"
            assert informer.lister.namespace("default").list() == []
            assert await informer.wait_for_resource_version(version, timeout=10)
            assert informer.has_seen(version)
            assert [o["metadata"]["name"] for o in informer.lister.namespace("default").list()] == [
                "a"
            ]


async def test_informer_wait_times_out_false_and_refuses_bad_versions() -> None:
    api = FakeAPI()
    async with AsyncClient(api.config()) as client:
        informer = Informer(ListWatch(client, CM, namespace="default"))
        async with informer:
            await informer.wait_for_cache_sync(10)
            ahead = str(int(informer.last_sync_resource_version) + 1000)
            assert not await informer.wait_for_resource_version(ahead, timeout=0.05)
            with pytest.raises(ValueError, match="resourceVersion 'x1' cannot be ordered"):
                await informer.wait_for_resource_version("x1", timeout=1)
        # Stopped: nothing would move it, so even an unbounded wait returns at once (the
        # deadline only fails the test if it would hang).
        waited = informer.wait_for_resource_version(ahead, timeout=None)
        assert not await asyncio.wait_for(waited, timeout=10)
