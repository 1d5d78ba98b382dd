"""Shard selectors: the apiserver's FNV-1a hash and ranges, and the reflector's fallback.

The hash, the range test and the selector syntax follow kube-apiserver v1.36's
``staging/src/k8s.io/apimachinery/pkg/sharding/hash.go`` (FNV-1a 64 of the field),
``selector.go`` (``start <= hash < end``, the union of ``||``-joined ranges over one field) and
``staging/src/k8s.io/apiserver/pkg/sharding/parser.go`` (16 hex digits, 2**64 as the top bound).
The integration test ``tests/integration/sharding/test_shard_hash.py`` checks the same on the
real binary for many objects.
"""

from __future__ import annotations

import itertools
import logging
from typing import Any

import pytest
from cache_fakes import FakeServer, cm, eventually

from kubectrl.cache import Informer, ListOptions, ListWatch, ReflectorOptions
from kubectrl.cache._shard import (
    HASH_SPACE,
    ShardRange,
    ShardSelector,
    fnv1a_64,
    shard_index,
    split_ranges,
)
from kubectrl.errors import ExpiredError

LIST_ONLY = ReflectorOptions(streaming_list=False)

#: ConfigMaps created on kube-apiserver v1.36.3 with ShardedListAndWatch=true, and whether the
#: server listed each one for shardRange(object.metadata.uid, '0x0000000000000000',
#: '0x8000000000000000') (it returned 12 of the 20).
SERVER_LOWER_HALF = {
    "e7feaa7a-c722-4588-b44e-c40850630440": True,
    "9cade856-aa88-4fed-b39c-9771f70c7baf": True,
    "22f7d39d-54e6-42f6-9c2d-4563b6e75430": True,
    "36d26498-5e09-496e-a5d0-244b10f5c826": False,
    "ee4538f4-460c-4056-a147-252e456edc1d": True,
    "0d42869a-58cf-488e-833b-c45ba79a04ba": True,
    "deb609dd-0c13-4766-b41c-a0c94342d3fb": True,
    "5d7a55b9-e428-4f1a-b8c8-30906a6ecb6d": True,
    "62036393-c657-4706-bb39-73ab43d9c6a3": False,
    "e146acdc-7e02-4113-ad6e-9ce85f08c88c": False,
    "8c4a011a-de0c-4cca-aeb7-306bd5849622": True,
    "436456d5-5d5e-43d3-931f-59d6f1d74d1f": True,
    "12b41151-e1d3-425e-ba29-425cdf93589b": False,
    "c2749127-71d2-4f78-9e2d-f16c957c1693": True,
    "5041b04f-22b6-48de-9191-10774265aa2b": False,
    "f2bddba8-2406-45fe-a3b8-6dc2a865c597": True,
    "8b0b8d0c-d3f2-4a6a-ac28-94f43fec545c": True,
    "cff2158e-9624-405f-b6fc-1a79d80e4f80": False,
    "8ebe595d-709c-4ff4-93f1-496c2accdbab": False,
    "b621fdf6-c3cf-4e3e-b4b6-8f72d922be22": False,
}


def with_uid(obj: dict[str, Any], uid: str) -> dict[str, Any]:
    obj["metadata"]["uid"] = uid
    return obj


def test_fnv1a_64_matches_the_published_test_vectors() -> None:
    assert fnv1a_64("") == 0xCBF29CE484222325
    assert fnv1a_64("a") == 0xAF63DC4C8601EC8C
    assert fnv1a_64("foobar") == 0x85944171F73967E8
    # UTF-8 bytes, not code points.
    assert fnv1a_64("é") != fnv1a_64("\xe9".encode("latin-1").decode("latin-1") + "x")


def test_the_apiserver_shard_of_each_recorded_uid_is_ours() -> None:
    lower = ShardSelector.of(0, 2)
    upper = ShardSelector.of(1, 2)
    for uid, in_lower in SERVER_LOWER_HALF.items():
        obj = {"metadata": {"uid": uid}}
        assert lower.matches(obj) is in_lower, uid
        assert upper.matches(obj) is not in_lower, uid
        assert shard_index(obj, 2) == (0 if in_lower else 1), uid


def test_the_default_namespace_hashes_into_the_upper_half_as_the_server_listed_it() -> None:
    # The server's namespace shard [0, 2**63) listed none of the ConfigMaps in "default".
    assert not ShardSelector.of(0, 2, "namespace").matches({"metadata": {"namespace": "default"}})


def test_selector_text_is_the_apiserver_syntax_and_parses_back() -> None:
    s = ShardSelector.of(2, 3)
    assert str(ShardSelector.of(1, 2)) == (
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
    )
    assert ShardSelector.parse(str(s)) == s
    two = ShardSelector((ShardRange(0, 1 << 62), ShardRange(1 << 63, 3 << 62)), "namespace")
    assert str(two) == (
        "shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000') || "
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0xc000000000000000')"
    )
    assert ShardSelector.parse(str(two)) == two


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
        "shardRange(object.metadata.uid, '0x8000000000000000', '0x0000000000000000')",
        "shardRange(object.metadata.uid, '0x0', '0x8') || "
        "shardRange(object.metadata.namespace, '0x0', '0x8')",
    ],
)
def test_parse_refuses_what_is_not_a_shard_selector(text: str) -> None:
    with pytest.raises(ValueError, match="shard"):
        ShardSelector.parse(text)


