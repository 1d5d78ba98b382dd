"""Watches: the hub that fans the storage's change feed out to open watch streams.

A watch asks for a resource (at a version, in a namespace, through label and field selectors),
from a resourceVersion (replaying the storage's history since then, 410 Expired when it is
compacted) or from now with the current objects first (``sendInitialEvents`` ends those with a
bookmark). Each change goes to every matching stream as ADDED, MODIFIED or DELETED (an object
that stops matching is DELETED to that stream, one that starts matching ADDED, as the
apiserver's ``cache_watcher.go`` does); streams that allow bookmarks get them on request and
before ``timeoutSeconds`` ends the stream.

Writes happen under the core's lock on any thread; each stream is read on its own event loop.
The fan-out is not done by the write: a write hands its change to a feed per event loop that has
watches (one append and at most one wake-up per loop, whatever the number of watches), and the
feed fans it out on that loop after the write has answered. Each change is encoded once per
form it is served in (version, metadata-only, event type), not once per watch.

A watch's buffer holds at most :data:`WATCH_BUFFER` events: one that falls that far behind (a
client that stops reading) is ended, as the apiserver's cacher ends a watcher whose channel is
full (``cache_watcher.go``); its client watches again from the last resourceVersion it saw. A
watch whose event cannot be encoded is ended the same way, without failing the write or the
other watches.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from kubectrl._internal.clock import Clock
from kubectrl.apiserver._endpoints.selection import Selection
from kubectrl.apiserver._resources.info import ResourceInfo
from kubectrl.apiserver._router import Reply
from kubectrl.apiserver._schema.served import render
from kubectrl.apiserver._status import StatusError, bad_request, invalid, status_body
from kubectrl.apiserver._storage.memory import Change, Resource, Storage

__all__ = ["WATCH_BUFFER", "WatchHub", "WatchStream", "Watcher"]

log = logging.getLogger("kubectrl.apiserver")

_INITIAL_EVENTS_END = "k8s.io/initial-events-end"
#: The events a watch's buffer holds before the watch is ended as too slow (the cacher's channel
#: for a watch without an index holds 100: ``maxWatchChanSizeWithoutIndex``).
WATCH_BUFFER = 100
#: Changes a loop's feed may hold before the writer fans them out itself: when the writer runs on
#: that loop (a loop busy writing never gets to its feed).
_FEED_INLINE = 16
#: ... or, written from another thread, before that loop counts as stalled and its watches end.
_FEED_STALLED = 1024

#: The encoded lines of one change, by the form they are served in.
_Lines = dict[tuple[str, bool, str, bool], bytes]


def _dumps(event: Mapping[str, Any]) -> bytes:
    return json.dumps(event, separators=(",", ":")).encode() + b"\n"


class Watcher:
    """One open watch: what it selects and the buffer of lines its stream sends.

    Made, fed and read on the event loop that opened it; ``start`` is the revision its first
    lines cover (the feed sends it the changes after that one).
    """

    def __init__(
        self,
        info: ResourceInfo,
        version: str,
        selection: Selection,
        bookmarks: bool,
        metadata_only: bool,
        limit: int = WATCH_BUFFER,
    ) -> None:
        self.info = info
        self.version = version
        self.selection = selection
        self.bookmarks = bookmarks
        self.metadata_only = metadata_only
        self.limit = limit
        self.loop = asyncio.get_running_loop()
        self.buffer: collections.deque[bytes | None] = collections.deque()
        self.ready = asyncio.Event()
        self.start = 0
        self.closed = False

    def __repr__(self) -> str:
        return f"Watcher({self.info.plural}, closed={self.closed})"

    def matches(self, obj: Mapping[str, Any] | None) -> bool:
        """Whether ``obj`` is one this watch selects."""
        return self.selection.matches(obj)

    def line(self, type_: str, obj: Mapping[str, Any]) -> bytes:
        """The stream line of an event of ``type_`` about ``obj``."""
        body = render(self.info, self.version, obj, self.metadata_only, shared=True)
        return _dumps({"type": type_, "object": body})

    def change_line(self, change: Change, lines: _Lines | None = None) -> bytes | None:
        """The line a change makes on this stream (``None``: nothing it selects changed).

        ``lines`` caches the encoded lines of this change, shared by the watches it goes to.
        """
        now, before = self.matches(change.object), self.matches(change.previous)
        if change.type == "MODIFIED" and now != before:
            if now:
                return self._cached(lines, "ADDED", change.object, False)
            if change.previous is not None:
                # cache_watcher.go: the previous object (which matched), at the event's RV.
                left = copy.deepcopy(change.previous)
                left["metadata"]["resourceVersion"] = str(change.revision)
                return self._cached(lines, "DELETED", left, True)
        if not now:
            return None
        return self._cached(lines, change.type, change.object, False)

    def _cached(
        self, lines: _Lines | None, type_: str, obj: Mapping[str, Any], previous: bool
    ) -> bytes:
        if lines is None:
            return self.line(type_, obj)
        key = (self.version, self.metadata_only, type_, previous)
        line = lines.get(key)
        if line is None:
            line = lines[key] = self.line(type_, obj)
        return line

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

    def deliver(self, data: bytes) -> bool:
        """Buffer a line for the stream, on the watcher's loop; ``False`` when the buffer is
        full (the watch has fallen behind: :meth:`end` it)."""
        if self.closed:
            return True
        if len(self.buffer) >= self.limit:
            return False
        self.buffer.append(data)
        self.ready.set()
        return True

    def end(self, *, drop_buffered: bool = False) -> None:
        """End the stream after the lines buffered (or at once: ``drop_buffered``), on the
        watcher's loop."""
        if self.closed:
            return
        self.closed = True
        if drop_buffered:
            self.buffer.clear()
        self.buffer.append(None)
        self.ready.set()

    async def next(self) -> bytes | None:
        """The next line of the stream, ``None`` at its end."""
        while not self.buffer:
            self.ready.clear()
            await self.ready.wait()
        return self.buffer.popleft()


