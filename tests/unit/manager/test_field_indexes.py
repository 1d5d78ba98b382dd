"""Field indexes on the manager's cache (controller-runtime's FieldIndexer + MatchingFields), on
the FakeAPI: registration before and after the informer runs, namespace scoping through the
``<namespace>/<value>`` and ``__all_namespaces/<value>`` keys, typed and dict index functions,
labels on top, and the errors (unindexed field, several fields, a failing index function)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from kubernetes.client.models import V1Job

from kubectrl.client import AsyncClient, ModelList
from kubectrl.client._async_client import fields_selector
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.runtime._field_index import FieldIndexError
from kubectrl.testing import FakeAPI, eventually, run_manager

OPTIONS = ManagerOptions(metrics_bind_address="0")
JOB = ("batch/v1", "Job")


def job(namespace: str, name: str, owner: str | None, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "name": owner,
                "uid": f"uid-{owner}",
                "controller": True,
            }
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}],
                }
            }
        },
    }


def typed_owner(obj: V1Job) -> list[str]:
    refs = (obj.metadata.owner_references if obj.metadata else None) or []
    return [ref.name for ref in refs if ref.controller]


def dict_owner(obj: dict[str, Any]) -> list[str]:
    refs = obj["metadata"].get("ownerReferences") or []
    return [ref["name"] for ref in refs if ref.get("controller")]


async def seed(api: AsyncClient) -> None:
    for ns in ("a", "b"):
        await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    await api.create(job("a", "a1", "backup", tier="x"))
    await api.create(job("a", "a2", "backup", tier="y"))
    await api.create(job("a", "a3", "report"))
    await api.create(job("b", "b1", "backup"))
    await api.create(job("b", "b2", None))


def names(jobs: ModelList[V1Job]) -> list[str]:
    return [f"{j.metadata.namespace}/{j.metadata.name}" for j in jobs.items if j.metadata]


async def test_registered_before_start_lists_typed_jobs_scoped_by_namespace() -> None:
    api = FakeAPI()
    manager = Manager(api.config(), options=OPTIONS)
    await seed(manager.api_reader)
    manager.field_indexer.index_field(V1Job, "metadata.controller", typed_owner)
    async with run_manager(manager):
        client = manager.client
        in_a = await client.list(
            V1Job, namespace="a", matching_fields={"metadata.controller": "backup"}
        )
        assert isinstance(in_a, ModelList)
        assert all(isinstance(j, V1Job) for j in in_a.items)
        assert names(in_a) == ["a/a1", "a/a2"]
        everywhere = await client.list(V1Job, matching_fields={"metadata.controller": "backup"})
        assert names(everywhere) == ["a/a1", "a/a2", "b/b1"]
        labelled = await client.list(
            V1Job,
            namespace="a",
            matching_fields={"metadata.controller": "backup"},
            label_selector={"tier": "y"},
        )
        assert names(labelled) == ["a/a2"]
        none = await client.list(
            V1Job, namespace="b", matching_fields={"metadata.controller": "report"}
        )
        assert none.items == []
        # The blocking client reads the same index (from a worker thread).
        blocking = await asyncio.to_thread(
            manager.blocking_client.list,
            JOB,
            namespace="b",
            matching_fields={"metadata.controller": "backup"},
        )
        assert [o["metadata"]["name"] for o in blocking["items"]] == ["b1"]


async def test_registered_after_the_informer_runs_is_backfilled_and_follows_changes() -> None:
    api = FakeAPI()
    manager = Manager(api.config(), options=OPTIONS)
    await seed(manager.api_reader)
    async with run_manager(manager):
        client = manager.client
        await client.list(JOB, namespace="a")  # starts and syncs the Job informer
        manager.field_indexer.index_field(JOB, "metadata.controller", dict_owner)
        found = await client.list(
            JOB, namespace="a", matching_fields={"metadata.controller": "report"}
        )
        assert [o["metadata"]["name"] for o in found["items"]] == ["a3"]
        assert found["kind"] == "JobList"
        # A new job and a re-parented one move in the index as the informer sees them.
        await manager.api_reader.create(job("a", "a4", "report"))
        await manager.api_reader.patch(
            JOB,
            "a3",
            {"metadata": {"ownerReferences": None}},
            namespace="a",
        )

        async def report_jobs() -> list[str]:
            listed = await client.list(
                JOB, namespace="a", matching_fields={"metadata.controller": "report"}
            )
            return [o["metadata"]["name"] for o in listed["items"]]

        await eventually(
            lambda: _equals(report_jobs, ["a4"]), describe="the index following the changes"
        )


async def _equals(read: Any, expected: list[str]) -> bool:
    return bool(await read() == expected)


async def test_errors_name_what_is_wrong() -> None:
    api = FakeAPI()
    manager = Manager(api.config(), options=OPTIONS)
    await seed(manager.api_reader)
    manager.field_indexer.index_field(V1Job, "metadata.controller", typed_owner)
    with pytest.raises(ValueError, match="already indexed"):
        manager.field_indexer.index_field(JOB, "metadata.controller", dict_owner)
    with pytest.raises(ValueError, match="not a field name"):
        manager.field_indexer.index_field(JOB, "a=b", dict_owner)
    async with run_manager(manager):
        client = manager.client
        with pytest.raises(
            ValueError,
            match=r"no field index 'spec\.foo'.*indexed fields: metadata\.controller.*"
            r"manager\.field_indexer\.index_field\(V1Job, 'spec\.foo', fn\)",
        ):
            await client.list(V1Job, namespace="a", matching_fields={"spec.foo": "x"})
        with pytest.raises(ValueError, match=r"one field requirement per list.*got 2"):
            await client.list(
                V1Job, matching_fields={"metadata.controller": "a", "metadata.name": "b"}
            )
        with pytest.raises(ValueError, match="not both"):
            await client.list(
                V1Job, matching_fields={"metadata.controller": "a"}, field_selector="x=y"
            )
        with pytest.raises(ValueError, match=r"field_selector is not served.*matching_fields"):
            await client.list(V1Job, field_selector="metadata.name=a1")
        with pytest.raises(TypeError, match=r"matching_fields\['metadata.controller'\]"):
            await client.list(V1Job, matching_fields={"metadata.controller": 3})  # type: ignore[dict-item]


async def test_a_failing_index_function_is_reported_not_silently_dropped() -> None:
    api = FakeAPI()
    manager = Manager(api.config(), options=OPTIONS)
    await seed(manager.api_reader)

    def picky(obj: dict[str, Any]) -> list[str]:
        if obj["metadata"]["name"] == "b2":
            raise KeyError("no owner")
        return dict_owner(obj)

    def wrong_shape(obj: dict[str, Any]) -> list[str]:
        return obj["metadata"]["name"]  # type: ignore[no-any-return]  # a str, not a list

    manager.field_indexer.index_field(JOB, "metadata.controller", picky)
    manager.field_indexer.index_field(JOB, "metadata.name", wrong_shape)
    async with run_manager(manager):
        with pytest.raises(FieldIndexError, match=r"b/b2: KeyError\('no owner'\)") as caught:
            await manager.client.list(JOB, matching_fields={"metadata.controller": "backup"})
        assert list(caught.value.failures) == ["b/b2"]
        with pytest.raises(FieldIndexError, match="must return a list of strings, not str"):
            await manager.client.list(JOB, matching_fields={"metadata.name": "a1"})
        # Once the object is gone, the index is whole again.
        await manager.api_reader.delete(JOB, "b2", namespace="b")

        async def backup_jobs() -> list[str]:
            listed = await manager.client.list(
                JOB, matching_fields={"metadata.controller": "backup"}
            )
            return [o["metadata"]["name"] for o in listed["items"]]

        await eventually(lambda: _equals(backup_jobs, ["a1", "a2", "b1"]), describe="b2 gone")


async def test_live_clients_send_matching_fields_as_a_field_selector() -> None:
    api = FakeAPI()
    async with AsyncClient(api.config()) as client:
        await seed(client)
        found = await client.list(V1Job, matching_fields={"metadata.name": "a2"})
        assert names(found) == ["a/a2"]
        raw = await client.list(JOB, namespace="b", matching_fields={"metadata.name": "b1"})
        assert [o["metadata"]["name"] for o in raw["items"]] == ["b1"]
        with pytest.raises(ValueError, match="not both"):
            await client.list(JOB, matching_fields={"metadata.name": "a"}, field_selector="x=y")
    assert fields_selector({"a": "x,y=z\\"}, None) == "a=x\\,y\\=z\\\\"
    assert fields_selector({}, None) is None
    assert fields_selector(None, "a=b") == "a=b"