def test_ranges_tile_the_hash_space_without_gaps() -> None:
    for count in (1, 2, 3, 6, 7, 64):
        ranges = split_ranges(count)
        assert ranges[0].start == 0
        assert ranges[-1].end == HASH_SPACE
        assert all(a.end == b.start for a, b in itertools.pairwise(ranges))
    for h in (0, 1, HASH_SPACE // 3, HASH_SPACE // 3 + 1, HASH_SPACE - 1):
        ranges = split_ranges(3)
        assert sum(h in r for r in ranges) == 1


def test_shard_index_agrees_with_the_selectors() -> None:
    for i in range(300):
        obj = {"metadata": {"uid": f"uid-{i}"}}
        for count in (1, 3, 6):
            index = shard_index(obj, count)
            assert [ShardSelector.of(j, count).matches(obj) for j in range(count)] == [
                j == index for j in range(count)
            ]


def test_bad_shards_are_refused_naming_the_value() -> None:
    with pytest.raises(ValueError, match="0 <= start < end"):
        ShardRange(5, 5)
    with pytest.raises(ValueError, match="shard count"):
        split_ranges(0)
    with pytest.raises(ValueError, match="shard index 3"):
        ShardSelector.of(3, 3)
    with pytest.raises(ValueError, match="'name'"):
        ShardSelector((ShardRange(0, 1),), "name")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ShardSelector"):
        ListWatch(None, ("v1", "ConfigMap"), shard="shardRange(...)")  # type: ignore[arg-type]


def test_union_merges_adjacent_ranges() -> None:
    merged = ShardSelector.union([ShardSelector.of(0, 4), ShardSelector.of(1, 4)])
    assert merged == ShardSelector((ShardRange(0, HASH_SPACE // 2),))
    assert merged.fraction == 0.5
    with pytest.raises(ValueError, match="same field"):
        ShardSelector.union([ShardSelector.of(0, 2), ShardSelector.of(0, 2, "namespace")])


class ShardedServer(FakeServer):
    """A fake that may or may not apply the shard, as a server with the gate on or off."""

    def __init__(self, objects: list[dict[str, Any]], shard: ShardSelector, applies: bool) -> None:
        super().__init__(objects, rv=20)
        self.shard = shard
        self.applies = applies

    async def list_page(self, options: ListOptions) -> dict[str, Any]:
        page = await super().list_page(options)
        if self.applies:
            page["items"] = [o for o in page["items"] if self.shard.matches(o)]
            page["metadata"]["shardInfo"] = {"selector": str(self.shard)}
        return page


def _objects() -> list[dict[str, Any]]:
    return [with_uid(cm(f"o{i}", i + 1), uid) for i, uid in enumerate(SERVER_LOWER_HALF)]


async def test_without_shard_info_the_reflector_filters_and_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shard = ShardSelector.of(0, 2)
    server = ShardedServer(_objects(), shard, applies=False)
    informer = Informer(server, reflector_options=LIST_ONLY)
    caplog.set_level(logging.WARNING, logger="kubectrl.cache")
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert len(informer.indexer) == 12
        assert informer.reflector.server_sharded is False
        watch = await server.next_watch(1)
        inside = next(u for u, low in SERVER_LOWER_HALF.items() if low)
        outside = next(u for u, low in SERVER_LOWER_HALF.items() if not low)
        watch.send("ADDED", with_uid(cm("new-out", 30), outside))
        watch.send("ADDED", with_uid(cm("new-in", 31), inside + "-x"))
        watch.send("ADDED", with_uid(cm("new-in2", 32), inside))
        await eventually(lambda: informer.reflector.last_sync_resource_version == "32")
        names = {o["metadata"]["name"] for o in informer.indexer.list()}
        assert "new-out" not in names
        assert "new-in2" in names
        assert ("new-in" in names) is shard.matches({"metadata": {"uid": inside + "-x"}})
        # A relist does not log again.
        watch.fail(ExpiredError("too old resource version"))
        await eventually(lambda: len(server.lists) >= 2, timeout=10)
    fallbacks = [r for r in caplog.records if "did not apply shard" in r.getMessage()]
    assert len(fallbacks) == 1
    assert "filtering client-side" in fallbacks[0].getMessage()


async def test_an_echoed_shard_is_trusted_and_nothing_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shard = ShardSelector.of(1, 2)
    server = ShardedServer(_objects(), shard, applies=True)
    informer = Informer(server, reflector_options=LIST_ONLY)
    caplog.set_level(logging.WARNING, logger="kubectrl.cache")
    async with informer:
        await informer.wait_for_cache_sync(timeout=5)
        assert len(informer.indexer) == 8
        assert informer.reflector.server_sharded is True
        assert informer.reflector.shard_dropped == 0
    assert not [r for r in caplog.records if "did not apply shard" in r.getMessage()]


async def test_list_watch_sends_the_shard_selector_through_the_tweak_and_client() -> None:
    seen: dict[str, Any] = {}

    class Client:
        def list_pages(self, resource: Any, **kwargs: Any) -> Any:
            seen["list"] = kwargs

            async def pages() -> Any:
                yield {"metadata": {}, "items": []}

            return pages()

        def watch(self, resource: Any, **kwargs: Any) -> Any:
            seen["watch"] = kwargs
            return None

    shard = ShardSelector.of(0, 3, "namespace")
    lw = ListWatch(Client(), ("v1", "ConfigMap"), shard=shard)  # type: ignore[arg-type]
    await lw.list_page(ListOptions())
    lw.watch(ListOptions())
    assert seen["list"]["shard_selector"] == str(shard)
    assert seen["watch"]["shard_selector"] == str(shard)
    assert "shard shardRange(object.metadata.namespace" in lw.description
