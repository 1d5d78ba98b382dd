"""Fixtures for Manager/Builder tests: managers started in the background, HTTP helpers."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from kubectrl.client import AsyncClient, ClientConfig, load_kubeconfig
from kubectrl.runtime._manager import Manager, ManagerOptions

DEADLINE = 90.0
SCRIPT = Path(__file__).with_name("manager_process.py")


def read_log(path: Path) -> list[tuple[str, str, str, float]]:
    """The shared log of manager_process.py processes: (event, identity, name, time.time())."""
    if not path.exists():
        return []
    lines = []
    for line in path.read_text().splitlines():
        event, identity, name, stamp = line.split()
        lines.append((event, identity, name, float(stamp)))
    return lines


@pytest.fixture
def spawn(
    kubeconfig: Path, namespace: str, tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """Start manager_process.py as ``identity`` (extra environment as keywords); killed after."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(identity: str, **env: str) -> subprocess.Popen[bytes]:
        environment = {
            **os.environ,
            "KUBECONFIG": str(kubeconfig),
            "NAMESPACE": namespace,
            "LOG": str(tmp_path / "log"),
            "IDENTITY": identity,
            **env,
        }
        out = open(tmp_path / f"{identity}.out", "wb")  # noqa: SIM115 - closed with the process
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT)], env=environment, stdout=out, stderr=subprocess.STDOUT
        )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], timeout: float = DEADLINE, what: str = ""
) -> None:
    """Poll ``condition`` until true; fail after ``timeout`` s (a deadline, not a threshold)."""
    end = time.monotonic() + timeout
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > end:
            raise AssertionError(f"condition not reached before the deadline: {what}")
        await asyncio.sleep(0.05)


async def http_get(port: int | None, path: str) -> tuple[int, str]:
    assert port is not None
    async with httpx.AsyncClient() as http:
        response = await http.get(f"http://127.0.0.1:{port}{path}", timeout=10)
        return response.status_code, response.text


@pytest.fixture
def admin_config(kubeconfig: Path) -> ClientConfig:
    return load_kubeconfig(kubeconfig).with_options(rate_limit=None)


@pytest.fixture
async def api(admin_config: ClientConfig) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(admin_config) as client:
        yield client


@pytest.fixture
async def managers(
    admin_config: ClientConfig, namespace: str
) -> AsyncIterator[Callable[..., Manager]]:
    """Make managers (cache restricted to the test namespace); ``start`` runs them in tasks."""
    made: list[Manager] = []

    def make(config: ClientConfig | None = None, **options: Any) -> Manager:
        options.setdefault("metrics_bind_address", "127.0.0.1:0")
        options.setdefault("health_probe_bind_address", "127.0.0.1:0")
        options.setdefault("cache_namespace", namespace)
        options.setdefault("graceful_shutdown_timeout", 10.0)
        manager = Manager(config or admin_config, options=ManagerOptions(**options))
        made.append(manager)
        return manager

    yield make
    for manager in made:
        manager.stop()
    tasks = [t for t in asyncio.all_tasks() if getattr(t, "_kubectrl_test_manager", False)]
    if tasks:
        await asyncio.wait(tasks, timeout=30)


def start_in_background(manager: Manager) -> asyncio.Task[None]:
    task = asyncio.ensure_future(manager.start())
    task._kubectrl_test_manager = True  # type: ignore[attr-defined]
    return task


async def wait_synced(manager: Manager, task: asyncio.Task[None]) -> None:
    def ready() -> bool:
        if task.done():
            task.result()  # surface a start failure
        return manager.caches_synced and manager.is_leader()

    await eventually(ready, what="manager caches synced and controllers started")
