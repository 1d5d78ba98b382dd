"""``meta_namespace_key``'s fast path for decoded dicts gives exactly the strings of the general
path (an ``ObjectKey`` formatted), which the store keys objects by."""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl.cache import Indexer
from kubectrl.cache._store import namespace_index_func
from kubectrl.objects import key_of, meta_namespace_key

OBJECTS: list[dict[str, Any]] = [
    {"metadata": {"namespace": "ns", "name": "a"}},
    {"metadata": {"name": "node-1"}},
    {"metadata": {"namespace": "", "name": "cluster-scoped"}},
    {"metadata": {"namespace": None, "name": "b"}},
    {"metadata": {"namespace": "ns", "name": ""}},
    {"metadata": {"namespace": "ns"}},
    {"metadata": {"namespace": 7, "name": 8}},
    {"metadata": None},
    {},
]


@pytest.mark.parametrize("obj", OBJECTS)
def test_fast_key_and_namespace_index_match_the_reference(obj: dict[str, Any]) -> None:
    assert meta_namespace_key(obj) == str(key_of(obj))
    reference = [str((obj.get("metadata") or {}).get("namespace") or "")]
    assert namespace_index_func(obj) == reference


def test_the_default_indexer_keys_like_meta_namespace_key() -> None:
    indexer = Indexer()
    indexer.add({"metadata": {"namespace": "ns", "name": "a"}})
    indexer.add({"metadata": {"name": "node-1"}})
    assert sorted(indexer.list_keys()) == ["node-1", "ns/a"]
    assert indexer.index_keys("namespace", "ns") == ["ns/a"]
