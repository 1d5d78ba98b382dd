"""The README's controller example runs unchanged: for real on the local control plane, and on
the in-memory FakeAPI (the same source, only the config differs)."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import NotFoundError
from kubectrl.testing import FakeAPI, eventually, run_manager

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_controller_source(config: str) -> str:
    """The README's first Python block, on the server ``config`` (an expression) names."""
    source = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    assert "manager.run()" in source
    assert 'ManagerOptions(health_probe_bind_address=":8081")' in source
    # Point it at the test's API server and start it ourselves instead of blocking in run().
    source = source.replace("Manager(options=", f"Manager({config}, options=")
    source = source.replace('health_probe_bind_address=":8081"', 'health_probe_bind_address="0"')
    return source.replace("manager.run()", "")


@pytest.mark.integration
async def test_readme_controller_copies_a_configmap(
    kubectrl_kubeconfig: Path, kubectrl_namespace: str
) -> None:
    namespace = kubectrl_namespace
    kubeconfig = kubectrl_kubeconfig
    scope: dict[str, Any] = {}
    source = readme_controller_source(repr(str(kubeconfig)))
    exec(compile(source, str(README), "exec"), scope)
    manager = scope["manager"]
    runner = asyncio.create_task(manager.start())
    try:
        async with AsyncClient(load_kubeconfig(kubeconfig)) as client:
            await client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": "settings", "namespace": namespace},
                    "data": {"mode": "fast"},
                }
            )
            deadline = asyncio.get_running_loop().time() + 60
            while True:
                try:
                    secret = await client.get(
                        ("v1", "Secret"), "settings-copy", namespace=namespace
                    )
                    break
                except NotFoundError:
                    assert asyncio.get_running_loop().time() < deadline, "no Secret settings-copy"
                    await asyncio.sleep(0.1)
            assert secret["metadata"]["ownerReferences"][0]["name"] == "settings"
            assert secret["data"] == {"mode": "ZmFzdA=="}  # base64("fast")
    finally:
        manager.stop()
        await runner


@contextlib.asynccontextmanager
async def readme_controller_on_the_fake() -> AsyncIterator[AsyncClient]:
    """The README's source, unchanged but for its config (the fake's) and its ports (none)."""
    api = FakeAPI()
    scope: dict[str, Any] = {"fake_config": api.config()}
    source = readme_controller_source("fake_config").replace(
        'health_probe_bind_address="0"', 'health_probe_bind_address="0", metrics_bind_address="0"'
    )
    exec(compile(source, str(README), "exec"), scope)
    async with run_manager(scope["manager"]), AsyncClient(api.config()) as client:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "default"},
                "data": {"mode": "fast"},
            }
        )
        yield client


async def copy_of_settings(client: AsyncClient) -> dict[str, Any]:
    return await eventually(
        lambda: client.get(("v1", "Secret"), "settings-copy", namespace="default"),
        describe="Secret settings-copy",
    )


async def test_readme_controller_copies_a_configmap_on_the_fake() -> None:
    async with readme_controller_on_the_fake() as client:
        secret = await copy_of_settings(client)
        assert secret["metadata"]["ownerReferences"][0]["name"] == "settings"
        # stringData is write-only: merged into data (base64) on write, as on the real server.
        assert secret["data"] == {"mode": "ZmFzdA=="}
        assert "stringData" not in secret
        managers = {entry["manager"] for entry in secret["metadata"]["managedFields"]}
        assert managers == {"configmap-copier"}
        # The ConfigMap goes: the fake's garbage collector takes the Secret with it.
        await client.delete(("v1", "ConfigMap"), "settings", namespace="default")

        async def gone() -> bool:
            try:
                await client.get(("v1", "Secret"), "settings-copy", namespace="default")
            except NotFoundError:
                return True
            return False

        await eventually(gone, describe="Secret settings-copy collected")
