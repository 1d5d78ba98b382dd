"""Churn: writers, an apiserver restart, a cut watch, a partition and etcd compaction (410).

Sequence (each step waits on a condition, never on time):

1. 3 writers create / update / delete among 500 ConfigMaps; the informer watches through a
   loopback TCP proxy.
2. The proxy cuts the live watch connection once (the informer re-watches from its last
   resourceVersion).
3. A partition: the proxy cuts again and refuses new connections while writers go on, so the
   informer's resourceVersion falls behind.
4. kube-apiserver is restarted (its new watch cache starts after the informer's resourceVersion).
5. More writes; etcd is compacted at its current revision.
6. The partition heals: the informer's re-watch gets 410 Expired and it relists.
7. Writers stop. Within a deadline: store == server list (name -> resourceVersion), and every
   key's last handler observation equals the server's final state (or a delete).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import random
import time
from collections.abc import Callable
from urllib.parse import urlparse

import httpx
import pytest

from kubectrl.cache import (
    BackoffPolicy,
    DeletedFinalStateUnknown,
    Informer,
    ListWatch,
    Notification,
    ReflectorOptions,
)
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.envtest import ControlPlane
from kubectrl.errors import ExpiredError, KubectrlError

from ._proxy import TCPProxy

pytestmark = pytest.mark.integration

DEADLINE = 120.0
OBJECTS = 500
WRITERS = 3


async def wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached before the deadline: {what}")
        await asyncio.sleep(0.02)


class Writers:
    """3 writers over disjoint name sets; every failure is tolerated (the server may be down)."""

    def __init__(self, client: AsyncClient, namespace: str, seed: int) -> None:
        self.client = client
        self.namespace = namespace
        self.ok = 0
        self.failed = 0
        self.stop = asyncio.Event()
        self.rng = random.Random(seed)
        self.tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        per = OBJECTS // WRITERS + 1
        for w in range(WRITERS):
            names = [f"w{w}-{i:03d}" for i in range(per) if w * per + i < OBJECTS]
            self.tasks.append(asyncio.create_task(self._run(names)))

    async def _run(self, names: list[str]) -> None:
        existing: set[str] = set()
        while not self.stop.is_set():
            name = self.rng.choice(names)
            try:
                if name not in existing:
                    await self.client.create(
                        {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": name, "namespace": self.namespace},
                            "data": {"v": "0"},
                        }
                    )
                    existing.add(name)
                elif self.rng.random() < 0.7:
                    await self.client.patch(
                        ("v1", "ConfigMap"),
                        name,
                        {"data": {"v": str(self.rng.random())}},
                        namespace=self.namespace,
                    )
                else:
                    await self.client.delete(("v1", "ConfigMap"), name, namespace=self.namespace)
                    existing.discard(name)
                self.ok += 1
            except KubectrlError as err:
                self.failed += 1
                # Resynchronise our belief with the server after an ambiguous failure.
                with contextlib.suppress(KubectrlError):
                    await self.client.get(("v1", "ConfigMap"), name, namespace=self.namespace)
                    existing.add(name)
                    continue
                if "NotFound" in type(err).__name__ or "not found" in str(err):
                    existing.discard(name)
                await asyncio.sleep(0.05)  # the server is down; do not spin

    async def halt(self) -> None:
        self.stop.set()
        await asyncio.gather(*self.tasks)


def etcd_compact(control_plane: ControlPlane) -> int:
    endpoint = control_plane.etcd_endpoint
    with httpx.Client(base_url=endpoint, timeout=30) as http:
        key = base64.b64encode(b"/registry").decode()
        rev = int(http.post("/v3/kv/range", json={"key": key}).json()["header"]["revision"])
        response = http.post("/v3/kv/compaction", json={"revision": str(rev), "physical": True})
        response.raise_for_status()
    return rev


@pytest.mark.parametrize("run", range(3))
async def test_churn_converges_after_restart_cut_and_compaction(
    run: int,
    control_plane: ControlPlane,
    admin_config: ClientConfig,
    clients: Callable[..., AsyncClient],
    namespace: str,
) -> None:
    target = urlparse(control_plane.server)
    proxy = await TCPProxy(target.hostname or "127.0.0.1", target.port or 443).start()
    writer_client = clients(retry=admin_config.retry)
    informer_client = clients(server=proxy.url)

    watch_errors: list[BaseException] = []
    last_seen: dict[str, tuple[str, str]] = {}  # name -> ("present", rv) | ("deleted", "")

    def record(n: Notification) -> None:
        obj = n.obj.obj if isinstance(n.obj, DeletedFinalStateUnknown) else n.obj
        meta = obj["metadata"]
        if n.type == "delete":
            last_seen[meta["name"]] = ("deleted", "")
        else:
            last_seen[meta["name"]] = ("present", meta["resourceVersion"])

    informer = Informer(
        ListWatch(informer_client, ("v1", "ConfigMap"), namespace=namespace),
        # Small backoff cap keeps the test short; the decisions are the production ones.
        reflector_options=ReflectorOptions(backoff=BackoffPolicy(cap=2.0)),
        on_watch_error=lambda _reflector, err: watch_errors.append(err),
    )
    informer.add_handler(record)
    writers = Writers(writer_client, namespace, seed=run)
    informer.start()
    try:
        await informer.wait_for_cache_sync(timeout=DEADLINE)
        writers.start()

        await wait_until(lambda: writers.ok >= 150, "150 writes")
        assert proxy.cut() >= 1  # the watch connection, cut once

        await wait_until(lambda: writers.ok >= 300, "300 writes")
        proxy.partition(True)
        mark = writers.ok
        await wait_until(lambda: writers.ok >= mark + 100, "100 writes during the partition")

        await asyncio.to_thread(control_plane.restart_apiserver)
        mark = writers.ok
        await wait_until(lambda: writers.ok >= mark + 100, "100 writes after the restart")
        await asyncio.to_thread(etcd_compact, control_plane)
        mark = writers.ok
        await wait_until(lambda: writers.ok >= mark + 50, "50 writes after compaction")

        proxy.partition(False)
        await wait_until(
            lambda: any(isinstance(e, ExpiredError) for e in watch_errors),
            "a 410 Expired on the re-watch after compaction",
        )
        mark = writers.ok
        await wait_until(lambda: writers.ok >= mark + 100, "100 writes after healing")
        await writers.halt()

        server_state: dict[str, str] = {}

        async def refresh() -> None:
            listing = await writer_client.list(("v1", "ConfigMap"), namespace=namespace)
            server_state.clear()
            server_state.update(
                {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in listing["items"]}
            )

        await refresh()

        def converged() -> bool:
            cached = {
                o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                for o in informer.indexer.list()
            }
            if cached != server_state:
                return False
            for name in set(last_seen) | set(server_state):
                want = ("present", server_state[name]) if name in server_state else None
                got = last_seen.get(name)
                if want is None:
                    if got is not None and got[0] != "deleted":
                        return False
                elif got != want:
                    return False
            return True

        await wait_until(converged, "store == server and handler == server")
        assert len(server_state) > 0
    finally:
        writers.stop.set()
        await asyncio.gather(*writers.tasks, return_exceptions=True)
        await informer.stop()
        await proxy.close()
