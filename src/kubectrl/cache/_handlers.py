"""Event handlers and their per-handler delivery buffers.

An informer fans every change out to its handlers. Each handler gets its own unbounded buffer and
its own asyncio task that drains it, so a slow handler delays only itself; calls to one handler
are sequential and in the order the informer observed the changes (client-go's
``processorListener``). A handler that raises is logged and keeps receiving later events.

While a handler is idle (nothing buffered, no call running) a notification is delivered at once,
on the informer's stack, rather than by waking the handler's task; the task takes over whatever
must wait (an ``async`` call's awaiting, notifications that arrive while it runs).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "DeletedFinalStateUnknown",
    "HandlerRegistration",
    "Notification",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
]

log = logging.getLogger("kubectrl.cache")

Object = dict[str, Any]
MaybeAwaitable = Awaitable[None] | None


@dataclasses.dataclass(frozen=True)
class DeletedFinalStateUnknown:
    """A delete the informer inferred from a relist: the object vanished while the watch was down.

    ``obj`` is the last state the cache knew, which may be stale (client-go's
    ``DeletedFinalStateUnknown``). Handlers' ``on_delete`` receive either an object dict or one of
    these; unwrap with ``obj = x.obj if isinstance(x, DeletedFinalStateUnknown) else x``.

    Example::

        def on_delete(obj):
            if isinstance(obj, DeletedFinalStateUnknown):
                obj = obj.obj
    """

    key: str
    obj: Object


@dataclasses.dataclass(frozen=True)
class Notification:
    """One change as a plain-function handler receives it.

    ``type`` is ``"add"``, ``"update"`` or ``"delete"``; ``obj`` the new object (for deletes the
    final object or a :class:`DeletedFinalStateUnknown`); ``old`` the previous object for updates;
    ``is_in_initial_list`` for adds that are part of the initial listing (or of the cached objects
    a late handler receives first).

    Example::

        def handler(n: Notification) -> None:
            print(n.type, n.obj["metadata"]["name"])
    """

    type: Literal["add", "update", "delete"]
    obj: Any
    old: Object | None = None
    is_in_initial_list: bool = False


@runtime_checkable
class ResourceEventHandler(Protocol):
    """The handler protocol (client-go's ``ResourceEventHandler``).

    Methods may be plain or ``async``; a handler object may also define only some of them (the
    others are skipped). A plain ``def`` runs on the event loop and must not block; use
    ``async def`` for anything that waits.

    Example::

        class Printer:
            def on_add(self, obj, is_in_initial_list): print("add", obj["metadata"]["name"])
            def on_update(self, old, new): print("update", new["metadata"]["name"])
            def on_delete(self, obj): print("delete")
    """

    def on_add(self, obj: Object, is_in_initial_list: bool) -> MaybeAwaitable:
        """An object appeared (or the cache's content is replayed to a new handler)."""
        ...

    def on_update(self, old: Object, new: Object) -> MaybeAwaitable:
        """An object changed (``old is new`` for a resync)."""
        ...

    def on_delete(self, obj: Object | DeletedFinalStateUnknown) -> MaybeAwaitable:
        """An object was deleted."""
        ...


@dataclasses.dataclass(frozen=True)
class ResourceEventHandlerFuncs:
    """A handler made of plain functions, any of which may be ``None`` (client-go's
    ``ResourceEventHandlerFuncs``).

    Example::

        informer.add_handler(ResourceEventHandlerFuncs(on_add=lambda obj, initial: ...))
    """

    on_add: Callable[[Object, bool], MaybeAwaitable] | None = None
    on_update: Callable[[Object, Object], MaybeAwaitable] | None = None
    on_delete: Callable[[Any], MaybeAwaitable] | None = None


HandlerLike = ResourceEventHandler | ResourceEventHandlerFuncs | Callable[[Notification], Any]

_SYNCED = object()


class _Awaiting:
    """A notification whose handler call already ran up to its first ``await``."""

    __slots__ = ("notification", "result")

    def __init__(self, notification: Any, result: Awaitable[Any]) -> None:
        self.notification = notification
        self.result = result


def _dispatcher(handler: Any) -> Callable[[Notification], Any]:
    names = ("on_add", "on_update", "on_delete")
    if any(getattr(handler, name, None) is not None for name in names):
        on_add = getattr(handler, "on_add", None)
        on_update = getattr(handler, "on_update", None)
        on_delete = getattr(handler, "on_delete", None)

        def dispatch(n: Notification) -> Any:
            if n.type == "add":
                return on_add(n.obj, n.is_in_initial_list) if on_add else None
            if n.type == "update":
                return on_update(n.old, n.obj) if on_update else None
            return on_delete(n.obj) if on_delete else None

        return dispatch
    if callable(handler):
        return handler  # type: ignore[no-any-return]
    raise TypeError(
        "a handler must define on_add/on_update/on_delete or be a callable taking a "
        f"Notification, got {handler!r}"
    )


class HandlerRegistration:
    """One handler's registration: its buffer, its sync state, and how to remove it.

    Guarantees: the handler is called for one notification at a time, in order; notifications
    queue without bound while it is busy; ``has_synced()`` turns true once the handler has
    processed everything up to the informer's first sync (for a late handler: every cached object
    it was replayed).

    Memory use: one small record per pending notification (the objects are shared).

    Example::

        registration = informer.add_handler(handler)
        ...
        registration.remove()
    """

    def __init__(
        self,
        handler: Any,
        *,
        name: str,
        resync_period: float | None,
        remover: Callable[[HandlerRegistration], None],
    ) -> None:
        self.handler = handler
        self.name = name
        self.resync_period = resync_period
        self._dispatch = _dispatcher(handler)
        self._buffer: collections.deque[Any] = collections.deque()
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._synced = False
        self._remover = remover
        self._removed = False
        self._idle: asyncio.Event | None = None
        #: Notifications handled so far (including ones whose handler raised).
        self.delivered = 0
        #: Handler calls that raised.
        self.errors = 0
        self.next_resync: float | None = None

    def has_synced(self) -> bool:
        """True once this handler processed the informer's initial state."""
        return self._synced

    @property
    def pending(self) -> int:
        """Notifications waiting in this handler's buffer."""
        return sum(1 for item in self._buffer if item is not _SYNCED)

    def remove(self) -> None:
        """Stop delivering to this handler (pending notifications are dropped). Idempotent."""
        if not self._removed:
            self._remover(self)

    # ------------------------------------------------------------------ informer side

    def _push(self, item: Notification | object) -> None:
        idle, wake = self._idle, self._wake
        if (
            idle is not None
            and wake is not None
            and idle.is_set()
            and self._task is not None
            and not self._removed
        ):
            # Nothing buffered and no call running: deliver now, on the caller's stack, instead
            # of waking this handler's task (a task switch per event). Order and one-call-at-a-
            # time hold: the buffer is empty, and a call that returns an awaitable is finished
            # by the task before anything pushed after it.
            self._deliver_now(item, idle, wake)
            return
        self._buffer.append(item)
        if idle is not None:
            idle.clear()
        if self._wake is not None:
            self._wake.set()

    def _deliver_now(
        self, item: Notification | object, idle: asyncio.Event, wake: asyncio.Event
    ) -> None:
        if item is _SYNCED:
            self._synced = True
            return
        try:
            result = self._dispatch(item)  # type: ignore[arg-type]
        except Exception:
            self._failed(item)
            self.delivered += 1
            return
        if result is not None and inspect.isawaitable(result):
            # An async call: the task awaits it (and counts it) before the next notification.
            self._buffer.append(_Awaiting(item, result))
            idle.clear()
            wake.set()
            return
        self.delivered += 1

    def _failed(self, item: Any) -> None:
        self.errors += 1
        log.exception(
            "event handler raised",
            extra={"handler": self.name, "event": getattr(item, "type", None)},
        )

    def _start(self) -> None:
        if self._task is None and not self._removed:
            self._wake = wake = asyncio.Event()
            self._idle = idle = asyncio.Event()
            if self._buffer:
                wake.set()
            else:
                idle.set()
            self._task = asyncio.get_running_loop().create_task(
                self._run(wake, idle), name=f"kubectrl-handler-{self.name}"
            )

    def _stop(self) -> None:
        self._removed = True
        for item in self._buffer:
            if isinstance(item, _Awaiting):
                close = getattr(item.result, "close", None)
                if close is not None:
                    close()  # a coroutine that will never be awaited now
        self._buffer.clear()
        if self._task is not None:
            self._task.cancel()

    async def wait_idle(self) -> None:
        """Wait until this handler's buffer is empty and it is not running a call."""
        if self._idle is not None:
            await self._idle.wait()

    async def _run(self, wake: asyncio.Event, idle: asyncio.Event) -> None:
        while True:
            if not self._buffer:
                idle.set()
                wake.clear()
                await wake.wait()
                continue
            item = self._buffer.popleft()
            if item is _SYNCED:
                self._synced = True
                continue
            try:
                if isinstance(item, _Awaiting):
                    item, result = item.notification, item.result
                else:
                    result = self._dispatch(item)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                self._failed(item)
            self.delivered += 1

    def __repr__(self) -> str:
        return (
            f"<HandlerRegistration {self.name} synced={self._synced} pending={self.pending} "
            f"delivered={self.delivered}>"
        )
