"""The extension API server's limits: requests in flight, request bodies, history compaction and
the SQLite durability setting, with k8s.io/apiserver's defaults.

- k8s.io/apiserver pkg/server/filters/maxinflight.go: past ``--max-requests-inflight`` (400)
  reads or ``--max-mutating-requests-inflight`` (200) writes, 429 with ``Retry-After: 1``;
  watches (long-running) are not counted.
- k8s.io/apiserver pkg/server/config.go: ``MaxRequestBodyBytes`` is 3 MiB (413 beyond).
- k8s.io/apiserver pkg/storage/storagebackend/config.go ``DefaultCompactInterval`` (5 minutes)
  and pkg/storage/etcd3/compact.go: each compaction forgets the history before the revision the
  previous one saw.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.unit.apiserver.test_ext_server import FLUNDERS, Flunder, flunder

from kubectrl._internal.clock import FakeClock
from kubectrl.apiserver import APIServer, MemoryStorage, SQLiteStorage, SubresourceRequest
from kubectrl.apiserver._router import Reply, Request
from kubectrl.apiserver._storage.memory import Storage
from kubectrl.testing import eventually

MiB = 1024 * 1024


async def _started(server: APIServer) -> httpx.AsyncClient:
    await server.start(host="127.0.0.1", port=0)
    context = ssl.create_default_context(cadata=server.certificate_pem.decode())
    return httpx.AsyncClient(
        base_url=f"https://127.0.0.1:{server.port}", verify=context, timeout=10
    )


@pytest.fixture
async def blocking() -> AsyncIterator[
    tuple[APIServer, httpx.AsyncClient, asyncio.Event, list[str]]
]:
    """A server with limits of 2 reads and 2 writes in flight, and a ``hold`` subresource whose
    requests stay in flight until the event is set."""
    server = APIServer(
        [Flunder], auth=None, max_requests_inflight=2, max_mutating_requests_inflight=2
    )
    release = asyncio.Event()
    entered: list[str] = []

    @server.subresource(Flunder, "hold")
    async def hold(request: SubresourceRequest) -> dict[str, Any]:
        entered.append(request.method)
        await release.wait()
        return {"held": request.name}

    http = await _started(server)
    created = await http.post(FLUNDERS, json=flunder("a"))
    assert created.status_code == 201, created.text
    yield server, http, release, entered
    release.set()
    await http.aclose()
    await server.stop()


async def test_defaults_are_the_apiservers() -> None:
    server = APIServer([Flunder], auth=None)
    assert (
        server.max_requests_inflight,
        server.max_mutating_requests_inflight,
        server.max_request_body_bytes,
    ) == (400, 200, 3 * MiB)
    assert server.compactor is not None
    assert server.compactor.interval == 300.0


async def test_requests_past_the_limit_in_flight_get_429_with_retry_after(
    blocking: tuple[APIServer, httpx.AsyncClient, asyncio.Event, list[str]],
) -> None:
    server, http, release, entered = blocking
    held = f"{FLUNDERS}/a/hold"
    writes = [asyncio.ensure_future(http.post(held, json={})) for _ in range(2)]
    await eventually(lambda: entered.count("POST") == 2, describe="two writes in flight")
    refused = await http.post(held, json={})
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "1"
    assert refused.json()["reason"] == "TooManyRequests"
    # Reads have their own limit, and watches are not counted at all.
    reads = [asyncio.ensure_future(http.get(held)) for _ in range(2)]
    await eventually(lambda: entered.count("GET") == 2, describe="two reads in flight")
    assert (await http.get(f"{FLUNDERS}/a")).status_code == 429
    async with http.stream("GET", FLUNDERS, params={"watch": "1"}) as watch:
        assert watch.status_code == 200
    release.set()
    assert [r.status_code for r in await asyncio.gather(*writes, *reads)] == [200] * 4
    assert server.inflight == {False: 0, True: 0}
    assert (await http.get(f"{FLUNDERS}/a")).status_code == 200


async def test_a_body_over_the_limit_is_refused_before_it_is_read() -> None:
    """Before the fix the server read 40 concurrent 6 MiB bodies whole (356 MiB at the peak);
    now one announced over 3 MiB is answered 413 before its body is even sent."""
    server = APIServer([Flunder], auth=None)
    http = await _started(server)
    context = ssl.create_default_context(cadata=server.certificate_pem.decode())
    head = (
        f"POST {FLUNDERS} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {6 * MiB}\r\n\r\n"
    ).encode()

    async def announce() -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port, ssl=context)
        writer.write(head)  # the body never comes: only an answer before it ends this
        answer = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        writer.close()
        return answer

    tracemalloc.start()
    try:
        answers = await asyncio.gather(*(announce() for _ in range(40)))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert all(a.startswith(b"HTTP/1.1 413") for a in answers), answers[0]
    assert peak < 32 * MiB, f"peak {peak / MiB:.1f} MiB"
    # Just under the limit is served (and refused by validation, not by size).
    padded = flunder("b")
    padded["spec"]["reference"] = "x" * (3 * MiB - 1024)
    ok = await http.post(FLUNDERS, json=padded)
    assert ok.status_code != 413
    too_big = await http.post(FLUNDERS, json={**padded, "pad": "x" * (2 * MiB)})
    assert too_big.status_code == 413
    assert too_big.json()["reason"] == "RequestEntityTooLarge"
    await http.aclose()
    await server.stop()


def _handle(server: APIServer, method: str, path: str, body: Any = None, **params: str) -> Reply:
    raw = b"" if body is None else json.dumps(body).encode()
    answer = server.core.handle(Request(method, path, params=params, body=raw))
    assert isinstance(answer, Reply), answer
    return answer


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_the_server_compacts_its_history_on_a_schedule(kind: str, tmp_path: Path) -> None:
    """Before the fix nothing compacted: +68 KiB of history per update of a 64 KiB object in
    memory, and a SQLite file of 256 MiB after 2,000 updates."""
    storage: Storage = MemoryStorage() if kind == "memory" else SQLiteStorage(tmp_path / "s.db")
    clock = FakeClock()
    server = APIServer([Flunder], auth=None, storage=storage, clock=clock)
    http = await _started(server)
    obj = _handle(server, "POST", FLUNDERS, flunder("a")).body
    first_rv = obj["metadata"]["resourceVersion"]
    big = "x" * (64 * 1024)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(600):
            if i % 100 == 0:  # five minutes pass every 100 updates
                await eventually(lambda: clock.sleepers() > 0, describe="compactor asleep")
                clock.advance(300)
                await eventually(lambda: clock.sleepers() > 0, describe="compactor ran")
            obj = _handle(
                server, "PUT", f"{FLUNDERS}/a", {**obj, "spec": {"reference": f"{i}{big}"}}
            ).body
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Kept: the history since the previous compaction (at most 200 updates, ~26 MiB); the 600
    # updates' history, uncompacted, is ~80 MiB.
    assert storage.compacted >= 300
    if kind == "memory":
        assert grown < 48 * MiB, f"grew by {grown / MiB:.1f} MiB"
    else:
        size = sum(p.stat().st_size for p in tmp_path.glob("s.db*"))  # noqa: ASYNC240
        assert size < 48 * MiB, f"the database takes {size / MiB:.1f} MiB"
    # A watch from before the compaction is told 410 Expired, as before.
    gone = server.core.handle(
        Request("GET", FLUNDERS, params={"watch": "1", "resourceVersion": first_rv})
    )
    assert isinstance(gone, Reply)
    assert gone.content is not None
    assert json.loads(gone.content)["object"]["code"] == 410
    await http.aclose()
    await server.stop()
    if isinstance(storage, SQLiteStorage):
        storage.close()


def test_sqlite_syncs_each_commit_by_default(tmp_path: Path) -> None:
    """WAL with synchronous=NORMAL can lose the last answered writes on power loss; FULL (2)
    syncs the WAL at each commit. NORMAL (1) stays available for who wants the throughput."""
    store = SQLiteStorage(tmp_path / "full.db")
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2
    store.close()
    fast = SQLiteStorage(tmp_path / "normal.db", synchronous="NORMAL")
    assert fast._db.execute("PRAGMA synchronous").fetchone()[0] == 1
    fast.close()
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteStorage(tmp_path / "x.db", synchronous="OFF")
