"""The storage interface, checked on every implementation (today the in-memory one).

A durable backend (etcd, SQLite) added to ``STORES`` runs the same cases.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubectrl.apiserver._storage.memory import (
    Change,
    CompactedError,
    KeyExistsError,
    MemoryStorage,
    RevisionMismatchError,
    Storage,
)

STORES: list[Callable[[], Storage]] = [MemoryStorage]
CM = ("", "configmaps")
SECRETS = ("", "secrets")


def obj(name: str, ns: str = "default", **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns}, "data": dict(data)}


@pytest.fixture(params=STORES, ids=lambda f: f.__name__)
def store(request: pytest.FixtureRequest) -> Storage:
    factory: Callable[[], Storage] = request.param
    return factory()


def test_writes_bump_one_revision_and_set_the_resource_version(store: Storage) -> None:
    assert store.revision == 0
    a = store.create(CM, ("default", "a"), obj("a"))
    b = store.create(SECRETS, ("default", "b"), obj("b"))
    assert (a.revision, b.revision, store.revision) == (1, 2, 2)
    stored = store.get(CM, ("default", "a"))
    assert stored is not None
    assert stored["metadata"]["resourceVersion"] == "1"
    assert store.get(CM, ("default", "missing")) is None


def test_create_refuses_a_taken_key(store: Storage) -> None:
    store.create(CM, ("default", "a"), obj("a"))
    with pytest.raises(KeyExistsError):
        store.create(CM, ("default", "a"), obj("a"))
    assert store.revision == 1


def test_update_and_delete_compare_the_resource_version(store: Storage) -> None:
    store.create(CM, ("default", "a"), obj("a", v="1"))
    with pytest.raises(RevisionMismatchError):
        store.update(CM, ("default", "a"), obj("a", v="2"), expected="7")
    with pytest.raises(RevisionMismatchError):
        store.update(CM, ("default", "nope"), obj("nope"), expected="1")
    change = store.update(CM, ("default", "a"), obj("a", v="2"), expected="1")
    assert change.type == "MODIFIED"
    assert change.previous is not None
    assert change.previous["data"] == {"v": "1"}
    assert change.object["data"] == {"v": "2"}
    with pytest.raises(RevisionMismatchError):
        store.delete(CM, ("default", "a"), expected="1")
    gone = store.delete(CM, ("default", "a"), expected="2")
    # The DELETED object is the last state, at the deletion's revision.
    assert gone.type == "DELETED"
    assert gone.object["metadata"]["resourceVersion"] == "3"
    assert store.get(CM, ("default", "a")) is None


def test_range_at_an_older_revision_undoes_later_writes(store: Storage) -> None:
    store.create(CM, ("default", "a"), obj("a", v="1"))
    store.create(CM, ("default", "b"), obj("b"))
    store.update(CM, ("default", "a"), obj("a", v="2"), expected="1")
    store.delete(CM, ("default", "b"), expected="2")
    store.create(CM, ("default", "c"), obj("c"))
    assert sorted(store.range(CM)) == [("default", "a"), ("default", "c")]
    at_two = store.range(CM, at=2)
    assert sorted(at_two) == [("default", "a"), ("default", "b")]
    assert at_two[("default", "a")]["data"] == {"v": "1"}
    assert store.range(SECRETS, at=2) == {}


def test_the_change_feed_replays_and_follows_in_order(store: Storage) -> None:
    seen: list[Change] = []
    store.subscribe(seen.append)
    store.create(CM, ("default", "a"), obj("a"))
    store.create(SECRETS, ("default", "s"), obj("s"))
    store.update(CM, ("default", "a"), obj("a", v="2"), expected="1")
    assert [(c.revision, c.type, c.resource) for c in seen] == [
        (1, "ADDED", CM),
        (2, "ADDED", SECRETS),
        (3, "MODIFIED", CM),
    ]
    assert [c.revision for c in store.changes(1)] == [2, 3]
    assert [c.revision for c in store.changes(0, CM)] == [1, 3]
    assert seen[0].key == ("default", "a")


def test_compaction_expires_older_reads_and_feeds(store: Storage) -> None:
    store.create(CM, ("default", "a"), obj("a"))
    store.create(CM, ("default", "b"), obj("b"))
    store.compact()
    assert store.compacted == 2
    with pytest.raises(CompactedError) as info:
        store.changes(1)
    assert (info.value.revision, info.value.compacted) == (1, 2)
    with pytest.raises(CompactedError):
        store.range(CM, at=1)
    assert store.changes(2) == []
    store.create(CM, ("default", "c"), obj("c"))
    assert [c.revision for c in store.changes(2)] == [3]
    assert sorted(store.range(CM, at=2)) == [("default", "a"), ("default", "b")]


def test_the_history_keeps_its_own_copies_of_nested_fields(store: Storage) -> None:
    """A change's ``object`` and ``previous`` are the states at that revision, whatever later
    happens to the dicts the writers handed in (their nested maps and lists included): a watch
    that replays the history serves what was written then."""
    first = obj("a", v="1")
    first["metadata"]["labels"] = {"app": "one"}
    first["items"] = [{"k": "one"}]
    created = store.create(CM, ("default", "a"), first)
    second = obj("a", v="2")
    updated = store.update(CM, ("default", "a"), second, expected="1")
    first["metadata"]["labels"]["app"] = "changed"
    first["items"][0]["k"] = "changed"
    second["data"]["v"] = "changed"
    assert created.object["metadata"]["labels"] == {"app": "one"}
    assert created.object["items"] == [{"k": "one"}]
    assert updated.previous is not None
    assert updated.previous["metadata"]["labels"] == {"app": "one"}
    assert updated.previous["items"] == [{"k": "one"}]
    assert updated.object["data"] == {"v": "2"}
    replayed = store.changes(0, CM)
    assert [c.object["metadata"].get("labels") for c in replayed] == [{"app": "one"}, None]
