"""Shared setup for the operator's unit tests: a FakeAPI, a FakeClock and a Manager on them."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from kubectrl._internal.clock import FakeClock
from kubectrl.client import AsyncClient
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI

CM = ("v1", "ConfigMap")


@pytest.fixture
def api() -> FakeAPI:
    return FakeAPI()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def client(api: FakeAPI) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api.config()) as c:
        yield c


def new_manager(api: FakeAPI, clock: FakeClock) -> Manager:
    return Manager(api.config(), options=ManagerOptions(metrics_bind_address="0"), clock=clock)


def configmap(
    name: str, data: dict[str, str] | None = None, ns: str = "default"
) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": data or {},
    }
