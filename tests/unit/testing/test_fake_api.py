"""FakeAPI's own behaviour, through the real AsyncClient (no control plane, no sleeps)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubectrl import errors
from kubectrl.client import AsyncClient, BlockingClient, ClientConfig
from kubectrl.testing import FakeAPI, UnsupportedFeatureError

CM = ("v1", "ConfigMap")


def cm(name: str, ns: str = "default", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns, **extra},
    }


@pytest.fixture
def api() -> FakeAPI:
    return FakeAPI()


@pytest.fixture
async def client(api: FakeAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api.config()) as c:
        yield c


async def test_create_sets_server_metadata_and_get_returns_a_copy(client: AsyncClient) -> None:
    created = await client.create({**cm("a"), "data": {"k": "v"}})
    meta = created["metadata"]
    assert meta["uid"]
    assert meta["creationTimestamp"].endswith("Z")
    assert int(meta["resourceVersion"]) > 0
    got = await client.get(CM, "a", namespace="default")
    assert got["data"] == {"k": "v"}
    assert got["metadata"]["uid"] == meta["uid"]


async def test_errors_have_the_apiservers_status_shape(client: AsyncClient) -> None:
    await client.create(cm("a"))
    with pytest.raises(errors.AlreadyExistsError) as exists:
        await client.create(cm("a"))
    assert exists.value.server_message == 'configmaps "a" already exists'
    assert exists.value.status["details"] == {"name": "a", "kind": "configmaps"}
    with pytest.raises(errors.NotFoundError) as missing:
        await client.get(CM, "zz", namespace="default")
    assert missing.value.server_message == 'configmaps "zz" not found'
    with pytest.raises(errors.NotFoundError) as no_ns:
        await client.create(cm("a", ns="nowhere"))
    assert no_ns.value.server_message == 'namespaces "nowhere" not found'
    with pytest.raises(errors.InvalidError) as bad:
        await client.create(cm("Bad_Name"))
    assert bad.value.causes[0].field == "metadata.name"


async def test_stale_update_is_a_conflict_and_noop_keeps_the_rv(client: AsyncClient) -> None:
    first = await client.create({**cm("a"), "data": {"k": "1"}})
    second = await client.update({**first, "data": {"k": "2"}})
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    with pytest.raises(errors.ConflictError) as err:
        await client.update({**first, "data": {"k": "3"}})
    assert err.value.server_message == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; please '
        "apply your changes to the latest version and try again"
    )
    same = await client.update(second)
    assert same["metadata"]["resourceVersion"] == second["metadata"]["resourceVersion"]


async def test_selectors_and_pagination(api: FakeAPI, client: AsyncClient) -> None:
    for i in range(5):
        await client.create(cm(f"c{i}", labels={"app": "x" if i % 2 else "y"}))
    odd = await client.list(CM, namespace="default", label_selector="app=x")
    assert [o["metadata"]["name"] for o in odd["items"]] == ["c1", "c3"]
    by_name = await client.list(CM, field_selector="metadata.name=c2")
    assert [o["metadata"]["name"] for o in by_name["items"]] == ["c2"]
    pages = [p async for p in client.list_pages(CM, namespace="default", limit=2)]
    assert [[o["metadata"]["name"] for o in p["items"]] for p in pages] == [
        ["c0", "c1"],
        ["c2", "c3"],
        ["c4"],
    ]
    assert pages[0]["metadata"]["remainingItemCount"] == 3
    assert {p["metadata"]["resourceVersion"] for p in pages} == {
        pages[0]["metadata"]["resourceVersion"]
    }
    with pytest.raises(errors.BadRequestError):
        await client.list(CM, field_selector="data.k=v")


async def test_watch_from_a_resource_version_and_410_after_compaction(
    api: FakeAPI, client: AsyncClient
) -> None:
    listed = await client.list(CM, namespace="default")
    rv = listed["metadata"]["resourceVersion"]
    await client.create(cm("a"))
    await client.delete(CM, "a", namespace="default")
    async with client.watch(CM, namespace="default", resource_version=rv) as events:
        seen = [(e.type.value, e.object["metadata"]["name"]) async for e in _take(events, 2)]
    assert seen == [("ADDED", "a"), ("DELETED", "a")]
    api.compact()
    async with client.watch(CM, namespace="default", resource_version=rv) as events:
        with pytest.raises(errors.ExpiredError):
            await events.__anext__()


async def test_live_watch_bookmark_and_drop(api: FakeAPI, client: AsyncClient) -> None:
    listed = await client.list(CM, namespace="default")
    async with client.watch(
        CM, namespace="default", resource_version=listed["metadata"]["resourceVersion"]
    ) as events:
        await client.create(cm("live"))
        first = await events.__anext__()
        assert (first.type.value, first.object["metadata"]["name"]) == ("ADDED", "live")
        assert api.bookmark() == 1
        mark = await events.__anext__()
        assert mark.type.value == "BOOKMARK"
        assert api.drop_watches() == 1
        with pytest.raises(StopAsyncIteration):
            await events.__anext__()


async def test_fault_injection(api: FakeAPI, client: AsyncClient) -> None:
    await client.create(cm("a"))
    api.fail_next("get", "ConfigMap", 409, times=2)
    for _ in range(2):
        with pytest.raises(errors.ConflictError):
            await client.get(CM, "a", namespace="default")
    assert (await client.get(CM, "a", namespace="default"))["metadata"]["name"] == "a"
    api.fail_next("update", "configmaps", errors.ForbiddenError("nope", reason="Forbidden"))
    with pytest.raises(errors.ForbiddenError):
        await client.update(await client.get(CM, "a", namespace="default"))


async def test_finalizers_and_garbage_collection(client: AsyncClient) -> None:
    owner = await client.create(cm("owner", finalizers=["example.com/hold"]))
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "owner",
        "uid": owner["metadata"]["uid"],
    }
    await client.create(cm("child", ownerReferences=[ref]))
    marked = await client.delete(CM, "owner", namespace="default")
    assert marked["metadata"]["deletionTimestamp"]
    assert (await client.get(CM, "child", namespace="default"))["metadata"]["name"] == "child"
    current = await client.get(CM, "owner", namespace="default")
    current["metadata"]["finalizers"] = []
    await client.update(current)
    for name in ("owner", "child"):
        with pytest.raises(errors.NotFoundError):
            await client.get(CM, name, namespace="default")


async def test_blocking_client_runs_on_the_fake(api: FakeAPI) -> None:
    def work() -> str:
        with BlockingClient(api.config()) as c:
            c.create(cm("sync"))
            return str(c.get(CM, "sync", namespace="default")["metadata"]["name"])

    assert await asyncio.to_thread(work) == "sync"


async def test_an_unsupported_feature_is_a_clear_error(client: AsyncClient) -> None:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "a", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "a"}},
            "template": {
                "metadata": {"labels": {"app": "a"}},
                "spec": {"containers": [{"name": "a", "image": "nginx"}]},
            },
        },
    }
    await client.create(deployment)
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": 3}}
    scale["metadata"] = {"name": "a", "namespace": "default"}
    with pytest.raises(UnsupportedFeatureError, match="scale"):
        await client.subresource("scale").patch(
            ("apps/v1", "Deployment"),
            "a",
            scale,
            namespace="default",
            patch_type="apply",
            field_manager="x",
            force=True,
        )


async def _take(events: Any, n: int) -> AsyncIterator[Any]:
    count = 0
    async for event in events:
        yield event
        count += 1
        if count == n:
            return


def test_config_transport_is_kept_out_of_repr_and_equality(api: FakeAPI) -> None:
    config = api.config()
    assert config.transport is api.transport
    assert "transport" not in repr(config)
    assert config == config.with_options(transport=None)
    with pytest.raises(errors.ConfigError, match="server"):
        ClientConfig(server="", transport=api.transport)


async def test_continue_token_after_compaction_is_expired(
    api: FakeAPI, client: AsyncClient
) -> None:
    for i in range(3):
        await client.create(cm(f"c{i}"))
    pages = client.list_pages(CM, namespace="default", limit=1)
    await pages.__anext__()
    await client.create(cm("later"))  # the listing's snapshot is now history...
    api.compact()  # ...and compaction drops it
    with pytest.raises(errors.ExpiredError):
        await pages.__anext__()


async def test_watch_open_can_fail_or_wait(api: FakeAPI, client: AsyncClient) -> None:
    api.fail_next("watch", "ConfigMap", 503)
    with pytest.raises(errors.ServiceUnavailableError):
        async with client.watch(CM, namespace="default") as events:
            await events.__anext__()


async def test_a_conversion_webhook_is_refused_not_skipped(api: FakeAPI) -> None:
    """A CRD whose versions convert through a webhook: what is read and written at the storage
    version works, and what would need the webhook fails naming the CRD and both versions (the
    fake calls no webhook, and relabelling instead would hide the conversion under test)."""
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "reeds.conv.example.com"},
        "spec": {
            "group": "conv.example.com",
            "scope": "Namespaced",
            "names": {"plural": "reeds", "singular": "reed", "kind": "Reed"},
            "versions": [
                {"name": "v1", "served": True, "storage": True, "schema": schema},
                {"name": "v2", "served": True, "storage": False, "schema": schema},
            ],
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"namespace": "default", "name": "conv"}},
                },
            },
        },
    }
    api.install_crd(crd)
    reed = {"kind": "Reed", "metadata": {"name": "a", "namespace": "default"}, "spec": {"x": 1}}
    async with AsyncClient(api.config()) as client:
        await client.create({**reed, "apiVersion": "conv.example.com/v1"})
        got = await client.get(("conv.example.com/v1", "Reed"), "a", namespace="default")
        assert got["spec"] == {"x": 1}
        with pytest.raises(
            UnsupportedFeatureError, match=r"Webhook conversion.*reeds\.conv.*v1 to v2"
        ):
            await client.get(("conv.example.com/v2", "Reed"), "a", namespace="default")
        with pytest.raises(UnsupportedFeatureError, match="from v2 to v1"):
            await client.create(
                {
                    **reed,
                    "apiVersion": "conv.example.com/v2",
                    "metadata": {"name": "b", "namespace": "default"},
                }
            )
