"""A relist keeps the cached object of every unchanged object (no second copy held)."""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator
from typing import Any

from kubectrl.cache import Informer


def _cm(name: str, version: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": version},
        "data": {"v": version},
    }


class _Lists:
    description = "stub"

    def __init__(self) -> None:
        self.items = [_cm("a", "1"), _cm("b", "2")]

    async def list_page(self, options: Any) -> dict[str, Any]:
        return {"metadata": {"resourceVersion": "9"}, "items": copy.deepcopy(self.items)}

    @contextlib.asynccontextmanager
    async def watch(self, options: Any) -> AsyncIterator[AsyncIterator[Any]]:
        async def never() -> AsyncIterator[Any]:
            await asyncio.Event().wait()
            yield None

        yield never()


async def test_a_relist_keeps_unchanged_objects_and_replaces_changed_ones() -> None:
    lists = _Lists()
    transformed: list[str] = []

    def transform(obj: dict[str, Any]) -> dict[str, Any]:
        transformed.append(obj["metadata"]["name"])
        return obj

    informer = Informer(lists, transform=transform)
    updates: list[tuple[str, bool]] = []
    both = asyncio.Event()

    def on_update(old: dict[str, Any], new: dict[str, Any]) -> None:
        updates.append((new["metadata"]["name"], old is new))
        if len(updates) == 2:
            both.set()

    informer.add_handler(on_update=on_update)
    informer.start()
    try:
        await informer.wait_for_cache_sync(10)
        cached_a = informer.indexer.get_by_key("ns/a")
        cached_b = informer.indexer.get_by_key("ns/b")
        lists.items[1] = _cm("b", "3")  # b changed, a did not
        page = await lists.list_page(None)
        informer._replace(page["items"], "10")
        assert informer.indexer.get_by_key("ns/a") is cached_a
        new_b = informer.indexer.get_by_key("ns/b")
        assert new_b is not cached_b
        assert new_b is not None
        assert new_b["data"] == {"v": "3"}
        assert transformed == ["a", "b", "b"]  # the unchanged object is not transformed again
        await asyncio.wait_for(both.wait(), 5)
        assert sorted(updates) == [("a", True), ("b", False)]
    finally:
        await informer.stop()
