"""Small asyncio helpers the standard library gets subtly wrong on some supported Pythons."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["wait_within"]

T = TypeVar("T")


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