class _Event:
    """A change on its way to the watches of a loop, with its lines encoded so far."""

    __slots__ = ("change", "lines")

    def __init__(self, change: Change) -> None:
        self.change = change
        self.lines: _Lines = {}


class _Feed:
    """The watches of one event loop and the changes (and orders) not yet fanned out to them.

    Writers append from any thread; :meth:`run` fans out on the loop, in the order appended.
    """

    def __init__(self, hub: WatchHub, loop: asyncio.AbstractEventLoop) -> None:
        self.hub = hub
        self.loop = loop
        self.watchers: dict[Resource, list[Watcher]] = {}
        self.pending: collections.deque[_Event | Callable[[], None]] = collections.deque()
        self.mutex = threading.Lock()
        self.scheduled = False

    def __repr__(self) -> str:
        return f"_Feed(watchers={sum(map(len, self.watchers.values()))})"

    def add(self, watcher: Watcher) -> None:
        self.watchers.setdefault(watcher.info.key, []).append(watcher)

    def remove(self, watcher: Watcher) -> None:
        same = self.watchers.get(watcher.info.key, [])
        if watcher in same:
            same.remove(watcher)
            if not same:
                del self.watchers[watcher.info.key]

    def post(self, entry: _Event | Callable[[], None]) -> None:
        """Queue ``entry`` for the loop (from any thread) and wake the loop once."""
        with self.mutex:
            self.pending.append(entry)
            backlog = len(self.pending)
            wake = not self.scheduled
            self.scheduled = True
        if backlog >= _FEED_INLINE and self._on_loop():
            self.run()  # the writer holds this loop: fan out here, or the feed only grows
            return
        if backlog >= _FEED_STALLED:
            log.warning("ending the watches of a loop that fell %d changes behind", backlog)
            self.hub.stall(self)
            return
        if wake:
            try:
                self.loop.call_soon_threadsafe(self.run)
            except RuntimeError:  # the loop is closed: nobody reads these watches
                self.hub.stall(self)

    def _on_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    def run(self) -> None:
        """Fan the pending entries out (on the loop)."""
        with self.mutex:
            entries = list(self.pending)
            self.pending.clear()
            self.scheduled = False
        for entry in entries:
            if isinstance(entry, _Event):
                self._fan_out(entry)
            else:
                entry()

    def _fan_out(self, event: _Event) -> None:
        change = event.change
        for watcher in list(self.watchers.get(change.resource, ())):
            if watcher.closed or change.revision <= watcher.start:
                continue
            try:
                line = watcher.change_line(change, event.lines)
            except Exception:  # one watch's failure is neither the write's nor the others'
                log.exception("ending a watch of %s: its event failed", watcher.info.plural)
                self.hub.terminate(watcher)
                continue
            if line is not None and not watcher.deliver(line):
                # cache_watcher.go: a watcher whose buffer is full is terminated, not waited on.
                log.info(
                    "ending a watch of %s: %d events behind", watcher.info.plural, watcher.limit
                )
                self.hub.terminate(watcher)


