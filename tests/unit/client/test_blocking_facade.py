"""BlockingClient is derived from AsyncClient: one declaration per verb, same signatures."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator

import pytest
from client_loopback import CONFIGMAPS, Request, json_response, loopback

from kubectrl._internal.blocking import BlockingFacade, Portal, blocking, blocking_iterator
from kubectrl.client import AsyncClient, BlockingClient, ClientConfig
from kubectrl.errors import NotFoundError


def test_every_verb_has_the_async_signature_and_docstring() -> None:
    for name, fn in inspect.getmembers(AsyncClient, inspect.isfunction):
        if name.startswith("_") or name in ("aclose", "retry_on_conflict"):
            continue
        returns_async_iterator = str(inspect.signature(fn).return_annotation).startswith(
            "AsyncIterator"
        )
        if not (
            inspect.iscoroutinefunction(fn)
            or inspect.isasyncgenfunction(fn)
            or returns_async_iterator
        ):
            continue
        sync = inspect.signature(getattr(BlockingClient, name))
        asynchronous = inspect.signature(fn)
        assert sync.parameters == asynchronous.parameters, name
        doc = getattr(BlockingClient, name).__doc__ or ""
        assert f"AsyncClient.{name}" in doc, name
        assert "await " not in doc, name
        assert "async for" not in doc, name
    # Typed verbs return Any at run time (the overloads say what for which argument).
    assert inspect.signature(BlockingClient.list_pages).return_annotation == "Iterator[Any]"
    assert (
        inspect.signature(BlockingClient.watch).parameters
        == inspect.signature(AsyncClient.watch).parameters
    )


class _Counter:
    """A tiny async target: what a facade wraps need not be an AsyncClient."""

    def __init__(self) -> None:
        self.n = 0

    async def bump(self, by: int = 1) -> int:
        """Add ``by``. Example: ``await c.bump(2)``."""
        self.n += by
        return self.n

    async def upto(self, limit: int) -> AsyncIterator[int]:
        for i in range(limit):
            yield i


class _BlockingCounter(BlockingFacade):
    bump = blocking(_Counter.bump)
    upto = blocking_iterator(_Counter.upto)

    def __init__(self) -> None:
        self._portal = Portal(name="test-counter")
        self._target = _Counter()


def test_facade_mechanism_is_reusable_for_any_async_class() -> None:
    counter = _BlockingCounter()
    try:
        assert counter.bump() == 1
        assert counter.bump(by=2) == 3
        assert list(counter.upto(3)) == [0, 1, 2]
        assert "c.bump(2)" in (_BlockingCounter.bump.__doc__ or "")
    finally:
        counter._portal.stop()
    with pytest.raises(RuntimeError, match="closed"):
        counter.bump()


def test_blocking_client_raises_the_async_error() -> None:
    async def handler(request: Request, writer: asyncio.StreamWriter) -> None:
        writer.write(json_response(404, {"kind": "Status", "code": 404, "reason": "NotFound"}))
        await writer.drain()

    async def serve() -> None:
        async with loopback(handler) as server:

            def call() -> None:
                with BlockingClient(ClientConfig(server=server.url, rate_limit=None)) as client:
                    with pytest.raises(NotFoundError) as info:
                        client.get(CONFIGMAPS, "a", namespace="ns")
                    assert (info.value.verb, info.value.name) == ("get", "a")
                    pages = client.list_pages(CONFIGMAPS, namespace="ns")
                    with pytest.raises(NotFoundError):
                        next(pages)

            await asyncio.to_thread(call)

    asyncio.run(serve())
