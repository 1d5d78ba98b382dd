"""CPU per request and per watch event of each HTTP transport the client can sit on.

The question it answers: does a maintained HTTP client (aiohttp's, with its llhttp parser,
either through the ``httpx-aiohttp`` transport or called directly) cost at most 1.25x the CPU of
kubectrl's own ``FastTransport`` per GET, per PATCH and per watch event? Each variant runs in
its own process against one loopback server (a separate process, so the server's CPU is not
counted), with the same AsyncClient calls; the client process's CPU (user + system, from
``time.process_time``) is divided by the number of calls. Rounds alternate the variants so that
a change of load on the machine falls on all of them.

Variants:

- ``fast``: the client as it is (its pipeline over FastTransport, parsing with httptools),
  asyncio's loop.
- ``h11``: the same FastTransport parsing with h11 (the client without httptools).
- ``httpx-aiohttp``: httpx over aiohttp's client (the ``httpx-aiohttp`` transport, given as
  ``ClientConfig.transport``: the client's httpx adapter).
- ``aiohttp``: the transport seam implemented on an ``aiohttp.ClientSession`` (what
  FastTransport would be on aiohttp: no httpx request, one ``httpx.Response`` per answer).
- each of them again on uvloop, marked ``+uvloop``.

Run: ``python benchmarks/bench_transport.py [--requests 3000] [--events 20000] [--rounds 3]
[--json out.json]``. Needs ``kubectrl[speedups]``, ``aiohttp``, ``httpx-aiohttp``, ``uvloop``.
"""

# A benchmark reports by printing its table.
# ruff: noqa: T201

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": "bench",
        "namespace": "default",
        "uid": "0b7e8f1c-8d8f-4a35-9d1d-6f3c8d4f1a2b",
        "resourceVersion": "123456",
        "creationTimestamp": "2026-11-28T12:00:00Z",
        "labels": {"app": "bench", "tier": "backend"},
        "managedFields": [
            {
                "manager": "kubectl-client-side-apply",
                "operation": "Update",
                "apiVersion": "v1",
                "time": "2026-11-28T12:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {"f:a": {}, "f:b": {}}},
            }
        ],
    },
    "data": {"a": "x" * 400, "b": "y" * 400},
}

# What kube-apiserver sends with a JSON answer (v1.36), so header parsing costs the same.
APISERVER_HEADERS = (
    b"Audit-Id: 6f1c2d3e-4b5a-4c6d-8e7f-9a0b1c2d3e4f\r\n"
    b"Cache-Control: no-cache, private\r\n"
    b"Content-Type: application/json\r\n"
    b"X-Kubernetes-Pf-Flowschema-Uid: 2f9b1c3d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\r\n"
    b"X-Kubernetes-Pf-Prioritylevel-Uid: 7a8b9c0d-1e2f-4a3b-9c5d-6e7f8a9b0c1d\r\n"
    b"Date: Sat, 28 Nov 2026 12:00:00 GMT\r\n"
)


# ----------------------------------------------------------------------------- the server


