"""docs/architecture.md draws the path of one request from ``client.get`` to the socket; this runs
that request and checks the drawing against what the code really enters.

A loopback server (tests/unit/client/hostile_http.py, on a thread of its own) serves discovery
and a ConfigMap. A client with a bearer token and the default rate limit and retries gets the
ConfigMap twice; the second call, the steady state (discovery is cached after the first), runs
under ``sys.setprofile``, which sees every Python function entered on this thread: the
client's, and the event loop's callbacks into the transport while the call waits. The modules
of kubectrl entered must be exactly the modules of the drawing's path (six at most), and every
function the drawing names must have been entered in its module.
"""

from __future__ import annotations

import json
import re
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from hostile_http import Connection, HostileServer, hostile_server

from kubectrl.client import AsyncClient, ClientConfig, _pipeline
from kubectrl.client._pipeline import StaticTokenCredentials

PAGE = Path(__file__).resolve().parents[3] / "docs" / "architecture.md"
_MERMAID = re.compile(r"^```mermaid\n(.*?)^```", re.S | re.M)
_NODE = re.compile(r'^\s*\w+\["(kubectrl(?:\.\w+)+)<br/>([^"]*)"\]\s*$')

DISCOVERY = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "v1",
    "resources": [
        {"name": "configmaps", "namespaced": True, "kind": "ConfigMap", "verbs": ["get"]},
    ],
}
CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "demo", "namespace": "default", "resourceVersion": "7"},
    "data": {"a": "1"},
}


def drawn_path() -> dict[str, set[str]]:
    """The path drawn in docs/architecture.md: each module of its ``subgraph path`` with the
    functions its box names (``module<br/>Class.method, function, ...``)."""
    (diagram,) = [
        d for d in _MERMAID.findall(PAGE.read_text(encoding="utf-8")) if "subgraph path" in d
    ]
    inside = diagram.split("subgraph path", 1)[1].split("\n    end\n", 1)[0]
    drawn: dict[str, set[str]] = {}
    for line in inside.splitlines()[1:]:
        match = _NODE.match(line)
        assert match, f"a box of the path is not 'module<br/>functions': {line!r}"
        module, functions = match.groups()
        drawn[module] = {name.strip() for name in functions.split(",")}
    return drawn


async def answer(conn: Connection) -> None:
    while (request := await conn.read_request()) is not None:
        document = DISCOVERY if request.target.split("?")[0] == "/api/v1" else CONFIGMAP
        body = json.dumps(document).encode()
        await conn.send(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )


@pytest.fixture(autouse=True)
def no_request_observers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The path drawn is a client's without REST client metrics: another test's Manager still
    alive in this process (its observer is process-wide, as client-go's metrics are) would add
    ``kubectrl.client._request_metrics`` to it."""
    monkeypatch.setattr(_pipeline, "_observers", weakref.WeakSet())


@pytest.fixture(scope="module")
def server() -> Iterator[HostileServer]:
    with hostile_server(answer) as running:
        yield running


async def entered_by_the_second_get(url: str, **options: Any) -> dict[str, set[str]]:
    """The kubectrl functions (module -> qualnames) the second ``client.get`` enters."""
    entered: dict[str, set[str]] = {}

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.startswith("kubectrl"):
                entered.setdefault(module, set()).add(frame.f_code.co_qualname)

    config = ClientConfig(server=url, **options)
    async with AsyncClient(config) as client:
        first = await client.get(("v1", "ConfigMap"), "demo", namespace="default")
        sys.setprofile(profile)
        try:
            second = await client.get(("v1", "ConfigMap"), "demo", namespace="default")
        finally:
            sys.setprofile(None)
    assert first == second == CONFIGMAP
    return entered


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11+")
async def test_the_drawn_path_is_the_path_a_steady_state_get_takes(server: HostileServer) -> None:
    drawn = drawn_path()
    assert 0 < len(drawn) <= 6, sorted(drawn)
    before = len(server.requests)
    entered = await entered_by_the_second_get(
        server.url, credentials=StaticTokenCredentials("token")
    )
    targets = [request.target for request in server.requests[before:]]
    assert targets.count("/api/v1") == 1  # discovery once, by the first call
    assert sorted(entered) == sorted(drawn), "the modules entered are not the ones drawn"
    missing = {
        module: sorted(functions - entered[module])
        for module, functions in drawn.items()
        if functions - entered[module]
    }
    assert not missing, f"drawn but not entered: {missing}"
    assert all(request.headers["authorization"] == "Bearer token" for request in server.requests)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11+")
async def test_without_credentials_the_path_is_the_same_without_the_credential_source(
    server: HostileServer,
) -> None:
    """With a client certificate (or nothing), TLS authenticates: no credential source is
    asked, and the modules are the same."""
    entered = await entered_by_the_second_get(server.url)
    assert sorted(entered) == sorted(drawn_path())
    assert "StaticTokenCredentials.authorization" not in entered["kubectrl.client._pipeline"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="co_qualname is Python 3.11+")
async def test_with_rest_client_metrics_the_path_adds_their_module(server: HostileServer) -> None:
    """A Manager's REST client metrics (rest_client_requests_total, ...) are one module more."""
    from kubectrl.client.metrics import RestClientMetrics

    prometheus = pytest.importorskip("prometheus_client")
    metrics = RestClientMetrics(prometheus.CollectorRegistry())
    try:
        entered = await entered_by_the_second_get(server.url)
    finally:
        metrics.close()
    assert sorted(entered) == sorted([*drawn_path(), "kubectrl.client._request_metrics"])


def test_the_drawing_is_parsed_from_the_page() -> None:
    drawn = drawn_path()
    assert "kubectrl.client._pipeline" in drawn
    assert {"Pipeline.send", "Pipeline.transmit"} <= drawn["kubectrl.client._pipeline"]
