"""Watches: the hub that fans the storage's change feed out to open watch streams.

A watch asks for a resource (at a version, in a namespace, through label and field selectors),
from a resourceVersion (replaying the storage's history since then, 410 Expired when it is
compacted) or from now with the current objects first (``sendInitialEvents`` ends those with a
bookmark). Each change goes to every matching stream as ADDED, MODIFIED or DELETED (an object
that stops matching is DELETED to that stream, one that starts matching ADDED, as the
apiserver's ``cache_watcher.go`` does); streams that allow bookmarks get them on request and
before ``timeoutSeconds`` ends the stream.

Writes happen under the core's lock on any thread; each stream is read on its own event loop and
woken there with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from kubectrl._clock import Clock
from kubectrl.apiserver._objects import render
from kubectrl.apiserver._resources import ResourceInfo
from kubectrl.apiserver._router import Reply
from kubectrl.apiserver._selection import Selection
from kubectrl.apiserver._status import StatusError, bad_request, invalid, status_body
from kubectrl.apiserver._storage import Change, Storage

__all__ = ["WatchHub", "WatchStream", "Watcher"]

_INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def _dumps(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class Watcher:
    """One open watch: what it selects and the queue of lines its stream sends."""

    def __init__(
        self,
        info: ResourceInfo,
        version: str,
        selection: Selection,
        bookmarks: bool,
        metadata_only: bool,
    ) -> None:
        self.info = info
        self.version = version
        self.selection = selection
        self.bookmarks = bookmarks
        self.metadata_only = metadata_only
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.closed = False

    def __repr__(self) -> str:
        return f"Watcher({self.info.plural}, closed={self.closed})"

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        """Whether ``obj`` is one this watch selects."""
        return self.selection.matches(obj)

    def line(self, type_: str, obj: Mapping[str, Any]) -> bytes:
        """The stream line of an event of ``type_`` about ``obj``."""
        body = render(self.info, self.version, obj, metadata_only=self.metadata_only)
        return _dumps({"type": type_, "object": body})

    def change_line(self, change: Change) -> bytes | None:
        """The line a change makes on this stream (``None``: nothing it selects changed)."""
        now, before = self.matches(change.object), self.matches(change.previous)
        if change.type == "MODIFIED":
            if now and not before:
                return self.line("ADDED", change.object)
            if before and not now and change.previous is not None:
                # cache_watcher.go: the previous object (which matched), at the event's RV.
                left = copy.deepcopy(change.previous)
                left["metadata"]["resourceVersion"] = str(change.revision)
                return self.line("DELETED", left)
        if not now:
            return None
        return self.line(change.type, change.object)

    def bookmark_line(self, revision: int, *, initial_end: bool = False) -> bytes:
        """A BOOKMARK at ``revision`` (marking the end of the initial events, if asked)."""
        meta: dict[str, Any] = {"resourceVersion": str(revision)}
        if initial_end:
            meta["annotations"] = {_INITIAL_EVENTS_END: "true"}
        obj = {
            "kind": self.info.kind,
            "apiVersion": self.info.api_version(self.version),
            "metadata": meta,
        }
        if self.metadata_only:
            obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": meta,
            }
        return _dumps({"type": "BOOKMARK", "object": obj})

    def push(self, data: bytes | None) -> None:
        """Queue a line for the stream (``None`` ends it), from any thread."""
        if self.closed:
            return
        if data is None:
            self.closed = True
        # Always through the loop's queue of callbacks, never at once on the loop's own thread
        # (kubectrl._aio.call_in_loop): writes come from any thread, and a line put at once could
        # overtake one another thread scheduled earlier; a stream's lines must keep their order.
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, data)
        except RuntimeError:  # the watcher's loop is closed
            self.closed = True


class WatchStream:
    """The body of a watch response: its first lines, then what the hub pushes, until the end.

    Iterate it on the loop that opened the watch; :meth:`aclose` when the client goes away.
    """

    def __init__(
        self, hub: WatchHub, watcher: Watcher, first: list[bytes], timeout: float | None
    ) -> None:
        self.hub = hub
        self.watcher = watcher
        self.first = first
        self.timeout = timeout
        self._timer: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        return f"WatchStream({self.watcher!r})"

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self.timeout is not None:
            self._timer = asyncio.ensure_future(self._expire(self.timeout))
        for line in self.first:
            yield line
        while True:
            data = await self.watcher.queue.get()
            if data is None:
                return
            yield data

    async def _expire(self, seconds: float) -> None:
        # Like the watch cache (cache_watcher.go nextBookmarkTime): with bookmarks allowed, one
        # bookmark about 2 s before timeoutSeconds ends the stream.
        if self.watcher.bookmarks and seconds > 2:
            await self.hub.clock.sleep(seconds - 2)
            with self.hub.lock:
                self.watcher.push(self.watcher.bookmark_line(self.hub.storage.revision))
            seconds = 2
        await self.hub.clock.sleep(seconds)
        self.watcher.push(None)

    async def aclose(self) -> None:
        """Stop the timer and forget the watch."""
        if self._timer is not None:
            self._timer.cancel()
        self.hub.forget(self.watcher)


def _forbidden(field: str, message: str) -> StatusError:
    return invalid("ListOptions", "meta.k8s.io", "", [("FieldValueForbidden", field, message)])


class WatchHub:
    """The open watches; it follows the storage's change feed and fans each change out."""

    def __init__(self, storage: Storage, lock: threading.RLock, clock: Clock) -> None:
        self.storage = storage
        self.lock = lock
        self.clock = clock
        self.watchers: list[Watcher] = []
        storage.subscribe(self._on_change)

    def __repr__(self) -> str:
        return f"WatchHub(watchers={len(self.watchers)})"

    def _on_change(self, change: Change) -> None:
        for watcher in list(self.watchers):
            if watcher.info.key == change.resource:
                line = watcher.change_line(change)
                if line is not None:
                    watcher.push(line)

    def open(
        self,
        info: ResourceInfo,
        version: str,
        namespace: str | None,
        params: Mapping[str, str],
        *,
        metadata_only: bool,
    ) -> WatchStream | Reply:
        """Open a watch; one from a compacted resourceVersion is a one-line 410 Reply."""
        selection = Selection(info, namespace, params)
        bookmarks = params.get("allowWatchBookmarks") in ("true", "1")
        initial = params.get("sendInitialEvents") in ("true", "1")
        if (
            params.get("sendInitialEvents") is not None
            and params.get("resourceVersionMatch") != "NotOlderThan"
        ):
            raise _forbidden(
                "resourceVersionMatch",
                (
                    "Forbidden: sendInitialEvents requires "
                    "setting resourceVersionMatch to NotOlderThan"
                ),
            )
        if initial and not bookmarks:
            raise _forbidden(
                "allowWatchBookmarks",
                "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
            )
        timeout = float(params["timeoutSeconds"]) if params.get("timeoutSeconds") else None
        watcher = Watcher(info, version, selection, bookmarks, metadata_only)
        rv_param = params.get("resourceVersion") or ""
        first: list[bytes] = []
        with self.lock:
            if initial or rv_param in ("", "0"):
                stored = self.storage.range(info.key)
                for key in sorted(stored):
                    obj = stored[key]
                    if (namespace is None or key[0] == namespace) and watcher.matches(obj):
                        first.append(watcher.line("ADDED", obj))
                if initial:
                    first.append(watcher.bookmark_line(self.storage.revision, initial_end=True))
            else:
                try:
                    since = int(rv_param)
                except ValueError:
                    raise bad_request(f"invalid resource version: {rv_param}") from None
                compacted = self.storage.compacted
                if since < compacted:
                    gone = status_body(
                        410, f"too old resource version: {since} ({compacted})", reason="Expired"
                    )
                    return Reply(200, None, content=_dumps({"type": "ERROR", "object": gone}))
                for change in self.storage.changes(since, info.key):
                    line = watcher.change_line(change)
                    if line is not None:
                        first.append(line)
            self.watchers.append(watcher)
        return WatchStream(self, watcher, first, timeout)

    def forget(self, watcher: Watcher) -> None:
        """Stop sending to ``watcher`` (its stream was closed)."""
        with self.lock:
            watcher.closed = True
            if watcher in self.watchers:
                self.watchers.remove(watcher)

    def drop(self, which: Callable[[Watcher], bool]) -> int:
        """End the streams ``which`` selects; returns how many."""
        with self.lock:
            targets = [w for w in self.watchers if which(w)]
            for watcher in targets:
                watcher.push(None)
                self.watchers.remove(watcher)
        return len(targets)

    def bookmark(self, which: Callable[[Watcher], bool]) -> int:
        """Send a BOOKMARK at the current revision to the selected streams that allow them."""
        with self.lock:
            sent = 0
            for watcher in self.watchers:
                if watcher.bookmarks and which(watcher):
                    watcher.push(watcher.bookmark_line(self.storage.revision))
                    sent += 1
            return sent
