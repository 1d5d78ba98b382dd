"""Daemons under a real Manager and the real Operator on FakeAPI: started for each object,
stopped on deletion and when the manager loses its leader election, nothing left running.

Expected behaviour from kopf: ``kopf/_core/engines/daemons.py`` (daemons stop when the object is
deleted and when the operator exits or pauses) and ``docs/daemons.rst`` (Termination).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubectrl import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.operator import DaemonStopped, Operator
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, eventually, run_manager

CM = ("v1", "ConfigMap")


def wire(api: FakeAPI, clock: FakeClock) -> tuple[Manager, Operator, list[tuple[str, Any]]]:
    options = ManagerOptions(
        leader_election=True,
        leader_election_id="daemons",
        leader_election_namespace="default",
        metrics_bind_address="0",
    )
    manager = Manager(api.config(), options=options, clock=clock)
    operator = Operator(manager, name="t")
    log: list[tuple[str, Any]] = []

    @operator.daemon(CM)
    async def follow(name: str, stopped: DaemonStopped, **_: Any) -> None:
        log.append(("start", name))
        await stopped.wait()
        log.append(("stop", (name, stopped.reason)))

    return manager, operator, log


def config_map(name: str) -> dict[str, Any]:
    metadata = {"name": name, "namespace": "default"}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}


async def test_a_daemon_per_object_stopped_on_deletion_and_on_lost_leadership() -> None:
    clock = FakeClock()
    api = FakeAPI(clock=clock)
    manager, operator, log = wire(api, clock)
    daemons = operator._daemons

    async def run() -> None:
        async with AsyncClient(api.config()) as admin, run_manager(manager):
            for name in ("a", "b", "c"):
                await admin.create(config_map(name))
            await eventually(lambda: len(daemons.running()) == 3, describe="three daemons")
            await admin.delete(CM, "b", namespace="default")
            await eventually(lambda: ("stop", ("b", "deleted")) in log, describe="b stopped")
            assert len(daemons.running()) == 2
            # A jump past the renew deadline: the elector stops leading (a paused process),
            # which run_manager reports on exit as that trap.
            clock.advance(60)
            await eventually(lambda: not daemons.running(), describe="no daemon left")

    with pytest.raises(AssertionError, match="lost its leader election") as caught:
        await run()
    assert type(caught.value.__cause__).__name__ == "LeaderElectionLostError"
    body_failure = caught.value.__context__  # run_manager chains what the body raised
    assert not isinstance(body_failure, AssertionError), body_failure
    assert daemons.running() == []
    assert sorted(entry for entry in log if entry[0] == "start") == [
        ("start", "a"),
        ("start", "b"),
        ("start", "c"),
    ]
    assert sorted(entry[1] for entry in log if entry[0] == "stop") == [
        ("a", "operator stopping"),
        ("b", "deleted"),
        ("c", "operator stopping"),
    ]
