"""Hostile and broken HTTP/1.1 servers on 127.0.0.1, for the client's transport tests.

Each server runs on its own event loop in a thread of its own, so a test can keep the client's
loop busy (as a controller's reconcile does) while the server writes: that is how bytes come to
wait unread in the client's socket, the situation a connection pool must notice. A test scripts
each connection with a coroutine that reads requests and writes whatever bytes it likes.

Nothing here decides Kubernetes semantics: the bytes are HTTP framing, and the answers are the
shape of the apiserver's (a JSON object, a ``Status``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Connection",
    "HostileServer",
    "Request",
    "answer",
    "chunked",
    "configmap",
    "hostile_server",
    "status",
]


@dataclass
class Request:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class Connection:
    """One accepted connection, seen from the server's script."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    async def read_request(self) -> Request | None:
        """The next request, or ``None`` when the client closed the connection."""
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        body = b""
        if int(headers.get("content-length", "0") or 0):
            body = await self.reader.readexactly(int(headers["content-length"]))
        return Request(method, target, headers, body)

    async def send(self, data: bytes) -> None:
        self.writer.write(data)
        with contextlib.suppress(ConnectionError):
            await self.writer.drain()

    def close(self) -> None:
        self.writer.close()

    def abort(self) -> None:
        """Close with a reset (RST), not a FIN."""
        self.writer.transport.abort()


Script = Callable[[Connection], Awaitable[None]]


@dataclass
class HostileServer:
    """A running server: its URL, what it saw, and events for a test to wait on or set."""

    url: str
    loop: asyncio.AbstractEventLoop
    connections: int = 0
    requests: list[Request] = field(default_factory=list)
    flags: dict[str, threading.Event] = field(default_factory=dict)

    def flag(self, name: str) -> threading.Event:
        """A thread-safe event shared by the server's script and the test."""
        return self.flags.setdefault(name, threading.Event())

    def run(self, coro: Awaitable[Any]) -> Future[Any]:
        """Run ``coro`` on the server's loop (from the test's thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)  # type: ignore[arg-type]


@contextlib.contextmanager
def hostile_server(
    script: Script, *, ssl_context: ssl.SSLContext | None = None
) -> Iterator[HostileServer]:
    """Serve ``script`` (one call per accepted connection) on 127.0.0.1 from a thread."""
    loop = asyncio.new_event_loop()
    started: Future[HostileServer] = Future()
    tasks: set[asyncio.Task[None]] = set()

    def main() -> None:
        asyncio.set_event_loop(loop)

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            state.connections += 1
            conn = Connection(reader, writer)
            original = conn.read_request

            async def recording() -> Request | None:
                request = await original()
                if request is not None:
                    state.requests.append(request)
                return request

            conn.read_request = recording  # type: ignore[method-assign]
            task = asyncio.current_task()
            if task is not None:
                tasks.add(task)
            try:
                await script(conn)
            except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
                pass
            except asyncio.CancelledError:
                pass  # the server stops: end quietly (asyncio logs a cancelled handler task)
            finally:
                if task is not None:
                    tasks.discard(task)
                writer.close()

        async def start() -> asyncio.AbstractServer:
            return await asyncio.start_server(
                on_connect, "127.0.0.1", 0, ssl=ssl_context, limit=1 << 20
            )

        server = loop.run_until_complete(start())
        port = server.sockets[0].getsockname()[1]
        scheme = "https" if ssl_context is not None else "http"
        state = HostileServer(url=f"{scheme}://127.0.0.1:{port}", loop=loop)
        started.set_result(state)
        loop.run_forever()
        server.close()
        for task in list(tasks):
            task.cancel()
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        loop.run_until_complete(server.wait_closed())
        loop.close()

    thread = threading.Thread(target=main, name="hostile-server", daemon=True)
    thread.start()
    state = started.result(timeout=10)
    try:
        yield state
    finally:
        for event in state.flags.values():
            event.set()  # no script waits forever on a test that failed early
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)


# ----------------------------------------------------------------------------- answers

#: The headers kube-apiserver sends with a JSON answer.
APISERVER_HEADERS = (
    b"Audit-Id: 6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f\r\n"
    b"Cache-Control: no-cache, private\r\n"
    b"Content-Type: application/json\r\n"
)


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "1"},
        "data": data,
    }


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def answer(
    body: Any = None,
    *,
    code: int = 200,
    reason: str = "OK",
    headers: bytes = b"",
    version: bytes = b"HTTP/1.1",
) -> bytes:
    """A whole response with a Content-Length: ``body`` as JSON (bytes are sent as they are)."""
    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
    return (
        b"%s %d %s\r\n" % (version, code, reason.encode())
        + APISERVER_HEADERS
        + headers
        + b"Content-Length: %d\r\n\r\n" % len(payload)
        + payload
    )


def chunked(*parts: bytes) -> bytes:
    """``parts`` as chunks of a chunked body, with its last chunk."""
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"
