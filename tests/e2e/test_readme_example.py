"""The README's controller example runs for real against the local control plane."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.errors import NotFoundError

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_controller_source(kubeconfig: Path) -> str:
    source = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    assert "manager.run()" in source
    assert 'ManagerOptions(health_probe_bind_address=":8081")' in source
    # Point it at the test's API server and start it ourselves instead of blocking in run().
    source = source.replace("Manager(options=", f"Manager({str(kubeconfig)!r}, options=")
    source = source.replace('health_probe_bind_address=":8081"', 'health_probe_bind_address="0"')
    return source.replace("manager.run()", "")


async def test_readme_controller_copies_a_configmap(kubeconfig: Path, namespace: str) -> None:
    scope: dict[str, Any] = {}
    exec(compile(readme_controller_source(kubeconfig), str(README), "exec"), scope)
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
