"""An in-memory API server for one resource: lists and watches driven by the test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from types import TracebackType
from typing import Any

from kubectrl.cache import ListOptions
from kubectrl.client import EventType, WatchEvent

END = object()  # push to end a watch cleanly

DEADLINE = 10.0


async def eventually(predicate: Callable[[], bool], timeout: float = DEADLINE) -> None:
    """Yield to the loop until ``predicate()`` holds; fail after ``timeout`` real seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached before the deadline")
        await asyncio.sleep(0.001)


def cm(name: str, rv: int, namespace: str = "ns", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "resourceVersion": str(rv),
            "labels": dict(labels),
        },
    }


class _Watch:
    def __init__(self, server: FakeServer, options: ListOptions) -> None:
        self.server = server
        self.options = options
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.closed = False

    async def __aenter__(self) -> AsyncIterator[WatchEvent]:
        if self.server.watch_errors:
            err = self.server.watch_errors.pop(0)
            if err is not None:
                raise err
        self.server.watches.append(self)
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[WatchEvent]:
        while True:
            item = await self.queue.get()
            if item is END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.closed = True

    def send(self, type_: str, obj: dict[str, Any]) -> None:
        self.queue.put_nowait(WatchEvent(EventType(type_), obj))

    def bookmark(self, rv: int, *, initial_end: bool = False) -> None:
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if initial_end:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        self.queue.put_nowait(WatchEvent(EventType.BOOKMARK, {"metadata": meta}))

    def end(self) -> None:
        self.queue.put_nowait(END)

    def fail(self, err: BaseException) -> None:
        self.queue.put_nowait(err)


class FakeServer:
    """A ListerWatcher whose state and watch streams the test controls."""

    description = "configmaps (fake) in namespace ns"
    resource = ("v1", "ConfigMap")

    def __init__(self, objects: list[dict[str, Any]] | None = None, rv: int = 10) -> None:
        self.objects = {o["metadata"]["name"]: o for o in objects or []}
        self.rv = rv
        self.list_errors: list[BaseException | None] = []
        self.watch_errors: list[BaseException | None] = []
        self.lists: list[ListOptions] = []
        self.watches: list[_Watch] = []
        self.watch_options: list[ListOptions] = []

    async def list_page(self, options: ListOptions) -> dict[str, Any]:
        self.lists.append(options)
        if self.list_errors:
            err = self.list_errors.pop(0)
            if err is not None:
                raise err
        return {
            "metadata": {"resourceVersion": str(self.rv)},
            "items": list(self.objects.values()),
        }

    def watch(self, options: ListOptions) -> _Watch:
        self.watch_options.append(options)
        return _Watch(self, options)

    async def next_watch(self, count: int) -> _Watch:
        """Wait until watch number ``count`` (1-based) is open and return it."""
        await eventually(lambda: len(self.watches) >= count)
        return self.watches[count - 1]
