"""The daemons and timers tests' kit: a FakeClock, a stand-in operator, a driver.

The stand-in operator has what :class:`~kubectrl.operator._daemons.Daemons` reads from the real
one (``clock``, ``client``, ``name``, ``manager``); its client records the patches written. The
tests call ``seen``/``gone``/``stop`` as the operator's dispatcher does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from kubectrl import FakeClock
from kubectrl.operator._daemons import Daemons
from kubectrl.testing import eventually

KIND = ("example.com/v1", "Monitor")


@dataclass
class RecordingStatus:
    patches: list[tuple[Any, str, Any, dict[str, Any]]]

    async def patch(self, resource: Any, name: str, patch: Any, **options: Any) -> dict[str, Any]:
        self.patches.append((resource, name, patch, options))
        return {}


@dataclass
class RecordingClient:
    """Records ``patch`` and ``status().patch`` calls."""

    patches: list[tuple[Any, str, Any, dict[str, Any]]] = field(default_factory=list)
    status_patches: list[tuple[Any, str, Any, dict[str, Any]]] = field(default_factory=list)

    async def patch(self, resource: Any, name: str, patch: Any, **options: Any) -> dict[str, Any]:
        self.patches.append((resource, name, patch, options))
        return {}

    def status(self) -> RecordingStatus:
        return RecordingStatus(self.status_patches)


@dataclass
class StandInOperator:
    clock: FakeClock
    client: RecordingClient
    name: str = "test-operator"
    manager: Any = None
    memos: dict[Any, SimpleNamespace] = field(default_factory=dict)

    def memo_for(self, kind: Any, key: Any) -> SimpleNamespace:
        return self.memos.setdefault((kind, key), SimpleNamespace())

    def indexes(self) -> dict[str, Any]:
        return {}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def operator(clock: FakeClock) -> StandInOperator:
    return StandInOperator(clock, RecordingClient())


@pytest.fixture
async def daemons(operator: StandInOperator) -> Any:
    daemons = Daemons(operator)
    yield daemons
    await daemons.stop()  # nothing outlives a test
    if daemons.running():
        raise AssertionError(f"tasks left running: {daemons.running()}")


def obj(
    name: str = "one",
    *,
    rv: str = "1",
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A Monitor as the cache would hold it."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": "ns",
        "uid": uid or f"uid-{name}",
        "resourceVersion": rv,
    }
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    return {
        "apiVersion": KIND[0],
        "kind": KIND[1],
        "metadata": metadata,
        "spec": spec or {},
    }


async def until(predicate: Callable[[], object], describe: str | None = None) -> None:
    """Wait (real time, 5 s cap) until ``predicate()`` holds; the FakeClock does not move."""
    await eventually(predicate, 5.0, interval=0.001, describe=describe)


async def asleep_until(clock: FakeClock, when: float) -> None:
    """Wait until some task sleeps on ``clock`` until ``when`` (a daemon went back to sleep)."""

    def sleeping() -> bool:
        return clock.next_deadline() == pytest.approx(when)

    await until(sleeping, describe=f"a sleeper due at {when}")