class WatchStream:
    """The body of a watch response: its first lines, then what the hub sends, until the end.

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
        first, self.first = self.first, []
        for line in first:
            yield line
        del first
        while True:
            data = await self.watcher.next()
            if data is None:
                return
            yield data

    async def _expire(self, seconds: float) -> None:
        # Like the watch cache (cache_watcher.go nextBookmarkTime): with bookmarks allowed, one
        # bookmark about 2 s before timeoutSeconds ends the stream.
        if self.watcher.bookmarks and seconds > 2:
            await self.hub.clock.sleep(seconds - 2)
            self.hub.bookmark(lambda w: w is self.watcher)
            seconds = 2
        await self.hub.clock.sleep(seconds)
        self.hub.drop(lambda w: w is self.watcher)

    async def aclose(self) -> None:
        """Stop the timer and forget the watch."""
        if self._timer is not None:
            self._timer.cancel()
        self.hub.forget(self.watcher)


def _forbidden(field: str, message: str) -> StatusError:
    return invalid("ListOptions", "meta.k8s.io", "", [("FieldValueForbidden", field, message)])


class WatchHub:
    """The open watches; it follows the storage's change feed and fans each change out.

    ``buffer``: how many events a watch may fall behind before it is ended.
    """

    def __init__(
        self, storage: Storage, lock: threading.RLock, clock: Clock, buffer: int = WATCH_BUFFER
    ) -> None:
        self.storage = storage
        self.lock = lock
        self.clock = clock
        self.buffer = buffer
        self.watchers: list[Watcher] = []
        self._feeds: dict[asyncio.AbstractEventLoop, _Feed] = {}
        storage.subscribe(self._on_change)

    def __repr__(self) -> str:
        return f"WatchHub(watchers={len(self.watchers)})"

    def _on_change(self, change: Change) -> None:
        # Called by the write, after its commit: hand the change over, fan out later.
        if not self._feeds:
            return
        event = _Event(change)
        for feed in list(self._feeds.values()):
            try:
                if change.resource in feed.watchers:
                    feed.post(event)
            except Exception:  # never the write's failure
                log.exception("watch feed failed; ending its watches")
                self.stall(feed)

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
        watcher = Watcher(info, version, selection, bookmarks, metadata_only, self.buffer)
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
            # The feed sends the changes after this revision (the ones before are in ``first``
            # or were before the watch's start).
            watcher.start = self.storage.revision
            self.watchers.append(watcher)
            feed = self._feeds.get(watcher.loop)
            if feed is None:
                feed = self._feeds[watcher.loop] = _Feed(self, watcher.loop)
            feed.add(watcher)
        return WatchStream(self, watcher, first, timeout)

    def _unregister(self, watcher: Watcher) -> None:
        # Under the lock: no more changes for ``watcher``.
        if watcher in self.watchers:
            self.watchers.remove(watcher)
        feed = self._feeds.get(watcher.loop)
        if feed is not None:
            feed.remove(watcher)
            if not feed.watchers and not feed.pending:
                del self._feeds[watcher.loop]

    def forget(self, watcher: Watcher) -> None:
        """Stop sending to ``watcher`` (its stream was closed)."""
        with self.lock:
            watcher.closed = True
            self._unregister(watcher)

    def terminate(self, watcher: Watcher) -> None:
        """End ``watcher`` at once, its buffered lines dropped (on its loop): it fell behind."""
        with self.lock:
            self._unregister(watcher)
        watcher.end(drop_buffered=True)

    def stall(self, feed: _Feed) -> None:
        """End the watches of a loop that does not take its changes (stalled or closed)."""
        with self.lock:
            with feed.mutex:
                feed.pending.clear()
                feed.scheduled = False
            targets = [w for same in feed.watchers.values() for w in same]
            for watcher in targets:
                self._unregister(watcher)
            self._feeds.pop(feed.loop, None)

        def end() -> None:
            for watcher in targets:
                watcher.end(drop_buffered=True)

        try:
            feed.loop.call_soon_threadsafe(end)
        except RuntimeError:  # closed: nobody reads them
            for watcher in targets:
                watcher.closed = True
                watcher.buffer.clear()

    def _post(self, targets: list[Watcher], action: Callable[[Watcher], None]) -> None:
        # Under the lock: ``action`` for each target on its loop, after the changes before it.
        by_loop: dict[asyncio.AbstractEventLoop, list[Watcher]] = {}
        for watcher in targets:
            by_loop.setdefault(watcher.loop, []).append(watcher)
        for loop, same in by_loop.items():
            feed = self._feeds.get(loop)
            if feed is not None:
                feed.post(_Each(same, action))

    def _finish(self, watcher: Watcher) -> None:
        with self.lock:
            self._unregister(watcher)
        watcher.end()

    def _send_bookmark(self, watcher: Watcher, revision: int) -> None:
        if not watcher.deliver(watcher.bookmark_line(revision)):
            self.terminate(watcher)

    def drop(self, which: Callable[[Watcher], bool]) -> int:
        """End the streams ``which`` selects (after the changes already on their way to them);
        returns how many."""
        with self.lock:
            targets = [w for w in self.watchers if which(w)]
            for watcher in targets:
                self.watchers.remove(watcher)
            self._post(targets, self._finish)
        return len(targets)

    def bookmark(self, which: Callable[[Watcher], bool]) -> int:
        """Send a BOOKMARK at the current revision to the selected streams that allow them."""
        with self.lock:
            revision = self.storage.revision
            targets = [w for w in self.watchers if w.bookmarks and which(w)]
            self._post(targets, lambda w: self._send_bookmark(w, revision))
            return len(targets)


class _Each:
    """An order for a feed: ``action`` on each of ``watchers``."""

    def __init__(self, watchers: list[Watcher], action: Callable[[Watcher], None]) -> None:
        self.watchers = watchers
        self.action = action

    def __call__(self) -> None:
        for watcher in self.watchers:
            self.action(watcher)
