from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING

import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig

if TYPE_CHECKING:
    from kubectrl.envtest import ControlPlane


@pytest.fixture
def admin_config(control_plane: ControlPlane) -> ClientConfig:
    """The admin's client config without client-side rate limiting (tests write a lot)."""
    return load_kubeconfig(str(control_plane.kubeconfig.path)).with_options(rate_limit=None)


@pytest.fixture
async def clients(admin_config: ClientConfig) -> AsyncIterator[Callable[..., AsyncClient]]:
    """A factory of AsyncClients (closed after the test); keyword args change the config."""
    made: list[AsyncClient] = []

    def make(config: ClientConfig | None = None, **changes: object) -> AsyncClient:
        cfg = (
            (config or admin_config).with_options(**changes)
            if changes
            else (config or admin_config)
        )
        client = AsyncClient(cfg)
        made.append(client)
        return client

    yield make
    for client in made:
        await client.aclose()
