"""SQLiteStorage: the storage interface's cases, durability across a reopen, watches resumed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The storage interface's own cases, run here on SQLite (pytest resolves their ``store``
# fixture in this module).
from tests.unit.apiserver.test_storage import (  # noqa: F401
    test_compaction_expires_older_reads_and_feeds,
    test_create_refuses_a_taken_key,
    test_range_at_an_older_revision_undoes_later_writes,
    test_the_change_feed_replays_and_follows_in_order,
    test_update_and_delete_compare_the_resource_version,
    test_writes_bump_one_revision_and_set_the_resource_version,
)

from kubectrl._internal.clock import RealClock
from kubectrl.apiserver._endpoints.core import APICore
from kubectrl.apiserver._endpoints.watch import WatchStream
from kubectrl.apiserver._router import Reply, Request
from kubectrl.apiserver._storage.memory import CompactedError, Storage
from kubectrl.apiserver._storage.sqlite import SQLiteStorage

CM = ("", "configmaps")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Storage]:
    storage = SQLiteStorage(tmp_path / "store.db")
    yield storage
    storage.close()


def cm(name: str, **data: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "d"}, "data": dict(data)}


def test_objects_history_and_compaction_survive_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    first = SQLiteStorage(path)
    first.create(CM, ("d", "a"), cm("a", v="1"))
    first.create(CM, ("d", "b"), cm("b"))
    first.update(CM, ("d", "a"), cm("a", v="2"), "1")
    first.compact(1)
    first.close()

    again = SQLiteStorage(path)
    assert (again.revision, again.compacted) == (3, 1)
    assert again.get(CM, ("d", "a")) == {
        "metadata": {"name": "a", "namespace": "d", "resourceVersion": "3"},
        "data": {"v": "2"},
    }
    assert [(c.revision, c.type) for c in again.changes(1)] == [(2, "ADDED"), (3, "MODIFIED")]
    assert again.range(CM, at=2)[("d", "a")]["data"] == {"v": "1"}
    with pytest.raises(CompactedError):
        again.changes(0)
    # The counter goes on from the stored revision: no resourceVersion is reused.
    assert again.create(CM, ("d", "c"), cm("c")).revision == 4
    again.close()


def test_a_failed_condition_writes_nothing(store: Storage) -> None:
    store.create(CM, ("d", "a"), cm("a"))
    with pytest.raises(Exception, match="resourceVersion 7"):
        store.update(CM, ("d", "a"), cm("a", v="x"), "7")
    assert store.revision == 1
    assert store.changes(0)[-1].revision == 1


def _request(method: str, path: str, body: Any = None, **params: str) -> Request:
    raw = b"" if body is None else json.dumps(body).encode()
    return Request(method, path, params=params, body=raw)


def _reply(answer: Reply | WatchStream) -> Reply:
    assert isinstance(answer, Reply), answer
    return answer


async def test_a_watch_resumes_after_a_restart_from_the_stored_revision(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    cms = "/api/v1/namespaces/d/configmaps"
    core = APICore(RealClock(), storage=SQLiteStorage(path))
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "d"}}
    assert _reply(core.handle(_request("POST", "/api/v1/namespaces", ns))).code == 201
    created = _reply(core.handle(_request("POST", cms, cm("a", v="1"))))
    seen = created.body["metadata"]["resourceVersion"]
    # Written after the client saw ``seen``, then the server stops.
    assert _reply(core.handle(_request("PUT", f"{cms}/a", {**created.body, "data": {"v": "2"}})))
    assert _reply(core.handle(_request("POST", cms, cm("b")))).code == 201
    storage = core.storage
    assert isinstance(storage, SQLiteStorage)
    storage.close()

    restarted = APICore(RealClock(), storage=SQLiteStorage(path))
    stream = restarted.handle(_request("GET", cms, watch="1", resourceVersion=seen))
    assert isinstance(stream, WatchStream)
    lines = [json.loads(line) for line in stream.first]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [
        ("MODIFIED", "a"),
        ("ADDED", "b"),
    ]
    assert lines[0]["object"]["data"] == {"v": "2"}
    await stream.aclose()

    # Compacted history: the resumed watch is told 410 Expired, never given a partial replay.
    restarted.storage.compact()
    gone = restarted.handle(_request("GET", cms, watch="1", resourceVersion=seen))
    assert isinstance(gone, Reply)
    assert gone.content is not None
    event = json.loads(gone.content)
    assert (event["type"], event["object"]["code"], event["object"]["reason"]) == (
        "ERROR",
        410,
        "Expired",
    )
    listed = _reply(
        restarted.handle(_request("GET", cms, resourceVersion=seen, resourceVersionMatch="Exact"))
    )
    assert listed.code == 410
