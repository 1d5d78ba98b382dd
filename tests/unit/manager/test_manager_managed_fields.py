"""The manager's cache drops ``metadata.managedFields`` by default; an option keeps it."""

from __future__ import annotations

from typing import Any

from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, run_manager


async def cached_managed_fields(options: ManagerOptions) -> Any:
    api = FakeAPI()
    manager = Manager(api.config(), options=options)
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default"},
    }
    await manager.api_reader.apply({**cm, "data": {"k": "v"}}, field_manager="test", force=True)
    async with run_manager(manager):
        cm = await manager.client.get(("v1", "ConfigMap"), "c", namespace="default")
        direct = await manager.api_reader.get(("v1", "ConfigMap"), "c", namespace="default")
    assert direct["metadata"].get("managedFields"), "the fake API should store managedFields"
    return cm["metadata"].get("managedFields")


async def test_cached_objects_have_no_managed_fields_by_default() -> None:
    assert await cached_managed_fields(ManagerOptions()) is None


async def test_cache_keep_managed_fields_keeps_them() -> None:
    kept = await cached_managed_fields(ManagerOptions(cache_keep_managed_fields=True))
    assert [entry["manager"] for entry in kept] == ["test"]
