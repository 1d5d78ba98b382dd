from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig


@pytest.fixture
def client_config(kubeconfig: Path) -> ClientConfig:
    return load_kubeconfig(kubeconfig)


@pytest.fixture
async def client(client_config: ClientConfig) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(client_config) as c:
        yield c
