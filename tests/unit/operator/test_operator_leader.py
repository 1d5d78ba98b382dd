"""The operator runs on the leader only: a standby runs no startup hook and no handler; when
the leader goes away the standby takes over and handles what changed meanwhile, once.

Upstream semantics: controller-runtime's leader-only runnables
(``pkg/manager/runnable_group.go``: ``LeaderElectionRunnables`` start once elected) and kopf's
``kopf/_core/engines/peering.py`` (one operator active at a time). Two managers elect one
leader on FakeAPI (lease 2 s, renew deadline 1.5 s, retry 0.2 s), on the real clock: waits
are conditions with deadlines.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kubectrl.client import AsyncClient
from kubectrl.operator import Operator
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, consistently, eventually

from .conftest import CM, configmap


def replica(api: FakeAPI, identity: str, log: list[tuple[str, str]]) -> Manager:
    options = ManagerOptions(
        metrics_bind_address="0",
        leader_election=True,
        leader_election_id="operator",
        leader_election_namespace="default",
        identity=identity,
        lease_duration=2.0,
        renew_deadline=1.5,
        retry_period=0.2,
    )
    manager = Manager(api.config(), options=options)
    operator = Operator(manager)

    @operator.on_startup()
    def started(**_: Any) -> None:
        log.append((identity, "startup"))

    @operator.on_create(CM)
    def created(name: str, **_: Any) -> None:
        log.append((identity, f"create {name}"))

    @operator.on_update(CM)
    def updated(name: str, **_: Any) -> None:
        log.append((identity, f"update {name}"))

    return manager


async def test_only_the_leader_handles_and_the_successor_resumes_once() -> None:
    api = FakeAPI()
    log: list[tuple[str, str]] = []
    async with AsyncClient(api.config()) as admin:
        leading = asyncio.ensure_future(replica(api, "a", log).start())
        await eventually(lambda: ("a", "startup") in log, 10, describe="a leads")
        following = asyncio.ensure_future(replica(api, "b", log).start())
        try:
            await admin.create(configmap("x"))
            await eventually(lambda: ("a", "create x") in log, 10, describe="a handles x")
            await consistently(lambda: all(who == "a" for who, _ in log), 0.5)
            # The leader goes away without releasing its Lease (as a killed process would).
            leading.cancel()
            await asyncio.gather(leading, return_exceptions=True)
            await admin.patch(CM, "x", {"data": {"k": "v"}}, namespace="default")
            await eventually(lambda: ("b", "update x") in log, 20, describe="b takes over")
            await consistently(lambda: log.count(("b", "update x")) == 1, 0.5)
        finally:
            for task in (leading, following):
                task.cancel()
            await asyncio.gather(leading, following, return_exceptions=True)
    assert [entry for entry in log if entry[1] != "startup"] == [
        ("a", "create x"),
        ("b", "update x"),
    ]
    assert log.index(("b", "startup")) > log.index(("a", "create x"))