def serve(port_file: str, events: int) -> None:
    """A keep-alive HTTP/1.1 server on 127.0.0.1: GET and PATCH answer the ConfigMap, a
    ``?watch=true`` GET streams ``events`` MODIFIED events chunked, 50 a chunk."""
    body = json.dumps(CONFIGMAP, separators=(",", ":")).encode()
    answer = (
        b"HTTP/1.1 200 OK\r\n" + APISERVER_HEADERS + b"Content-Length: %d\r\n\r\n" % len(body)
    ) + body
    line = json.dumps({"type": "MODIFIED", "object": CONFIGMAP}, separators=(",", ":")).encode()
    chunk = (line + b"\n") * 50
    framed = b"%x\r\n%s\r\n" % (len(chunk), chunk)
    watch_head = b"HTTP/1.1 200 OK\r\n" + APISERVER_HEADERS + b"Transfer-Encoding: chunked\r\n\r\n"

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for raw in head.split(b"\r\n"):
                    if raw.lower().startswith(b"content-length:"):
                        length = int(raw.split(b":", 1)[1])
                if length:
                    await reader.readexactly(length)
                if b"watch=true" in head.split(b"\r\n", 1)[0]:
                    writer.write(watch_head)
                    for _ in range(events // 50):
                        writer.write(framed)
                        await writer.drain()
                    writer.write(b"0\r\n\r\n")
                    await writer.drain()
                    continue
                writer.write(answer)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(asyncio.start_server(handle, "127.0.0.1", 0))
    Path(port_file).write_text(str(server.sockets[0].getsockname()[1]))
    loop.run_until_complete(server.serve_forever())


# ----------------------------------------------------------------------------- the clients


class AiohttpDirect:
    """The transport seam (kubectrl.client._transport.Transport) on an aiohttp ClientSession,
    answered as the client's ``Answer`` objects: what FastTransport would be on aiohttp."""

    def __init__(self, base: str) -> None:
        import aiohttp

        self._base = base
        self._session = aiohttp.ClientSession(
            auto_decompress=False,
            connector=aiohttp.TCPConnector(limit=100),
            timeout=aiohttp.ClientTimeout(sock_connect=10, sock_read=30),
        )

    async def send(
        self, method: str, target: str, headers: dict[str, str], content: bytes | None
    ) -> Any:
        from yarl import URL

        from kubectrl.client._fast_transport import Answer

        async with self._session.request(
            method, URL(self._base + target, encoded=True), data=content, headers=headers
        ) as response:
            body = await response.read()
            raw = list(response.raw_headers)
            encoding = response.headers.get("Content-Encoding")
            if encoding == "gzip":
                body = zlib.decompress(body, 16 + zlib.MAX_WBITS)
            return Answer(response.status, raw, body)

    async def watch_events(self, target: str) -> int:
        from kubectrl.client._watch_decoder import WatchDecoder

        decoder = WatchDecoder()
        count = 0
        async with self._session.get(self._base + target) as response:
            async for chunk in response.content.iter_any():
                for _ in decoder.feed(chunk):
                    count += 1
        return count

    async def aclose(self) -> None:
        await self._session.close()


def measure(variant: str, port: int, requests: int, events: int) -> dict[str, float]:
    """CPU seconds per GET, per PATCH and per watch event of ``variant``, in this process."""
    loop_kind = "uvloop" if variant.endswith("+uvloop") else "asyncio"
    name = variant.removesuffix("+uvloop")

    async def run() -> dict[str, float]:
        import httpx

        from kubectrl.client import AsyncClient, ClientConfig, _fast_transport
        from kubectrl.client._fast_transport import FastTransport

        base = f"http://127.0.0.1:{port}"
        transport: Any = None
        if name == "h11":
            _fast_transport.httptools = None  # this process only: FastTransport parses with h11
        elif name == "httpx-aiohttp":
            from httpx_aiohttp import AiohttpTransport

            transport = AiohttpTransport()
        config = ClientConfig(server=base, rate_limit=None, transport=transport)
        client = AsyncClient(config)
        direct = None
        if name == "aiohttp":
            direct = AiohttpDirect(base)
            await client._pipeline.transport.aclose()
            client._pipeline.transport = direct
        else:
            fast = isinstance(client._pipeline.transport, FastTransport)
            assert fast == (name in ("fast", "h11")), name
        from kubectrl.client import APIResource

        resource = APIResource(
            group="", version="v1", name="configmaps", kind="ConfigMap", namespaced=True
        )

        async def gets(n: int) -> None:
            for _ in range(n):
                await client.get(resource, "bench", namespace="default")

        async def patches(n: int) -> None:
            for _ in range(n):
                await client.patch(resource, "bench", {"data": {"a": "z"}}, namespace="default")

        async def watch() -> int:
            if direct is not None:
                return await direct.watch_events("/api/v1/namespaces/default/configmaps?watch=true")
            count = 0
            async with client.watch(resource, namespace="default", stall_timeout=None) as stream:
                async for _ in stream:
                    count += 1
            return count

        await gets(200)  # warm up: connections, caches
        await patches(200)
        await watch()
        out: dict[str, float] = {}
        started = time.process_time()
        await gets(requests)
        out["get_us"] = (time.process_time() - started) / requests * 1e6
        started = time.process_time()
        await patches(requests)
        out["patch_us"] = (time.process_time() - started) / requests * 1e6
        started = time.process_time()
        seen = await watch()
        out["event_us"] = (time.process_time() - started) / seen * 1e6
        assert seen == events, (seen, events)
        await client.aclose()
        _ = httpx
        return out

    if loop_kind == "uvloop":
        import uvloop

        return uvloop.run(run())
    return asyncio.run(run())


VARIANTS = [
    "fast",
    "aiohttp",
    "httpx-aiohttp",
    "h11",
    "fast+uvloop",
    "aiohttp+uvloop",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--events", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.events)
        return 0
    if args.client:
        print(json.dumps(measure(args.client, args.port, args.requests, args.events)))
        return 0

    port_file = os.path.join(tempfile.mkdtemp(prefix="bench-transport-"), "port")
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve", port_file, "--events", str(args.events)]
    )
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file) or not Path(port_file).read_text():
            if time.monotonic() > deadline or server.poll() is not None:
                raise SystemExit("the loopback server did not start")
            time.sleep(0.05)
        port = int(Path(port_file).read_text())
        with socket.create_connection(("127.0.0.1", port)):
            pass
        variants = args.variants.split(",")
        results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
        for round_ in range(args.rounds):
            for variant in variants[round_ % len(variants) :] + variants[: round_ % len(variants)]:
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--client",
                        variant,
                        "--port",
                        str(port),
                        "--requests",
                        str(args.requests),
                        "--events",
                        str(args.events),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                results[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
                print(f"round {round_ + 1} {variant}: {results[variant][-1]}", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        os.unlink(port_file)

    medians = {
        v: {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        for v, runs in results.items()
    }
    base = medians.get("fast")
    print(f"{'variant':<18} {'GET us':>8} {'PATCH us':>9} {'event us':>9}   ratio to fast")
    for variant, m in medians.items():
        ratio = ""
        if base:
            ratio = "  ".join(f"{m[k] / base[k]:.2f}x" for k in ("get_us", "patch_us", "event_us"))
        print(
            f"{variant:<18} {m['get_us']:8.1f} {m['patch_us']:9.1f} {m['event_us']:9.2f}   {ratio}"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"medians": medians, "runs": results, "args": vars(args)}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
