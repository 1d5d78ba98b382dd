"""The watch stream's I/O loop against a scripted loopback server: stalls, cuts, garbage.

Every test is bounded by ``asyncio.wait_for``; a hang fails the test instead of the suite.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from client_loopback import CONFIGMAPS, STREAM_HEAD, Request, chunk, json_response, loopback

from kubectrl.client import EventType
from kubectrl.errors import ExpiredError, MalformedStreamError, WatchStalledError

DEADLINE = 10.0


def event(type_: str, rv: str) -> bytes:
    obj = {"kind": "ConfigMap", "metadata": {"name": "a", "resourceVersion": rv}}
    return json.dumps({"type": type_, "object": obj}).encode() + b"\n"


async def collect(stream: object) -> list[object]:
    out = []
    async for ev in stream:  # type: ignore[attr-defined]
        out.append(ev)
    return out


async def test_server_that_stops_sending_bytes_raises_stalled(make_client) -> None:
    release = asyncio.Event()

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + chunk(event("ADDED", "5")))
        await writer.drain()
        await release.wait()  # keep the connection open, send nothing more

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            stream = client.watch(CONFIGMAPS, namespace="ns", stall_timeout=0.3)
            seen = []

            async def run() -> None:
                async with stream:
                    async for ev in stream:
                        seen.append(ev)

            with pytest.raises(WatchStalledError) as info:
                await asyncio.wait_for(run(), DEADLINE)
            assert [e.type for e in seen] == [EventType.ADDED]
            assert stream.resource_version == "5"
            assert "no data for 0.3 s" in str(info.value)
            assert "resourceVersion 5" in str(info.value)
            assert info.value.retryable
        finally:
            release.set()
            await client.aclose()


async def test_watch_stall_is_detected_within_deadline(make_client) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD)
        await writer.drain()
        await asyncio.sleep(3600)

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            with pytest.raises(WatchStalledError):
                await asyncio.wait_for(
                    collect(client.watch(CONFIGMAPS, stall_timeout=0.2)), DEADLINE
                )
        finally:
            await client.aclose()


async def test_split_events_and_clean_end(make_client) -> None:
    data = event("ADDED", "1") + event("BOOKMARK", "7") + event("DELETED", "9")

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD)
        for i in range(0, len(data), 5):  # 5-byte chunks cut every line
            writer.write(chunk(data[i : i + 5]))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            stream = client.watch(CONFIGMAPS, namespace="ns", resource_version="0")
            events = await asyncio.wait_for(collect(stream), DEADLINE)
            assert [e.type for e in events] == [
                EventType.ADDED,
                EventType.BOOKMARK,
                EventType.DELETED,
            ]
            assert stream.resource_version == "9"
            query = server.requests[0].target
            assert "watch=true" in query
            assert "allowWatchBookmarks=true" in query
            assert "resourceVersion=0" in query
        finally:
            await client.aclose()


async def test_empty_stream_ends_cleanly(make_client) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + b"0\r\n\r\n")
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            assert await asyncio.wait_for(collect(client.watch(CONFIGMAPS)), DEADLINE) == []
        finally:
            await client.aclose()


async def test_garbage_on_the_wire_raises_malformed(make_client) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + chunk(event("ADDED", "1") + b"Bad Gateway\n") + b"0\r\n\r\n")
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            seen: list[object] = []

            async def run() -> None:
                async for ev in client.watch(CONFIGMAPS):
                    seen.append(ev)

            with pytest.raises(MalformedStreamError, match="Bad Gateway"):
                await asyncio.wait_for(run(), DEADLINE)
            assert len(seen) == 1
        finally:
            await client.aclose()


async def test_connection_cut_inside_an_event_raises_malformed(make_client) -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(STREAM_HEAD + chunk(event("ADDED", "1")[:20]) + b"0\r\n\r\n")
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            with pytest.raises(MalformedStreamError, match="ended inside an event"):
                await asyncio.wait_for(collect(client.watch(CONFIGMAPS)), DEADLINE)
        finally:
            await client.aclose()


async def test_410_answer_to_the_watch_request_raises_expired(make_client) -> None:
    status = {
        "kind": "Status",
        "status": "Failure",
        "reason": "Expired",
        "code": 410,
        "message": "too old resource version: 1 (50)",
    }

    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(json_response(410, status))
        await writer.drain()

    async with loopback(handler) as server:
        client = make_client(server.url)
        try:
            with pytest.raises(ExpiredError, match="too old resource version"):
                await asyncio.wait_for(
                    collect(client.watch(CONFIGMAPS, resource_version="1")), DEADLINE
                )
            assert len(server.requests) == 1  # a 410 is never retried
        finally:
            await client.aclose()
