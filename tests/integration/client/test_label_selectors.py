"""Every label-selector form selects the same objects on the real apiserver, in every verb.

The forms are the API's own: a selector string (apimachinery pkg/labels/selector.go ``Parse``),
``matchLabels`` and ``metav1.LabelSelector`` with ``matchExpressions``
(apimachinery pkg/apis/meta/v1/helpers.go ``LabelSelectorAsSelector``); the server decides what
matches.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from client_helpers import configmap

from kubectrl.client import AsyncClient, BlockingClient, EventType, load_kubeconfig
from kubectrl.labels import LabelSelector, Requirement

pytestmark = pytest.mark.integration

CM = ("v1", "ConfigMap")

WEB_FRONT_OR_BACK = [
    "app=web,tier in (front,back)",
    {
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]}],
    },
    LabelSelector(
        match_labels={"app": "web"},
        match_expressions=(Requirement("tier", "In", ("front", "back")),),
    ),
]
WEB = ["app=web", {"app": "web"}, {"matchLabels": {"app": "web"}}, LabelSelector({"app": "web"})]


async def _seed(client: AsyncClient, namespace: str) -> None:
    labels = {
        "a": {"app": "web", "tier": "front"},
        "b": {"app": "web", "tier": "back"},
        "c": {"app": "web"},
        "d": {"app": "db", "tier": "front"},
    }
    for name, value in labels.items():
        await client.create(configmap(name, namespace, labels=value))


def _names(items: list[dict]) -> list[str]:
    return sorted(i["metadata"]["name"] for i in items)


@pytest.mark.parametrize(
    ("selectors", "expected"), [(WEB_FRONT_OR_BACK, ["a", "b"]), (WEB, ["a", "b", "c"])]
)
async def test_all_selector_forms_select_the_same_objects(
    client: AsyncClient,
    namespace: str,
    selectors: list,
    expected: list[str],
) -> None:
    await _seed(client, namespace)
    for selector in selectors:
        listed = await client.list(CM, namespace=namespace, label_selector=selector)
        assert _names(listed["items"]) == expected, selector
        items = [
            i async for i in client.list_items(CM, namespace=namespace, label_selector=selector)
        ]
        assert _names(items) == expected, selector
        pages = [
            p
            async for p in client.list_pages(
                CM, namespace=namespace, label_selector=selector, limit=1
            )
        ]
        assert _names([i for p in pages for i in p["items"]]) == expected, selector
        seen: list[dict] = []
        async with client.watch(
            CM,
            namespace=namespace,
            label_selector=selector,
            resource_version="0",  # existing objects first, as ADDED events
            timeout_seconds=2,
        ) as stream:
            async for event in stream:
                if event.type is EventType.ADDED:
                    seen.append(event.object)
                if len(seen) == len(expected):
                    break
        assert _names(seen) == expected, selector


async def test_delete_collection_takes_a_label_selector_dict(
    client: AsyncClient, namespace: str
) -> None:
    await _seed(client, namespace)
    await client.delete_collection(CM, namespace=namespace, label_selector=WEB_FRONT_OR_BACK[1])
    left = await client.list(CM, namespace=namespace)
    assert "a" not in _names(left["items"])
    assert "b" not in _names(left["items"])
    assert {"c", "d"} <= set(_names(left["items"]))


def test_blocking_client_takes_every_selector_form(kubeconfig: Path, namespace: str) -> None:
    with BlockingClient(load_kubeconfig(kubeconfig)) as client:
        for name, labels in {"a": {"app": "web", "tier": "front"}, "c": {"app": "web"}}.items():
            client.create(configmap(name, namespace, labels=labels))
        for selector in WEB_FRONT_OR_BACK:
            listed = client.list(CM, namespace=namespace, label_selector=selector)
            assert _names(listed["items"]) == ["a"], selector
