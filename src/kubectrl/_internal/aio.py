"""Small asyncio helpers: what the standard library gets subtly wrong, and what kubectrl repeats.

:func:`wait_within` bounds an await without losing a cancellation (Python 3.10/3.11);
:func:`call_in_loop` runs a callback on a given event loop from any thread; :func:`running_loop`
is the event loop running in this thread, or ``None``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from typing_extensions import TypeVarTuple, Unpack

__all__ = ["call_in_loop", "running_loop", "wait_within"]

T = TypeVar("T")
Ts = TypeVarTuple("Ts")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in the calling thread, or ``None`` off any loop.

    The public, exception-free form of ``asyncio.get_running_loop()`` (which raises off-loop).

    Example::

        >>> running_loop() is None
        True
    """
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def call_in_loop(
    loop: asyncio.AbstractEventLoop, fn: Callable[[Unpack[Ts]], object], *args: Unpack[Ts]
) -> bool:
    """Run ``fn(*args)`` on ``loop``, from whichever thread calls this; ``False`` if it never will.

    On ``loop``'s own thread (while it runs) ``fn`` is called at once, before this returns; from
    any other thread it is scheduled with ``loop.call_soon_threadsafe`` (which wakes the loop). A
    closed loop will never run anything again: the call is dropped and ``False`` returned, so the
    caller can tell (a waker picks another waiter; a finished thread has nobody left to tell).
    An exception from ``fn`` called at once propagates.

    Example::

        call_in_loop(loop, event.set)   # from a worker thread or from the loop itself
    """
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        fn(*args)
        return True
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:  # the loop is closed
        return False
    return True


async def wait_within(
    awaitable: Awaitable[T],
    timeout: float | None,
    *,
    discard: Callable[[T], Awaitable[object]] | None = None,
) -> T:
    """Await ``awaitable`` for at most ``timeout`` seconds (``asyncio.TimeoutError`` after).

    Unlike :func:`asyncio.wait_for` on Python 3.10 and 3.11, a cancellation of the caller always
    propagates: there, when the awaited operation finishes in the same loop iteration as the
    cancellation arrives, ``wait_for`` returns the result and the cancellation is lost (the
    caller then goes on as if never cancelled; CPython gh-86296, fixed in 3.12). Here the caller
    gets its ``CancelledError``, and a result that arrived anyway is handed to ``discard`` (for
    example to close an HTTP response) instead of being leaked.

    Example::

        response = await wait_within(pool.send(request, stream=True), 45,
                                     discard=lambda r: r.aclose())
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await _settle(task, discard)
        raise
    if not done:
        task.cancel()
        await _settle(task, discard)
        raise asyncio.TimeoutError
    return task.result()


async def _settle(
    task: asyncio.Future[T], discard: Callable[[T], Awaitable[object]] | None
) -> None:
    # Let the operation finish its own cleanup (it was cancelled, or it completed already);
    # a second cancellation of the caller still interrupts this wait.
    await asyncio.wait({task})
    if task.cancelled() or task.exception() is not None:
        return
    if discard is not None:
        await discard(task.result())
