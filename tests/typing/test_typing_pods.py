"""Static typing of the pod verbs (``client.pods``): mypy --strict infers ``str`` or ``bytes``
from a log call's ``encoding``, and refuses a misspelt option or an option of the other call.

Checked by mypy (``tests/typing`` is in mypy's ``files``; ``tests/typing/test_mypy_passes.py``
runs it); the functions are never called, so pytest only imports this file. Lines marked
``# type: ignore[...]`` must be errors: strict mypy warns about an unused ignore, so each line
proves that mypy refuses it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from typing_extensions import assert_type

from kubectrl.client import AsyncClient, BlockingClient
from kubectrl.client.pods import (
    BlockingExecSession,
    BlockingPods,
    BlockingPortForward,
    ExecResult,
    ExecSession,
    Pods,
    PortForward,
)


async def async_logs(client: AsyncClient) -> None:
    assert_type(client.pods, Pods)
    assert_type(await client.pods.log("web-0", namespace="ns", tail_lines=10), str)
    assert_type(await client.pods.log("web-0", encoding="latin-1"), str)
    assert_type(await client.pods.log("web-0", container="app", encoding=None), bytes)
    assert_type(client.pods.log_stream("web-0", namespace="ns"), AsyncIterator[str])
    assert_type(client.pods.log_stream("web-0", encoding=None), AsyncIterator[bytes])
    async for line in client.pods.log_stream("web-0", since_seconds=60):
        assert_type(line, str)
    async for raw in client.pods.log_stream("web-0", previous=True, encoding=None):
        assert_type(raw, bytes)


async def async_log_options_refused(client: AsyncClient) -> None:
    await client.pods.log("web-0", contaner="app")  # type: ignore[call-overload]
    await client.pods.log("web-0", tail_lines="10")  # type: ignore[call-overload]
    await client.pods.log("web-0", encoding=b"utf-8")  # type: ignore[call-overload]
    client.pods.log_stream("web-0", limit_bytes=1024)  # type: ignore[call-overload]
    client.pods.log_stream("web-0", folow=True)  # type: ignore[call-overload]


async def async_streams(client: AsyncClient) -> None:
    assert_type(await client.pods.exec("web-0", ["true"], namespace="ns"), ExecResult)
    async with client.pods.open_exec("web-0", ["sh"], stdin=True) as session:
        assert_type(session, ExecSession)
    async with client.pods.attach("web-0", container="app") as attached:
        assert_type(attached, ExecSession)
    assert_type(client.pods.port_forward("web-0", 8080), PortForward)
    await client.pods.exec("web-0", ["true"], containr="app")  # type: ignore[call-arg]
    await client.pods.evict("web-0", grace_period=0)  # type: ignore[call-arg]


async def the_old_names_are_gone(client: AsyncClient, blocking: BlockingClient) -> None:
    # At run time each raises an AttributeError naming its new call (client.pods....).
    await client.pod_log("web-0")  # type: ignore[attr-defined]
    client.follow_pod_log("web-0")  # type: ignore[attr-defined]
    await client.exec("web-0", ["true"])  # type: ignore[attr-defined]
    blocking.pod_log_bytes("web-0")  # type: ignore[attr-defined]


def blocking_pods(client: BlockingClient) -> None:
    assert_type(client.pods, BlockingPods)
    assert_type(client.pods.log("web-0", namespace="ns"), str)
    assert_type(client.pods.log("web-0", encoding=None), bytes)
    assert_type(client.pods.log_stream("web-0"), Iterator[str])
    for raw in client.pods.log_stream("web-0", encoding=None):
        assert_type(raw, bytes)
    assert_type(client.pods.exec("web-0", ["true"]), ExecResult)
    assert_type(client.pods.open_exec("web-0", ["sh"]), BlockingExecSession)
    assert_type(client.pods.port_forward("web-0", 8080), BlockingPortForward)
    client.pods.log("web-0", contaner="app")  # type: ignore[call-overload]
    client.pods.log_stream("web-0", limit_bytes=1)  # type: ignore[call-overload]
