"""Label selectors in the cache: every form ``kubectrl.labels`` accepts, evaluated locally."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from cache_fakes import cm

from kubectrl._internal.selector import parse_label_selector
from kubectrl.cache import Indexer, Lister, ListOptions, ListWatch
from kubectrl.labels import LabelSelector, Requirement

OBJECTS = [
    cm("web-front", 1, app="web", tier="front"),
    cm("web-back", 2, app="web", tier="back"),
    cm("web-canary", 3, app="web", tier="front", canary="yes"),
    cm("db", 4, app="db"),
    cm("other-ns", 5, namespace="other", app="web", tier="front"),
]

EXPRESSIONS = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["front"]},
        {"key": "canary", "operator": "DoesNotExist"},
    ],
}


def lister() -> Lister:
    indexer = Indexer()
    for obj in OBJECTS:
        indexer.add(obj)
    return Lister(indexer, resource="configmaps")


def names(objs: list[dict[str, Any]]) -> list[str]:
    return [o["metadata"]["name"] for o in objs]


@pytest.mark.parametrize(
    "selector",
    [
        EXPRESSIONS,
        "app=web,tier in (front),!canary",
        LabelSelector(
            match_labels={"app": "web"},
            match_expressions=(
                Requirement("tier", "In", ("front",)),
                Requirement("canary", "DoesNotExist"),
            ),
        ),
    ],
    ids=["metav1-dict", "string", "LabelSelector"],
)
def test_lister_evaluates_match_expressions_locally(selector: Any) -> None:
    assert sorted(names(lister().list(selector))) == ["other-ns", "web-front"]
    assert names(lister().namespace("ns").list(selector)) == ["web-front"]


def test_lister_match_expressions_not_in_and_exists() -> None:
    selector = {
        "matchExpressions": [
            {"key": "tier", "operator": "NotIn", "values": ["back"]},  # absent key matches
            {"key": "app", "operator": "Exists"},
        ]
    }
    assert names(lister().namespace("ns").list(selector)) == ["db", "web-canary", "web-front"]


def test_lister_rejects_a_malformed_selector_naming_the_fault() -> None:
    with pytest.raises(ValueError, match="operator 'Near'"):
        lister().list({"matchExpressions": [{"key": "a", "operator": "Near", "values": ["b"]}]})


def test_parse_label_selector_accepts_every_form() -> None:
    match = parse_label_selector(EXPRESSIONS)
    assert match(OBJECTS[0])
    assert not match(OBJECTS[2])
    assert parse_label_selector(None)({})


class RecordingClient:
    """Records the query parameters ListWatch sends; answers with an empty list."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    def list_pages(self, resource: Any, **kwargs: Any) -> AsyncIterator[dict[str, Any]]:
        self.calls.append(kwargs)

        async def pages() -> AsyncIterator[dict[str, Any]]:
            yield {"metadata": {"resourceVersion": "1"}, "items": []}

        return pages()

    def watch(self, resource: Any, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        return None


async def test_list_watch_sends_any_selector_form_as_the_server_string() -> None:
    client = RecordingClient()
    lw = ListWatch(client, ("v1", "ConfigMap"), label_selector=EXPRESSIONS)  # type: ignore[arg-type]
    await lw.list_page(ListOptions(resource_version="0"))
    lw.watch(ListOptions(resource_version="1"))
    sent = [c["label_selector"] for c in client.calls]
    assert sent == ["app=web,tier in (front),!canary"] * 2
    assert "labels app=web,tier in (front),!canary" in lw.description
