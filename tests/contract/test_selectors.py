"""Label selectors (every form), field selectors and namespaced vs all-namespace lists.

Upstream: staging/src/k8s.io/apimachinery/pkg/labels/selector.go (=, ==, !=, in, notin, exists,
!exists) and pkg/fields/selector.go; generic field selectors metadata.name and
metadata.namespace in staging/src/k8s.io/apiserver/pkg/registry/generic/matcher.go
(ObjectMetaFieldsSet).
"""

from __future__ import annotations

import pytest
from contract_helpers import CM, Target, configmap, unique

LABELS = {
    "a": {"app": "web", "tier": "front"},
    "b": {"app": "web", "tier": "back"},
    "c": {"app": "db"},
    "d": {},
}


async def _seed(target: Target) -> tuple[str, dict[str, str]]:
    ns = await target.new_namespace()
    names = {}
    for key, labels in LABELS.items():
        name = unique(key)
        names[key] = name
        await target.client.create(configmap(name, ns, labels=labels))
    return ns, names


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=web", "ab"),
        ("app==web", "ab"),
        ("app!=web", "cd"),
        ("tier in (front,back)", "ab"),
        ("tier notin (front)", "bcd"),
        ("tier", "ab"),
        ("!tier", "cd"),
        ("app=web,tier!=back", "a"),
        ("app in (web,db),!tier", "c"),
    ],
)
async def test_label_selector_forms(target: Target, selector: str, expected: str) -> None:
    ns, names = await _seed(target)
    listed = await target.client.list(CM, namespace=ns, label_selector=selector)
    got = {i["metadata"]["name"] for i in listed["items"]} - {"kube-root-ca.crt"}
    assert got == {names[k] for k in expected}


async def test_label_selector_from_a_mapping(target: Target) -> None:
    ns, names = await _seed(target)
    selector = {"app": "web", "tier": "back"}
    listed = await target.client.list(CM, namespace=ns, label_selector=selector)
    assert [i["metadata"]["name"] for i in listed["items"]] == [names["b"]]


async def test_field_selector_metadata_name(target: Target) -> None:
    ns, names = await _seed(target)
    listed = await target.client.list(
        CM, namespace=ns, field_selector=f"metadata.name={names['c']}"
    )
    assert [i["metadata"]["name"] for i in listed["items"]] == [names["c"]]
    other = await target.client.list(
        CM, namespace=ns, field_selector=f"metadata.name!={names['c']}"
    )
    assert names["c"] not in {i["metadata"]["name"] for i in other["items"]}
    assert names["a"] in {i["metadata"]["name"] for i in other["items"]}


async def test_field_selector_metadata_namespace_across_namespaces(target: Target) -> None:
    ns, names = await _seed(target)
    listed = await target.client.list(CM, field_selector=f"metadata.namespace={ns}")
    assert {i["metadata"]["namespace"] for i in listed["items"]} == {ns}
    assert {names[k] for k in "abcd"} <= {i["metadata"]["name"] for i in listed["items"]}


async def test_field_and_label_selectors_combine(target: Target) -> None:
    ns, names = await _seed(target)
    listed = await target.client.list(
        CM, namespace=ns, label_selector="app=web", field_selector=f"metadata.name={names['c']}"
    )
    assert listed["items"] == []


async def test_namespaced_list_sees_only_its_namespace(target: Target) -> None:
    c = target.client
    ns1, ns2 = await target.new_namespace(), await target.new_namespace()
    await c.create(configmap("same", ns1))
    await c.create(configmap("same", ns2))
    listed = await c.list(CM, namespace=ns1, field_selector="metadata.name=same")
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        (ns1, "same")
    ]


async def test_all_namespaces_list_sees_every_namespace(target: Target) -> None:
    c = target.client
    ns1, ns2 = await target.new_namespace(), await target.new_namespace()
    label = unique("all")
    await c.create(configmap("same", ns1, labels={"run": label}))
    await c.create(configmap("same", ns2, labels={"run": label}))
    listed = await c.list(CM, label_selector=f"run={label}")
    assert sorted(i["metadata"]["namespace"] for i in listed["items"]) == sorted([ns1, ns2])
    assert listed["kind"] == "ConfigMapList"


async def test_default_and_kube_system_namespaces_exist(target: Target) -> None:
    listed = await target.client.list(("v1", "Namespace"))
    names = {i["metadata"]["name"] for i in listed["items"]}
    assert {"default", "kube-system"} <= names


async def test_list_items_are_sorted_by_name(target: Target) -> None:
    """etcd returns keys in order: items are sorted by namespace then name."""
    ns = await target.new_namespace()
    for name in ("charlie", "alpha", "bravo"):
        await target.client.create(configmap(name, ns, labels={"s": "1"}))
    listed = await target.client.list(CM, namespace=ns, label_selector="s=1")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["alpha", "bravo", "charlie"]
