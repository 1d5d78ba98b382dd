"""The blocking cached client for sync reconcilers (issue 16, defect 4), without a server.

What needs the server (cached reads, writes) is in tests/integration/manager; here: where calls
run, the errors instead of deadlocks, and the fence crossing threads.
"""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest

from kubectrl.cache import InformerFactory
from kubectrl.client import AsyncClient, ClientConfig
from kubectrl.leaderelection import LeaderElectionLostError
from kubectrl.runtime import BlockingCachedClient, CachedClient

CONFIG = ClientConfig(server="https://127.0.0.1:9")  # nothing listens: no request is made
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "ns"}}


def test_same_methods_and_signatures_as_the_cached_client() -> None:
    for name in ("get", "list", "create", "update", "patch", "apply", "delete"):
        blocking = getattr(BlockingCachedClient, name)
        assert not inspect.iscoroutinefunction(blocking), name
        assert inspect.signature(blocking) == inspect.signature(getattr(CachedClient, name))
    assert BlockingCachedClient.get.__doc__ is not None
    assert "await" not in BlockingCachedClient.get.__doc__


async def test_calls_from_the_loop_thread_raise_instead_of_deadlocking() -> None:
    async with AsyncClient(CONFIG) as api:
        blocking = BlockingCachedClient(CachedClient(api, InformerFactory(api)))
        with pytest.raises(RuntimeError, match="not running"):
            blocking.create(CM)  # not bound to a loop yet
        blocking.bind_loop(asyncio.get_running_loop())
        with pytest.raises(RuntimeError, match=r"event loop thread.*use manager\.client"):
            blocking.create(CM)
        blocking.unbind_loop()
        with pytest.raises(RuntimeError, match="not running"):
            await asyncio.to_thread(blocking.create, CM)


async def test_a_worker_thread_runs_calls_on_the_loop_and_gets_their_errors() -> None:
    async with AsyncClient(CONFIG) as api:
        ran_on: list[threading.Thread] = []

        def fence() -> bool:
            ran_on.append(threading.current_thread())
            return False

        blocking = BlockingCachedClient(CachedClient(api, InformerFactory(api), leader_fence=fence))
        blocking.bind_loop(asyncio.get_running_loop())

        def sync_reconcile() -> None:
            with pytest.raises(LeaderElectionLostError, match="ns/a"):
                blocking.create(CM)
            with pytest.raises(LeaderElectionLostError, match="status"):
                blocking.status().update(CM)

        await asyncio.to_thread(sync_reconcile)
        assert ran_on == [threading.current_thread()] * 2  # the checks ran on the loop's thread
