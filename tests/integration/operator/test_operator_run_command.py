"""``python -m kubectrl operator run FILE`` (kopf's ``kopf run``) against the real API server: the
file's ``operator = Operator()`` runs on a manager the command makes from the kubeconfig, its
create handler's return value lands in the object's status, and SIGTERM stops it cleanly.

kopf's runner: ``kopf/cli.py`` (``run``: load the files, then run the operator until a signal).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest

from kubectrl.client import AsyncClient, load_kubeconfig
from kubectrl.testing import eventually

pytestmark = pytest.mark.integration

FILE = """
from kubectrl.operator import Operator

operator = Operator(name="cli")


@operator.on_create(("v1", "ConfigMap"))
def create_fn(name, patch, **_):
    patch.setdefault("metadata", {}).setdefault("labels", {})["greeted"] = name
"""


async def test_operator_run_handles_and_stops_on_sigterm(
    tmp_path: Path, kubeconfig: Path, namespace: str
) -> None:
    path = tmp_path / "example.py"
    path.write_text(FILE)
    env = {**os.environ, "KUBECONFIG": str(kubeconfig)}
    process = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "kubectrl", "operator", "run", str(path), "-n", namespace),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        async with AsyncClient(load_kubeconfig(kubeconfig)) as client:
            cm = {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "hello", "namespace": namespace},
            }
            await client.create(cm)

            async def greeted() -> bool:
                got = await client.get(("v1", "ConfigMap"), "hello", namespace=namespace)
                return got["metadata"].get("labels", {}).get("greeted") == "hello"

            await eventually(greeted, timeout=60)
        process.send_signal(signal.SIGTERM)
        output, _ = await asyncio.wait_for(process.communicate(), timeout=60)
        assert process.returncode == 0, output.decode(errors="replace")[-2000:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
