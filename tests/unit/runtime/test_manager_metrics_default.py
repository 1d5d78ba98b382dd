"""The metrics server's default address: loopback 8080 on a real server, off on an in-process one.

A manager on ``FakeAPI`` used to bind 127.0.0.1:8080 unless told not to, so a second test
manager (or a developer's local process on 8080) failed with ``address already in use``.
"""

from __future__ import annotations

from kubectrl.client import ClientConfig
from kubectrl.runtime import Manager, ManagerOptions
from kubectrl.testing import FakeAPI, run_manager


async def test_two_fakeapi_managers_run_at_once_with_the_default_options() -> None:
    first, second = FakeAPI(), FakeAPI()
    one, two = Manager(first.config()), Manager(second.config())
    async with run_manager(one), run_manager(two):
        assert one.metrics_port is None
        assert two.metrics_port is None
        assert one.caches_synced
        assert two.caches_synced


async def test_a_fakeapi_manager_still_serves_metrics_on_an_address_it_is_given() -> None:
    manager = Manager(
        FakeAPI().config(), options=ManagerOptions(metrics_bind_address="127.0.0.1:0")
    )
    async with run_manager(manager):
        assert isinstance(manager.metrics_port, int)
        assert manager.metrics_port > 0


def test_a_network_config_keeps_the_loopback_default() -> None:
    # Not started: the default is read when the server is made, and nothing is bound yet.
    manager = Manager(ClientConfig(server="https://cluster.invalid"))
    server = manager._metrics_server
    assert server.enabled
    assert server._address == ("127.0.0.1", 8080)
    assert ManagerOptions().metrics_bind_address is None
