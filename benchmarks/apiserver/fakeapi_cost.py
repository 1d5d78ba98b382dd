"""FakeAPI's CPU per request: a create, a get and the watch event the create causes.

Measured in-process with :func:`time.process_time` over ``iterations`` rounds (after a warm-up),
at two levels:

- ``fakeapi``: what FakeAPI itself costs: ``httpx.Request`` objects handed to its transport
  (``api.transport.handle_async_request``), the watch event read from the watch's body;
- ``client``: what a unit test pays through :class:`kubectrl.client.AsyncClient` on
  ``api.config()`` (the client's own request pipeline and decoding included), the event read
  from ``client.watch``.

Each round creates one new ConfigMap, gets it, and reads the ADDED event its create caused.
:func:`profile` runs the ``fakeapi`` level under :mod:`cProfile`.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import json
import pstats
import time
from typing import Any

import httpx

from kubectrl.client import AsyncClient
from kubectrl.testing import FakeAPI

NAMESPACE = "default"
BASE = "https://fake-apiserver/api/v1/namespaces/default/configmaps"


def _configmap(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"cm-{i}", "namespace": NAMESPACE, "labels": {"bench": "fakeapi"}},
        "data": {"key": f"value-{i}"},
    }


async def _fakeapi_rounds(rounds: int, warmup: int) -> tuple[float, int]:
    """(CPU seconds of ``rounds`` rounds, events received)."""
    api = FakeAPI(garbage_collection=False)
    transport = api.transport
    watch = await transport.handle_async_request(
        httpx.Request("GET", BASE, params={"watch": "1", "resourceVersion": "0"})
    )
    events = watch.stream.__aiter__()  # type: ignore[attr-defined]
    received = 0
    start = 0.0
    for i in range(warmup + rounds):
        if i == warmup:
            start = time.process_time()
        created = await transport.handle_async_request(
            httpx.Request("POST", BASE, content=json.dumps(_configmap(i)).encode(),
                          headers={"content-type": "application/json"})
        )  # fmt: skip
        if created.status_code != 201:
            raise RuntimeError(f"create: {created.status_code} {created.content[:300]!r}")
        got = await transport.handle_async_request(httpx.Request("GET", f"{BASE}/cm-{i}"))
        if got.status_code != 200:
            raise RuntimeError(f"get: {got.status_code} {got.content[:300]!r}")
        line = await anext(events)
        if b'"ADDED"' not in line or f'"cm-{i}"'.encode() not in line:
            raise RuntimeError(f"round {i}: unexpected watch event {line[:200]!r}")
        received += i >= warmup
    cpu = time.process_time() - start
    await watch.aclose()
    return cpu, received


async def _client_rounds(rounds: int, warmup: int) -> tuple[float, int]:
    api = FakeAPI(garbage_collection=False)
    async with (
        AsyncClient(api.config()) as client,
        client.watch(("v1", "ConfigMap"), namespace=NAMESPACE) as stream,
    ):
        events = stream.__aiter__()
        received = 0
        start = 0.0
        for i in range(warmup + rounds):
            if i == warmup:
                start = time.process_time()
            await client.create(_configmap(i))
            await client.get(("v1", "ConfigMap"), f"cm-{i}", namespace=NAMESPACE)
            event: Any = await anext(events)
            if event.type != "ADDED" or event.object["metadata"]["name"] != f"cm-{i}":
                raise RuntimeError(f"round {i}: unexpected watch event {event!r}")
            received += i >= warmup
        return time.process_time() - start, received


def measure(rounds: int = 2000, warmup: int = 200) -> dict[str, Any]:
    """CPU µs per round (create + get + its watch event) at each level."""
    out: dict[str, Any] = {"rounds": rounds}
    for level, rounds_of in (("fakeapi", _fakeapi_rounds), ("client", _client_rounds)):
        cpu, received = asyncio.run(rounds_of(rounds, warmup))
        if received != rounds:
            raise RuntimeError(f"{level}: {received} watch events for {rounds} creates")
        out[level] = {"cpu_us_per_round": cpu / rounds * 1e6, "events": received}
    return out


def profile(rounds: int = 2000, top: int = 25) -> str:
    """The ``fakeapi`` level's cProfile, by own time (``tottime``), ``top`` lines."""
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(_fakeapi_rounds(rounds, 0))
    profiler.disable()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
    return text.getvalue()
