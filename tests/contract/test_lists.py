"""Pagination with limit and continue, and delete_collection.

Upstream: staging/src/k8s.io/apiserver/pkg/storage/etcd3/store.go GetList (limit, continue
token, one snapshot per listing, selectors filled up to the limit) and
staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go DeleteCollection.
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, Target, configmap, unique

from kubectrl.errors import BadRequestError, NotFoundError


async def _names(target: Target, ns: str, **kwargs: object) -> list[list[str]]:
    pages = []
    async for page in target.client.list_pages(CM, namespace=ns, **kwargs):  # type: ignore[arg-type]
        pages.append([i["metadata"]["name"] for i in page["items"]])
    return pages


async def test_three_pages_with_limit(target: Target) -> None:
    ns = await target.new_namespace()
    for i in range(7):
        await target.client.create(configmap(f"cm-{i}", ns))
    pages = await _names(target, ns, limit=3)
    assert pages == [["cm-0", "cm-1", "cm-2"], ["cm-3", "cm-4", "cm-5"], ["cm-6"]]


async def test_pages_share_one_snapshot_and_carry_continue(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    for i in range(5):
        await c.create(configmap(f"cm-{i}", ns))
    first = await anext(c.list_pages(CM, namespace=ns, limit=2))
    token = first["metadata"]["continue"]
    assert token
    await c.create(configmap("cm-9-late", ns))  # after the snapshot: not in this listing
    await c.delete(CM, "cm-4", namespace=ns)  # deleted after the snapshot: still listed
    rest = [p async for p in c.list_pages(CM, namespace=ns, limit=2, continue_=token)]
    assert {p["metadata"]["resourceVersion"] for p in rest} == {
        first["metadata"]["resourceVersion"]
    }
    names = [i["metadata"]["name"] for p in rest for i in p["items"]]
    assert names == ["cm-2", "cm-3", "cm-4"]
    assert not rest[-1]["metadata"].get("continue")


async def test_remaining_item_count_without_selectors(target: Target) -> None:
    ns = await target.new_namespace()
    for i in range(5):
        await target.client.create(configmap(f"cm-{i}", ns))
    first = await anext(target.client.list_pages(CM, namespace=ns, limit=2))
    assert first["metadata"]["remainingItemCount"] == 3


async def test_continue_token_with_label_selector(target: Target) -> None:
    ns = await target.new_namespace()
    for i in range(10):
        labels = {"even": "yes"} if i % 2 == 0 else {}
        await target.client.create(configmap(f"cm-{i}", ns, labels=labels))
    pages = await _names(target, ns, limit=2, label_selector="even=yes")
    assert [n for page in pages for n in page] == ["cm-0", "cm-2", "cm-4", "cm-6", "cm-8"]
    assert all(len(page) <= 2 for page in pages)
    assert len(pages) >= 3


async def test_list_without_limit_has_no_continue(target: Target) -> None:
    ns = await target.new_namespace()
    for i in range(3):
        await target.client.create(configmap(f"cm-{i}", ns))
    listed = await target.client.list(CM, namespace=ns)
    assert "continue" not in listed["metadata"] or not listed["metadata"]["continue"]
    assert len(listed["items"]) == 3


async def test_malformed_continue_token_is_bad_request(target: Target) -> None:
    with pytest.raises(BadRequestError) as info:
        await anext(
            target.client.list_pages(
                CM, namespace=target.namespace, limit=2, continue_="not-a-token"
            )
        )
    assert info.value.code == 400


async def test_delete_collection_deletes_only_matching(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    for i in range(4):
        await c.create(configmap(f"cm-{i}", ns, labels={"gone": "yes" if i < 3 else "no"}))
    await c.delete_collection(CM, namespace=ns, label_selector="gone=yes")
    listed = await c.list(CM, namespace=ns)
    assert [i["metadata"]["name"] for i in listed["items"]] == ["cm-3"]


async def test_delete_collection_by_field_selector(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    for i in range(3):
        await c.create(configmap(f"cm-{i}", ns))
    await c.delete_collection(CM, namespace=ns, field_selector="metadata.name=cm-1")
    with pytest.raises(NotFoundError):
        await c.get(CM, "cm-1", namespace=ns)
    assert len((await c.list(CM, namespace=ns))["items"]) == 2


async def test_delete_collection_respects_finalizers(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    held = configmap("held", ns, labels={"x": "1"})
    held["metadata"]["finalizers"] = ["contract.kubectrl.test/hold"]
    await c.create(held)
    await c.create(configmap("free", ns, labels={"x": "1"}))
    await c.delete_collection(CM, namespace=ns, label_selector="x=1")
    remaining = (await c.list(CM, namespace=ns))["items"]
    assert [i["metadata"]["name"] for i in remaining] == ["held"]
    assert remaining[0]["metadata"]["deletionTimestamp"]


async def test_delete_collection_of_custom_resources(target: Target) -> None:
    c, ns = target.client, await target.new_namespace()
    kind = await target.widget()
    for i in range(3):
        await c.create(
            {
                "apiVersion": kind[0],
                "kind": "Widget",
                "metadata": {"name": f"w{i}", "namespace": ns, "labels": {"k": str(i % 2)}},
            }
        )
    await c.delete_collection(kind, namespace=ns, label_selector="k=0")
    assert [i["metadata"]["name"] for i in (await c.list(kind, namespace=ns))["items"]] == ["w1"]


async def test_all_namespaces_pages_are_ordered_by_namespace_then_name(target: Target) -> None:
    c = target.client
    first, second = sorted([await target.new_namespace(), await target.new_namespace()])
    label = unique("pg")
    for ns in (second, first):
        for name in ("b", "a"):
            await c.create(configmap(name, ns, labels={"run": label}))
    pages = []
    async for page in c.list_pages(CM, label_selector=f"run={label}", limit=3):
        pages.append([(i["metadata"]["namespace"], i["metadata"]["name"]) for i in page["items"]])
    flat = [item for page in pages for item in page]
    assert flat == [(first, "a"), (first, "b"), (second, "a"), (second, "b")]
