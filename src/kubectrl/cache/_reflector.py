"""The reflector: a thin async loop that carries out :func:`~kubectrl.cache._decisions.step`.

It lists and watches through a :class:`~kubectrl.cache.ListerWatcher` and reports what it saw to
a :class:`ReflectorSink` (the informer, the single writer of the store): ``replace`` after a
list (or a streaming list), ``apply`` for each watch event, in the order the server sent them.
Every decision (relist or re-watch, how long to back off) comes from the pure step function; the
loop only does I/O, waits on the injected clock, and records the last error for diagnostics.

It is also where objects enter the cache, so it is where malformed ones are stopped: an object
without a non-empty ``metadata.name`` has no store key (it would be filed under ``""`` or
``"ns/"``), so it is logged once with the resource and the event type, and skipped.

A sharded list-watch (one whose ``shard`` is a :class:`~kubectrl.cache.ShardSelector`) is
checked here too: a list whose ``metadata.shardInfo`` does not echo the shard came from a server
that ignored the selector (feature gate ``ShardedListAndWatch`` off, an older server, the
in-memory fake), so the reflector logs that once and keeps only the shard's objects itself,
in lists and in watch events, with the same hash.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from typing import Any, Protocol

from kubectrl._internal.clock import Clock, RealClock
from kubectrl.cache._decisions import (
    Decision,
    ErrorKind,
    ListAction,
    ListFailed,
    ListSucceeded,
    Outcome,
    ReflectorOptions,
    ReflectorState,
    Start,
    WatchAction,
    WatchEnded,
    classify_error,
    step,
)
from kubectrl.cache._listwatch import ListerWatcher, ListOptions
from kubectrl.cache._shard import ShardSelector
from kubectrl.client import EventType
from kubectrl.objects import meta_namespace_key, metadata_of

__all__ = ["Reflector", "ReflectorSink", "WatchErrorHandler"]

log = logging.getLogger("kubectrl.cache")

#: Called with the reflector and the exception after every failed list or watch.
WatchErrorHandler = Callable[["Reflector", BaseException], None]


class ReflectorSink(Protocol):
    """Where a reflector delivers what it saw, in order (the informer implements it).

    ``replace`` receives a complete listing and its resourceVersion; ``apply`` one watch event
    (``ADDED``, ``MODIFIED`` or ``DELETED``) with its object.
    """

    def replace(self, items: list[dict[str, Any]], resource_version: str) -> None:
        """The whole state as of ``resource_version``."""
        ...

    def apply(self, event_type: EventType, obj: dict[str, Any]) -> None:
        """One change."""
        ...


class Reflector:
    """Keeps a sink in step with the server: list, then watch, forever, recovering from errors.

    Guarantees:

    - The sink sees a ``replace`` then the watch events after it, in server order; after any
      failure the next ``replace`` restores the full state (nothing lost, nothing invented).
    - Decisions follow client-go's reflector exactly as documented in
      :mod:`kubectrl.cache._decisions` (relist on 410, re-watch on clean ends, backoff on 429 and
      refused connections, streaming list with LIST fallback).
    - Every wait goes through ``clock``; ``rng`` provides jitter and watch timeouts.

    - Objects without a ``metadata.name`` (in a list, a streaming list or a watch event) are
      logged as a warning naming the resource and the event type, then skipped: never stored,
      never delivered.

    Caveats: :meth:`run` runs until cancelled; it never raises for list/watch failures (they are
    retried forever and reported through ``last_error`` and ``on_watch_error``).

    Memory use: during a list all items of the listing are held once more until ``replace``.

    Example::

        reflector = Reflector(ListWatch(client, ("v1", "Pod")), informer)
        task = asyncio.create_task(reflector.run())
    """

    def __init__(
        self,
        list_watch: ListerWatcher,
        sink: ReflectorSink,
        *,
        options: ReflectorOptions | None = None,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        on_watch_error: WatchErrorHandler | None = None,
        name: str | None = None,
    ) -> None:
        self.list_watch = list_watch
        self.sink = sink
        self.options = options or ReflectorOptions()
        self.clock = clock or RealClock()
        self._rng = rng or random.Random()  # noqa: S311 - jitter, not cryptography
        self.on_watch_error = on_watch_error
        self.name = name or list_watch.description
        self.state = ReflectorState.initial(self.options)
        #: The last list/watch error (``None`` until one happens; kept after recovery).
        self.last_error: BaseException | None = None
        #: The reason of the last decision, for diagnostics.
        self.last_decision: Decision | None = None
        #: Number of completed syncs (lists or streaming lists).
        self.syncs = 0
        self._resource_version = ""
        #: Called with the new position each time it moves (after the sink has applied what
        #: brought it there): the informer wakes who waits for a resourceVersion.
        self.on_progress: Callable[[str], None] | None = None
        shard = getattr(list_watch, "shard", None)
        #: The shard this reflector keeps (``None``: everything).
        self.shard: ShardSelector | None = shard if isinstance(shard, ShardSelector) else None
        #: Whether the server applied the shard on the last list (``None`` before one, or
        #: without a shard). ``False`` means objects are filtered here.
        self.server_sharded: bool | None = None
        #: Objects (list items and watch events) dropped here as outside the shard.
        self.shard_dropped = 0
        self._fallback_logged = False

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the sink is synced to (``""`` before the first sync), updated as
        watch events arrive."""
        return self._resource_version

    def _advance(self, resource_version: str) -> None:
        self._resource_version = resource_version
        if self.on_progress is not None:
            self.on_progress(resource_version)

    async def run(self) -> None:
        """List and watch until cancelled."""
        outcome: Outcome = Start()
        while True:
            decision, self.state = step(
                self.state, outcome, now=self.clock.now(), rand=self._rng.random()
            )
            self.last_decision = decision
            if decision.delay > 0:
                log.debug(
                    "reflector backing off",
                    extra={"reflector": self.name, "delay": decision.delay, "why": decision.reason},
                )
                await self.clock.sleep(decision.delay)
            if isinstance(decision.action, ListAction):
                outcome = await self._list(decision.action)
            else:
                outcome = await self._watch(decision.action)

    def _failed(self, verb: str, err: BaseException) -> ErrorKind:
        kind = classify_error(err)
        self.last_error = err
        # The resource and the reason go in the message itself, so a plain "%(message)s" log
        # format says what failed and why; the same facts stay in ``extra`` for JSON formats.
        log.warning(
            "reflector %s failed for %s: %s",
            verb,
            self.name,
            err,
            extra={"reflector": self.name, "error": str(err), "kind": kind.value},
        )
        if self.on_watch_error is not None:
            try:
                self.on_watch_error(self, err)
            except Exception:
                log.exception("watch error handler raised", extra={"reflector": self.name})
        return kind

    async def _list(self, action: ListAction) -> Outcome:
        items: list[dict[str, Any]] = []
        token: str | None = None
        resource_version = ""
        paginated = False
        try:
            while True:
                page = await self.list_watch.list_page(
                    ListOptions(
                        resource_version=action.resource_version,
                        limit=action.limit,
                        continue_=token,
                    )
                )
                meta = metadata_of(page)
                if token is None:
                    resource_version = str(meta.get("resourceVersion") or "")
                    if self.shard is not None:
                        self._check_shard_info(meta.get("shardInfo"))
                page_items = page.get("items") or ()
                if self.shard is not None and not self.server_sharded:
                    page_items = self._in_shard(page_items)
                items.extend(o for o in page_items if self._named(o, "LIST"))
                token = meta.get("continue") or None
                if not token:
                    break
                paginated = True
        except Exception as err:
            kind = self._failed("list", err)
            return ListFailed(kind, action.resource_version, during_continue=token is not None)
        self.sink.replace(items, resource_version)
        self._advance(resource_version)
        self.syncs += 1
        return ListSucceeded(resource_version, paginated, action.resource_version)

    async def _watch(self, action: WatchAction) -> Outcome:
        started = self.clock.now()
        events = 0
        resource_version = action.resource_version
        streaming = action.send_initial_events
        initial: dict[str, dict[str, Any]] | None = {} if streaming else None
        error: ErrorKind | None = None
        options = ListOptions(
            resource_version=action.resource_version,
            resource_version_match=action.resource_version_match,
            timeout_seconds=action.timeout_seconds,
            allow_watch_bookmarks=action.allow_watch_bookmarks,
            send_initial_events=True if streaming else None,
        )
        # A watch is filtered here unless the last list proved the server applies the shard
        # (a streaming list has no shardInfo to check: its events are filtered).
        shard = self.shard if self.shard is not None and not self.server_sharded else None
        try:
            async with self.list_watch.watch(options) as stream:
                async for event in stream:
                    events += 1
                    if (
                        shard is not None
                        and event.type is not EventType.BOOKMARK
                        and not shard.matches(event.object)
                    ):
                        self.shard_dropped += 1
                        if initial is None:
                            resource_version = event.resource_version or resource_version
                            self._advance(resource_version)
                        continue
                    if event.type is EventType.BOOKMARK:
                        resource_version = event.resource_version or resource_version
                        if initial is None:
                            self._advance(resource_version)
                        if initial is not None and event.is_initial_events_end:
                            self.sink.replace(list(initial.values()), resource_version)
                            self.syncs += 1
                            self._advance(resource_version)
                            initial = None
                        continue
                    if not self._named(event.object, event.type.value):
                        # Still a point in the stream: re-watching from before it would only
                        # replay it.
                        if initial is None:
                            resource_version = event.resource_version or resource_version
                            self._advance(resource_version)
                        continue
                    if initial is not None:
                        key = meta_namespace_key(event.object)
                        if event.type is EventType.DELETED:
                            initial.pop(key, None)
                        else:
                            initial[key] = event.object
                        continue
                    self.sink.apply(event.type, event.object)
                    # Every event advances the position. client-go holds it back on a watch
                    # started at "" or "0" (synthetic ADDED events in no resourceVersion order);
                    # this reflector never starts one there: it watches from what a list, a
                    # streaming list or an event returned, and the apiserver always sends one.
                    resource_version = event.resource_version or resource_version
                    self._advance(resource_version)
        except Exception as err:
            error = self._failed("watch", err)
        return WatchEnded(
            error=error,
            duration=self.clock.now() - started,
            events=events,
            resource_version=resource_version if initial is None else "",
            streaming=streaming,
            initial_events_done=initial is None,
        )

    def _check_shard_info(self, info: Any) -> None:
        shard = self.shard
        if shard is None:
            return
        applied = False
        if isinstance(info, dict) and isinstance(info.get("selector"), str):
            try:
                applied = ShardSelector.parse(info["selector"]) == shard
            except ValueError:
                applied = False
        self.server_sharded = applied
        if not applied and not self._fallback_logged:
            self._fallback_logged = True
            log.warning(
                "the server did not apply shard %s to %s (no matching metadata.shardInfo: "
                "feature gate ShardedListAndWatch off or an older server); filtering "
                "client-side with the same hash, every object is still received",
                shard,
                self.name,
                extra={"reflector": self.name, "shard": str(shard), "shard_info": info},
            )

    def _in_shard(self, items: Any) -> list[dict[str, Any]]:
        shard = self.shard
        if shard is None:
            return list(items)
        kept = [o for o in items if isinstance(o, dict) and shard.matches(o)]
        self.shard_dropped += len(items) - len(kept)
        return kept

    def _named(self, obj: Any, event_type: str) -> bool:
        meta = metadata_of(obj) if isinstance(obj, dict) else {}
        name = meta.get("name")
        if isinstance(name, str) and name:
            return True
        log.warning(
            "reflector skipped an object without metadata.name in a %s event for %s",
            event_type,
            self.name,
            extra={
                "reflector": self.name,
                "event_type": event_type,
                "namespace": str(meta.get("namespace") or ""),
            },
        )
        return False

    def __repr__(self) -> str:
        return f"<Reflector {self.name} resource_version={self.state.resource_version!r}>"
